"""AST-located rewrites for the common code-level fixes, written as unified diffs against the
user's source: no_grad on the failing evaluation function, ``.item()`` on an accumulated loss,
``.detach()`` on outputs kept in a list, and fused SDPA for the canonical hand-written attention.
Each rewrite finds its target with ``ast`` and edits only the source text of that node."""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

Rewrite = Callable[[str, "set[int]"], "str | None"]
REWRITES: dict[str, Rewrite] = {}
_EVAL_NAME = re.compile(r"eval|valid|test|predict|infer", re.IGNORECASE)


def rewrite(kind: str):
    def register(function: Rewrite) -> Rewrite:
        REWRITES[kind] = function
        return function

    return register


@dataclass(frozen=True)
class SourceEdit:
    path: str  # relative to the project root
    original: str
    changed: str

    @property
    def diff(self) -> str:
        return "".join(difflib.unified_diff(self.original.splitlines(keepends=True), self.changed.splitlines(keepends=True),
                                            fromfile=f"a/{self.path}", tofile=f"b/{self.path}"))


def _lines_offsets(source: str) -> list[int]:
    offsets, total = [0], 0
    for line in source.splitlines(keepends=True):
        total += len(line)
        offsets.append(total)
    return offsets


def _span(source: str, node: ast.AST) -> tuple[int, int]:
    offsets = _lines_offsets(source)
    start = offsets[node.lineno - 1] + len(source.splitlines(keepends=True)[node.lineno - 1].encode()[: node.col_offset].decode())
    end = offsets[node.end_lineno - 1] + len(source.splitlines(keepends=True)[node.end_lineno - 1].encode()[: node.end_col_offset].decode())
    return start, end


def _near(node: ast.AST, lines: set[int]) -> bool:
    return not lines or any(node.lineno - 40 <= line <= (node.end_lineno or node.lineno) + 40 for line in lines)


@rewrite("no_grad_eval")
def add_no_grad(source: str, lines: set[int]) -> str | None:
    """Decorate the evaluation function that holds a failing line (or the only one) with no_grad."""
    tree = ast.parse(source)
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and _EVAL_NAME.search(node.name)]
    holding = [f for f in functions if any(f.lineno <= line <= (f.end_lineno or f.lineno) for line in lines)]
    targets = holding or (functions if len(functions) == 1 else [])
    if not targets:
        return None
    target = targets[-1]
    if any("no_grad" in ast.unparse(decorator) or "inference_mode" in ast.unparse(decorator) for decorator in target.decorator_list):
        return None
    first_line = min([target.lineno] + [decorator.lineno for decorator in target.decorator_list])
    rows = source.splitlines(keepends=True)
    indent = re.match(r"\s*", rows[first_line - 1]).group(0)
    rows.insert(first_line - 1, f"{indent}@torch.no_grad()\n")
    return "".join(rows)


@rewrite("detach_accumulated_loss")
def item_on_accumulated_loss(source: str, lines: set[int]) -> str | None:
    """``total += loss`` (a name or attribute holding a loss tensor) -> ``total += loss.item()``."""
    tree = ast.parse(source)
    targets = [node for node in ast.walk(tree) if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
               and "loss" in ast.unparse(node.value).lower() and not ast.unparse(node.value).endswith((".item()", ".detach()"))
               and _near(node, lines)]
    return _wrap_all(source, [node.value for node in targets], "({}).item()", simple="{}.item()")


@rewrite("free_references")
def detach_appended_outputs(source: str, lines: set[int]) -> str | None:
    """``history.append(out)`` -> ``history.append(out.detach())`` for non-loss values kept in lists."""
    tree = ast.parse(source)
    values = [node.args[0] for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
              and len(node.args) == 1 and isinstance(node.args[0], (ast.Name, ast.Attribute, ast.Subscript))
              and ".detach()" not in ast.unparse(node.args[0]) and _near(node, lines)]
    return _wrap_all(source, values, "({}).detach()", simple="{}.detach()")


@rewrite("sdpa_attention")
def fused_attention(source: str, lines: set[int]) -> str | None:
    """``softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v`` -> ``F.scaled_dot_product_attention(q, k, v)``."""
    tree = ast.parse(source)
    edits = []
    for node in ast.walk(tree):
        match = _attention_operands(node)
        if match and _near(node, lines):
            scale = f", scale={match[3]}" if match[3] else ""
            edits.append((node, f"torch.nn.functional.scaled_dot_product_attention({match[0]}, {match[1]}, {match[2]}{scale})"))
    return _replace_nodes(source, edits)


def _attention_operands(node: ast.AST) -> tuple[str, str, str, str | None] | None:
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
        return None
    softmax = node.left
    if not (isinstance(softmax, ast.Call) and ast.unparse(softmax.func).endswith("softmax") and softmax.args):
        return None
    scores, scale = softmax.args[0], None
    if isinstance(scores, ast.BinOp) and isinstance(scores.op, (ast.Mult, ast.Div)):
        product_left = isinstance(scores.left, ast.BinOp) and isinstance(scores.left.op, ast.MatMult)
        factor = ast.unparse(scores.right if product_left else scores.left)
        scale = factor if isinstance(scores.op, ast.Mult) else f"1.0 / ({factor})"
        scores = scores.left if product_left else scores.right
    if not (isinstance(scores, ast.BinOp) and isinstance(scores.op, ast.MatMult)):
        return None
    key = scores.right
    transposed = (isinstance(key, ast.Call) and isinstance(key.func, ast.Attribute) and key.func.attr == "transpose"
                  and [ast.unparse(arg) for arg in key.args] in (["-2", "-1"], ["-1", "-2"]))
    if not transposed:
        return None
    return ast.unparse(scores.left), ast.unparse(key.func.value), ast.unparse(node.right), scale


def _wrap_all(source: str, nodes: list[ast.AST], template: str, simple: str) -> str | None:
    edits = []
    for node in nodes:
        text = ast.unparse(node)
        edits.append((node, (simple if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) else template).format(text)))
    return _replace_nodes(source, edits)


def _replace_nodes(source: str, edits: list[tuple[ast.AST, str]]) -> str | None:
    if not edits:
        return None
    spans = sorted(((*_span(source, node), text) for node, text in edits), reverse=True)
    for start, end, text in spans:
        source = source[:start] + text + source[end:]
    return source


def rewrite_project_file(root: Path, relative: str, kind: str, lines: set[int]) -> SourceEdit | None:
    path = root / relative
    try:
        original = path.read_text(encoding="utf-8")
        changed = REWRITES[kind](original, lines)
    except (OSError, SyntaxError, UnicodeDecodeError, KeyError):
        return None
    if changed is None or changed == original:
        return None
    return SourceEdit(path=relative, original=original, changed=changed)
