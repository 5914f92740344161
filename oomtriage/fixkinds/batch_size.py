"""A smaller micro-batch. With an accumulation option the effective batch is kept (micro x steps),
and the validator searches the divisors of the batch for the largest micro-batch that fits the card.
In evaluation, the evaluation batch is the one to lower (training is unchanged)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register

REDUCE_BATCH = Fix(
    kind="reduce_batch_size", title="Lower the micro-batch and accumulate gradients",
    how="Keep the effective batch by accumulating gradients over k micro-batches; divide the loss by k.",
    snippet="for i, (x, y) in enumerate(loader):          # loader batch = old_batch // k\n"
            "    loss = model(x, y) / k\n    loss.backward()\n    if (i + 1) % k == 0:\n"
            "        optimizer.step(); optimizer.zero_grad(set_to_none=True)",
    expected_saving="activations shrink ~linearly with the micro-batch (÷2 halves them)")


def _divisors_below(value: int) -> list[int]:
    return [size for size in range(value - 1, 0, -1) if value % size == 0]


@register("reduce_batch_size", rule="reordered", varies_randomness=True, search=True)
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    from oomtriage.program.setting import express
    program = site.program
    evaluation = site.phase == "evaluation" and program.find("eval_batch") is not None
    batch = program.find("eval_batch") if evaluation else program.find("batch")
    size = batch.current_int() if batch else None
    if batch is None or not size or size < 2:
        return []
    proposals = []
    if evaluation:
        for smaller in _halvings(size):
            expressed = express(site.command, site.project, [(batch, str(smaller))])
            if expressed:
                proposals.append(_proposal(f"Evaluation batch {size} -> {smaller} (training unchanged)", expressed,
                                           smaller, rule="exact"))
        return proposals
    accumulation = program.find("accumulation")
    steps = (accumulation.current_int() or 1) if accumulation else None
    if accumulation is not None and steps:
        for micro in _divisors_below(size):
            new_steps = steps * size // micro
            expressed = express(site.command, site.project, [(batch, str(micro)), (accumulation, str(new_steps))])
            if expressed:
                proposals.append(_proposal(f"Micro-batch {size} -> {micro} with {new_steps} accumulation steps (effective "
                                           f"batch {size * steps} kept)", expressed, micro))
        return proposals
    for smaller in _halvings(size):
        expressed = express(site.command, site.project, [(batch, str(smaller))])
        if expressed:
            proposals.append(_proposal(f"Batch {size} -> {smaller} (no accumulation option: the effective batch changes)",
                                       expressed, smaller, changes_workload=f"the effective batch changes from {size} to {smaller}"))
    return proposals


def _halvings(size: int) -> list[int]:
    found, value = [], size // 2
    while value >= 1:
        found.append(value)
        value //= 2
    return found


def _proposal(title: str, expressed, size: int, *, rule=None, changes_workload=None) -> Proposal:
    from .actions import option_proposal

    return option_proposal(title, expressed, size=size, rule=rule, changes_workload=changes_workload)
