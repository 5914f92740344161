"""Hydra / OmegaConf programs: ``@hydra.main(config_path=..., config_name=...)`` names a YAML config,
whose keys the command overrides as ``key=value`` (``+key=value`` for keys it lacks)."""

from __future__ import annotations

import ast
import re

from . import Option, ProgramSource, reader, value_text
from .config_file import flatten, load_config


def _main_config(tree: ast.Module) -> tuple[str | None, str | None]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("hydra.main"):
                    keywords = {k.arg: k.value for k in decorator.keywords if k.arg}
                    path = keywords.get("config_path")
                    name = keywords.get("config_name")
                    return (path.value if isinstance(path, ast.Constant) else None,
                            name.value if isinstance(name, ast.Constant) else None)
    return None, None


@reader("hydra")
def read(source: ProgramSource) -> list[Option]:
    if source.tree is None or "hydra" not in source.text:
        return []
    config_path, config_name = _main_config(source.tree)
    if config_name is None or source.script is None:
        return []
    folder = source.script.parent / (config_path or ".")
    path = folder / (config_name if config_name.endswith((".yaml", ".yml")) else config_name + ".yaml")
    data = load_config(path)
    if not isinstance(data, dict):
        return []
    overrides = {}
    for argument in source.arguments:
        match = re.match(r"^[+~]*([\w.]+)=(.*)$", argument)
        if match:
            overrides[match.group(1)] = match.group(2)
    options = []
    for key, value in flatten(data).items():
        kind, text = value_text(value)
        options.append(Option(name=key, style="hydra", value_type=kind, default=text, current=overrides.get(key, text)))
    return options
