"""Rules on the allocator's figures: fragmentation, other processes, caps, single huge requests."""

from __future__ import annotations

import math
import re

from typing import Iterator

from oomtriage.sizes import format_size

from ..facts import free_room_for_request, held_outside_the_cache
from . import RuleInput, Vote, rule
from ..signals import meaningful_frames
from .sites import innermost_site

# Allocation sites whose tensors do not scale with the batch or the input (rule allocation_site).
_NOT_ACTIVATIONS = ("optimizer_state", "checkpoint_loading")

GIB = 1024**3


@rule
def fragmentation_figures(data: RuleInput) -> Iterator[Vote]:
    n = data.numbers
    if n.requested is None or n.unallocated is None:
        return
    if n.free is not None and n.free < n.requested <= n.free + n.unallocated:
        # A cache that is a sliver of the device cannot be what stops the run, even if it "covers" a
        # small request: the strength follows the share of the device that sat unused in the cache.
        share = n.unallocated / n.capacity if n.capacity else 0.1
        strength = 0.75 if share >= 0.25 else 0.55 if share >= 0.1 else 0.3 if share >= 0.05 else 0.15
        if n.unallocated < 2 * n.requested:
            strength -= 0.1
        if n.unallocated >= n.requested >= 128 * 1024**2:
            # The idle cache alone held more than a large request: one contiguous block of it would
            # have served the request without asking the driver at all.
            strength = max(strength, 0.5)
        idle_cache_held_it = share >= 0.25 and n.unallocated >= n.requested
        if idle_cache_held_it:
            # A quarter of the card or more sat idle in the cache, more than the request by itself:
            # the memory for this tensor was there, cut into blocks too small for it.
            strength = 0.9
        loader_copies = data.signals.phase == "loading" and share >= 0.1
        if loader_copies:
            # While weights are loaded, what sits idle in the cache is what the loader freed: saved
            # tensors materialised on the GPU, copied into the model and dropped. The blocks are
            # fragments of those copies; loading to the CPU (map_location, mmap, low_cpu_mem_usage)
            # never makes them.
            strength = min(strength, 0.6)
        yield Vote("fragmentation", strength, f"{format_size(n.unallocated)} was reserved but unallocated and "
                   f"{format_size(n.free)} free, together more than the {format_size(n.requested)} requested, yet no "
                   "block was large enough: the cache is fragmented.")
        if loader_copies:
            yield Vote("checkpoint_loading", 0.6, f"It failed while loading ({data.signals.phase_source}) with "
                       f"{format_size(n.unallocated)} idle in PyTorch's cache: the loader's own copies, materialised on the GPU "
                       "and freed; load the saved tensors to the CPU (map_location='cpu', mmap=True) or with low_cpu_mem_usage.")
        if idle_cache_held_it:
            for cause in ("input_size_too_large", "batch_too_large"):
                yield Vote(cause, -0.25, f"PyTorch's cache alone held {format_size(n.unallocated)} idle, more than this "
                           "request: the memory for it was there, in pieces.")
    elif n.reserved and n.unallocated > 0.3 * n.reserved and n.unallocated > GIB:
        yield Vote("fragmentation", 0.45, f"{format_size(n.unallocated)} ({n.unallocated / n.reserved:.0%} of "
                   "PyTorch's reservation) sat unused in the cache.")


@rule
def bfc_pool_had_room(data: RuleInput) -> Iterator[Vote]:
    """TensorFlow's and XLA's BFC allocator prints its pool's limit and what is in use: a request
    smaller than the difference failed only because no free chunk was large enough."""
    error, n = data.context.error, data.numbers
    if not error or error.framework not in ("tensorflow", "jax") or n.requested is None or not n.total or n.allocated is None:
        return
    room = n.total - n.allocated
    if n.requested <= room and room > 0.1 * n.total:
        yield Vote("fragmentation", 0.6, f"The allocator's pool had {format_size(room)} not in use (limit {format_size(n.total)}, "
                   f"in use {format_size(n.allocated)}), more than the {format_size(n.requested)} requested, yet no free "
                   "chunk was large enough: the pool is fragmented.")


