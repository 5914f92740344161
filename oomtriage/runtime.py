"""In-process state of a run under oomtriage: the simulated device, optimizer steps, the numerics
fingerprint (loss per step, gradient norm per step) and the peak-memory measurement written at exit.
Used by ``python -m oomtriage._child``; imports torch (only runs that asked for it get here)."""

from __future__ import annotations

import atexit
import json
import math
import os
import sys
import threading
import weakref
from pathlib import Path
from typing import Any

import torch
import torch.optim.optimizer as optimizer_module

MEASURE_SCHEMA_VERSION = 1


class MaxStepsReached(SystemExit):
    """Stops the script cleanly (exit code 0) after ``--max-steps`` optimizer steps."""

    def __init__(self, steps: int) -> None:
        super().__init__(0)
        self.steps = steps


STATE: dict[str, Any] = {
    "device": None, "capacity": None, "steps": 0, "max_steps": None, "losses": [], "grad_norms": [],
    "step_losses": [], "pending_loss": 0.0,
    "oom": False, "exit": "completed", "measure_file": None, "observer": None, "real_cuda": False, "fake": False,
    "progress_file": None, "fingerprint": False, "optimizers": 0, "backwards": 0, "counted_by": "optimizer",
    "norm_this_step": False, "stochastic_off": False, "dropout_seen": False, "snapshot_file": None, "history": None,
}
_IN_BACKWARD = threading.local()  # Tensor.backward re-enters itself through a TorchFunctionMode


def start(*, capacity: int | None, simulate: bool, max_steps: int | None, measure_file: str | None,
          fingerprint: bool, fake: bool = False, stochastic_off: bool = False, cpu_visible: bool = False,
          snapshot_file: str | None = None) -> None:
    """Set up measurement before the user's script runs.

    ``fake``: run on fake tensors (no compute, no memory); there are no values, so no fingerprint.
    ``snapshot_file``: record the memory history and write it there in PyTorch's snapshot format.
    """
    STATE.update(capacity=capacity, max_steps=max_steps, measure_file=measure_file, fake=fake,
                 progress_file=os.environ.get("OOMTRIAGE_PROGRESS_FILE") or None, snapshot_file=snapshot_file)
    fingerprint = fingerprint and not fake
    STATE["fingerprint"] = fingerprint
    if torch.cuda.is_available() and not simulate and not fake:
        _start_real_cuda()
    else:
        from .simulate.tracker import SimulatedDevice

        if fake:
            from .simulate import fake as fake_backend

            fake_backend.enter()
        device = SimulatedDevice(capacity if simulate else None)
        _make_cpu_behave_like_cuda()
        device.__enter__()  # for the whole process: every storage the script creates is counted
        from .simulate import cuda_on_cpu

        # A script that hard-codes "cuda" runs on the simulated GPU, which it sees as a GPU. On a
        # machine with a GPU too: --simulate-gpu always means the CPU against the modelled card, never
        # tensors on the real GPU counted as if they were on the CPU.
        cuda_on_cpu.enter(device, visible=not cpu_visible)
        STATE["device"] = device
        if snapshot_file:
            history = device.record_history()
            history.classify = _classify_live_blocks
            STATE["history"] = history
    from .simulate import stochastic

    if stochastic_off:
        stochastic.disable_dropout()
        STATE["stochastic_off"] = True
    else:
        stochastic.watch(STATE)
    optimizer_module.register_optimizer_step_pre_hook(_before_step)
    optimizer_module.register_optimizer_step_post_hook(_after_step)
    _count_optimizers()
    if fingerprint:
        _record_norms_before_clipping()
    _watch_backward()
    if measure_file:
        atexit.register(write_measurement)
    if snapshot_file:
        atexit.register(write_snapshot)


def _start_real_cuda() -> None:
    STATE["real_cuda"] = True
    torch.cuda.init()
    torch.cuda.reset_peak_memory_stats()
    if STATE["snapshot_file"]:
        from .capture import HISTORY_ENTRIES

        torch.cuda.memory._record_memory_history(max_entries=HISTORY_ENTRIES)


