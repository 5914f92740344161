"""PyTorch memory snapshots (``torch.cuda.memory._dump_snapshot`` pickles), loaded with a restricted
unpickler: plain containers and scalars only. Any pickle that names a class or function (the way
every malicious pickle runs code) is refused before anything runs."""

from __future__ import annotations

import io
import math
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


# A pickle's memo is an array sized by the largest index it names: a 24-byte pickle that puts at
# index 2**31 costs gigabytes before any object exists. The opcodes are checked first (linear in
# the pickle's size), so no index above what the objects could need is ever handed to the unpickler.
_MEMO_OPS = {"PUT", "BINPUT", "LONG_BINPUT"}
_CODE_OPS = {"GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX", "EXT1", "EXT2", "EXT4",
             "PERSID", "BINPERSID"}


MAX_OBJECTS = 5_000_000  # objects a snapshot may build (a real 32 MiB snapshot builds about a million)


def check_opcodes(data: bytes, name: str) -> None:
    import pickletools

    memo_limit = max(1024, len(data))  # every memo entry needs at least one opcode byte
    objects = 0
    try:
        for opcode, argument, _ in pickletools.genops(data):
            objects += 1
            if objects > 2 * MAX_OBJECTS:  # opcodes bound the objects built: a budget before loading
                raise SnapshotError(f"refused: the pickle builds more than {MAX_OBJECTS:,} objects", path=name)
            if opcode.name in _CODE_OPS:
                raise SnapshotError(f"refused: the pickle uses {opcode.name}; a memory snapshot holds only plain data", path=name)
            if opcode.name in _MEMO_OPS and isinstance(argument, int) and not 0 <= argument <= memo_limit:
                raise SnapshotError(f"refused: the pickle names memo slot {argument}, far beyond its {len(data)} bytes", path=name)
    except SnapshotError:
        raise
    except Exception as error:  # truncated or corrupt opcode streams raise many different types
        raise SnapshotError(f"not a readable snapshot pickle ({type(error).__name__}: {str(error)[:120]})", path=name) from None


SCAN_LIMIT = 32 * 1024**2  # opcodes are checked in-process up to this size (~0.4 s per MiB)


def digest_snapshot_file(path: str | Path) -> SnapshotDigest:
    """Load and digest a snapshot with bounded memory: small pickles are checked opcode by opcode
    first; large ones are loaded in a child process capped at a few times their size (RLIMIT_AS),
    so a pickle bomb ends that child, not the analysis."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise SnapshotError(f"cannot read ({error.strerror})", path=str(path)) from None
    if size <= SCAN_LIMIT:
        return digest_snapshot(load_snapshot(path))
    return _digest_in_child(path, size)


def _digest_in_child(path: Path, size: int) -> SnapshotDigest:
    code = "sys.stdout.write(digest_snapshot(load_snapshot(sys.argv[1])).model_dump_json())\n"
    return SnapshotDigest.model_validate_json(run_capped(path, code))


def run_capped(path: Path, code: str) -> bytes:
    """Run ``code`` on the snapshot at ``path`` in a child whose address space is capped at a few
    times the file's size; returns its standard output. ``load_snapshot`` is in scope."""
    import subprocess
    import sys

    size = path.stat().st_size
    limit = max(2 * 1024**3, 8 * size)
    preamble = ("import resource, sys\n"
                f"resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
                "from oomtriage.collectors.snapshot import digest_snapshot, load_snapshot, SNAPSHOT_NO_SCAN\n"
                "SNAPSHOT_NO_SCAN.append(True)\n")
    try:
        child = subprocess.run([sys.executable, "-c", preamble + code, str(path)], capture_output=True, timeout=600)
    except subprocess.TimeoutExpired:
        raise SnapshotError("reading the snapshot took more than 600 s", path=str(path)) from None
    if child.returncode != 0:
        last = (child.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1][:200]
        raise SnapshotError(f"the snapshot could not be loaded within {limit // 2**20} MiB ({last})", path=str(path))
    return child.stdout


SNAPSHOT_NO_SCAN: list[bool] = []  # set in the memory-capped child, where the cap does the scan's job


def loads_snapshot(data: bytes, name: str = "<snapshot>") -> dict[str, Any]:
    if not SNAPSHOT_NO_SCAN:
        check_opcodes(data, name)
    try:
        snapshot = PlainDataUnpickler(io.BytesIO(data)).load()
    except SnapshotError as error:
        raise SnapshotError(str(error), path=name) from None
    except Exception as error:  # truncated or corrupt pickles raise many different types
        raise SnapshotError(f"not a readable snapshot pickle ({type(error).__name__}: {error})", path=name) from None
    if not isinstance(snapshot, dict) or not isinstance(snapshot.get("segments"), list):
        raise SnapshotError("not a memory snapshot: expected a dict with a 'segments' list", path=name)
    return snapshot


