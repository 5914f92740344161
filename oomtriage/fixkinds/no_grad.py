"""Evaluation without an autograd graph: ``@torch.no_grad()`` on the evaluation function that holds
the failing line (or the only one)."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register
from .edits import diff_proposal, edit_script

NO_GRAD_EVAL = Fix(
    kind="no_grad_eval", title="Evaluate under torch.no_grad() / inference_mode()",
    how="Without it every eval batch builds an autograd graph and keeps its activations.",
    snippet="model.eval()\nwith torch.no_grad():\n    for x, y in val_loader:\n        out = model(x)",
    expected_saving="all activations saved for backward during evaluation")
_EVAL_NAME = re.compile(r"eval|valid|test|predict|infer", re.IGNORECASE)


@register("no_grad_eval", rule="exact")
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    return diff_proposal(edit_script(site, add_no_grad), "Decorate the evaluation function with @torch.no_grad()")


def add_no_grad(source: str, lines: set[int]) -> str | None:
    tree = ast.parse(source)
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and _EVAL_NAME.search(node.name)]
    holding = [f for f in functions if any(f.lineno <= line <= (f.end_lineno or f.lineno) for line in lines)]
    targets = holding or (functions if len(functions) == 1 else [])
    if not targets:
        return None
    target = targets[-1]
    if any("no_grad" in ast.unparse(d) or "inference_mode" in ast.unparse(d) for d in target.decorator_list):
        return None
    first_line = min([target.lineno] + [decorator.lineno for decorator in target.decorator_list])
    rows = source.splitlines(keepends=True)
    indent = re.match(r"\s*", rows[first_line - 1]).group(0)
    rows.insert(first_line - 1, f"{indent}@torch.no_grad()\n")
    return "".join(rows)
