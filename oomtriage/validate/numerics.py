"""The numerics gate, in the spirit of PEAT (golden run vs candidate): per-step losses and gradient
norms of a fixed-seed repro, compared with a bound that depends on what the fix may change
(reference/memory_model_and_numerics.md §4.5-4.7)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel

from oomtriage.models import Measurement

# Fixes that compute the same math in the same order: the CPU repro is bit-for-bit or nearly so.
EXACT = {"no_grad_eval", "detach_accumulated_loss", "free_references", "alloc_conf"}
# Same math, different summation order (fused kernels, micro-batches, recomputation, foreach off).
REORDERED = {"sdpa_attention", "reduce_batch_size", "gradient_checkpointing", "optimizer_memory"}
# Lower precision: bounded by bf16's unit roundoff (2^-8) with headroom for a few steps.
PRECISION = {"mixed_precision"}
BOUNDS = {"exact": 1e-6, "reordered": 1e-4, "precision": 2e-2}

Verdict = Literal["passed", "failed", "not_checked"]


class NumericsResult(BaseModel):
    verdict: Verdict
    rule: str
    bound: float | None = None
    steps_compared: int = 0
    mean_relative_error: float | None = None
    max_relative_error: float | None = None
    first_step_out_of_bound: int | None = None
    reason: str | None = None


def rule_for(kind: str) -> str | None:
    if kind in EXACT:
        return "exact"
    if kind in REORDERED:
        return "reordered"
    if kind in PRECISION:
        return "precision"
    return None


def _relative(a: float, b: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b), 1e-12)


def compare(golden: Measurement, candidate: Measurement, kind: str) -> NumericsResult:
    rule = rule_for(kind)
    if rule is None:
        return NumericsResult(verdict="not_checked", rule="none", reason=f"a {kind} fix changes the workload itself; "
                              "its numerics cannot be compared with the original run")
    if "fake" in (golden.device, candidate.device):
        return NumericsResult(verdict="not_checked", rule=rule, reason="measured on fake tensors, which hold no values")
    if candidate.device == "cpu" and candidate.peak_allocated_bytes is None:
        return NumericsResult(verdict="not_checked", rule=rule, reason="the candidate ran without measurement")
    pairs = [("loss", golden.step_losses, candidate.step_losses), ("grad_norm", golden.grad_norms, candidate.grad_norms)]
    errors: list[float] = []
    first_bad: int | None = None
    bound = BOUNDS[rule]
    steps = min(len(golden.step_losses), len(candidate.step_losses))
    if steps == 0:
        return NumericsResult(verdict="not_checked", rule=rule, bound=bound,
                              reason="no optimizer step completed in both runs, so there is nothing to compare")
    for _, reference, values in pairs:
        for step, (a, b) in enumerate(zip(reference[:steps], values[:steps])):
            error = _relative(a, b)
            errors.append(error)
            if error > bound and (first_bad is None or step < first_bad):
                first_bad = step
    finite = [error for error in errors if math.isfinite(error)]
    return NumericsResult(
        verdict="passed" if first_bad is None else "failed", rule=rule, bound=bound, steps_compared=steps,
        mean_relative_error=sum(finite) / len(finite) if finite else math.inf,
        max_relative_error=max(errors) if errors else None, first_step_out_of_bound=first_bad,
        reason=None if first_bad is None else f"step {first_bad} leaves the {rule} bound ({bound:g})",
    )
