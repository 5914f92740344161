"""A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp), enough to say
what ``memory_allocated`` and ``memory_reserved`` would be and when ``cudaMalloc`` would fail.

Modelled: 512-byte rounding; the small (<= 1 MiB, 2 MiB segments) and large pools (1-10 MiB requests
get 20 MiB segments, larger ones are rounded to 2 MiB); best-fit reuse of cached blocks; splitting
(small pool: >= 512 B left, large pool: > 1 MiB left) and merging on free; on a failed segment
allocation, releasing every fully free cached segment and retrying (``num_alloc_retries``);
``expandable_segments:True`` as one growing arena per pool mapped in 2/20 MiB pages. Not modelled:
streams, CUDA graphs' private pools, ``max_split_size_mb`` and ``roundup_power2_divisions``.

Segments get device addresses, so a ``listener`` can follow the allocator as PyTorch's memory
history does (``alloc``, ``free_requested``, ``free_completed``, ``segment_alloc``,
``segment_free``, ``oom``) and ``segments()`` can describe the cache as ``memory._snapshot()`` does.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, Callable

K_MIN_BLOCK = 512
K_SMALL_SIZE = 1 << 20
K_SMALL_BUFFER = 2 << 20
K_MIN_LARGE_ALLOC = 10 << 20
K_LARGE_BUFFER = 20 << 20
K_ROUND_LARGE = 2 << 20
BASE_ADDRESS = 0x7F0000000000  # where the modelled device's memory starts (segments' addresses)

# (action, address, size, device_free): the allocator's events, as memory history records them.
Listener = Callable[[str, int, int, int], None]


def round_size(nbytes: int) -> int:
    if nbytes < K_MIN_BLOCK:
        return K_MIN_BLOCK
    return K_MIN_BLOCK * ((nbytes + K_MIN_BLOCK - 1) // K_MIN_BLOCK)


def allocation_size(size: int) -> int:
    """What the allocator would cudaMalloc for a new segment (and what its OOM message prints)."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return K_ROUND_LARGE * ((size + K_ROUND_LARGE - 1) // K_ROUND_LARGE)


