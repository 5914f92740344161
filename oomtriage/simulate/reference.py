"""PyTorch's own tensor accounting, as the reference the simulated device is checked against."""

from __future__ import annotations

from typing import Any


def iteration_tolerant_memtracker() -> Any:
    """A ``MemTracker`` that accepts a module's second forward: MemTracker refuses it unless its
    per-module stats are reset between iterations (reference §2.2), so reset them when it does."""
    from torch.distributed._tools.mem_tracker import MemTracker

    tracker = MemTracker()
    pre_forward = tracker._pre_fw_hook

    def reset_between_iterations(*args: Any, **kwargs: Any) -> Any:
        try:
            return pre_forward(*args, **kwargs)
        except NotImplementedError:
            tracker.reset_mod_stats()
            return pre_forward(*args, **kwargs)

    tracker._pre_fw_hook = reset_between_iterations
    return tracker


def memtracker_peak_bytes(tracker: Any) -> int:
    return int(sum(snapshot["Total"] for snapshot in tracker.get_tracker_snapshot("peak").values()))