@rule
def tensorflow_growth_mode(data: RuleInput) -> Iterator[Vote]:
    """TensorFlow's growth mode (allow_growth, set_memory_growth) extends its BFC pool in pieces as
    the run asks for more; by default it reserves one region up front. A run that fits without the
    growth mode and fails with it had the memory, split across regions no large tensor spans."""
    signals = data.signals
    if signals.fits_without_growth_mode:
        yield Vote("fragmentation", 0.65, f'It fits without TensorFlow\'s growth mode and fails with it '
                   f'("{signals.evidence["fits_without_growth_mode"]}"): the pool grown piece by piece is split into '
                   "regions no large tensor spans; leave growth off (or set a fixed memory limit) for this job.")
        yield Vote("batch_too_large", -0.3, "The same batch fits when the pool is reserved in one piece.")


@rule
def inputs_growing_through_the_run(data: RuleInput) -> Iterator[Vote]:
    """Batches ordered from the shortest inputs to the longest: each asks for blocks larger than any
    the caching allocator kept from the previous ones, so reserved memory piles up in sizes no later
    batch can reuse. Running the largest batch first lets every later one reuse its blocks."""
    signals = data.signals
    if signals.lengths_increasing:
        yield Vote("fragmentation", 0.5, f'The inputs grow as the run goes ("{signals.evidence["lengths_increasing"]}"): every '
                   "larger batch needs new, larger blocks while the smaller ones stay cached; put the longest batch first "
                   "or set expandable_segments.")
        yield Vote("input_size_too_large", 0.2, "The longest inputs come last, where the most memory is already cached.")
        if signals.growth:
            for cause in ("reference_leak", "graph_retained"):
                yield Vote(cause, -0.25, "The growth follows the inputs' lengths, which the cache keeps blocks for, not tensors "
                           "the code keeps.")


@rule
def input_size_raised_on_a_schedule(data: RuleInput) -> Iterator[Vote]:
    """A curriculum or progressive resizing raises the sequence length or resolution as the epochs go
    by: every step's activations grow with it, so the run that fit at the start stops fitting once the
    schedule passes what the card holds. That is the input's size, not something kept."""
    signals = data.signals
    if not signals.length_schedule_grows:
        return
    yield Vote("input_size_too_large", 0.6, f'The input size is raised as training goes on ("{signals.evidence["length_schedule_grows"]}"): '
               "each later epoch runs on longer (or larger) inputs than the first; cap the length the schedule reaches, "
               "or lower the batch as it grows.")
    for cause in ("graph_retained", "reference_leak", "batch_too_large"):
        yield Vote(cause, -0.25, "The later failure follows the schedule's input size, which grows by design.")


