"""Scripts written for a GPU, run on the simulated one: ``"cuda"`` devices become the CPU, and the
``torch.cuda`` calls a training script makes (synchronize, memory figures, timing events) answer
from the simulated device instead of failing on a machine without CUDA.

Most training scripts hard-code ``.cuda()`` or ``device="cuda"``; without this, a CPU build stops
them at their first tensor ("Torch not compiled with CUDA enabled") and nothing can be measured.

By default the simulated card is *visible*: ``torch.cuda.is_available()`` is True and the rest of
``torch.cuda`` (and ``torch.accelerator``) that training code asks answers from the simulated card,
so scripts take the path they take on a GPU (nanoGPT picks bfloat16, Hugging Face accepts
``--bf16``, GradScaler stays enabled). ``--cpu-visible`` keeps ``is_available()`` False.
"""

from __future__ import annotations

import functools
import time
from types import SimpleNamespace
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


CAPABILITY = (8, 0)  # an Ampere-class card: bf16, flash attention, TF32


class SimulatedStream:
    """``torch.cuda.Stream``: work on the host is already in order."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = torch.device("cuda", 0)
        self.priority = priority

    def wait_stream(self, stream: Any) -> None:
        pass

    def wait_event(self, event: Any) -> None:
        pass

    def record_event(self, event: Any = None) -> TimingEvent:
        event = event or TimingEvent()
        event.record()
        return event

    def synchronize(self) -> None:
        pass

    def query(self) -> bool:
        return True

    def is_capturing(self) -> bool:
        return False  # no CUDA graph is ever being captured

    def __enter__(self) -> "SimulatedStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


_STREAM = SimulatedStream()


def _properties(capacity: int | None) -> SimpleNamespace:
    return SimpleNamespace(name=DEVICE_NAME, total_memory=capacity or 0, major=CAPABILITY[0], minor=CAPABILITY[1],
                           multi_processor_count=108, is_integrated=False, is_multi_gpu_board=False,
                           L2_cache_size=40 * 2**20, warp_size=32, max_threads_per_multi_processor=2048,
                           regs_per_multiprocessor=65536, gcnArchName="", uuid="00000000-0000-0000-0000-000000000000")


def _make_visible(device: SimulatedDevice) -> None:
    """``torch.cuda.is_available()`` and friends say there is one GPU: the simulated card."""
    cuda = torch.cuda
    capacity = device.allocator.stats.capacity
    answers: dict[str, Any] = {
        "is_available": lambda: True, "device_count": lambda: 1, "is_initialized": lambda: True, "init": lambda: None,
        "_lazy_init": lambda: None, "get_device_properties": lambda device=None: _properties(capacity),
        "get_device_capability": lambda device=None: CAPABILITY, "is_bf16_supported": lambda including_emulation=True: True,
        "get_arch_list": lambda: ["sm_80"], "current_stream": lambda device=None: _STREAM,
        "default_stream": lambda device=None: _STREAM, "Stream": SimulatedStream, "stream": lambda stream=None: _STREAM,
        "set_stream": lambda stream: None, "ipc_collect": lambda: None, "utilization": lambda device=None: 0,
        "get_rng_state": lambda device="cuda": torch.get_rng_state(), "get_rng_state_all": lambda: [torch.get_rng_state()],
        "set_rng_state": lambda state, device="cuda": None, "set_rng_state_all": lambda states: None,
        "manual_seed": lambda seed: None, "manual_seed_all": lambda seed: None, "seed": lambda: None,
        "seed_all": lambda: None, "initial_seed": lambda: torch.initial_seed(),
        "is_current_stream_capturing": lambda: False,
    }
    for name, answer in answers.items():
        setattr(cuda, name, answer)
    for name in ("get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
                 "manual_seed_all", "seed", "seed_all", "initial_seed"):
        setattr(cuda.random, name, answers[name])
    cuda.memory._record_memory_history = lambda *args, **kwargs: None
    cuda.memory._snapshot = lambda device=None: {"segments": [], "device_traces": [[]]}
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None:
        for name, answer in {"is_available": lambda check_fork=False: True,
                             "current_accelerator": lambda check_available=False: torch.device("cuda"),
                             "device_count": lambda: 1, "current_device_index": lambda: 0, "current_device_idx": lambda: 0,
                             "set_device_index": lambda device: None, "set_device_idx": lambda device: None,
                             "synchronize": lambda device=None: None, "current_stream": lambda device=None: _STREAM,
                             "set_stream": lambda stream: None, "get_device_capability": lambda device=None: {}}.items():
            if hasattr(accelerator, name):
                setattr(accelerator, name, answer)
    # Pinning is a no-op on the simulated card, also in the DataLoader's pin-memory thread, where the
    # TorchFunctionMode (thread-local) does not reach.
    import torch.utils.data._utils.pin_memory as pin_module

    pin_module.pin_memory = lambda data, device=None: data


def enter(device: SimulatedDevice, *, visible: bool = False) -> None:
    """For the rest of the process: CUDA devices are the CPU, ``torch.cuda`` answers from ``device``
    (and, when ``visible``, says the card exists)."""
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
    from . import attention

    attention.enter()  # attention with dropout measured as the CUDA kernels hold it, not the CPU's math path
    if visible:
        _make_visible(device)
