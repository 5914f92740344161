"""Leaner optimizer steps: ``foreach=False`` on a ``torch.optim`` optimizer the script builds (the
foreach step keeps a transient copy of the parameters; the for-loop step does the same math one
tensor at a time)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register
from .edits import diff_proposal, edit_first_file, replace_nodes

OPTIMIZER_MEMORY = Fix(
    kind="optimizer_memory", title="Shrink optimizer state",
    how="Adam keeps two fp32 moments per parameter (8 B/param). Use foreach=False to drop the step's transient "
        "copy, an 8-bit optimizer (bitsandbytes), or offload the optimizer (ZeRO-Offload / FSDP CPUOffload).",
    snippet="optimizer = torch.optim.AdamW(model.parameters(), lr=lr, foreach=False)\n"
            "# or: import bitsandbytes as bnb; optimizer = bnb.optim.AdamW8bit(model.parameters(), lr=lr)",
    expected_saving="8-bit Adam: 6 of 8 bytes/param; foreach=False: ~1x params at the step peak")

_OPTIMIZERS = {"Adam", "AdamW", "SGD", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "Adadelta"}


# Hugging Face's --optim values that keep less state than AdamW's two fp32 moments: factored
# second moments (in transformers itself), and 8-bit moments when bitsandbytes is installed.
_LEANER_HF_OPTIMIZERS = (("adafactor", None), ("adamw_bnb_8bit", "bitsandbytes"))


@register("optimizer_memory", rule="reordered")
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    edit = edit_first_file(site, foreach_off)
    if edit is not None:
        return diff_proposal(edit, "Optimizer step without the foreach copy (foreach=False)")
    return _leaner_optimizer_option(site)


def _leaner_optimizer_option(site: FixSite) -> list[Proposal]:
    """``--optim adafactor`` (or an 8-bit AdamW) for a program with Hugging Face's optimizer option:
    less optimizer state, but another optimizer, so the workload changes."""
    import importlib.util

    from oomtriage.program.setting import express

    from .actions import FixAction, Proposal

    option = next((o for o in site.program.find_all("optimizer") if o.style == "hf_arguments"), None)
    if option is None or not (option.current or "").startswith("adamw"):
        return []
    for value, package in _LEANER_HF_OPTIMIZERS:
        if package is not None and importlib.util.find_spec(package) is None:
            continue
        expressed = express(site.command, site.project, [(option, value)])
        if expressed:
            return [Proposal(title=f"A leaner optimizer through the program's option ({' '.join(expressed.described)})",
                             action=FixAction(type="args", command=expressed.command, described=" ".join(expressed.described)),
                             changes_workload=f"the optimizer changes from {option.current} to {value}")]
    return []


def foreach_off(source: str, lines: set[int]) -> str | None:
    from oomtriage.program.source_values import span_of

    tree = ast.parse(source)
    edits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).rsplit(".", 1)[-1] in _OPTIMIZERS \
                and "optim" in ast.unparse(node.func) and node.args:
            names = {keyword.arg for keyword in node.keywords}
            if "foreach" in names or "fused" in names or None in names:  # **kwargs may carry fused=True
                continue
            start, end = span_of(source, node)
            edits.append((node, source[start:end - 1].rstrip().rstrip(",") + ", foreach=False)"))
    return replace_nodes(source, edits)