def _round_up(value: int, unit: int) -> int:
    return unit * ((value + unit - 1) // unit)


class SimulatedOutOfMemory(Exception):
    def __init__(self, requested: int, stats: "AllocatorStats") -> None:
        super().__init__(f"simulated OOM on a {requested}-byte request")
        self.requested = requested
        self.stats = stats


@dataclass
class AllocatorStats:
    capacity: int | None
    allocated: int = 0
    reserved: int = 0
    peak_allocated: int = 0
    peak_reserved: int = 0
    requested: int = 0  # the un-rounded bytes of live tensors (memory_stats' requested_bytes)
    peak_requested: int = 0
    num_alloc_retries: int = 0
    num_ooms: int = 0
    segments: int = 0
    # The peaks a script sees through torch.cuda.max_memory_*, which it may reset; peak_* never are.
    window_peak_allocated: int = 0
    window_peak_reserved: int = 0

    def copy(self) -> "AllocatorStats":
        return AllocatorStats(**self.__dict__)

    def as_memory_stats(self) -> dict[str, int]:
        """The keys ``torch.cuda.memory_stats()`` would report for these figures."""
        return {
            "allocated_bytes.all.current": self.allocated, "allocated_bytes.all.peak": self.peak_allocated,
            "reserved_bytes.all.current": self.reserved, "reserved_bytes.all.peak": self.peak_reserved,
            "requested_bytes.all.current": self.requested, "requested_bytes.all.peak": self.peak_requested,
            "segment.all.current": self.segments,
            "num_alloc_retries": self.num_alloc_retries, "num_ooms": self.num_ooms,
        }


@dataclass
class _Block:
    segment: int
    offset: int
    size: int
    small: bool
    free: bool = True
    prev: "_Block | None" = field(default=None, repr=False)
    next: "_Block | None" = field(default=None, repr=False)

    @property
    def key(self) -> tuple[int, int, int]:
        return (self.size, self.segment, self.offset)


class CachingAllocatorModel:
    """``malloc(key, nbytes)`` / ``free(key)``; raises ``SimulatedOutOfMemory`` past ``capacity``
    (``capacity=None`` counts without limit, to measure what a run would need)."""

    def __init__(self, capacity: int | None, *, expandable_segments: bool = False) -> None:
        self.stats = AllocatorStats(capacity=capacity)
        self.expandable = expandable_segments
        self._free_keys: dict[bool, list[tuple[int, int, int]]] = {True: [], False: []}
        self._free_blocks: dict[tuple[int, int, int], _Block] = {}
        self._live: dict[int, tuple[_Block | int, int]] = {}
        self._next_segment = 0
        self._arena_in_use = {True: 0, False: 0}  # expandable segments: bytes in use per pool
        self.listener: Listener | None = None
        self._segments: dict[int, tuple[int, _Block]] = {}  # segment id -> (address, its first block)
        self._next_address = BASE_ADDRESS
        self._arena_next = {True: BASE_ADDRESS, False: BASE_ADDRESS + (1 << 40)}  # expandable: bump pointers

    # --- public -------------------------------------------------------------------------------

    def malloc(self, key: int, nbytes: int) -> None:
        size = round_size(nbytes)
        if self.expandable:
            self._malloc_expandable(key, size, nbytes)
        else:
            block = self._take_block(size)
            self._live[key] = (block, nbytes)
            self.stats.allocated += block.size
            if self.listener is not None:
                self.listener("alloc", self.address_of(block), block.size, 0)
        self.stats.requested += nbytes
        self._update_peaks()

    def address_of(self, block: "_Block") -> int:
        return self._segments[block.segment][0] + block.offset

    def live_address(self, key: int) -> int | None:
        """The device address of a live allocation (None: not live)."""
        entry = self._live.get(key)
        if entry is None:
            return None
        return entry[2] if len(entry) > 2 else self.address_of(entry[0])

    def live_items(self) -> list[tuple[int, int, int, int]]:
        """(key, address, block size, requested bytes) of every live allocation."""
        return [(key, entry[2] if len(entry) > 2 else self.address_of(entry[0]),
                 entry[0] if isinstance(entry[0], int) else entry[0].size, entry[1]) for key, entry in self._live.items()]

    def segments(self, describe: Callable[[int, int], dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The cache as ``torch.cuda.memory._snapshot()["segments"]`` describes it: each segment with
        its blocks in address order. ``describe(address, size)`` adds to each active block (frames)."""
        requested = {address: nbytes for _, address, _, nbytes in self.live_items()}
        out = []
        if self.expandable:
            for small in (True, False):
                page = K_SMALL_BUFFER if small else K_LARGE_BUFFER
                live = sorted((address, size) for _, address, size, _ in self.live_items() if (size <= K_SMALL_SIZE) == small)
                if not live:
                    continue
                base = BASE_ADDRESS if small else BASE_ADDRESS + (1 << 40)
                total = _round_up(self._arena_in_use[small], page)
                # One arena per pool: its live blocks packed in address order, the mapped rest free.
                blocks, offset = [], 0
                for address, size in live:
                    blocks.append(self._block_record(base + offset, size, requested.get(address, size), True, describe, address))
                    offset += size
                if total > offset:
                    blocks.append(self._block_record(base + offset, total - offset, 0, False, None, None))
                out.append(self._segment_record(base, total, small, blocks, expandable=True))
            return out
        for segment, (address, first) in sorted(self._segments.items()):
            blocks, block, total = [], first, 0
            while block is not None:
                at = address + block.offset
                blocks.append(self._block_record(at, block.size, requested.get(at, block.size), not block.free, describe, at))
                total += block.size
                block = block.next
            out.append(self._segment_record(address, total, first.small, blocks, expandable=False))
        return out

    @staticmethod
    def _block_record(address: int, size: int, requested: int, active: bool, describe: Callable[[int, int], dict[str, Any]] | None,
                      key_address: int | None) -> dict[str, Any]:
        record: dict[str, Any] = {"address": address, "size": size, "requested_size": requested if active else 0,
                                  "state": "active_allocated" if active else "inactive", "frames": []}
        if active and describe is not None and key_address is not None:
            record.update(describe(key_address, size))
        return record

    @staticmethod
    def _segment_record(address: int, total: int, small: bool, blocks: list[dict[str, Any]], *, expandable: bool) -> dict[str, Any]:
        allocated = sum(block["size"] for block in blocks if block["state"] == "active_allocated")
        return {"device": 0, "address": address, "total_size": total, "stream": 0, "segment_type": "small" if small else "large",
                "segment_pool_id": (0, 0), "allocated_size": allocated, "active_size": allocated,
                "requested_size": sum(block["requested_size"] for block in blocks), "is_expandable": expandable, "blocks": blocks}

    def free(self, key: int) -> None:
        entry = self._live.pop(key, None)
        if entry is None:
            return
        block, nbytes = entry[0], entry[1]
        self.stats.requested -= nbytes
        if isinstance(block, int):  # expandable segments: just bytes in an arena
            small = block <= K_SMALL_SIZE
            self._arena_in_use[small] -= block
            self.stats.allocated -= block
            if self.listener is not None:
                self.listener("free_requested", entry[2], block, 0)
                self.listener("free_completed", entry[2], block, 0)
            return
        self.stats.allocated -= block.size
        if self.listener is not None:
            address = self.address_of(block)
            self.listener("free_requested", address, block.size, 0)
            self.listener("free_completed", address, block.size, 0)
        block.free = True
        for neighbour in (block.prev, block.next):
            if neighbour is not None and neighbour.free:
                self._unlist(neighbour)
                block = self._merge(block, neighbour)
        self._list(block)

    def empty_cache(self) -> None:
        """``torch.cuda.empty_cache()``: return every entirely free cached segment (expandable
        segments: unmap the pages no live block uses)."""
        if self.expandable:
            arena = self._arena_in_use
            self.stats.reserved = _round_up(arena[True], K_SMALL_BUFFER) + _round_up(arena[False], K_LARGE_BUFFER)
        else:
            self._release_cached_segments()

    def reset_window_peaks(self) -> None:
        self.stats.window_peak_allocated, self.stats.window_peak_reserved = self.stats.allocated, self.stats.reserved

    @property
    def live_count(self) -> int:
        return len(self._live)

    # --- native segments --------------------------------------------------------------------------

    def _take_block(self, size: int) -> _Block:
        small = size <= K_SMALL_SIZE
        block = self._best_fit(small, size)
        if block is None:
            block = self._new_segment(small, allocation_size(size))
        else:
            self._unlist(block)
        remaining = block.size - size
        if (small and remaining >= K_MIN_BLOCK) or (not small and remaining > K_SMALL_SIZE):
            rest = _Block(block.segment, block.offset + size, remaining, small, prev=block, next=block.next)
            if block.next is not None:
                block.next.prev = rest
            block.next = rest
            block.size = size
            self._list(rest)
        block.free = False
        return block

    def _best_fit(self, small: bool, size: int) -> _Block | None:
        keys = self._free_keys[small]
        index = bisect.bisect_left(keys, (size, -1, -1))
        return self._free_blocks[keys[index]] if index < len(keys) else None

    def _new_segment(self, small: bool, segment_size: int) -> _Block:
        if not self._fits(segment_size):
            self._release_cached_segments()
            self.stats.num_alloc_retries += 1
            if not self._fits(segment_size):
                self._out_of_memory(segment_size)
        self.stats.reserved += segment_size
        self.stats.segments += 1
        self._next_segment += 1
        block = _Block(self._next_segment, 0, segment_size, small)
        # Segments never share addresses, and a freed segment's range is not reused: each
        # allocation in a trace names one place.
        self._segments[self._next_segment] = (self._next_address, block)
        self._next_address += _round_up(segment_size, K_SMALL_BUFFER)
        if self.listener is not None:
            self.listener("segment_alloc", self._segments[self._next_segment][0], segment_size, 0)
        return block

    def _out_of_memory(self, requested: int) -> None:
        self.stats.num_ooms += 1
        if self.listener is not None:
            capacity = self.stats.capacity or 0
            self.listener("oom", 0, requested, max(0, capacity - self.stats.reserved))
        raise SimulatedOutOfMemory(requested, self.stats.copy())

    def _fits(self, extra: int) -> bool:
        capacity = self.stats.capacity
        return capacity is None or self.stats.reserved + extra <= capacity

    def _release_cached_segments(self) -> None:
        """Like ``release_cached_blocks``: return every cached segment that is entirely free."""
        for block in [b for b in self._free_blocks.values() if b.prev is None and b.next is None]:
            self._unlist(block)
            self.stats.reserved -= block.size
            self.stats.segments -= 1
            address, _ = self._segments.pop(block.segment, (0, block))
            if self.listener is not None:
                self.listener("segment_free", address, block.size, 0)

    def _merge(self, block: _Block, neighbour: _Block) -> _Block:
        first, second = (neighbour, block) if neighbour.offset < block.offset else (block, neighbour)
        first.size += second.size
        first.next = second.next
        if second.next is not None:
            second.next.prev = first
        first.free = True
        return first

    def _list(self, block: _Block) -> None:
        bisect.insort(self._free_keys[block.small], block.key)
        self._free_blocks[block.key] = block

    def _unlist(self, block: _Block) -> None:
        keys = self._free_keys[block.small]
        index = bisect.bisect_left(keys, block.key)
        if index < len(keys) and keys[index] == block.key:
            keys.pop(index)
        self._free_blocks.pop(block.key, None)

    # --- expandable segments ------------------------------------------------------------------

    def _malloc_expandable(self, key: int, size: int, nbytes: int) -> None:
        small = size <= K_SMALL_SIZE
        page = K_SMALL_BUFFER if small else K_LARGE_BUFFER
        in_use = self._arena_in_use[small] + size
        mapped_other = _round_up(self._arena_in_use[not small], K_LARGE_BUFFER if small else K_SMALL_BUFFER)
        wanted = _round_up(in_use, page) + mapped_other
        if self.stats.capacity is not None and wanted > self.stats.capacity:
            self._out_of_memory(_round_up(size, page))
        self._arena_in_use[small] = in_use
        address = self._arena_next[small]
        self._arena_next[small] += size
        self._live[key] = (size, nbytes, address)
        self.stats.allocated += size
        if self.listener is not None:
            self.listener("alloc", address, size, 0)
        # Pages are unmapped when free (on OOM in reality); model reserved as the mapped high-water.
        self.stats.reserved = max(self.stats.reserved, wanted)

    def _update_peaks(self) -> None:
        stats = self.stats
        stats.peak_allocated = max(stats.peak_allocated, stats.allocated)
        stats.peak_requested = max(stats.peak_requested, stats.requested)
        stats.peak_reserved = max(stats.peak_reserved, stats.reserved)
        stats.window_peak_allocated = max(stats.window_peak_allocated, stats.allocated)
        stats.window_peak_reserved = max(stats.window_peak_reserved, stats.reserved)
