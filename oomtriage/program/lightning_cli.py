"""PyTorch Lightning's ``LightningCLI``: ``--trainer.precision bf16-mixed``,
``--trainer.accumulate_grad_batches 2`` and the data/model classes' ``__init__`` arguments
(``--data.batch_size 8``)."""

from __future__ import annotations

import ast

from . import Option, ProgramSource, command_value, literal, reader

TRAINER_ARGUMENTS = {"accumulate_grad_batches": ("int", "1"), "precision": ("str", "32-true")}
_SECTIONS = {"LightningDataModule": "data", "LightningModule": "model"}


@reader("lightning_cli")
def read(source: ProgramSource) -> list[Option]:
    if source.tree is None or "LightningCLI" not in source.text:
        return []
    options = []
    for name, (kind, default) in TRAINER_ARGUMENTS.items():
        flag = f"--trainer.{name}"
        options.append(Option(name=f"trainer.{name}", style="lightning_cli", flag=flag, value_type=kind, default=default,
                              current=command_value(source.command, flag) or default))
    for node in ast.walk(source.tree):
        if not isinstance(node, ast.ClassDef):
            continue
        section = next((_SECTIONS[base] for base in (ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases) if base in _SECTIONS), None)
        init = next((item for item in node.body if isinstance(item, ast.FunctionDef) and item.name == "__init__"), None)
        if section is None or init is None:
            continue
        arguments = init.args.args[1:]
        defaults = [None] * (len(arguments) - len(init.args.defaults)) + list(init.args.defaults)
        for argument, default_node in zip(arguments, defaults):
            kind, default = literal(default_node)
            flag = f"--{section}.{argument.arg}"
            options.append(Option(name=f"{section}.{argument.arg}", style="lightning_cli", flag=flag, value_type=kind,
                                  default=default, current=command_value(source.command, flag) or default))
    return options
