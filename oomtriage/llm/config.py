"""Where the LLM settings come from, in order: flags, then environment (OOMTRIAGE_ENGINE,
OOMTRIAGE_BASE_URL, OOMTRIAGE_MODEL, OOMTRIAGE_API_KEY, OOMTRIAGE_OFFLINE, OOMTRIAGE_MAX_PROMPT_TOKENS,
and OpenAI's own OPENAI_BASE_URL / OPENAI_API_KEY), then the config file
(``$XDG_CONFIG_HOME/oomtriage/config.toml`` or ``OOMTRIAGE_CONFIG``, section ``[llm]``).

Consent: nothing is sent unless the user chose oomtriage's LLM (``--engine llm``, OOMTRIAGE_ENGINE,
or ``engine`` in the config file; ``auto`` counts only an endpoint set through oomtriage's own
settings). Variables set for other tools (OPENAI_API_KEY, OPENAI_BASE_URL) never opt in. The
OpenAI key goes only to OpenAI's API; any other endpoint gets OOMTRIAGE_API_KEY or the file's key."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel, SecretStr

from oomtriage.errors import ConfigError

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


OPENAI_HOSTS = {"api.openai.com"}


class LLMConfig(BaseModel):
    engine: Literal["rules", "llm", "auto"] = "rules"
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
    # An endpoint set through oomtriage's own settings (flag, OOMTRIAGE_*, config file): what auto counts.
    own_endpoint: bool = False

    @property
    def is_local(self) -> bool:
        return bool(self.base_url) and (urlparse(self.base_url).hostname or "") in LOCAL_HOSTS

    @property
    def is_openai(self) -> bool:
        return not self.base_url or (urlparse(self.base_url).hostname or "") in OPENAI_HOSTS

    @property
    def configured(self) -> bool:
        """An endpoint is configured: a base URL, or a key for OpenAI's API."""
        return bool(self.base_url or self.api_key)

    @property
    def model_name(self) -> str:
        return self.model or (DEFAULT_OPENAI_MODEL if not self.base_url else "default")

    def check(self) -> None:
        if self.offline and self.own_endpoint and self.base_url and not self.is_local:
            raise ConfigError(f"--offline refuses {self.base_url}: only an endpoint on this machine "
                              "(localhost/127.0.0.1) may be used offline")
        if self.engine == "rules":
            return
        if self.offline and self.base_url and not self.is_local:
            if self.engine == "llm":
                raise ConfigError(f"--offline refuses {self.base_url}: only an endpoint on this machine "
                                  "(localhost/127.0.0.1) may be used offline")
            self.engine = "rules"
        if self.offline and not self.base_url:
            if self.engine == "llm":
                raise ConfigError("--offline needs a local --base-url (e.g. http://127.0.0.1:8080/v1); OpenAI's API is not local")
            self.engine = "rules"

    @property
    def wants_llm(self) -> bool:
        return self.engine == "llm" or (self.engine == "auto" and self.own_endpoint and self.configured)


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


_TRUE = {"1", "true", "yes", "on"}


def load_config(**flags: object) -> LLMConfig:
    """Flags that are None fall back to the environment, then to the config file."""
    env = {
        "base_url": os.environ.get("OOMTRIAGE_BASE_URL"),
        "model": os.environ.get("OOMTRIAGE_MODEL"),
        "engine": os.environ.get("OOMTRIAGE_ENGINE"),
        "max_prompt_tokens": os.environ.get("OOMTRIAGE_MAX_PROMPT_TOKENS"),
        "offline": True if (os.environ.get("OOMTRIAGE_OFFLINE") or "").strip().lower() in _TRUE else None,
    }
    file_settings = {key: value for key, value in _config_file().items() if key in LLMConfig.model_fields and key != "own_endpoint"}
    merged: dict[str, object] = dict(file_settings)
    merged.update({key: value for key, value in env.items() if value is not None and value != ""})
    merged.update({key: value for key, value in flags.items() if value is not None})
    own_endpoint = bool(merged.get("base_url") or file_settings.get("api_key") or os.environ.get("OOMTRIAGE_API_KEY"))
    if not merged.get("base_url") and os.environ.get("OPENAI_BASE_URL"):
        merged["base_url"] = os.environ["OPENAI_BASE_URL"]  # where OpenAI's SDK would go, once the user opted in
    merged["api_key"] = _api_key_for(merged.get("base_url"), flags.get("api_key"), file_settings.get("api_key"))
    merged["own_endpoint"] = own_endpoint
    try:
        config = LLMConfig.model_validate(merged)
    except ValueError as error:
        raise ConfigError(f"invalid LLM settings: {str(error).splitlines()[0]}") from None
    config.check()
    return config


def _api_key_for(base_url: object, flag_key: object, file_key: object) -> str | None:
    """A key goes only to the endpoint it belongs to: OPENAI_API_KEY to OpenAI's API, never to a
    --base-url of someone else's; that one gets OOMTRIAGE_API_KEY or the config file's key."""
    own = flag_key or os.environ.get("OOMTRIAGE_API_KEY") or file_key
    if own:
        return str(own)
    host = urlparse(str(base_url)).hostname if base_url else None
    if base_url is None or host in OPENAI_HOSTS:
        return os.environ.get("OPENAI_API_KEY") or None
    return None