MAX_FRAMES_READ = 64  # a block's stack is searched this deep for the user's frame
MAX_BLOCKS_READ = 2_000_000  # total block visits: shared lists cannot make the digest quadratic


def _text(value: Any, limit: int = 300) -> str:
    """User data as text, never through str() of a container (whose size can be exponential)."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)[:limit] if abs(value) < 10**30 else "?"
    return "?"


def byte_count(value: Any) -> int:
    """A byte count from snapshot data: a finite, non-negative number below 2**63, else 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value if 0 <= value < 2**63 else 0
    if isinstance(value, float) and math.isfinite(value) and 0 <= value < 2**63:
        return int(value)
    return 0


def site_of_frames(frames: Any, cache: dict[int, str]) -> str:
    """The first frame that is the user's code, else the first frame at all (cached per shared list)."""
    if not isinstance(frames, list) or not frames:
        return "<no stack recorded>"
    key = id(frames)
    if key in cache:
        return cache[key]
    usable = [frame for frame in frames[:MAX_FRAMES_READ] if isinstance(frame, dict) and isinstance(frame.get("filename"), str)]
    site = "<no stack recorded>"
    for frame in usable:
        filename = frame["filename"][:300]
        if not is_library_path(filename) and not filename.startswith("??"):
            site = f"{filename}:{_text(frame.get('line'))} in {_text(frame.get('name'))}"
            break
    else:
        if usable:
            frame = usable[0]
            site = f"{frame['filename'][:300]}:{_text(frame.get('line'))} in {_text(frame.get('name'))}"
    cache[key] = site
    return site


def digest_snapshot(snapshot: dict[str, Any], device: int | None = None) -> SnapshotDigest:
    """The allocator's state in a snapshot; with ``device``, only that device's segments and trace
    (a snapshot taken in the OOM observer covers every device, and the others say nothing)."""
    reserved = allocated = active = 0
    free_blocks: list[int] = []
    sites: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    expandable = False
    raw_segments = snapshot.get("segments")
    seen: set[int] = set()
    segments = []
    for segment in raw_segments if isinstance(raw_segments, list) else []:
        if device is not None and isinstance(segment, dict) and segment.get("device", device) != device:
            continue
        if isinstance(segment, dict) and id(segment) not in seen:  # a segment shared by reference counts once
            seen.add(id(segment))
            segments.append(segment)
    cache: dict[int, str] = {}
    visits = 0
    for segment in segments:
        reserved += byte_count(segment.get("total_size", 0))
        active += byte_count(segment.get("active_size", 0))
        expandable = expandable or segment.get("is_expandable") is True
        blocks = segment.get("blocks")
        for block in blocks if isinstance(blocks, list) else []:
            visits += 1
            if visits > MAX_BLOCKS_READ:
                break
            if not isinstance(block, dict):
                continue
            size = byte_count(block.get("size", 0))
            if block.get("state") == "active_allocated":
                allocated += size
                site = sites[site_of_frames(block.get("frames"), cache)]
                site[0] += size
                site[1] += 1
            elif block.get("state") == "inactive":
                free_blocks.append(size)
    free_total = sum(free_blocks)
    largest_free = max(free_blocks, default=0)
    oom = _last_oom(snapshot, device)
    top = sorted(sites.items(), key=lambda item: item[1][0], reverse=True)[:TOP_SITES]
    return SnapshotDigest(
        segments=len(segments),
        reserved_bytes=reserved,
        allocated_bytes=allocated,
        active_bytes=active,
        inactive_bytes=free_total,
        largest_free_block_bytes=largest_free,
        fragmentation=round(1 - largest_free / free_total, 4) if free_total else 0.0,
        expandable_segments=expandable or _setting_on(snapshot.get("allocator_settings"), "expandable_segments"),
        top_sites=[AllocationSite(location=location, bytes=size, count=count) for location, (size, count) in top],
        oom_requested_bytes=byte_count(oom.get("size")) if oom else None,
        oom_device_free_bytes=(byte_count(oom.get("device_free")) or None) if oom else None,
        trace_entries=sum(len(trace) for trace in _traces(snapshot, device)),
    )


def _traces(snapshot: dict[str, Any], device: int | None = None) -> list[list[Any]]:
    traces = snapshot.get("device_traces")
    if not isinstance(traces, list):
        return []
    if device is not None:  # device_traces is indexed by device
        traces = traces[device:device + 1] if 0 <= device < len(traces) else []
    return [trace for trace in traces if isinstance(trace, list)]


def _setting_on(settings: Any, name: str) -> bool:
    if isinstance(settings, str):
        return name in settings
    if isinstance(settings, dict):
        value = settings.get(name)
        return value is True or (isinstance(value, str) and value.lower() in ("true", "1"))
    return False


def _last_oom(snapshot: dict[str, Any], device: int | None = None) -> dict[str, Any] | None:
    for trace in _traces(snapshot, device):
        for entry in reversed(trace):
            if isinstance(entry, dict) and entry.get("action") == "oom":
                return entry
    return None
