"""Running totals of Python numbers, not of graph-carrying tensors: ``total += loss`` ->
``total += loss.item()``."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register
from .edits import diff_proposal, edit_script, near, wrap_all

DETACH_LOSS = Fix(
    kind="detach_accumulated_loss", title="Accumulate Python numbers, not graph-carrying tensors",
    how="`total_loss += loss` keeps every iteration's graph alive; use `.item()` (or `.detach()`).",
    snippet="total_loss += loss.item()", expected_saving="one iteration's graph per step that was being kept")


@register("detach_accumulated_loss", rule="exact")
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    return diff_proposal(edit_script(site, item_on_accumulated_loss), "Accumulate the loss with .item()")


def item_on_accumulated_loss(source: str, lines: set[int]) -> str | None:
    tree = ast.parse(source)
    targets = [node for node in ast.walk(tree) if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
               and "loss" in ast.unparse(node.value).lower() and not ast.unparse(node.value).endswith((".item()", ".detach()"))
               and near(node, lines)]
    return wrap_all(source, [node.value for node in targets], "({}).item()", simple="{}.item()")
