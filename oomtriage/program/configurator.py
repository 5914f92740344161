"""nanoGPT's "poor man's configurator": module-level globals of the script, overridden by Python
config files and ``--key=value`` arguments that ``exec(open('configurator.py').read())`` applies."""

from __future__ import annotations

import ast

from . import Option, ProgramSource, literal, reader


def _exec_of_configurator(statement: ast.stmt) -> bool:
    """``exec(open('configurator.py').read())`` (any file whose name says configurator)."""
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Name) and statement.value.func.id == "exec"
            and "configurator" in ast.unparse(statement.value))


def _assignments(statements: list[ast.stmt]) -> dict[str, ast.AST]:
    found: dict[str, ast.AST] = {}
    for node in statements:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
    return found


@reader("configurator")
def read(source: ProgramSource) -> list[Option]:
    if source.tree is None:
        return []
    at = next((index for index, statement in enumerate(source.tree.body) if _exec_of_configurator(statement)), None)
    if at is None:
        return []
    defaults = {name: literal(value) for name, value in _assignments(source.tree.body[:at]).items()}
    current = {name: text for name, (_, text) in defaults.items()}
    for argument in source.arguments:
        if "=" not in argument and argument.endswith(".py") and (source.project / argument).is_file():
            try:
                overrides = _assignments(ast.parse((source.project / argument).read_text(encoding="utf-8", errors="replace")).body)
            except (SyntaxError, ValueError, OSError):
                continue
            current.update({name: literal(value)[1] for name, value in overrides.items() if name in defaults})
        elif argument.startswith("--") and "=" in argument:
            key, _, value = argument[2:].partition("=")
            if key in defaults:
                current[key] = value
    return [Option(name=name, style="configurator", flag=f"--{name}", value_type=kind, default=default, current=current[name])
            for name, (kind, default) in defaults.items()]
