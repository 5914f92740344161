"""The numbers first: what was asked for, what was free, what PyTorch held and cached, what other
processes held, and what the model's weights and optimizer need. Each fact carries a sentence a
user can read; the rules cite facts by name."""

from __future__ import annotations

from dataclasses import dataclass, field

from oomtriage.gpus import capacity_of_gpu
from oomtriage.models import Fact, OomError, TriageContext
from oomtriage.sizes import format_size

from .signals import Signals

GIB = 1024**3
# A CUDA context plus cuBLAS/cuDNN workspaces: memory that is in use on the device but never shows
# up in PyTorch's allocated/reserved figures (reference: ~0.3-1 GB depending on lazy loading).
CONTEXT_OVERHEAD = int(1.2 * GIB)


def held_outside_the_cache(n) -> bool:
    """More of the card in use outside PyTorch's cache than a CUDA context takes (15% of the card beyond it)."""
    return bool(n.non_pytorch is not None and n.total and n.non_pytorch - CONTEXT_OVERHEAD > 0.15 * n.total)


@dataclass
class Numbers:
    """The error's figures, derived where the message gives enough to derive them."""

    requested: int | None = None
    total: int | None = None
    free: int | None = None
    allocated: int | None = None
    reserved: int | None = None
    unallocated: int | None = None
    non_pytorch: int | None = None
    other_processes: int | None = None
    allowed: int | None = None
    private_pools: int | None = None
    capacity: int | None = None
    facts: list[Fact] = field(default_factory=list)
    explanation: list[str] = field(default_factory=list)

    def add(self, name: str, value: object, text: str) -> None:
        self.facts.append(Fact(name=name, value=value, text=text))


def _others(error: OomError) -> int | None:
    """Memory of other processes, not counting an entry that is really this process under a
    container's host PID (its usage then matches PyTorch's reserved figure plus the context)."""
    if not error.processes:
        return None
    reserved = error.reserved_bytes
    if len(error.processes) == 1 and error.self_process_bytes is None and reserved is None:
        # The driver lists every process with a context on the device, the failing one included:
        # a lone entry, with no PyTorch figure to tell it apart (a cut message), is this process.
        error.processes[0].is_self = True
        return 0
    total = 0
    for process in error.processes:
        if process.is_self:
            continue
        if error.self_process_bytes is None and reserved is not None and reserved <= process.used_bytes <= reserved + 2 * CONTEXT_OVERHEAD:
            process.is_self = True
            continue
        # Another process and this one cannot both fit: an entry that, added to PyTorch's own reserved
        # figure, exceeds the card is this process (its CUDA graphs, NCCL buffers and libraries included).
        if error.self_process_bytes is None and reserved is not None and error.total_bytes \
                and reserved <= process.used_bytes and process.used_bytes + reserved > 1.02 * error.total_bytes:
            process.is_self = True
            continue
        total += process.used_bytes
    return total


def compute_numbers(context: TriageContext, signals: Signals) -> Numbers:
    error = context.error
    numbers = Numbers()
    if error is not None:
        numbers.requested = error.requested_bytes
        numbers.total = error.total_bytes
        numbers.free = error.free_bytes
        numbers.allocated = error.allocated_bytes
        numbers.reserved = error.reserved_bytes
        numbers.unallocated = error.reserved_unallocated_bytes
        numbers.allowed = error.allowed_bytes
        numbers.private_pools = error.private_pool_bytes
        numbers.other_processes = _others(error)
        if numbers.total is not None and numbers.free is not None and numbers.reserved is not None:
            numbers.non_pytorch = max(0, numbers.total - numbers.free - numbers.reserved)
    stats = context.memory_stats
    if stats is not None:
        numbers.allocated = numbers.allocated if numbers.allocated is not None else stats.allocated_bytes
        numbers.reserved = numbers.reserved if numbers.reserved is not None else stats.reserved_bytes
        if numbers.unallocated is None and numbers.allocated is not None and numbers.reserved is not None:
            numbers.unallocated = max(0, numbers.reserved - numbers.allocated)
    limits = [value for value in (numbers.allowed, numbers.total) if value]
    known = context.environment.gpu_capacity_bytes
    if known and signals.note_capacity_stated and context.environment.gpu_name and known == capacity_of_gpu(context.environment.gpu_name):
        # the table's size for the card's name is the usual configuration; a size the note states
        # (a 22 GB 2080 Ti, a 32 GB V100) is this card's
        known = None
    numbers.capacity = min(limits) if limits else known or signals.note_gpu_capacity
    describe(numbers, context, signals)
    return numbers