@rule
def allocator_settings_in_the_note(data: RuleInput) -> Iterator[Vote]:
    """expandable_segments and max_split_size_mb change nothing but how the cache is carved into
    blocks: an OOM they make go away was fragmentation; one that survives them was not (or the
    setting never took effect: it is read once, when CUDA is first used)."""
    signals, n = data.signals, data.numbers
    if signals.allocator_setting_helped is True:
        yield Vote("fragmentation", 0.8, "An allocator setting that only changes how the cache is split into blocks "
                   f'made it work ("{signals.evidence["allocator_setting"]}"): the memory was there, in pieces.')
    elif signals.allocator_setting:
        if signals.allocator_setting_helped is False:
            yield Vote("fragmentation", -0.5, f'The allocator\'s anti-fragmentation setting did not help ("{signals.evidence["allocator_setting"]}").')
        if signals.setting_ignored:
            yield Vote("framework_bug", 0.6, f'The allocator setting was given but did not take effect ("{signals.evidence["setting_ignored"]}"): '
                       "set it before CUDA is first used, spell it as this version reads it (older versions read only PYTORCH_CUDA_ALLOC_CONF), "
                       "or upgrade a version that ignores it.")
        idle = n.unallocated if n.unallocated is not None else signals.note_unallocated
        if idle and signals.expandable_segments_on and (idle > 0.08 * n.capacity if n.capacity else idle > GIB):
            yield Vote("framework_bug", 0.55, f"With expandable segments the cache should not hold {format_size(idle)} "
                       "reserved but unallocated: the setting did not take effect (set after CUDA was first used, misspelled, "
                       "or ignored by this version).")
            yield Vote("fragmentation", -0.3, "Expandable segments let unused cache pages serve a request of any size.")
    said_reserved, said_allocated = signals.note_reserved, signals.note_allocated
    if n.unallocated is None and said_reserved and said_allocated is not None and said_reserved - said_allocated > max(GIB, 0.25 * said_reserved):
        yield Vote("fragmentation", 0.6, f"By the note's figures PyTorch reserved {format_size(said_reserved)} but only "
                   f"{format_size(said_allocated)} was allocated: {format_size(said_reserved - said_allocated)} sat idle in the cache.")
    if n.unallocated is None and signals.note_unallocated and signals.note_unallocated > GIB:
        yield Vote("fragmentation", 0.6, f"The note gives {format_size(signals.note_unallocated)} reserved but unallocated at "
                   "the failure: memory the cache held in blocks too small or too scattered for the request.")
    if signals.reserved_grows:
        yield Vote("fragmentation", 0.7, f'The cache grows while the live tensors do not ("{signals.evidence["reserved_grows"]}"): '
                   "freed blocks are not reused for the new sizes, so the allocator keeps reserving more.")
    if signals.fragmentation_said:
        yield Vote("fragmentation", 0.45, f'The note says "{signals.evidence["fragmentation_said"]}".')
    if signals.freed_then_again:
        # The freed block went back to the cache; smaller tensors allocated since sit inside its
        # segment, so the same size no longer finds a contiguous block and a new segment is needed.
        yield Vote("fragmentation", 0.65 if signals.free_at_failure else 0.5,
                   f'A large tensor was freed and asked for again ("{signals.evidence["freed_then_again"]}"): smaller tensors '
                   "allocated meanwhile split its cached segment, so the same request needs new memory "
                   "(expandable_segments:True lets the cache grow a segment instead).")


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
    """Work that fits once and fails the second time in one process: either what the first round
    left is still referenced (a model, outputs, a cache), or cached blocks of its shapes do not fit
    the new ones. Live memory filling the card at the failure says which."""
    if not data.signals.repeated_calls:
        return
    said = data.signals.evidence["repeated_calls"]
    yield Vote("fragmentation", 0.45, f'The failure comes on repeated work in one process ("{said}"): '
               "cached blocks sized for the earlier shapes do not fit the new ones.")
    if data.signals.works_alone:
        # The same input runs when nothing came before it: its size is not what ran out.
        yield Vote("input_size_too_large", -0.4, f'The same work runs by itself ("{data.signals.evidence["works_alone"]}"): '
                   "what came before it in the process is the difference.")
        yield Vote("batch_too_large", -0.2, "The same batch fits when it runs first.")
    n = data.numbers
    if n.allocated and n.capacity and n.allocated > 0.8 * n.capacity:
        yield Vote("reference_leak", 0.6, f"{format_size(n.allocated)} is live at the failure ({n.allocated / n.capacity:.0%} of the "
                   "card): what the earlier round created (a model, its outputs, a cache) is still referenced; "
                   "`del` it and call `gc.collect()` and `torch.cuda.empty_cache()` before the next one.")


