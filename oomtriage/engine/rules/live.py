"""Rules on what the live process reported at the OOM (through the hook): autograd and autocast
state, dtypes of live memory, and the command line."""

from __future__ import annotations

from typing import Iterator

from . import RuleInput, Vote, rule


@rule
def autograd_in_evaluation(data: RuleInput) -> Iterator[Vote]:
    runtime = data.context.runtime
    if runtime is None or runtime.grad_enabled is None or data.signals.phase != "evaluation":
        return
    if runtime.grad_enabled:
        yield Vote("missing_no_grad", 0.85, "Autograd was enabled (torch.is_grad_enabled() was True) when evaluation "
                   "code ran out of memory: every forward saved its activations for a backward that never comes.")
    else:
        yield Vote("missing_no_grad", -0.8, "Evaluation already ran under no_grad/inference_mode.")


@rule
def precision_of_live_memory(data: RuleInput) -> Iterator[Vote]:
    runtime, signals = data.context.runtime, data.signals
    if runtime is None or not runtime.dtype_shares or runtime.autocast_enabled or signals.phase not in ("training", "unknown"):
        return
    fp32 = runtime.dtype_shares.get("float32", 0.0)
    if fp32 < 0.9:
        return
    yield Vote("full_precision", 0.4, f"{fp32:.0%} of live tensor memory was float32 and autocast was off: bf16 "
               "autocast would halve the activations saved for backward.")
    if signals.batch_size is not None and signals.batch_size <= 8:
        yield Vote("full_precision", 0.3, f"The batch is already small ({signals.batch_size}); precision is the "
                   "remaining lever on activation size.")


@rule
def batch_on_the_command_line(data: RuleInput) -> Iterator[Vote]:
    signals = data.signals
    if signals.batch_size is None or data.context.runtime is None:
        return
    if signals.batch_size >= 64 and signals.immediate:
        yield Vote("batch_too_large", 0.45, f"The first step already failed with a batch of {signals.batch_size}.")
    if signals.batch_size <= 4:
        yield Vote("batch_too_large", -0.3, f"The batch is already {signals.batch_size}.")
