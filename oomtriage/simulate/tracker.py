"""The simulated device: a TorchDispatchMode that sees every new tensor storage the process
creates, feeds it to the caching-allocator model, and raises a real ``torch.OutOfMemoryError`` in
PyTorch's current message format when the modelled GPU is full.

Everything the script computes counts as device memory: on a CPU run the device is the process.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from oomtriage.sizes import pytorch_format_size as format_size  # the message reads exactly as PyTorch's

from .allocator import AllocatorStats, CachingAllocatorModel, SimulatedOutOfMemory

HINT = (" If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
        "avoid fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def oom_message(requested: int, stats: AllocatorStats) -> str:
    """The message PyTorch >= 2.4 raises, with the model's figures."""
    capacity = stats.capacity or 0
    free = max(0, capacity - stats.reserved)
    return (f"CUDA out of memory. Tried to allocate {format_size(requested)}. GPU 0 has a total capacity of "
            f"{format_size(capacity)} of which {format_size(free)} is free. Including non-PyTorch memory, this process "
            f"has {format_size(stats.reserved)} memory in use. Of the allocated memory {format_size(stats.allocated)} "
            f"is allocated by PyTorch, and {format_size(stats.reserved - stats.allocated)} is reserved by PyTorch but "
            f"unallocated.{HINT}")


def expandable_from_env() -> bool:
    conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "") + "," + os.environ.get("PYTORCH_ALLOC_CONF", "")
    return "expandable_segments:true" in conf.replace(" ", "").lower()


class SimulatedDevice(TorchDispatchMode):
    """Counts live storages as a GPU of ``capacity`` bytes would (``None``: count without a cap)."""

    def __init__(self, capacity: int | None, *, expandable_segments: bool | None = None) -> None:
        super().__init__()
        self.allocator = CachingAllocatorModel(
            capacity, expandable_segments=expandable_from_env() if expandable_segments is None else expandable_segments)
        self.last_oom: dict[str, Any] | None = None
        self._owner_pid = os.getpid()
        self._lock = threading.Lock()
        self._uncounted = threading.local()
        self._dtype_bytes: dict[torch.dtype, int] = {}
        self._live_dtype: dict[int, torch.dtype] = {}
        self.history = None

    def record_history(self, max_entries: int | None = None):
        """Record every allocator event with its Python stack (``_record_memory_history``)."""
        from .history import MAX_ENTRIES, MemoryHistory

        if self.history is None:
            self.history = MemoryHistory(self.allocator, max_entries=max_entries or MAX_ENTRIES)
        return self.history

    def address_of_storage(self, storage) -> int | None:
        try:
            return self.allocator.live_address(storage._cdata)
        except (AttributeError, RuntimeError, NotImplementedError):
            return None

    @property
    def stats(self) -> AllocatorStats:
        return self.allocator.stats

    def dtype_shares(self) -> dict[str, float]:
        total = sum(self._dtype_bytes.values()) or 1
        return {str(dtype).replace("torch.", ""): round(count / total, 4) for dtype, count in self._dtype_bytes.items() if count}

    def track(self, tensor: torch.Tensor) -> None:
        """Count a tensor's storage once, until the storage is freed."""
        if tensor.device.type == "meta" or os.getpid() != self._owner_pid or getattr(self._uncounted, "active", False):
            return
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):
            return  # sparse or other storage-less tensors
        nbytes = storage.nbytes()
        key = storage._cdata
        if nbytes == 0 or key in self._live_dtype:
            return
        with self._lock:
            try:
                self.allocator.malloc(key, nbytes)
            except SimulatedOutOfMemory as oom:
                self.last_oom = {"requested": oom.requested, "stats": oom.stats.as_memory_stats(),
                                 "capacity": oom.stats.capacity, "grad_enabled": torch.is_grad_enabled(),
                                 "dtype_shares": self.dtype_shares(), "message": oom_message(oom.requested, oom.stats)}
                raise torch.OutOfMemoryError(self.last_oom["message"]) from None
            self._live_dtype[key] = tensor.dtype
            self._dtype_bytes[tensor.dtype] = self._dtype_bytes.get(tensor.dtype, 0) + nbytes
        weakref.finalize(storage, self._release, key, nbytes)

    @contextmanager
    def uncounted(self):
        """Temporaries a CUDA kernel keeps on-chip (a fused kernel's tiles), computed here on the host:
        not device memory. What the kernel writes to device memory is allocated outside this block."""
        previous = getattr(self._uncounted, "active", False)
        self._uncounted.active = True
        try:
            yield
        finally:
            self._uncounted.active = previous

    def _release(self, key: int, nbytes: int) -> None:
        with self._lock:
            dtype = self._live_dtype.pop(key, None)
            if dtype is not None:
                self._dtype_bytes[dtype] -= nbytes
            self.allocator.free(key)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for item in tree_flatten(out)[0]:
            if isinstance(item, torch.Tensor):
                self.track(item)
        return out
