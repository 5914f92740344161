"""nanoGPT's "poor man's configurator": module-level globals of the script, overridden by Python
config files and ``--key=value`` arguments that ``exec(open('configurator.py').read())`` applies."""

from __future__ import annotations

import ast
import re

from . import Option, ProgramSource, literal, reader

_EXEC = re.compile(r"exec\s*\(\s*open\s*\([^)]*configurator[^)]*\)\s*\.read\s*\(\s*\)\s*\)")


def _assignments(tree: ast.Module) -> dict[str, ast.AST]:
    found: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found[node.target.id] = node.value
    return found


@reader("configurator")
def read(source: ProgramSource) -> list[Option]:
    match = _EXEC.search(source.text)
    if source.tree is None or not match:
        return []
    before = ast.parse(source.text[: source.text.rfind("\n", 0, match.start()) + 1] or "\n")
    defaults = {name: literal(value) for name, value in _assignments(before).items()}
    current = {name: text for name, (_, text) in defaults.items()}
    for argument in source.arguments:
        if "=" not in argument and argument.endswith(".py") and (source.project / argument).is_file():
            try:
                overrides = _assignments(ast.parse((source.project / argument).read_text(encoding="utf-8", errors="replace")))
            except (SyntaxError, ValueError, OSError):
                continue
            current.update({name: literal(value)[1] for name, value in overrides.items() if name in defaults})
        elif argument.startswith("--") and "=" in argument:
            key, _, value = argument[2:].partition("=")
            if key in defaults:
                current[key] = value
    return [Option(name=name, style="configurator", flag=f"--{name}", value_type=kind, default=default, current=current[name])
            for name, (kind, default) in defaults.items()]
