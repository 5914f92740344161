"""Values written in the code itself: module-level constants (``BATCH_SIZE = 64``) and literal
keywords of the calls that configure training (``DataLoader(ds, batch_size=64)``,
``TrainingArguments(per_device_train_batch_size=16)``, Lightning's ``Trainer(precision=...)``).
Setting one edits the literal in a scratch copy, as a diff."""

from __future__ import annotations

import ast

from . import Option, ProgramSource, literal, reader, role_of

# Calls whose keywords configure training; keywords of other calls (a layer's size) are not options.
CONFIG_CALLS = {"DataLoader", "TrainingArguments", "Seq2SeqTrainingArguments", "Trainer", "SFTConfig", "Accelerator"}


def offsets(text: str) -> list[int]:
    starts, total = [0], 0
    for line in text.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def span_of(text: str, node: ast.AST, starts: list[int] | None = None) -> tuple[int, int]:
    starts = starts or offsets(text)
    lines = text.splitlines(keepends=True)

    def position(line: int, column: int) -> int:
        return starts[line - 1] + len(lines[line - 1].encode("utf-8")[:column].decode("utf-8", errors="replace"))

    return position(node.lineno, node.col_offset), position(node.end_lineno, node.end_col_offset)


def source_options(relative: str, text: str) -> list[Option]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    starts = offsets(text)
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Constant) and role_of(node.targets[0].id):
            kind, value = literal(node.value)
            found.append(Option(name=node.targets[0].id, style="source", value_type=kind, default=value, current=value,
                                file=relative, span=span_of(text, node.value, starts)))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = ast.unparse(node.func).rsplit(".", 1)[-1]
        if callee not in CONFIG_CALLS:
            continue
        for keyword in node.keywords:
            if keyword.arg and isinstance(keyword.value, ast.Constant) and role_of(keyword.arg):
                kind, value = literal(keyword.value)
                found.append(Option(name=f"{callee}.{keyword.arg}", style="source", value_type=kind, default=value,
                                    current=value, file=relative, span=span_of(text, keyword.value, starts), call=callee))
    return found


@reader("source")
def read(source: ProgramSource) -> list[Option]:
    if source.script is None:
        return []
    relative = str(source.script.relative_to(source.project))
    return source_options(relative, source.text)
