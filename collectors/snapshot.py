"""PyTorch memory snapshots (``torch.cuda.memory._dump_snapshot`` pickles), loaded with a restricted
unpickler: plain containers and scalars only. Any pickle that names a class or function (the way
every malicious pickle runs code) is refused before anything runs."""

from __future__ import annotations

import io
import pickle
from collections import defaultdict
from pathlib import Path
from typing import Any

from oomtriage.errors import SnapshotError
from oomtriage.models import AllocationSite, SnapshotDigest

from .traceback import is_library_path

MAX_SNAPSHOT_BYTES = 2 * 1024**3
TOP_SITES = 10


class PlainDataUnpickler(pickle.Unpickler):
    """Refuses every global lookup, so only dict/list/tuple/str/bytes/int/float/bool/None load."""

    def find_class(self, module: str, name: str) -> Any:
        raise SnapshotError(f"refused: the pickle asks for {module}.{name}; a memory snapshot holds only plain data")

    def persistent_load(self, pid: Any) -> Any:
        raise SnapshotError("refused: the pickle uses persistent ids; a memory snapshot holds only plain data")


def load_snapshot(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_SNAPSHOT_BYTES:
            raise SnapshotError(f"snapshot is {size} bytes, over the {MAX_SNAPSHOT_BYTES} byte limit", path=str(path))
        data = path.read_bytes()
    except FileNotFoundError:
        raise SnapshotError("no such file", path=str(path)) from None
    except OSError as error:
        raise SnapshotError(f"cannot read ({error.strerror})", path=str(path)) from None
    return loads_snapshot(data, name=str(path))


def loads_snapshot(data: bytes, name: str = "<snapshot>") -> dict[str, Any]:
    try:
        snapshot = PlainDataUnpickler(io.BytesIO(data)).load()
    except SnapshotError as error:
        raise SnapshotError(str(error), path=name) from None
    except Exception as error:  # truncated or corrupt pickles raise many different types
        raise SnapshotError(f"not a readable snapshot pickle ({type(error).__name__}: {error})", path=name) from None
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("segments"), list):
        raise SnapshotError("not a memory snapshot: expected a dict with a 'segments' list", path=name)
    return snapshot


def _site(frames: Any) -> str:
    """The first frame that is the user's code, else the first frame at all."""
    if not isinstance(frames, list) or not frames:
        return "<no stack recorded>"
    usable = [frame for frame in frames if isinstance(frame, dict) and frame.get("filename")]
    for frame in usable:
        filename = str(frame["filename"])
        if not is_library_path(filename) and not filename.startswith("??"):
            return f"{filename}:{frame.get('line')} in {frame.get('name')}"
    if usable:
        frame = usable[0]
        return f"{frame['filename']}:{frame.get('line')} in {frame.get('name')}"
    return "<no stack recorded>"


def digest_snapshot(snapshot: dict[str, Any]) -> SnapshotDigest:
    reserved = allocated = active = 0
    free_blocks: list[int] = []
    sites: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    expandable = False
    segments = [segment for segment in snapshot.get("segments", []) if isinstance(segment, dict)]
    for segment in segments:
        reserved += int(segment.get("total_size", 0))
        active += int(segment.get("active_size", 0))
        expandable = expandable or bool(segment.get("is_expandable"))
        for block in segment.get("blocks", []) or []:
            if not isinstance(block, dict):
                continue
            size = int(block.get("size", 0))
            if block.get("state") == "active_allocated":
                allocated += size
                site = sites[_site(block.get("frames"))]
                site[0] += size
                site[1] += 1
            elif block.get("state") == "inactive":
                free_blocks.append(size)
    free_total = sum(free_blocks)
    largest_free = max(free_blocks, default=0)
    oom = _last_oom(snapshot)
    top = sorted(sites.items(), key=lambda item: item[1][0], reverse=True)[:TOP_SITES]
    return SnapshotDigest(
        segments=len(segments),
        reserved_bytes=reserved,
        allocated_bytes=allocated,
        active_bytes=active,
        inactive_bytes=free_total,
        largest_free_block_bytes=largest_free,
        fragmentation=round(1 - largest_free / free_total, 4) if free_total else 0.0,
        expandable_segments=expandable or "expandable_segments" in str(snapshot.get("allocator_settings", "")),
        top_sites=[AllocationSite(location=location, bytes=size, count=count) for location, (size, count) in top],
        oom_requested_bytes=oom.get("size") if oom else None,
        oom_device_free_bytes=oom.get("device_free") if oom else None,
        trace_entries=sum(len(trace) for trace in snapshot.get("device_traces", []) or [] if isinstance(trace, list)),
    )


def _last_oom(snapshot: dict[str, Any]) -> dict[str, Any] | None:
    for trace in snapshot.get("device_traces", []) or []:
        if not isinstance(trace, list):
            continue
        for entry in reversed(trace):
            if isinstance(entry, dict) and entry.get("action") == "oom":
                return entry
    return None
