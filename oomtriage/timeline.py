"""The memory timeline of a run, from a snapshot in PyTorch's format (a real GPU's
``_dump_snapshot``, or the one the simulated device writes): allocated and reserved after every
allocator event, the optimizer steps and phases, the OOM, and what held the memory at the OOM (or
at the peak when the run fitted), by allocation site and by kind.

Downsampled for plotting: each bucket of events keeps its lowest and highest point, so every peak
stays exact however long the run.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import Field

from .collectors.snapshot import byte_count, site_of_frames
from .models import AllocationSite, Model

KINDS = ("parameters", "gradients", "optimizer state", "activations", "backward buffers", "optimizer step buffers",
         "no-grad buffers", "other")
MAX_POINTS = 4000  # plotted points per series: two per bucket of events
TOP_SITES = 12


class PhaseSpan(Model):
    name: str
    start: int = Field(description="first event of the span (event index)")
    end: int


class MemoryTimeline(Model):
    source: str = Field(description="'simulated' (oomtriage's device) or 'snapshot' (a GPU's memory history)")
    capacity_bytes: int | None = None
    events: int = 0
    index: list[int] = Field(default_factory=list, description="event index of each plotted point")
    allocated: list[int] = Field(default_factory=list)
    reserved: list[int] = Field(default_factory=list)
    peak_allocated_bytes: int = 0
    peak_reserved_bytes: int = 0
    peak_at: int | None = None
    oom_at: int | None = Field(None, description="event index of the last OOM")
    oom_requested_bytes: int | None = None
    steps: list[int] = Field(default_factory=list, description="event index at which each optimizer step ended")
    phases: list[PhaseSpan] = Field(default_factory=list)
    held_at: str = Field("end", description="'oom', 'peak' or 'end': the moment held_by_* describe")
    held_bytes: int = 0
    held_by_site: list[AllocationSite] = Field(default_factory=list)
    held_by_kind: dict[str, int] = Field(default_factory=dict)
    truncated: bool = Field(False, description="the history lost its oldest events (a ring buffer)")


def timeline_from_snapshot(snapshot: dict[str, Any], *, device: int = 0, max_points: int = MAX_POINTS) -> MemoryTimeline | None:
    """None when the snapshot has no trace (taken without ``_record_memory_history``)."""
    traces = snapshot.get("device_traces")
    trace = traces[device] if isinstance(traces, list) and 0 <= device < len(traces) and isinstance(traces[device], list) else []
    trace = [entry for entry in trace if isinstance(entry, dict)]
    if not trace:
        return None
    ours = snapshot.get("oomtriage") if isinstance(snapshot.get("oomtriage"), dict) else {}
    allocated, reserved, live = _replay(trace)
    truncated = bool(ours.get("dropped_entries")) if ours else True
    if truncated:  # the trace starts mid-run: anchor its end to the segments the snapshot holds
        segments = [s for s in snapshot.get("segments") or [] if isinstance(s, dict) and s.get("device", device) == device]
        if not ours or ours.get("snapshot_at") != "oom":
            offset_allocated = sum(byte_count(b.get("size")) for s in segments for b in s.get("blocks") or []
                                   if isinstance(b, dict) and b.get("state") == "active_allocated") - allocated[-1]
            offset_reserved = sum(byte_count(s.get("total_size")) for s in segments) - reserved[-1]
            allocated = [value + max(0, offset_allocated) for value in allocated]
            reserved = [value + max(0, offset_reserved) for value in reserved]
    ooms = [i for i, entry in enumerate(trace) if entry.get("action") == "oom"]
    peak_at = max(range(len(allocated)), key=allocated.__getitem__)
    held_at, moment = ("oom", ooms[-1]) if ooms else ("peak", peak_at)
    timeline = MemoryTimeline(
        source="simulated" if ours.get("simulated") else "snapshot",
        capacity_bytes=byte_count(ours.get("capacity_bytes")) or None if ours else None,
        events=len(trace), peak_allocated_bytes=max(allocated), peak_reserved_bytes=max(reserved), peak_at=peak_at,
        oom_at=ooms[-1] if ooms else None, oom_requested_bytes=byte_count(trace[ooms[-1]].get("size")) if ooms else None,
        steps=_steps(snapshot, trace), phases=_phases(ours.get("phases"), len(trace)), held_at=held_at, truncated=truncated)
    timeline.index, timeline.allocated, timeline.reserved = downsample(allocated, reserved, max_points)
    if not ours and ooms:
        # A GPU's snapshot taken at the OOM (PyTorch's OOM observer): its segments are the memory
        # at the failure exactly, also what was allocated before the history began.
        _held_in_segments(timeline, snapshot, device)
    else:
        _held(timeline, trace, live, moment, ours.get("labels") if isinstance(ours.get("labels"), dict) else {})
        before = allocated[moment] - timeline.held_bytes
        if truncated and before > 0:
            timeline.held_by_site.append(AllocationSite(location=BEFORE_HISTORY, bytes=before, count=0))
            timeline.held_by_kind["other"] = timeline.held_by_kind.get("other", 0) + before
            timeline.held_bytes += before
    return timeline


BEFORE_HISTORY = "<allocated before the recorded history began>"


def _held_in_segments(timeline: MemoryTimeline, snapshot: dict[str, Any], device: int) -> None:
    by_site: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_kind: dict[str, int] = defaultdict(int)
    cache: dict[int, str] = {}
    for segment in snapshot.get("segments") or []:
        if not isinstance(segment, dict) or segment.get("device", device) != device:
            continue
        for block in segment.get("blocks") or []:
            if isinstance(block, dict) and block.get("state") == "active_allocated":
                size = byte_count(block.get("size"))
                site = by_site[site_of_frames(block.get("frames"), cache)]
                site[0] += size
                site[1] += 1
                by_kind[_kind_from_frames(block.get("frames"))] += size
                timeline.held_bytes += size
    _set_held(timeline, by_site, by_kind)


def _set_held(timeline: MemoryTimeline, by_site: dict[str, list[int]], by_kind: dict[str, int]) -> None:
    top = sorted(by_site.items(), key=lambda item: item[1][0], reverse=True)[:TOP_SITES]
    timeline.held_by_site = [AllocationSite(location=location, bytes=size, count=count) for location, (size, count) in top]
    timeline.held_by_kind = dict(sorted(by_kind.items(), key=lambda item: -item[1]))


def _replay(trace: list[dict[str, Any]]) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """Allocated and reserved after each event, and (alloc index, free index) of each allocation."""
    allocated, reserved = [], []
    current_allocated = current_reserved = 0
    open_allocs: dict[int, int] = {}
    spans: list[tuple[int, int]] = []
    for index, entry in enumerate(trace):
        action, size, address = entry.get("action"), byte_count(entry.get("size")), entry.get("addr")
        if action == "alloc":
            current_allocated += size
            open_allocs[address] = index
        elif action == "free_completed":
            current_allocated -= size
            start = open_allocs.pop(address, None)
            if start is not None:
                spans.append((start, index))
        elif action == "segment_alloc":
            current_reserved += size
        elif action == "segment_free":
            current_reserved -= size
        allocated.append(current_allocated)
        reserved.append(current_reserved)
    spans.extend((start, len(trace)) for start in open_allocs.values())
    return allocated, reserved, spans


def downsample(allocated: list[int], reserved: list[int], max_points: int) -> tuple[list[int], list[int], list[int]]:
    """At most ``max_points`` points per series; each bucket keeps its lowest and highest point (by
    allocated) in event order, so the global peak is among them exactly."""
    count = len(allocated)
    if count <= max_points:
        return list(range(count)), list(allocated), list(reserved)
    buckets = max(1, max_points // 3)  # up to three points each: lowest, highest allocated, highest reserved
    width = -(-count // buckets)
    index: list[int] = []
    for start in range(0, count, width):
        stop = min(count, start + width)
        low = min(range(start, stop), key=allocated.__getitem__)
        high = max(range(start, stop), key=lambda i: (allocated[i], reserved[i]))
        high_reserved = max(range(start, stop), key=reserved.__getitem__)
        index.extend(sorted({low, high, high_reserved}))
    return index, [allocated[i] for i in index], [reserved[i] for i in index]


def _steps(snapshot: dict[str, Any], trace: list[dict[str, Any]]) -> list[int]:
    annotations = snapshot.get("external_annotations")
    if not isinstance(annotations, list):
        return []
    times = [entry.get("time_us") if isinstance(entry.get("time_us"), int) else 0 for entry in trace]
    if any(later < earlier for earlier, later in zip(times, times[1:])):
        return []
    return [min(len(trace) - 1, bisect.bisect_right(times, item["time_us"]) - 1)
            for item in annotations if isinstance(item, dict) and item.get("stage") == "END"
            and isinstance(item.get("time_us"), int) and "step" in str(item.get("name", ""))]


def _phases(runs: Any, events: int) -> list[PhaseSpan]:
    if not isinstance(runs, list):
        return []
    starts = [(run[0], str(run[1])) for run in runs if isinstance(run, list) and len(run) == 2 and isinstance(run[0], int)]
    spans = [PhaseSpan(name=name, start=start, end=(starts[i + 1][0] if i + 1 < len(starts) else events))
             for i, (start, name) in enumerate(starts)]
    # A span of an event or two inside another phase (autocast casting a weight with grad mode on
    # inside an evaluation) is that phase's: merged, so the shading shows phases, not flicker.
    merged: list[PhaseSpan] = []
    for i, span in enumerate(spans):
        brief = span.end - span.start <= MIN_PHASE_EVENTS and 0 < i < len(spans) - 1 and spans[i - 1].name == spans[i + 1].name
        if merged and (brief or merged[-1].name == span.name):
            merged[-1].end = span.end
        else:
            merged.append(span)
    return merged


MIN_PHASE_EVENTS = 2


_PHASE_KIND = {"forward": "activations", "backward": "backward buffers", "optimizer step": "optimizer step buffers",
               "no-grad (evaluation)": "no-grad buffers"}


def _held(timeline: MemoryTimeline, trace: list[dict[str, Any]], spans: list[tuple[int, int]], moment: int,
          labels: dict[str, str]) -> None:
    """Live bytes at ``moment`` by the user's frame that allocated them, and by what they are."""
    phase_starts = [span.start for span in timeline.phases]
    by_site: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_kind: dict[str, int] = defaultdict(int)
    cache: dict[int, str] = {}
    held = 0
    for start, stop in spans:
        if not start <= moment < stop:
            continue
        entry = trace[start]
        size = byte_count(entry.get("size"))
        held += size
        site = by_site[site_of_frames(entry.get("frames"), cache)]
        site[0] += size
        site[1] += 1
        kind = labels.get(str(start))
        kind = kind if kind in KINDS else None
        if kind is None and timeline.phases:
            phase = timeline.phases[max(0, bisect.bisect_right(phase_starts, start) - 1)].name
            kind = _PHASE_KIND.get(phase, "other")
        by_kind[kind or _kind_from_frames(entry.get("frames"))] += size
    timeline.held_bytes = held
    _set_held(timeline, by_site, by_kind)


