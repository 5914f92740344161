"""Which backend measures a run: executing the script, or fake tensors (shapes only, no values).
Kept free of torch and of the validator so ``oomtriage run`` can decide before starting anything."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from .sizes import format_size

Backend = Literal["auto", "execute", "fake"]
# Executing a run needs host memory up to the card's size (the capped run stops there, the uncapped
# one goes past it): beyond this share of the host's available memory, "auto" measures on fake tensors.
FAKE_ABOVE_HOST_SHARE = 0.5


def host_available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def choose_backend(backend: Backend, capacity: int | None) -> tuple[bool, str]:
    """(fake?, why) for a run against a simulated card of ``capacity`` bytes."""
    if backend == "fake":
        return True, "fake tensors (asked for): shapes only, numerics not checked"
    if backend == "execute" or capacity is None:
        return False, "executed"
    available = host_available_bytes()
    if available is not None and capacity > FAKE_ABOVE_HOST_SHARE * available:
        return True, (f"fake tensors: a {format_size(capacity)} card is more than {FAKE_ABOVE_HOST_SHARE:.0%} of this "
                      f"machine's {format_size(available)} of available memory, so runs are measured without executing "
                      "them; numerics not checked")
    return False, "executed"
