"""RAPIDS' device memory manager (RMM), which cuDF, cuML and dask-cuda allocate through: its
``rmm::out_of_memory`` / ``std::bad_alloc: out_of_memory``, the older ``RMM_ERROR_OUT_OF_MEMORY``
result and cuDF's first ``GDF_MEMORYMANAGER_ERROR``. A ``MemoryError`` raised from these is a GPU
allocation, not host RAM."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format


@message_format(
    "rmm_out_of_memory",
    r"RMM_ERROR_OUT_OF_MEMORY|rmm::(?:out_of_memory|bad_alloc)|std::bad_alloc: out_of_memory|\bout_of_memory: (?:CUDA|RMM) error|"
    r"GDF_MEMORYMANAGER_ERROR|RMM failure at:?[^\n]{0,240}(?:out of memory|[Mm]aximum pool size exceeded)",
)
def parse_rmm(match: re.Match[str], window: Window) -> Fields:
    requested = re.search(r"Attempted to allocate:? (\d+) bytes|failed to allocate (\d+) bytes", window.flat)
    size = (requested.group(1) or requested.group(2)) if requested else None
    return {"framework": "other", "backend": "cuda", "library": "rmm", "requested_bytes": int(size) if size else None,
            "raw_message": window.lines[0].strip()}