def _kind_from_frames(frames: Any) -> str:
    """A GPU's snapshot has no labels: what the Python stack says the allocation was for."""
    if not isinstance(frames, list) or not frames:
        return "other"
    names = [(str(frame.get("filename", "")), str(frame.get("name", ""))) for frame in frames[:MAX_FRAMES_SCANNED]
             if isinstance(frame, dict)]
    if any("torch/optim/" in filename or name in ("_init_group", "step") and "optim" in filename for filename, name in names):
        return "optimizer state"
    if any(name in ("backward", "_engine_run_backward", "run_backward") for _, name in names):
        return "backward buffers"
    if any(name in ("_apply", "load_state_dict", "from_pretrained", "reset_parameters", "__init__") and "torch/nn/" in filename
           or name == "from_pretrained" for filename, name in names):
        return "parameters"
    return "activations"


MAX_FRAMES_SCANNED = 64


def timeline_from_snapshot_file(path: str | Path) -> MemoryTimeline | None:
    """A snapshot file's timeline, loaded as ``analyze`` loads snapshots: restricted unpickler,
    small files checked opcode by opcode, large ones in a memory-capped child."""
    from .collectors.snapshot import SCAN_LIMIT, load_snapshot, run_capped

    path = Path(path)
    if path.stat().st_size <= SCAN_LIMIT:
        return timeline_from_snapshot(load_snapshot(path))
    output = run_capped(path, "from oomtriage.timeline import timeline_from_snapshot as build\n"
                              "result = build(load_snapshot(sys.argv[1]))\n"
                              "sys.stdout.write(result.model_dump_json() if result is not None else 'null')\n")
    return None if output.strip() == b"null" else MemoryTimeline.model_validate_json(output)
