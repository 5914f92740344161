"""A YAML or JSON config file named on the command line (``python train.py --config cfg.yaml``,
``python train.py cfg.json``): its keys are options, set by editing a copy of the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import Option, ProgramSource, reader, value_text

MAX_CONFIG_BYTES = 1 << 20


def load_config(path: Path) -> Any:
    try:
        if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
            return None
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".json":
            return json.loads(text)
        import yaml

        return yaml.safe_load(text)  # safe_load: a config file never constructs Python objects
    except (OSError, ValueError, ImportError, RecursionError) as error:
        return None if not type(error).__module__.startswith("yaml") else None
    except Exception as error:  # yaml.YAMLError and its kin: an unreadable config is no config
        if type(error).__module__.startswith("yaml"):
            return None
        raise


def flatten(data: dict, prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            found.update(flatten(value, name + "."))
        elif isinstance(value, (bool, int, float, str)) or value is None:
            found[name] = value
    return found


@reader("config_file")
def read(source: ProgramSource) -> list[Option]:
    options = []
    for argument in source.arguments:
        candidate = argument.partition("=")[2] if argument.startswith("--") and "=" in argument else argument
        if not candidate.endswith((".yaml", ".yml", ".json")):
            continue
        path = (source.project / candidate).resolve()
        if not path.is_relative_to(source.project):
            continue
        data = load_config(path)
        if not isinstance(data, dict):
            continue
        relative = str(path.relative_to(source.project))
        for key, value in flatten(data).items():
            kind, text = value_text(value)
            options.append(Option(name=key, style="config_file", value_type=kind, default=text, current=text, file=relative))
    return options
