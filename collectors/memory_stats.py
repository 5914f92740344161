"""``torch.cuda.memory_stats()`` dicts (flat, as PyTorch returns them) and ``memory_summary()``
text (parsed by row label, old ``MB`` and new ``MiB`` cells alike)."""

from __future__ import annotations

import re
from typing import Any

from oomtriage.logread import LogView
from oomtriage.models import MemoryStats, TriageContext

from . import ContextPart, register

_STAT_KEYS = {
    "allocated_bytes": "allocated_bytes.all.current",
    "allocated_peak_bytes": "allocated_bytes.all.peak",
    "reserved_bytes": "reserved_bytes.all.current",
    "reserved_peak_bytes": "reserved_bytes.all.peak",
    "active_bytes": "active_bytes.all.current",
    "inactive_split_bytes": "inactive_split_bytes.all.current",
    "num_alloc_retries": "num_alloc_retries",
    "num_ooms": "num_ooms",
}
_SUMMARY_ROWS = {
    "Allocated memory": ("allocated_bytes", "allocated_peak_bytes"),
    "GPU reserved memory": ("reserved_bytes", "reserved_peak_bytes"),
    "Active memory": ("active_bytes", None),
    "Non-releasable memory": ("non_releasable_bytes", None),
}
_UNITS = {"B": 0, "KB": 1, "KiB": 1, "MB": 2, "MiB": 2, "GB": 3, "GiB": 3, "TB": 4, "TiB": 4, "PiB": 5}
_CELL = re.compile(r"(\d+)\s*(B|KB|KiB|MB|MiB|GB|GiB|TB|TiB|PiB)\b")


def looks_like_memory_stats(data: Any) -> bool:
    return isinstance(data, dict) and any(str(key).startswith(("allocated_bytes.", "reserved_bytes.")) for key in data)


def parse_memory_stats(data: dict[str, Any]) -> MemoryStats:
    """A flat ``memory_stats()`` dict; nested dicts (``_cuda_memoryStats``) are flattened first."""
    flat = _flatten(data)
    numbers = {key: float(value) for key, value in flat.items() if isinstance(value, (int, float)) and not isinstance(value, bool)}
    fields = {name: int(numbers[key]) for name, key in _STAT_KEYS.items() if key in numbers}
    return MemoryStats(source="memory_stats", raw=numbers, **fields)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _cell_bytes(cell: str) -> int | None:
    match = _CELL.search(cell)
    if not match:
        return None
    return int(match.group(1)) * 1024 ** _UNITS[match.group(2)]


def parse_memory_summary(text: str) -> MemoryStats | None:
    """Rows of a ``memory_summary()`` table, found by label wherever the table sits in the text."""
    if "memory summary" not in text.lower() and "GPU reserved memory" not in text:
        return None
    fields: dict[str, int] = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] not in _SUMMARY_ROWS:
            continue
        current_name, peak_name = _SUMMARY_ROWS[cells[0]]
        current = _cell_bytes(cells[1])
        if current is not None:
            fields.setdefault(current_name, current)
        if peak_name:
            peak = _cell_bytes(cells[2])
            if peak is not None:
                fields.setdefault(peak_name, peak)
    header = re.search(r"(?:CUDA )?OOMs:\s*(\d+)\s*\|\s*cudaMalloc retries:\s*(\d+)", text)
    if header:
        fields["num_ooms"], fields["num_alloc_retries"] = int(header.group(1)), int(header.group(2))
    if not fields:
        return None
    return MemoryStats(source="memory_summary", **fields)


class MemorySummaryCollector:
    """A ``memory_summary()`` table printed into the log."""

    name = "memory_summary"

    def collect(self, source: LogView, context: TriageContext) -> ContextPart:
        for region in source.regions:
            stats = parse_memory_summary(region.text)
            if stats:
                return {"memory_stats": stats}
        return {}


register(MemorySummaryCollector())