TIMELINE_SUFFIX = ".timeline.json"


def write_snapshot() -> None:
    """The memory history in PyTorch's snapshot format: the simulated device's own, or on a real GPU
    the one PyTorch recorded (unless the OOM observer already wrote it at the failure)."""
    path = STATE["snapshot_file"]
    if not path:
        return
    try:
        if STATE["history"] is not None:
            save_snapshot(STATE["history"].snapshot(capacity=STATE["capacity"]), path)
        elif STATE["real_cuda"] and not STATE.get("snapshot_written"):
            save_snapshot(torch.cuda.memory._snapshot(), path)
    except Exception as error:  # noqa: BLE001 - the run's own outcome stands; say what is missing
        sys.stderr.write(f"oomtriage: could not write the memory snapshot ({type(error).__name__}: {error})\n")


def save_snapshot(snapshot: dict[str, Any], path: str) -> None:
    """The pickle (what memory_viz opens) and, beside it, the timeline as JSON: the parent reads
    that, since the pickle can be large and is only ever loaded restricted, when a user hands it in."""
    from .simulate.history import write_snapshot as write
    from .timeline import timeline_from_snapshot

    if STATE["real_cuda"] and STATE["capacity"] is None:
        snapshot.setdefault("oomtriage", {"simulated": False, "capacity_bytes": torch.cuda.get_device_properties(0).total_memory,
                                          "dropped_entries": 1})
    write(snapshot, path)
    timeline = timeline_from_snapshot(snapshot)
    if timeline is not None:
        Path(path + TIMELINE_SUFFIX).write_text(timeline.model_dump_json())


def _classify_live_blocks(at_oom: bool) -> dict[int, str]:
    """What live blocks are, by what holds them: an optimizer's parameters, their ``.grad`` and its
    state (cheap: read at each step's end). At an OOM also every leaf tensor that requires grad
    (scripts that update weights by hand), in one walk of the objects."""
    import gc
    import warnings

    device = STATE["device"]
    kinds: dict[int, str] = {}

    def label(tensor: Any, kind: str) -> None:
        if isinstance(tensor, torch.Tensor):
            try:
                address = device.address_of_storage(tensor.untyped_storage())
            except (RuntimeError, NotImplementedError):
                return
            if address is not None:
                kinds.setdefault(address, kind)

    def parameter(tensor: Any) -> None:
        label(tensor, "parameters")
        if isinstance(tensor, torch.Tensor) and tensor.grad is not None:
            label(tensor.grad, "gradients")

    for optimizer in list(OPTIMIZERS):
        for group in optimizer.param_groups:
            for tensor in group["params"]:
                parameter(tensor)
        for state in list(optimizer.state.values()):
            for value in state.values() if isinstance(state, dict) else ():
                label(value, "optimizer state")
    if at_oom:
        with warnings.catch_warnings():  # isinstance() on some deprecated module attributes warns
            warnings.simplefilter("ignore")
            for item in gc.get_objects():
                if type(item) is torch.nn.Parameter or (isinstance(item, torch.Tensor) and item.is_leaf and item.requires_grad):
                    parameter(item)
    return kinds


OPTIMIZERS: "weakref.WeakSet[Any]" = weakref.WeakSet()


def _make_cpu_behave_like_cuda() -> None:
    """The CPU build differs from CUDA in ways that change peak memory (reference §2.5)."""
    original_init = torch.autocast.__init__

    def autocast_init(self: Any, device_type: str, *args: Any, **kwargs: Any) -> None:
        original_init(self, "cpu" if device_type == "cuda" else device_type, *args, **kwargs)

    torch.autocast.__init__ = autocast_init  # type: ignore[method-assign]
    supported = getattr(optimizer_module, "_get_foreach_kernels_supported_devices", None)
    if supported is not None:  # CUDA optimizers default to foreach (+1x params at the step)
        optimizer_module._get_foreach_kernels_supported_devices = lambda: [*supported(), "cpu"]


