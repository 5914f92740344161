"""``parser.add_argument("--batch-size", type=int, default=32)`` in the script (or a local module it
imports): flags, types, defaults and choices, read with ``ast``."""

from __future__ import annotations

import ast

from . import Option, ProgramSource, command_value, literal, reader

_TYPES = {"int": "int", "float": "float", "str": "str"}


def argparse_options(tree: ast.AST, command: list[str]) -> list[Option]:
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"):
            continue
        flags = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                 and arg.value.startswith("--")]
        if not flags:
            continue
        keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
        dest = keywords.get("dest")
        name = dest.value if isinstance(dest, ast.Constant) and isinstance(dest.value, str) else \
            max(flags, key=len)[2:].replace("-", "_")
        action = keywords.get("action")
        action_name = action.value if isinstance(action, ast.Constant) else None
        kind, default = literal(keywords.get("default"))
        if action_name in ("store_true", "store_false"):
            kind, default = "flag", str(action_name == "store_false") if default is None else default
        elif isinstance(keywords.get("type"), ast.Name):
            kind = _TYPES.get(keywords["type"].id, kind)
        choices: list[str] = []
        if "choices" in keywords:
            try:
                choices = [str(choice) for choice in ast.literal_eval(keywords["choices"])]
            except (ValueError, SyntaxError, TypeError):
                choices = []
        used = next((flag for flag in flags if command_value(command, flag) is not None), None)
        flag = used or max(flags, key=len)
        given = command_value(command, flag) if used else None
        current = ("True" if given is not None else default) if kind == "flag" else (given if given else default)
        found.append(Option(name=name, style="argparse", flag=flag, value_type=kind, default=default, current=current,
                            choices=choices))
    return found


@reader("argparse")
def read(source: ProgramSource) -> list[Option]:
    if source.tree is None:
        return []
    options = argparse_options(source.tree, source.command)
    # Options defined in a local module the script imports (``from options import parse_args``).
    local = {name for node in ast.walk(source.tree) if isinstance(node, (ast.Import, ast.ImportFrom))
             for name in ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                          [alias.name for alias in getattr(node, "names", [])] if isinstance(node, ast.Import) else [])}
    if source.script is not None:
        for module in sorted(local):
            path = source.script.parent / (module.replace(".", "/") + ".py")
            if path.is_file() and path.resolve().is_relative_to(source.project):
                try:
                    options += argparse_options(ast.parse(path.read_text(encoding="utf-8", errors="replace")), source.command)
                except (SyntaxError, ValueError, OSError):
                    continue
    return options
