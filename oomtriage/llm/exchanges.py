"""The local log of every exchange with a model (prompt, raw reply, model, tokens, latency), under
the user's cache directory. A changelog entry cites an exchange by id; identical prompts to the
same model and endpoint are answered from here unless caching is off."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from oomtriage.models import SCHEMA_VERSION


class Exchange(BaseModel):
    schema_version: int = SCHEMA_VERSION
    id: str
    created: float = Field(default_factory=time.time)
    model: str
    base_url: str | None
    messages: list[dict[str, str]]
    strategy: str | None = None
    raw_reply: str | None = None
    usage: dict[str, Any] = Field(default_factory=dict)
    latency_s: float | None = None
    outcome: str = "ok"


def cache_dir() -> Path:
    base = os.environ.get("OOMTRIAGE_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "oomtriage")
    return Path(base) / "exchanges"


def exchange_id(model: str, base_url: str | None, messages: list[dict[str, str]]) -> str:
    digest = hashlib.sha256(json.dumps([model, base_url or "", messages], sort_keys=True).encode()).hexdigest()
    return digest[:20]


def load(identifier: str) -> Exchange | None:
    path = cache_dir() / f"{identifier}.json"
    try:
        return Exchange.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def save(exchange: Exchange) -> Path | None:
    """Write atomically; a read-only cache must not stop triage."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{exchange.id}.{os.getpid()}.tmp"
        temporary.write_text(exchange.model_dump_json(indent=2), encoding="utf-8")
        final = folder / f"{exchange.id}.json"
        os.replace(temporary, final)
        return final
    except OSError:
        return None
