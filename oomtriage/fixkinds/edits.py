"""Source edits located with ``ast``: each edit changes only the text of the node it targets and is
returned as a unified diff against the project file (applied only in a scratch copy)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .actions import FixSite


@dataclass(frozen=True)
class SourceEdit:
    path: str  # relative to the project root
    original: str
    changed: str

    @property
    def diff(self) -> str:
        import difflib

        return "".join(difflib.unified_diff(self.original.splitlines(keepends=True), self.changed.splitlines(keepends=True),
                                            fromfile=f"a/{self.path}", tofile=f"b/{self.path}"))


def near(node: ast.AST, lines: set[int]) -> bool:
    return not lines or any(node.lineno - 40 <= line <= (node.end_lineno or node.lineno) + 40 for line in lines)


def replace_nodes(source: str, edits: list[tuple[ast.AST, str]]) -> str | None:
    from oomtriage.program.source_values import span_of

    if not edits:
        return None
    spans = sorted(((*span_of(source, node), text) for node, text in edits), reverse=True)
    for start, end, text in spans:
        source = source[:start] + text + source[end:]
    return source


def wrap_all(source: str, nodes: list[ast.AST], template: str, simple: str) -> str | None:
    edits = []
    for node in nodes:
        text = ast.unparse(node)
        edits.append((node, (simple if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else template).format(text)))
    return replace_nodes(source, edits)


def ensure_import(source: str, module: str) -> str:
    """``import module`` after the file's first ``import torch`` (or at the top), unless present."""
    if re.search(rf"(?m)^\s*import {re.escape(module)}\s*$", source):
        return source
    match = re.search(r"(?m)^import torch\b.*$", source)
    if match:
        return source[: match.end()] + f"\nimport {module}" + source[match.end():]
    return f"import {module}\n" + source


def edit_script(site: FixSite, change: Callable[[str, set[int]], str | None]) -> SourceEdit | None:
    """Apply ``change`` (source, failing lines -> new source or None) to the entry script."""
    if site.script is None:
        return None
    relative = str(site.script.relative_to(site.project))
    return edit_file(site, relative, change)


def edit_first_file(site: FixSite, change: Callable[[str, set[int]], str | None]) -> SourceEdit | None:
    """``change`` applied to the first file it edits: the traceback's files first, then the script."""
    files = list(site.failing_lines) + ([str(site.script.relative_to(site.project))] if site.script else [])
    for relative in dict.fromkeys(files):
        edit = edit_file(site, relative, change)
        if edit is not None:
            return edit
    return None


def edit_file(site: FixSite, relative: str, change: Callable[[str, set[int]], str | None]) -> SourceEdit | None:
    original = site.project_file(relative)
    if original is None:
        return None
    try:
        changed = change(original, site.failing_lines.get(relative, set()))
    except (SyntaxError, ValueError, RecursionError):
        return None
    if changed is None or changed == original:
        return None
    return SourceEdit(path=relative, original=original, changed=changed)


def diff_proposal(edit: SourceEdit | None, title: str):
    from .actions import FixAction, Proposal

    if edit is None:
        return []
    return [Proposal(title=title, action=FixAction(type="diff", diff=edit.diff, described=f"edit {edit.path}"))]
