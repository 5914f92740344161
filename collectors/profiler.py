"""Profiler output: ``prof.key_averages().table(...)`` text (memory columns, ``Gb/Mb/Kb/b`` cells that
are really base 1024) and ``export_chrome_trace`` JSON (``[memory]`` and ``[OutOfMemory]`` events)."""

from __future__ import annotations

import math
import re
from typing import Any

from oomtriage.logread import LogView
from oomtriage.models import OpMemory, ProfilerSummary, TriageContext

from . import ContextPart, register

_CELL = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(Gb|Mb|Kb|b|GB|MB|KB|B)$")
_POWER = {"b": 0, "kb": 1, "mb": 2, "gb": 3}
TOP_OPS = 10


def _cell_bytes(cell: str) -> int | None:
    match = _CELL.match(cell.strip())
    if not match:
        return None
    return int(float(match.group(1)) * 1024 ** _POWER[match.group(2).lower()])


def parse_profiler_table(text: str) -> ProfilerSummary | None:
    lines = text.splitlines()
    header_index = next((i for i, line in enumerate(lines) if "Name" in line and re.search(r"\bMem\b", line)), None)
    if header_index is None:
        return None
    header = [cell.strip() for cell in re.split(r"\s{2,}", lines[header_index].strip())]
    device = next((name.split()[1] for name in header if re.fullmatch(r"Self \w+ Mem", name) and "CPU" not in name), "CPU")
    self_col = f"Self {device} Mem" if device != "CPU" else "Self CPU Mem"
    total_col = f"{device} Mem" if device != "CPU" else "CPU Mem"
    ops: list[OpMemory] = []
    for line in lines[header_index + 1 :]:
        cells = [cell.strip() for cell in re.split(r"\s{2,}", line.strip())]
        if len(cells) != len(header) or set(line.strip()) <= {"-", " "}:
            continue
        row = dict(zip(header, cells))
        calls = row.get("# of Calls", "")
        ops.append(OpMemory(name=row.get("Name", "?"), self_bytes=_cell_bytes(row.get(self_col, "")) or 0,
                            total_bytes=_cell_bytes(row.get(total_col, "")) or 0,
                            calls=int(calls) if calls.isdigit() else None))
    if not ops:
        return None
    ops.sort(key=lambda op: op.self_bytes, reverse=True)
    return ProfilerSummary(source="table", device=device.lower(), top_ops=ops[:TOP_OPS])


def looks_like_chrome_trace(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("traceEvents"), list)


_DEVICE_TYPES = {0: "cpu", 1: "cuda"}


def parse_chrome_trace(data: dict[str, Any]) -> ProfilerSummary:
    """Peak totals per device from ``[memory]`` events; the accelerator's when there is one."""
    peaks: dict[str, list[int | None]] = {}
    ooms = 0
    for event in data.get("traceEvents", []):
        if not isinstance(event, dict):
            continue
        name = event.get("name")
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if name == "[OutOfMemory]":
            ooms += 1
        if name != "[memory]":
            continue
        device = _DEVICE_TYPES.get(args.get("Device Type"), "accelerator")
        peak = peaks.setdefault(device, [None, None])
        for index, key in enumerate(("Total Allocated", "Total Reserved")):
            value = args.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value < 2**63:
                peak[index] = max(peak[index] or 0, int(value))
    device = next((name for name in peaks if name != "cpu"), "cpu")
    allocated, reserved = peaks.get(device, [None, None])
    return ProfilerSummary(source="chrome_trace", device=device, peak_allocated_bytes=allocated,
                           peak_reserved_bytes=reserved, oom_events=ooms)


class ProfilerTableCollector:
    """A ``key_averages().table()`` printed into the log."""

    name = "profiler_table"

    def collect(self, source: LogView, context: TriageContext) -> ContextPart:
        text = source.whole or "\n".join(region.text for region in source.regions)
        table = parse_profiler_table(text) if "Self CPU" in text else None
        return {"profiler": [*context.profiler, table]} if table else {}


register(ProfilerTableCollector())