def _count_optimizers() -> None:
    """A script that never builds a ``torch.optim`` optimizer (weights updated by hand) has its steps
    counted by ``backward()`` calls instead."""
    original_init = optimizer_module.Optimizer.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        STATE["optimizers"] += 1
        original_init(self, *args, **kwargs)
        try:
            OPTIMIZERS.add(self)
        except TypeError:  # an optimizer class with __slots__ and no weakref slot
            pass

    optimizer_module.Optimizer.__init__ = init  # type: ignore[method-assign]


def _before_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    history = STATE["history"]
    if history is not None:
        history.phase = "s"
        history.annotate(f"optimizer step {STATE['steps'] + 1}", "START")


def _after_step(optimizer: Any, args: Any, kwargs: Any) -> None:
    history = STATE["history"]
    if history is not None:
        history.phase = ""
        history.label_live()
        history.annotate(f"optimizer step {STATE['steps'] + 1}", "END")
    # The gradient norm is read after the step, not before it: Lightning (and any closure-based
    # loop) runs forward and backward inside optimizer.step(closure), so before the step the
    # gradients are those of the previous micro-batch, or none. Optimizers do not modify .grad.
    if STATE["fingerprint"]:
        _record_grad_norm(optimizer)
    STATE["norm_this_step"] = False
    _count_step()


def _count_step() -> None:
    STATE["steps"] += 1
    # The loss of a step is the sum of the losses backpropagated since the last step, so a run with
    # gradient accumulation (loss / k per micro-batch) compares step by step with one without.
    if STATE["fingerprint"]:
        STATE["step_losses"].append(STATE["pending_loss"])
    STATE["pending_loss"] = 0.0
    _report_progress()
    if STATE["max_steps"] is not None and STATE["steps"] >= STATE["max_steps"]:
        STATE["exit"] = "max_steps"
        raise MaxStepsReached(STATE["steps"])


def _report_progress() -> None:
    """The step count, for the parent's progress bar (a few bytes per optimizer step)."""
    path = STATE["progress_file"]
    if path:
        try:
            # Written aside and renamed over the old file, so the parent never reads it half-written.
            staged = Path(f"{path}.tmp")
            staged.write_text(str(STATE["steps"]))
            os.replace(staged, path)
        except OSError:
            STATE["progress_file"] = None  # progress is cosmetic: never fail the user's run over it


FINGERPRINT_CHUNK = 1 << 16  # elements: a float64 temporary of 512 KiB at most


def _record_grad_norm(optimizer: Any) -> None:
    if STATE["norm_this_step"]:
        return  # already read before clipping
    params = [param for group in optimizer.param_groups for param in group["params"]]
    STATE["grad_norms"].append(_global_norm(params))


