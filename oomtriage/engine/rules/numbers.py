"""Rules on the allocator's figures: fragmentation, other processes, caps, single huge requests."""

from __future__ import annotations

from typing import Iterator

from oomtriage.sizes import format_size

from ..facts import CONTEXT_OVERHEAD
from . import RuleInput, Vote, rule

GIB = 1024**3


@rule
def fragmentation_figures(data: RuleInput) -> Iterator[Vote]:
    n = data.numbers
    if n.requested is None or n.unallocated is None:
        return
    if n.free is not None and n.free < n.requested <= n.free + n.unallocated:
        # A cache that is a sliver of the device cannot be what stops the run, even if it "covers" a small request.
        significant = not n.capacity or n.unallocated >= 0.05 * n.capacity
        strength = (0.75 if n.unallocated >= 2 * n.requested else 0.55) if significant else 0.25
        yield Vote("fragmentation", strength, f"{format_size(n.unallocated)} was reserved but unallocated and "
                   f"{format_size(n.free)} free, together more than the {format_size(n.requested)} requested, yet no "
                   "block was large enough: the cache is fragmented.")
    elif n.reserved and n.unallocated > 0.3 * n.reserved and n.unallocated > GIB:
        yield Vote("fragmentation", 0.45, f"{format_size(n.unallocated)} ({n.unallocated / n.reserved:.0%} of "
                   "PyTorch's reservation) sat unused in the cache.")


@rule
def snapshot_and_stats(data: RuleInput) -> Iterator[Vote]:
    snapshot, stats = data.context.snapshot, data.context.memory_stats
    if snapshot and snapshot.inactive_bytes > GIB // 2 and snapshot.fragmentation > 0.5:
        yield Vote("fragmentation", 0.7, f"The snapshot shows {format_size(snapshot.inactive_bytes)} of free cached "
                   f"blocks, but the largest is only {format_size(snapshot.largest_free_block_bytes)} "
                   f"(fragmentation {snapshot.fragmentation:.0%}).")
    # Every OOM follows one flush-and-retry; only retries beyond the OOMs mean earlier pressure.
    if stats and (stats.num_alloc_retries or 0) - (stats.num_ooms or 0) >= 2:
        yield Vote("fragmentation", 0.35, f"The allocator flushed its cache and retried {stats.num_alloc_retries} "
                   "times (num_alloc_retries): memory pressure with a fragmented cache.")


@rule
def repeated_work(data: RuleInput) -> Iterator[Vote]:
    if data.signals.repeated_calls:
        yield Vote("fragmentation", 0.45, f'The failure comes on repeated work in one process ("{data.signals.evidence["repeated_calls"]}"): '
                   "cached blocks sized for the earlier shapes do not fit the new ones.")


@rule
def other_processes(data: RuleInput) -> Iterator[Vote]:
    n, signals = data.numbers, data.signals
    if n.other_processes and n.total and n.other_processes > max(GIB, 0.1 * n.total):
        yield Vote("other_process_or_device", 0.55 + 0.3 * min(1.0, n.other_processes / n.total),
                   f"Other processes held {format_size(n.other_processes)} ({n.other_processes / n.total:.0%} of the GPU).")
    elif n.non_pytorch is not None and n.total and n.non_pytorch - CONTEXT_OVERHEAD > 0.15 * n.total:
        yield Vote("other_process_or_device", 0.55, f"{format_size(n.non_pytorch)} of the GPU was in use outside PyTorch's "
                   "cache, far more than a CUDA context needs: another process or framework holds it.")
    if signals.other_process_hint:
        yield Vote("other_process_or_device", 0.5, f'The note says "{signals.evidence["other_process_hint"]}".')


@rule
def memory_cap(data: RuleInput) -> Iterator[Vote]:
    n = data.numbers
    if n.allowed and n.total and n.allowed < 0.9 * n.total:
        yield Vote("other", 0.55, f"set_per_process_memory_fraction caps the process at {format_size(n.allowed)} of "
                   f"{format_size(n.total)}: the cap, not the GPU, ran out.")
    if n.private_pools and n.allocated and n.private_pools > 0.2 * n.allocated:
        yield Vote("other", 0.4, f"CUDA Graphs' private pools hold {format_size(n.private_pools)}; captured graphs keep "
                   "their memory for as long as they live.")


@rule
def huge_single_request(data: RuleInput) -> Iterator[Vote]:
    n, signals = data.numbers, data.signals
    if n.requested is None or signals.phase == "loading":
        return
    if signals.seq_len and n.requested % (signals.seq_len**2) == 0:
        factor = n.requested // signals.seq_len**2
        yield Vote("attention_quadratic", 0.8, f"{format_size(n.requested)} = {factor} x {signals.seq_len}² bytes: a "
                   "sequence x sequence attention matrix at the stated sequence length.")
    if not n.capacity:
        return
    share = n.requested / n.capacity
    if share < 0.2:
        return
    size = format_size(n.requested)
    lead = "larger than the whole device" if share > 1 else f"{share:.0%} of the device"
    yield Vote("input_size_too_large", 0.5 if share > 1 else 0.4, f"One tensor of {size} ({lead}): a single activation "
               "this large comes from the input's size.")
    yield Vote("batch_too_large", 0.3, f"A {size} activation scales with the batch.")
    if signals.domains & {"llm", "encoder", "diffusion"} or signals.seq_len:
        yield Vote("attention_quadratic", 0.35, f"A single {size} tensor in a transformer is typically an attention "
                   "score matrix (batch x heads x seq x seq).")
    if _power_of_two(n.requested) and n.requested >= GIB and signals.domains & {"diffusion", "llm", "encoder"}:
        yield Vote("attention_quadratic", 0.45, f"{size} is an exact power of two, the size of a square attention matrix.")


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0
