"""Scripts written for a GPU, run on the simulated one: ``"cuda"`` devices become the CPU, and the
``torch.cuda`` calls a training script makes (synchronize, memory figures, timing events) answer
from the simulated device instead of failing on a machine without CUDA.

Most training scripts hard-code ``.cuda()`` or ``device="cuda"``; without this, a CPU build stops
them at their first tensor ("Torch not compiled with CUDA enabled") and nothing can be measured.
``torch.cuda.is_available()`` stays False, so libraries do not take CUDA-only code paths.
"""

from __future__ import annotations

import functools
import time
from typing import Any, Callable

import torch
from torch.overrides import TorchFunctionMode

from oomtriage.sizes import format_size

from .tracker import SimulatedDevice

DEVICE_NAME = "oomtriage simulated GPU"


def _is_cuda(device: Any) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    if isinstance(device, str):
        return device == "cuda" or device.startswith("cuda:")
    return False


def _to(args: tuple, kwargs: dict) -> torch.Tensor:
    """``tensor.to(...)``: a CUDA device, positional (``.to("cuda")``, ``.to(0)``) or not, is the CPU."""
    tensor, rest = args[0], list(args[1:])
    if rest and (_is_cuda(rest[0]) or (isinstance(rest[0], int) and not isinstance(rest[0], bool))):
        rest[0] = "cpu"
    return tensor.to(*rest, **_cpu_device(kwargs))


def _cpu_device(kwargs: dict) -> dict:
    return {**kwargs, "device": "cpu"} if _is_cuda(kwargs.get("device")) else kwargs


# Host-side tensors already are where the simulated device counts them: moving or pinning is a no-op.
SPECIAL = {
    torch.Tensor.cuda: lambda args, kwargs: args[0],
    torch.Tensor.pin_memory: lambda args, kwargs: args[0],
    torch.Tensor.to: _to,
}


class CudaOnCpu(TorchFunctionMode):
    """Rewrites CUDA devices in every torch call to the CPU."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        special = SPECIAL.get(func)
        if special is not None:
            return special(args, kwargs)
        if "device" in kwargs:
            kwargs = _cpu_device(kwargs)
        return func(*args, **kwargs)


class TimingEvent:
    """``torch.cuda.Event(enable_timing=True)`` on the host clock: record, synchronize, elapsed_time."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.recorded_at: float | None = None

    def record(self, stream: Any = None) -> None:
        self.recorded_at = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Any = None) -> None:
        pass

    def query(self) -> bool:
        return True

    def elapsed_time(self, end_event: "TimingEvent") -> float:
        if self.recorded_at is None or end_event.recorded_at is None:
            raise RuntimeError("both events must be recorded before elapsed_time()")
        return (end_event.recorded_at - self.recorded_at) * 1000.0


class CudaMemoryFigures:
    """What ``torch.cuda``'s memory functions report, read from the simulated device. A script's own
    ``reset_peak_memory_stats()`` resets the peaks it sees; oomtriage's run-long peaks are untouched."""

    def __init__(self, device: SimulatedDevice) -> None:
        self.allocator = device.allocator

    def memory_allocated(self, device: Any = None) -> int:
        return self.allocator.stats.allocated

    def memory_reserved(self, device: Any = None) -> int:
        return self.allocator.stats.reserved

    def max_memory_allocated(self, device: Any = None) -> int:
        return self.allocator.stats.window_peak_allocated

    def max_memory_reserved(self, device: Any = None) -> int:
        return self.allocator.stats.window_peak_reserved

    def reset_peak_memory_stats(self, device: Any = None) -> None:
        self.allocator.reset_window_peaks()

    def memory_stats(self, device: Any = None) -> dict[str, int]:
        figures = self.allocator.stats.as_memory_stats()
        figures["allocated_bytes.all.peak"] = self.max_memory_allocated()
        figures["reserved_bytes.all.peak"] = self.max_memory_reserved()
        return figures

    def mem_get_info(self, device: Any = None) -> tuple[int, int]:
        stats = self.allocator.stats
        total = stats.capacity if stats.capacity is not None else stats.reserved
        return max(0, total - stats.reserved), total

    def empty_cache(self) -> None:
        self.allocator.empty_cache()

    def memory_summary(self, device: Any = None, abbreviated: bool = False) -> str:
        stats = self.allocator.stats
        return "\n".join([f"{DEVICE_NAME} (modelled CUDA caching allocator)",
                          f"  allocated: {format_size(stats.allocated)} (peak {format_size(self.max_memory_allocated())})",
                          f"  reserved:  {format_size(stats.reserved)} (peak {format_size(self.max_memory_reserved())})",
                          f"  capacity:  {format_size(stats.capacity) if stats.capacity else 'unlimited'}"])


FIGURES = ("memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved", "reset_peak_memory_stats",
           "memory_stats", "mem_get_info", "empty_cache", "memory_summary")


def _load_on_cpu(original: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.load``: a checkpoint saved from a GPU, or loaded onto "cuda", is loaded onto the CPU."""

    @functools.wraps(original)
    def load(*args: Any, **kwargs: Any) -> Any:
        if len(args) > 1:  # map_location given by position
            if args[1] is None or _is_cuda(args[1]):
                args = (args[0], "cpu", *args[2:])
        elif kwargs.get("map_location") is None or _is_cuda(kwargs["map_location"]):
            kwargs = {**kwargs, "map_location": "cpu"}
        return original(*args, **kwargs)

    return load


def enter(device: SimulatedDevice) -> None:
    """For the rest of the process: CUDA devices are the CPU, ``torch.cuda`` answers from ``device``."""
    CudaOnCpu().__enter__()
    figures = CudaMemoryFigures(device)
    for module in (torch.cuda, torch.cuda.memory):  # memory_summary() and friends call the module's own names
        for name in FIGURES:
            setattr(module, name, getattr(figures, name))
        module.reset_max_memory_allocated = figures.reset_peak_memory_stats
    cuda = torch.cuda
    cuda.synchronize = lambda device=None: None
    cuda.current_device = lambda: 0
    cuda.set_device = lambda device: None
    cuda.get_device_name = lambda device=None: DEVICE_NAME
    cuda.Event = TimingEvent
    torch.load = _load_on_cpu(torch.load)
