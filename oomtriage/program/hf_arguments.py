"""Hugging Face ``HfArgumentParser`` scripts: ``TrainingArguments`` fields as ``--name value`` flags,
and the script's own argument dataclasses (``block_size``, ``max_seq_length``)."""

from __future__ import annotations

import ast
import re

from . import Option, ProgramSource, command_value, literal, reader

# The TrainingArguments fields a memory fix touches, with their defaults (transformers >= 4.30).
TRAINING_ARGUMENTS = {
    "per_device_train_batch_size": ("int", "8"), "per_device_eval_batch_size": ("int", "8"),
    "gradient_accumulation_steps": ("int", "1"), "eval_accumulation_steps": ("int", None),
    "gradient_checkpointing": ("bool", "False"), "bf16": ("bool", "False"), "fp16": ("bool", "False"),
    "optim": ("str", "adamw_torch"), "auto_find_batch_size": ("bool", "False"),
}
_PARSER = re.compile(r"\bHfArgumentParser\b")


def _dataclass_fields(tree: ast.Module) -> list[tuple[str, ast.AST | None]]:
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and any("dataclass" in ast.unparse(d) for d in node.decorator_list)):
            continue
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                value = item.value
                if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("field"):
                    value = next((k.value for k in value.keywords if k.arg == "default"), None)
                found.append((item.target.id, value))
    return found


def _current(command: list[str], name: str, kind: str, default: str | None) -> str | None:
    given = command_value(command, f"--{name}")
    if given is None:
        return default
    return "True" if kind == "bool" and given == "" else given


@reader("hf_arguments")
def read(source: ProgramSource) -> list[Option]:
    if source.tree is None or not _PARSER.search(source.text):
        return []
    options = []
    for name, (kind, default) in TRAINING_ARGUMENTS.items():
        options.append(Option(name=name, style="hf_arguments", flag=f"--{name}", value_type=kind, default=default,
                              current=_current(source.command, name, kind, default)))
    known = set(TRAINING_ARGUMENTS)
    for name, value in _dataclass_fields(source.tree):
        if name in known:
            continue
        kind, default = literal(value)
        options.append(Option(name=name, style="hf_arguments", flag=f"--{name}", value_type=kind, default=default,
                              current=_current(source.command, name, kind, default)))
    return options
