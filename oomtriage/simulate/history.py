"""The simulated device's memory history, in PyTorch's own snapshot format.

What ``torch.cuda.memory._record_memory_history()`` records on a GPU (every allocator event with
the Python stack that caused it), recorded from the allocator model, and written as the pickle
``torch.cuda.memory._dump_snapshot()`` writes: ``segments`` (the cache at the OOM, or at exit),
``device_traces`` (the events), so PyTorch's ``memory_viz`` opens it like one from a real GPU.

Two additions under keys PyTorch's tools ignore: ``external_annotations`` (optimizer steps, as
``record_function`` annotations appear in recent snapshots) and ``oomtriage`` (the card's capacity,
the phase of each event, and what each allocation was: parameters, gradients, optimizer state,
labelled by what held them at an optimizer step or at the OOM; the rest by the phase that made them).
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from typing import Any

MAX_ENTRIES = 1_000_000  # events kept, as PyTorch's ring buffer (max_entries) keeps the newest
MAX_FRAMES = 48
# oomtriage's own frames (its package folder): not the user's, even in a project folder named oomtriage
_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
PHASES = {"f": "forward", "e": "no-grad (evaluation)", "b": "backward", "s": "optimizer step"}


class MemoryHistory:
    """Follows a ``CachingAllocatorModel`` through its ``listener``; ``snapshot()`` is the dump."""

    def __init__(self, allocator: Any, *, max_entries: int = MAX_ENTRIES) -> None:
        import torch

        self._torch = torch
        self.allocator = allocator
        self.entries: deque[tuple[str, int, int, int, int, str, int]] = deque(maxlen=max_entries)
        self.dropped = 0
        self._stacks: dict[tuple[Any, ...], int] = {}
        self._stack_list: list[tuple[Any, ...]] = []
        self._block_stack: dict[int, int] = {}  # live block address -> stack id
        self._block_event: dict[int, int] = {}  # live block address -> number of its alloc event
        self.recorded = 0  # events seen, dropped ones included: an event's number
        self.labels: dict[int, str] = {}  # alloc event number -> parameters / gradients / optimizer state
        self.phase = ""  # "b" inside backward(), "s" inside optimizer.step(); else from grad mode
        self._last_phase = "f"
        self.annotations: list[dict[str, Any]] = []
        self.oom_segments: list[dict[str, Any]] | None = None
        self.classify: Any = None  # (at_oom: bool) -> {address: kind}, set by the runtime
        self._frame_cache: dict[int, list[dict[str, Any]]] = {}
        allocator.listener = self.on_event

    # --- recording ------------------------------------------------------------------------------

    def current_phase(self) -> str:
        if self.phase:
            return self.phase
        return "f" if self._torch.is_grad_enabled() else "e"

    def on_event(self, action: str, address: int, size: int, device_free: int) -> None:
        if len(self.entries) == self.entries.maxlen:
            self.dropped += 1
        stack = -1
        if action in ("alloc", "oom"):
            stack = self._stack_id()
        # Frees happen whenever Python drops a reference (often after the block that allocated has
        # exited): they keep the phase of the allocations around them, so a phase is not split.
        phase = self.current_phase() if action in ("alloc", "segment_alloc", "oom") else self._last_phase
        if phase == "e" and stack >= 0 and _inside_forward(self._stack_list[stack]):
            phase = "f"  # an autograd.Function's or a checkpointed block's forward runs without grad
        self._last_phase = phase
        if action == "alloc":
            self._block_stack[address] = stack
            self._block_event[address] = self.recorded
        elif action == "free_completed":
            self._block_stack.pop(address, None)
            self._block_event.pop(address, None)
        self.entries.append((action, address, size, device_free, stack, phase, time.time_ns() // 1000))
        self.recorded += 1
        if action == "oom":
            # The cache at the failure, before unwinding frees anything: what memory_viz shows.
            self.oom_segments = self.allocator.segments(self._describe)
            self.label_live(at_oom=True)

    def label_live(self, *, at_oom: bool = False) -> None:
        """Label the live allocations the runtime can name (parameters, gradients, optimizer state)."""
        if self.classify is None:
            return
        try:
            found = self.classify(at_oom)
        except Exception:  # noqa: BLE001 - a label is a nicety; never fail the user's run over it
            return
        for address, kind in found.items():
            event = self._block_event.get(address)
            if event is not None:
                self.labels.setdefault(event, kind)

    def _stack_id(self) -> int:
        frame = sys._getframe(2)
        key = []
        while frame is not None and len(key) < MAX_FRAMES:
            code = frame.f_code
            if not code.co_filename.startswith(_OWN):
                key.append((code, frame.f_lineno))
            frame = frame.f_back
        stack = tuple(key)
        found = self._stacks.get(stack)
        if found is None:
            found = self._stacks[stack] = len(self._stack_list)
            self._stack_list.append(stack)
        return found

    def annotate(self, name: str, stage: str) -> None:
        self.annotations.append({"device": 0, "name": name, "stage": stage, "time_us": time.time_ns() // 1000})

    # --- the dump -------------------------------------------------------------------------------

    def _frames(self, stack: int, cache: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
        if stack < 0:
            return []
        found = cache.get(stack)
        if found is None:
            found = cache[stack] = [{"filename": code.co_filename, "line": line or 0, "name": code.co_name}
                                    for code, line in self._stack_list[stack]]
        return found

    def _describe(self, address: int, size: int) -> dict[str, Any]:
        return {"frames": self._frames(self._block_stack.get(address, -1), self._frame_cache)}

    def snapshot(self, *, capacity: int | None) -> dict[str, Any]:
        """The dump: plain dicts, lists, str and int only (what the restricted unpickler loads)."""
        cache = self._frame_cache
        segments = self.oom_segments if self.oom_segments is not None else self.allocator.segments(self._describe)
        first = self.recorded - len(self.entries)  # the number of the oldest event kept
        trace = []
        phases: list[list[Any]] = []
        last_phase = None
        for index, (action, address, size, device_free, stack, phase, stamp) in enumerate(self.entries):
            entry: dict[str, Any] = {"action": action, "addr": address, "size": size, "stream": 0, "time_us": stamp,
                                     "frames": self._frames(stack, cache) if action in ("alloc", "oom") else []}
            if action == "oom":
                entry["device_free"] = device_free
            trace.append(entry)
            if phase != last_phase:
                phases.append([index, PHASES.get(phase, phase)])
                last_phase = phase
        return {
            "segments": segments,
            "device_traces": [trace],
            "allocator_settings": {"expandable_segments": self.allocator.expandable},
            "external_annotations": list(self.annotations),
            "oomtriage": {"simulated": True, "capacity_bytes": capacity, "dropped_entries": self.dropped,
                          "phases": phases,
                          "labels": {str(event - first): kind for event, kind in self.labels.items() if event >= first},
                          "snapshot_at": "oom" if self.oom_segments is not None else "exit"},
        }


_FORWARD_WITHOUT_GRAD = (os.path.join("torch", "autograd", "function.py"), os.path.join("torch", "utils", "checkpoint.py"))


def _inside_forward(stack: tuple[Any, ...]) -> bool:
    return any(code.co_filename.endswith(_FORWARD_WITHOUT_GRAD) for code, _ in stack)


def write_snapshot(snapshot: dict[str, Any], path: str) -> None:
    """Written whole (rename into place) with pickle, as ``_dump_snapshot`` writes it."""
    import pickle

    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "wb") as handle:
        pickle.dump(snapshot, handle)
    os.replace(temporary, path)