def describe(numbers: Numbers, context: TriageContext, signals: Signals) -> None:
    """Facts with plain-words sentences, in the order a person would explain the message."""
    n, say = numbers, numbers.explanation.append
    error = context.error
    device = f"GPU {error.device_index}" if error and error.device_index is not None else "the device"
    # whose pool the figures describe: the message's own framework or library, not always PyTorch's
    pytorch = error is None or error.framework in ("pytorch", "unknown")
    pool = "PyTorch's cache" if pytorch else f"{error.library or error.framework}'s memory pool"
    if n.requested is not None:
        where = f" on {device}" if n.total is not None else ""
        n.add("requested_bytes", n.requested, f"The failing allocation asked for {format_size(n.requested)}{where}.")
        rounding = " PyTorch prints its rounded block size, so a small tensor can show as 2 or 20 MiB." if pytorch else ""
        say(n.facts[-1].text + rounding)
    if n.total is not None:
        n.add("capacity_bytes", n.total, f"{device[0].upper()}{device[1:]} has {format_size(n.total)} in total.")
        say(n.facts[-1].text)
    if n.allowed is not None:
        n.add("allowed_bytes", n.allowed, f"A per-process memory fraction caps this process at {format_size(n.allowed)}.")
        say(n.facts[-1].text)
    if n.allocated is not None:
        n.add("allocated_bytes", n.allocated, f"Live tensors held {format_size(n.allocated)} (\"allocated\").")
        say(n.facts[-1].text)
    if n.unallocated is not None:
        n.add("reserved_unallocated_bytes", n.unallocated,
              f"{pool[0].upper()}{pool[1:]} held another {format_size(n.unallocated)} that was reserved but not in use.")
        say(n.facts[-1].text + " It can only serve requests that fit inside one of its cached blocks.")
    if n.free is not None:
        n.add("free_bytes", n.free, f"The driver reported {format_size(n.free)} free on {device}.")
        say(n.facts[-1].text)
    if n.non_pytorch is not None:
        n.add("non_pytorch_bytes", n.non_pytorch,
              f"{format_size(n.non_pytorch)} of {device} was used outside {pool} "
              f"(the CUDA context, library workspaces, other processes).")
        say(n.facts[-1].text)
    if n.other_processes:
        n.add("other_processes_bytes", n.other_processes, f"Other processes held {format_size(n.other_processes)} of {device}.")
        say(n.facts[-1].text)
    if n.private_pools:
        n.add("private_pool_bytes", n.private_pools, f"{format_size(n.private_pools)} sat in private pools (CUDA Graphs).")
        say(n.facts[-1].text)
    _derived(numbers, signals)


def free_room_for_request(n: Numbers) -> bool:
    """The driver reported clearly more free memory than was asked for. Free memory only just above
    the request is no room: the allocator rounds a request up to its block and segment sizes, and
    the driver maps memory in pages of its own."""
    if n.requested is None or n.free is None:
        return False
    return n.requested + max(256 * 1024**2, 0.02 * (n.capacity or 0)) <= n.free


def _derived(n: Numbers, signals: Signals) -> None:
    if n.requested is not None and n.capacity:
        exceeds = n.requested > n.capacity
        n.add("request_exceeds_device", exceeds,
              "A single request is larger than the whole device: no setting can make it fit; the tensor must shrink."
              if exceeds else f"The request is {n.requested / n.capacity:.1%} of the device.")
        n.explanation.append(n.facts[-1].text)
    if n.requested is not None and n.free is not None and n.unallocated is not None:
        covers = n.requested <= n.free + n.unallocated and n.requested > n.free
        if covers:
            n.add("cache_could_cover_request", True,
                  f"Free memory plus the unused cache ({format_size(n.free + n.unallocated)}) exceeds the request, "
                  "but no single free piece was large enough: that is fragmentation.")
            n.explanation.append(n.facts[-1].text)
    if free_room_for_request(n):
        n.add("request_below_free", True,
              f"The driver reported more free memory ({format_size(n.free)}) than was requested: the free figure was "
              "taken after other allocations, the memory is fragmented at the driver level, or a cap applies.")
        n.explanation.append(n.facts[-1].text)
    if n.allocated is not None and n.capacity:
        n.add("allocated_fraction", round(n.allocated / n.capacity, 3),
              f"Live tensors filled {n.allocated / n.capacity:.0%} of the device when it failed.")
    if signals.param_count:
        params = signals.param_count
        n.add("param_count", params, f"The note implies a model of about {params / 1e9:.2f} billion parameters.")
        n.add("weights_fp32_bytes", int(params * 4), f"Its weights take {format_size(int(params * 4))} in fp32 "
              f"and {format_size(int(params * 2))} in fp16/bf16.")
        n.add("training_state_bytes", int(params * 16), "Full training with Adam in mixed precision needs ~16 bytes "
              f"per parameter (weights, gradients, fp32 master copy, two moments): {format_size(int(params * 16))}, "
              "before activations.")
