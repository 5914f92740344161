"""The numerics gate, in the spirit of PEAT (golden run vs candidate): per-step losses and gradient
norms of a fixed-seed repro, compared with a bound that depends on what the fix may change
(reference/memory_model_and_numerics.md §4.5-4.7)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field

from oomtriage.models import Measurement

# Each fix kind's rule lives with the kind (oomtriage.fixkinds): "exact" for the same math in the same
# order (bit-for-bit or nearly), "reordered" for the same math in another summation order (fused
# kernels, micro-batches, recomputation, foreach off), "precision" for lower precision, bounded by
# bf16's unit roundoff (2^-8) with headroom for a few steps.
BOUNDS = {"exact": 1e-6, "reordered": 1e-4, "precision": 2e-2}
# A repro that is not bit-reproducible (nondeterministic kernels: cuBLAS/cuDNN algorithm choice,
# atomics; BLAS paths that depend on alignment or thread count) differs from itself. The candidate
# may then differ from the original by a few times that run-to-run noise without any change in math.
NOISE_FACTOR = 10
# The widening stops at the next looser rule: noise can never turn an "exact" fix into one judged
# as loosely as mixed precision. A repro noisier than that cannot judge the fix at all.
WIDEST = {"exact": BOUNDS["reordered"], "reordered": BOUNDS["precision"], "precision": BOUNDS["precision"]}

Verdict = Literal["passed", "failed", "not_checked"]


SERIES_KEPT = 2000  # steps of each loss series kept in the result (for the report's plot)


class NumericsResult(BaseModel):
    verdict: Verdict
    rule: str
    bound: float | None = Field(None, description="the bound applied: the rule's, or NOISE_FACTOR x the noise floor if larger")
    noise_floor: float | None = Field(None, description="max relative difference between two runs of the unchanged repro")
    steps_compared: int = 0
    mean_relative_error: float | None = None
    max_relative_error: float | None = None
    first_step_out_of_bound: int | None = None
    reason: str | None = None
    compared_on: str | None = Field(None, description="which runs were compared: as written, or with dropout off in both")
    baseline_step_losses: list[float] = Field(default_factory=list, description="the loss per step compared against (first "
                                              f"{SERIES_KEPT} steps)")
    fix_step_losses: list[float] = Field(default_factory=list, description="the fix's loss per step")
    baseline_grad_norms: list[float] = Field(default_factory=list, description="the gradient norm per step compared against")
    fix_grad_norms: list[float] = Field(default_factory=list, description="the fix's gradient norm per step")


def rule_for(kind: str) -> str | None:
    from oomtriage.fixkinds import rule_for as kind_rule

    return kind_rule(kind)


def _relative(a: float, b: float) -> float:
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return abs(a - b) / max(abs(a), abs(b), 1e-12)


def _step_errors(golden: Measurement, candidate: Measurement) -> tuple[int, list[tuple[int, str, float]]]:
    """(steps compared, [(step, metric, relative error)]) over the optimizer steps both runs completed."""
    steps = min(len(golden.step_losses), len(candidate.step_losses))
    errors = []
    for metric, reference, values in (("loss", golden.step_losses, candidate.step_losses),
                                      ("grad norm", golden.grad_norms, candidate.grad_norms)):
        errors += [(step, metric, _relative(a, b)) for step, (a, b) in enumerate(zip(reference[:steps], values[:steps]))]
    return steps, errors


def noise_floor(golden: Measurement, repeat: Measurement) -> float | None:
    """The run-to-run noise of the unchanged repro: its largest relative difference from itself."""
    steps, errors = _step_errors(golden, repeat)
    return max((error for _, _, error in errors), default=0.0) if steps else None


def compare(golden: Measurement, candidate: Measurement, kind: str, noise: float | None = None,
            rule: str | None = None) -> NumericsResult:
    """Step-by-step losses and gradient norms against the rule's bound, widened to the measured noise."""
    rule = rule or rule_for(kind)
    if rule is None:
        return NumericsResult(verdict="not_checked", rule="none", reason=f"a {kind} fix changes the workload itself; "
                              "its numerics cannot be compared with the original run")
    if "fake" in (golden.device, candidate.device):
        return NumericsResult(verdict="not_checked", rule=rule, reason="measured on fake tensors, which hold no values")
    if candidate.device == "cpu" and candidate.peak_allocated_bytes is None:
        return NumericsResult(verdict="not_checked", rule=rule, reason="the candidate ran without measurement")
    if noise is not None and (not math.isfinite(noise) or NOISE_FACTOR * noise > WIDEST[rule]):
        return NumericsResult(verdict="not_checked", rule=rule, noise_floor=noise,
                              reason=f"the unchanged repro differs from itself by {noise:.1e} (relative), too much to judge "
                                     f"a {rule} fix (at most {WIDEST[rule]:g} after widening): seed it (torch.manual_seed, "
                                     "deterministic data order) and validate again")
    bound = max(BOUNDS[rule], NOISE_FACTOR * noise) if noise is not None else BOUNDS[rule]
    steps, errors = _step_errors(golden, candidate)
    series = {"baseline_step_losses": [_plain(value) for value in golden.step_losses[:SERIES_KEPT]],
              "fix_step_losses": [_plain(value) for value in candidate.step_losses[:SERIES_KEPT]],
              "baseline_grad_norms": [_plain(value) for value in golden.grad_norms[:SERIES_KEPT]],
              "fix_grad_norms": [_plain(value) for value in candidate.grad_norms[:SERIES_KEPT]]}
    if steps == 0:
        return NumericsResult(verdict="not_checked", rule=rule, bound=bound, noise_floor=noise, **series,
                              reason="no optimizer step completed in both runs, so there is nothing to compare")
    out_of_bound = [bad for bad in errors if bad[2] > bound]
    finite = [error for _, _, error in errors if math.isfinite(error)]
    first = min(out_of_bound, key=lambda bad: (bad[0], -bad[2]), default=None)  # first step, worst metric
    return NumericsResult(
        verdict="passed" if first is None else "failed", rule=rule, bound=bound, noise_floor=noise, steps_compared=steps,
        mean_relative_error=sum(finite) / len(finite) if finite else math.inf,
        max_relative_error=max(error for _, _, error in errors), first_step_out_of_bound=first[0] if first else None,
        reason=None if first is None else _failure(first, rule, bound, noise), **series,
    )


def _plain(value: float) -> float:
    """JSON has no NaN or infinity: a diverged loss is kept as the largest float."""
    return value if math.isfinite(value) else (1.7976931348623157e308 if value > 0 or math.isnan(value) else -1.7976931348623157e308)


def _failure(first: tuple[int, str, float], rule: str, bound: float, noise: float | None) -> str:
    step, metric, error = first
    why = f"step {step}: the {metric} differs by {error:.1e} (relative), beyond the {rule} bound ({bound:g})"
    if noise is not None:
        why += f"; the unchanged repro differs from itself by {noise:.1e}" if noise else "; the unchanged repro is bit-reproducible"
    return why