def sibling_processes(data: RuleInput) -> list[int]:
    """Other processes on this device that each hold about the same small amount: the footprint of
    one program's CUDA context (plus a few tensors) repeated, i.e. the job's own other ranks or
    workers, each of which touched this device (no ``torch.cuda.set_device(local_rank)``, a default
    ``cuda:0``, ``torch.load`` without ``map_location``)."""
    error = data.context.error
    if error is None:
        return []
    others = sorted(process.used_bytes for process in error.processes if not process.is_self and process.used_bytes)
    small = [used for used in others if used <= 3 * GIB]
    if len(small) < 2:
        return []
    median = small[len(small) // 2]
    alike = [used for used in small if abs(used - median) <= 0.15 * median]
    many = len(alike) >= 3 or (len(alike) >= 2 and data.signals.distributed)
    return alike if many and len(alike) >= 0.6 * len(others) else []


def _held_by_this_process(data: RuleInput) -> bool:
    """The driver's list shows this process itself holding nearly all the used memory: what lies
    outside PyTorch's cache is then its own (CUDA graphs, NCCL buffers, libraries), not another's."""
    error, n = data.context.error, data.numbers
    if error is None or not n.total or n.free is None:
        return False
    own = sum(process.used_bytes for process in error.processes if process.is_self and process.used_bytes)
    return own >= 0.95 * (n.total - n.free)


@rule
def other_processes(data: RuleInput) -> Iterator[Vote]:
    n, signals = data.numbers, data.signals
    siblings = sibling_processes(data)
    if siblings:
        yield Vote("distributed_replication", 0.75 if len(siblings) >= 3 else 0.6,
                   f"{len(siblings)} other processes each hold about {format_size(siblings[len(siblings) // 2])} of this GPU: "
                   "the same footprint repeated is the job's own other ranks or workers, each of which created its CUDA "
                   "context (and tensors) on this device instead of its own (set torch.cuda.set_device(local_rank) first).")
        yield Vote("other_process_or_device", -0.35, "The other processes are copies of this job, not someone else's.")
    if n.other_processes and n.total and n.other_processes > max(GIB, 0.1 * n.total):
        yield Vote("other_process_or_device", 0.55 + 0.3 * min(1.0, n.other_processes / n.total),
                   f"Other processes held {format_size(n.other_processes)} ({n.other_processes / n.total:.0%} of the GPU).")
    elif held_outside_the_cache(n) and not _held_by_this_process(data):
        yield Vote("other_process_or_device", 0.55, f"{format_size(n.non_pytorch)} of the GPU was in use outside PyTorch's "
                   "cache, far more than a CUDA context needs: another process or framework holds it.")
    if signals.other_process_hint and not signals.ranks_on_gpu0:
        # (processes the note puts on GPU 0 beside a job of several ranks are that job's own ranks:
        # rule one_gpu_heavier)
        yield Vote("other_process_or_device", 0.6, f'The note says "{signals.evidence["other_process_hint"]}".')


@rule
def memory_free_at_failure(data: RuleInput) -> Iterator[Vote]:
    """The device had room (by the driver's figure, or by what the user saw) and still refused:
    a cap, a driver or build limit, or an allocator bug, not the workload."""
    n, signals = data.numbers, data.signals
    capped = bool(n.allowed and n.total and n.allowed < 0.9 * n.total)  # the cap explains it (rule memory_cap)
    reported_free = free_room_for_request(n) and not capped
    if reported_free:
        yield Vote("framework_bug", 0.45, f"The driver reported {format_size(n.free)} free, more than the "
                   f"{format_size(n.requested)} requested, and the allocation still failed.")
        yield Vote("other", 0.3, "A limit below the device's size (a memory cap, a driver or runtime limit) refused it.")
    elif signals.free_at_failure:
        yield Vote("framework_bug", 0.4, f'The device was far from full when it failed ("{signals.evidence["free_at_failure"]}").')
        yield Vote("other", 0.2, "A cap or runtime limit, not the device's memory, was reached.")
    # (not when the note wants another card: the size it gives is that card's, rule another_gpu_was_meant)
    if n.total and signals.note_gpu_capacity and signals.note_gpu_capacity > 1.5 * n.total and not signals.gpu_count \
            and not signals.other_gpu_wanted:
        yield Vote("framework_bug", 0.55, f"The runtime reports {format_size(n.total)} in total, far less than the "
                   f"{format_size(signals.note_gpu_capacity)} the device has: the build or driver sees only part of it.")
        yield Vote("other", 0.35, "The visible memory is capped below the device's (a driver, firmware or runtime setting).")


@rule
def single_allocation_limit(data: RuleInput) -> Iterator[Vote]:
    """Intel GPU runtimes refuse one allocation of 4 GB or more by default (a per-allocation limit of
    the driver stack, lifted only in newer PyTorch XPU builds), however much of the card is free."""
    error, n = data.context.error, data.numbers
    if not (error and error.backend == "xpu" and n.requested and n.requested >= 4 * 2**30):
        return
    held = (n.allocated or 0) + (n.unallocated or 0)
    if n.total and n.requested < 0.9 * n.total and held < 0.25 * n.total:
        yield Vote("framework_bug", 0.7, f"One {format_size(n.requested)} allocation on an Intel GPU with "
                   f"{format_size(held)} in use: Intel's runtime caps a single allocation at 4 GB by default; split the tensor "
                   "or use a PyTorch XPU build that lifts the limit.")
        yield Vote("full_precision", -0.3, "Halving the precision only helps if it brings this one tensor under the limit.")


@rule
def memory_cap(data: RuleInput) -> Iterator[Vote]:
    n = data.numbers
    error = data.context.error
    if error and error.backend == "mps" and error.allowed_bytes and error.format == "pytorch_mps":
        held = (error.allocated_bytes or 0) + max(0, (error.reserved_bytes or 0) - (error.allocated_bytes or 0))
        if held < 0.5 * error.allowed_bytes:
            yield Vote("other", 0.7, f"MPS refused with only {format_size(held)} in use of a {format_size(error.allowed_bytes)} "
                       "limit: the MPS high-watermark cap (PYTORCH_MPS_HIGH_WATERMARK_RATIO), not the workload, is what ran out.")
        elif not data.signals.switch_no_effect:
            # "max allowed" is the high watermark PyTorch sets on unified memory (a multiple of the
            # recommended working set), not the memory itself: the limit that stopped the run is a cap
            # that can be lifted, where the system then pages instead of failing.
            yield Vote("other", 0.6, f"MPS stopped at its high-watermark limit ({format_size(error.allowed_bytes)} max allowed), "
                       "a cap PyTorch puts on unified memory rather than the memory itself: "
                       "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0, set in the environment before torch is imported (not passed to a "
                       "function), lifts it at the cost of swapping; otherwise lower the batch or resolution.")
    if n.allowed and n.total and n.allowed < 0.9 * n.total:
        yield Vote("other", 0.55, f"set_per_process_memory_fraction caps the process at {format_size(n.allowed)} of "
                   f"{format_size(n.total)}: the cap, not the GPU, ran out.")
    if n.private_pools and n.allocated and n.private_pools > 0.2 * n.allocated:
        yield Vote("other", 0.4, f"CUDA Graphs' private pools hold {format_size(n.private_pools)}; captured graphs keep "
                   "their memory for as long as they live.")


# A feed-forward block's activation or gate (`silu(gate)`, `act_fn(up_proj(x))`): a tensor of
# batch x tokens x the intermediate size, whatever power of two its size happens to be.
_FEED_FORWARD = re.compile(r"\b(?:silu|gelu|relu|swiglu|geglu|act_fn|activation_fn|mlp|feed_?forward|ffn|up_proj|gate_proj|down_proj|fc[12])\b",
                           re.IGNORECASE)


def _feed_forward_site(context) -> bool:
    frames = meaningful_frames(context)
    return bool(frames and _FEED_FORWARD.search(f"{frames[0].function or ''} {frames[0].code or ''}"))


@rule
def request_beyond_any_device(data: RuleInput) -> Iterator[Vote]:
    """A request the note quotes (no message left to read it from) of terabytes or more: no device
    holds that, so the size was computed wrong (an overflowed or uninitialised shape) by the library."""
    signals = data.signals
    if data.numbers.requested is not None or not signals.note_requested or signals.note_requested < 2 * 1024**4:
        return
    yield Vote("framework_bug", 0.75, f"The note quotes a request of {format_size(signals.note_requested)}: more than any "
               "device holds, a shape computed wrong inside the framework or library.")
    for cause in ("input_size_too_large", "batch_too_large"):
        yield Vote(cause, -0.3, "No input or batch asks for that much at once.")


# What a sequence x sequence tensor is called: attention scores or weights, or a mask expanded to 4-D.
_SQUARE_TENSOR_NAMED = re.compile(r"\battention\b|\battn\b|\bmasks?\b|\w*mask_\w+|\w+_mask\w*|\bpairwise\b|\bscores?\b", re.IGNORECASE)


@rule
def request_the_square_of_the_sequence(data: RuleInput) -> Iterator[Vote]:
    """A request of one to a few hundred bytes per pair of positions at a long stated sequence
    ("~200k tokens, it tries to allocate 720 GB creating the masks") is a sequence x sequence tensor:
    attention scores, or a mask expanded to batch x heads x seq x seq. A per-token activation of that
    size would need megabytes per token. The exact-multiple case is rule huge_single_request's."""
    signals = data.signals
    requested = data.numbers.requested or signals.note_requested
    seq = signals.seq_len or 0
    if not requested or seq < 4096 or not _SQUARE_TENSOR_NAMED.search(data.context.note or ""):
        return
    if data.numbers.requested and requested % seq**2 == 0:
        return
    per_pair = requested / seq**2
    if 1 <= per_pair <= 512:
        yield Vote("attention_quadratic", 0.6, f"{format_size(requested)} at a sequence of {seq:,} is about {per_pair:.0f} bytes for "
                   "every pair of positions: a sequence x sequence tensor (attention scores, or a mask expanded to 4-D); "
                   "use a fused attention kernel that takes the mask unexpanded (SDPA, flash attention) or chunk the sequence.")


@rule
def huge_single_request(data: RuleInput) -> Iterator[Vote]:
    n, signals = data.numbers, data.signals
    if n.requested is None or signals.phase == "loading":
        return
    if data.context.error and data.context.error.backend == "mps" and n.allowed and n.requested > n.allowed:
        yield Vote("input_size_too_large", 0.4, f"One buffer of {format_size(n.requested)} is above Metal's per-buffer "
                   f"cap ({format_size(n.allowed)}): a single tensor scaled with the input.")
        return
    site = innermost_site(data.context)
    if not n.capacity and n.requested >= 2**50:
        # A petabyte is thousands of the largest cards: no input asks for it, whatever the card. The
        # size was computed from garbage (an overflowed shape, a corrupted length) by what asked.
        yield Vote("framework_bug", 0.85, f"One request of {format_size(n.requested)}: thousands of times any device, "
                   "a shape computed wrong (overflowed or read from corrupted values) inside the framework or library.")
        for cause in ("input_size_too_large", "batch_too_large"):
            yield Vote(cause, -0.3, "No input or batch asks for that much at once.")
        return
    if not n.capacity and n.requested >= 40 * GIB:
        # No device has room for one tensor of tens of GiB: its size comes from the input.
        if site == "attention_quadratic":
            # The frame that asked computes attention scores: the tensor is the score matrix itself.
            yield Vote("attention_quadratic", 0.55, f"One tensor of {format_size(n.requested)}, asked for by the attention "
                       "scores: a sequence x sequence matrix per head, which only a fused kernel avoids materialising.")
            yield Vote("input_size_too_large", 0.3, "The score matrix grows with the square of the input's length.")
        elif data.context.error and data.context.error.backend in ("cpu", "host"):
            # asked of the host's allocator: RAM is what it did not have, whatever the tensor was for
            yield Vote("input_size_too_large", 0.3, f"One host tensor of {format_size(n.requested)}: an array that large scales with the input.")
        else:
            yield Vote("input_size_too_large", 0.55, f"One tensor of {format_size(n.requested)}: more than most devices "
                       "hold in all, so a single activation scaled with the input's size.")
        if signals.domains & {"diffusion"}:
            yield Vote("attention_quadratic", 0.5, "In a diffusion model such a tensor is a self-attention matrix over every pixel.")
    # batch x heads x 2 or 4 bytes per score: an odd factor cannot be a score matrix of that length.
    # (Not when the frame that asked is the output layer: a size can divide by seq² by chance.)
    if signals.seq_len and site != "large_logits" and n.requested % (signals.seq_len**2) == 0 and (n.requested // signals.seq_len**2) % 2 == 0:
        factor = n.requested // signals.seq_len**2
        yield Vote("attention_quadratic", 0.8, f"{format_size(n.requested)} = {factor} x {signals.seq_len}² bytes: a "
                   "sequence x sequence attention matrix at the stated sequence length.")
    if not n.capacity:
        return
    share = n.requested / n.capacity
    if share > 100:
        # No input makes one tensor a hundred cards big: a size computed from garbage (an overflowed
        # or uninitialised shape, a sequence length of -1) inside the library that asked.
        yield Vote("framework_bug", 0.6 if share < 10_000 else 0.85, f"One request of {format_size(n.requested)} is {share:,.0f} times the whole card: "
                   "no real input asks for that, a shape computed wrong inside the framework or library does.")
        if share >= 10_000:
            # Even a million-token naive attention matrix is a few thousand cards: at this size no
            # setting of the workload (batch, length, beams, cache) is what was asked for.
            for cause in ("kv_cache_or_generation", "input_size_too_large", "batch_too_large", "attention_quadratic"):
                yield Vote(cause, -0.4, f"No workload asks for {share:,.0f} cards at once.")
    if _power_of_two(n.requested) and n.requested >= GIB // 4 and signals.domains & {"diffusion", "llm", "encoder"} \
            and site in (None, "attention_quadratic") and not _feed_forward_site(data.context) and not signals.attention_free:
        yield Vote("attention_quadratic", 0.45, f"{format_size(n.requested)} is an exact power of two, the size of a "
                   "square attention matrix (heads x tokens x tokens).")
    if share < 0.2:
        return
    if site in _NOT_ACTIVATIONS:
        return  # the frame that asked says what it is: state or weights, not an activation of the input
    sees_less = bool(signals.note_gpu_capacity and n.total and signals.note_gpu_capacity > 1.5 * n.total and not signals.gpu_count)
    if sees_less and n.requested < signals.note_gpu_capacity:
        return  # larger than what the runtime sees, not than the device: the runtime's limit is the story (memory_free_at_failure)
    size = format_size(n.requested)
    lead = "larger than the whole device" if share > 1 else f"{share:.0%} of the device"
    yield Vote("input_size_too_large", 0.5 if share > 1 else 0.4, f"One tensor of {size} ({lead}): a single activation "
               "this large comes from the input's size.")
    yield Vote("batch_too_large", 0.3, f"A {size} activation scales with the batch.")
    if site == "large_logits":
        return  # the frame that asked is the output layer: its logits, not attention scores
    if "diffusion" in signals.domains:
        yield Vote("attention_quadratic", 0.6, f"A single {size} tensor in a diffusion model is a self-attention matrix over "
                   "the latent's pixels, which grows with the resolution to the fourth power.")
    elif (signals.domains & {"llm", "encoder"} or signals.seq_len) and share > 1:
        # A transformer's other activations grow linearly with the tokens (hidden x 4 at most); only
        # the score matrix grows with their square, so one tensor larger than the card is that.
        yield Vote("attention_quadratic", 0.6, f"A single {size} tensor, larger than the card, in a transformer: its other "
                   "activations grow linearly with the tokens, the attention score matrix (batch x heads x seq x seq) "
                   "with their square.")
    elif signals.domains & {"llm", "encoder"} or signals.seq_len:
        yield Vote("attention_quadratic", 0.35, f"A single {size} tensor in a transformer is typically an attention "
                   "score matrix (batch x heads x seq x seq).")


_CONVOLUTION_SAID = re.compile(r"\bconv(?:olution)?s?\b|\bconv(?:_?transpose)?[123]d\b|\bconvtranspose[123]?d?\b|\bdeconv\w*|\bcudnn\b", re.IGNORECASE)


@rule
def a_convolution_asking_many_times_its_tensor(data: RuleInput) -> Iterator[Vote]:
    """A convolution whose input the note gives as a shape, asking for many times that tensor's bytes:
    no activation of that input is that large (the output of a convolution is the input's size times
    its channel ratio), so the request is the algorithm's scratch workspace, which cuDNN sizes by the
    algorithm it picked. A deterministic or benchmarked choice, or a workspace limit, picks one that fits."""
    signals, n = data.signals, data.numbers
    if not n.requested or not signals.note_shapes:
        return
    frames = " ".join(f"{frame.function or ''} {frame.code or ''}" for frame in meaningful_frames(data.context)[:3])
    if not _CONVOLUTION_SAID.search(f"{data.context.note or ''} {frames}"):
        return
    element_bytes = 2 if signals.low_precision else 4
    largest = max(math.prod(shape) for shape in signals.note_shapes) * element_bytes
    if largest < 64 * 1024**2 or n.requested < 8 * largest:
        return
    yield Vote("cudnn_or_workspace", 0.7, f"The convolution asks for {format_size(n.requested)}, {n.requested / largest:.0f} times its "
               f"{format_size(largest)} tensor: no activation of that input is that large, the algorithm's workspace is; set "
               "torch.backends.cudnn.deterministic = True (or benchmark = True) so a leaner algorithm is chosen, or split the batch.")
    yield Vote("input_size_too_large", -0.35, "The input's own tensor is a fraction of the request.")


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0