def _record_norms_before_clipping() -> None:
    """``clip_grad_norm_`` rescales the gradients: read the norm before it does, once per step, so a
    clipped script does not show the clip value at every step."""
    import torch.nn.utils as nn_utils
    import torch.nn.utils.clip_grad as clip_module

    original = clip_module.clip_grad_norm_

    def clip_grad_norm_(parameters: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(parameters, torch.Tensor):
            parameters = [parameters]
        parameters = list(parameters)
        if not STATE["norm_this_step"]:
            STATE["grad_norms"].append(_global_norm(parameters))
            STATE["norm_this_step"] = True
        return original(parameters, *args, **kwargs)

    clip_module.clip_grad_norm_ = clip_grad_norm_
    nn_utils.clip_grad_norm_ = clip_grad_norm_


def _global_norm(params: list[Any]) -> float:
    # Accumulated in float64: a float32 sum of squares depends on its summation order (two orders
    # differ by up to 1.7e-6 relative on the examples, the size of the exact numerics bound). Outside
    # the simulated device, so the fingerprint adds nothing to the memory it measures; in chunks, so
    # on a real GPU it adds at most FINGERPRINT_CHUNK float64s.
    from torch.utils._python_dispatch import _disable_current_modes

    total = 0.0
    with torch.no_grad(), _disable_current_modes():
        for param in params:
            if isinstance(param, torch.Tensor) and param.grad is not None:
                total += _squared_norm(param.grad.detach())
    return math.sqrt(total)


def _squared_norm(grad: torch.Tensor) -> float:
    if grad.is_sparse:
        grad = grad.coalesce().values()
    return sum(float(torch.linalg.vector_norm(chunk, dtype=torch.float64)) ** 2
               for chunk in grad.reshape(-1).split(FINGERPRINT_CHUNK))


def _watch_backward() -> None:
    """Each ``backward()`` once: its loss for the fingerprint and, without an optimizer, a step.

    ``Tensor.backward`` dispatches to itself again through any TorchFunctionMode (the simulated
    GPU's is one), so the outer call alone counts."""
    original_backward = torch.Tensor.backward

    def backward(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        if getattr(_IN_BACKWARD, "active", False):
            return original_backward(self, *args, **kwargs)
        _IN_BACKWARD.active = True
        try:
            if STATE["fingerprint"] and self.numel() == 1 and len(STATE["losses"]) < 100_000:
                value = float(self.detach().float())
                STATE["losses"].append(value)
                STATE["pending_loss"] += value
            history = STATE["history"]
            if history is not None:
                history.phase = "b"
            result = original_backward(self, *args, **kwargs)
        finally:
            _IN_BACKWARD.active = False
            if STATE["history"] is not None:
                STATE["history"].phase = ""
        STATE["backwards"] += 1
        if STATE["optimizers"] == 0:  # weights updated by hand: each backward() is a step
            STATE["counted_by"] = "backward"
            _count_step()
        return result

    torch.Tensor.backward = backward  # type: ignore[method-assign]


def peaks() -> dict[str, Any]:
    if STATE["real_cuda"]:
        stats = torch.cuda.memory_stats()
        return {"device": "cuda", "peak_allocated_bytes": int(torch.cuda.max_memory_allocated()),
                "peak_reserved_bytes": int(torch.cuda.max_memory_reserved()),
                "num_alloc_retries": int(stats.get("num_alloc_retries", 0)), "ooms_raised": int(stats.get("num_ooms", 0))}
    device = STATE["device"]
    if device is None:
        return {"device": "cpu", "peak_allocated_bytes": None, "peak_reserved_bytes": None}
    stats = device.stats
    return {"device": "fake" if STATE["fake"] else "simulated", "peak_allocated_bytes": stats.peak_allocated, "peak_reserved_bytes": stats.peak_reserved,
            "num_alloc_retries": stats.num_alloc_retries, "ooms_raised": stats.num_ooms}


def write_measurement() -> None:
    path = STATE["measure_file"]
    if not path:
        return
    record = {"schema_version": MEASURE_SCHEMA_VERSION, "capacity_bytes": STATE["capacity"], "oom": STATE["oom"],
              "exit": "oom" if STATE["oom"] else STATE["exit"], "steps": STATE["steps"],
              "losses": STATE["losses"], "step_losses": STATE["step_losses"], "grad_norms": STATE["grad_norms"],
              "steps_counted_by": STATE["counted_by"], "backward_calls": STATE["backwards"],
              "stochastic_off": STATE["stochastic_off"], "dropout_seen": STATE["dropout_seen"],
              "last_oom_message": (simulated_oom_state() or {}).get("message"), **peaks()}
    target = Path(path)
    temporary = target.with_name(target.name + f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(record))
    os.replace(temporary, target)


def note_oom() -> None:
    STATE["oom"] = True


def simulated_oom_state() -> dict[str, Any] | None:
    device = STATE["device"]
    return device.last_oom if device is not None else None


def is_active() -> bool:
    return "oomtriage.runtime" in sys.modules and (STATE["device"] is not None or STATE["real_cuda"])
