"""A shorter sequence (or a smaller resolution) through the program's option: it changes what is
trained, so its numerics are never compared with the original run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register

REDUCE_INPUT = Fix(
    kind="reduce_input_size", title="Cap the input size (sequence length, resolution, boxes per image)",
    how="Truncate or bucket long inputs, cap max length / resolution / detections, or filter outliers.",
    snippet="tokens = tokenizer(text, truncation=True, max_length=2048)",
    expected_saving="activations scale linearly (quadratically for naive attention) with sequence length")


@register("reduce_input_size", rule=None)
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    from .actions import option_proposal
    from oomtriage.program.setting import express
    option = site.program.find("sequence")
    size = option.current_int() if option else None
    if option is None or not size or size < 2:
        return []
    smaller = size // 2
    expressed = express(site.command, site.project, [(option, str(smaller))])
    if not expressed:
        return []
    return [option_proposal(f"{option.name} {size} -> {smaller}", expressed,
                            changes_workload=f"{option.name} changes from {size} to {smaller}")]
