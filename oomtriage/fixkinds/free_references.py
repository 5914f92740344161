"""Outputs kept across iterations without their graph: ``history.append(out)`` ->
``history.append(out.detach())``; for a Hugging Face Trainer, evaluation outputs moved off the GPU
as they come (``--eval_accumulation_steps``)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register
from .edits import diff_proposal, edit_script, near, wrap_all

FREE_REFERENCES = Fix(
    kind="free_references", title="Store detached CPU copies of outputs you keep",
    how="Lists, dicts and caches of outputs keep GPU memory (and graphs) alive for the whole loop.",
    snippet="preds.append(out.detach().cpu())   # not preds.append(out)",
    expected_saving="everything the kept outputs pinned on the GPU")
EVAL_ACCUMULATION = Fix(
    kind="free_references", title="Move evaluation outputs off the GPU as you go",
    how="HF Trainer keeps all eval logits on the GPU until the end unless eval_accumulation_steps is set; "
        "reduce logits to predictions before storing them.",
    snippet="TrainingArguments(..., eval_accumulation_steps=8)\n"
            "def preprocess_logits_for_metrics(logits, labels):\n    return logits.argmax(-1)",
    expected_saving="all accumulated eval logits")


@register("free_references", rule="exact")
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    from .actions import option_proposal
    from oomtriage.program.setting import express
    option = site.program.find("eval_accumulation")
    if option is not None and not option.current_int():
        expressed = express(site.command, site.project, [(option, "1")])
        if expressed:
            title = "Move evaluation outputs to the CPU after every step (eval_accumulation_steps 1)"
            return [option_proposal(title, expressed)]
    return diff_proposal(edit_script(site, detach_appended_outputs), "Keep detached copies of the outputs you store")


def detach_appended_outputs(source: str, lines: set[int]) -> str | None:
    tree = ast.parse(source)
    values = [node.args[0] for node in ast.walk(tree)
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
              and len(node.args) == 1 and isinstance(node.args[0], (ast.Name, ast.Attribute, ast.Subscript))
              and ".detach()" not in ast.unparse(node.args[0]) and near(node, lines)]
    return wrap_all(source, values, "({}).detach()", simple="{}.detach()")
