"""Where the LLM settings come from, in order: flags, then environment (OPENAI_API_KEY,
OPENAI_BASE_URL, OOMTRIAGE_MODEL, OOMTRIAGE_BASE_URL, OOMTRIAGE_ENGINE, OOMTRIAGE_MAX_PROMPT_TOKENS),
then the config file (``$XDG_CONFIG_HOME/oomtriage/config.toml`` or ``OOMTRIAGE_CONFIG``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel, SecretStr

from oomtriage.errors import ConfigError

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


class LLMConfig(BaseModel):
    engine: Literal["rules", "llm", "auto"] = "auto"
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout: float = 120.0
    max_retries: int | None = None
    max_prompt_tokens: int = 6000
    max_answer_tokens: int = 1500
    offline: bool = False
    cache: bool = True
    redact: bool = True
    prompts_dir: Path | None = None
    reasks: int = 1

    @property
    def is_local(self) -> bool:
        return bool(self.base_url) and (urlparse(self.base_url).hostname or "") in LOCAL_HOSTS

    @property
    def configured(self) -> bool:
        """An endpoint is configured: a base URL, or a key for OpenAI's API."""
        return bool(self.base_url or self.api_key)

    @property
    def model_name(self) -> str:
        return self.model or (DEFAULT_OPENAI_MODEL if not self.base_url else "default")

    def check(self) -> None:
        if self.offline and self.base_url and not self.is_local:
            raise ConfigError(f"--offline refuses {self.base_url}: only an endpoint on this machine "
                              "(localhost/127.0.0.1) may be used offline")
        if self.offline and not self.base_url and self.engine == "llm":
            raise ConfigError("--offline needs a local --base-url (e.g. http://127.0.0.1:8080/v1); OpenAI's API is not local")


def _config_file() -> dict:
    path = os.environ.get("OOMTRIAGE_CONFIG")
    if path is None:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        path = os.path.join(base, "oomtriage", "config.toml")
    if not os.path.exists(path):
        return {}
    try:
        import tomllib

        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except (OSError, ValueError) as error:
        raise ConfigError(f"{path}: not a readable TOML config ({error})") from None
    return data.get("llm", data)


def load_config(**flags: object) -> LLMConfig:
    """Flags that are None fall back to the environment, then to the config file."""
    env = {
        "base_url": os.environ.get("OOMTRIAGE_BASE_URL") or os.environ.get("OPENAI_BASE_URL"),
        "model": os.environ.get("OOMTRIAGE_MODEL"),
        "api_key": os.environ.get("OOMTRIAGE_API_KEY") or os.environ.get("OPENAI_API_KEY"),
        "engine": os.environ.get("OOMTRIAGE_ENGINE"),
        "max_prompt_tokens": os.environ.get("OOMTRIAGE_MAX_PROMPT_TOKENS"),
    }
    merged: dict[str, object] = {key: value for key, value in _config_file().items() if key in LLMConfig.model_fields}
    merged.update({key: value for key, value in env.items() if value})
    merged.update({key: value for key, value in flags.items() if value is not None})
    try:
        config = LLMConfig.model_validate(merged)
    except ValueError as error:
        raise ConfigError(f"invalid LLM settings: {str(error).splitlines()[0]}") from None
    config.check()
    return config
