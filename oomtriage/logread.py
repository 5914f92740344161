"""Read a log of any size without holding it whole.

A 2 GB log is scanned in 8 MiB chunks for the phrases that mark an OOM (or a recognised non-OOM
CUDA error); only the head, the tail and a window of lines around each hit are kept as text.
Everything downstream parses those windows, so memory and time stay bounded by the window sizes.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from .errors import InputError

CHUNK_BYTES = 8 * 1024 * 1024
BEFORE_BYTES = 64 * 1024  # a long traceback above the OOM line
AFTER_BYTES = 24 * 1024  # a wrapped message, a JAX buffer dump, torchrun's summary
HEAD_BYTES = 128 * 1024
TAIL_BYTES = 64 * 1024
MAX_REGIONS = 16
# One region never grows past this, whatever the trigger density (a log of nothing but OOM lines,
# TensorFlow's warnings every 17 KB): total kept text is at most MAX_REGIONS x MAX_REGION_BYTES.
MAX_REGION_BYTES = 256 * 1024

# Phrases that start every OOM format we parse, plus recognised non-OOM CUDA errors (so they can be
# reported as "not an OOM") and memory_summary tables. Case-insensitive, searched as bytes.
TRIGGER_PHRASES = [
    rb"out of (?:host )?memory",
    rb"out of gpu memory",  # CUDA.jl, Knet
    rb"outofmemory",
    rb"out_of_memory",
    rb"resource_?\s?exhausted",
    rb"^\s*xla label: ",  # a line of XLA's BufferAssignment dump, printed only on an OOM
    rb"oom when allocating",
    rb"alloc(?:ation)?_failed",
    rb"killed by signal",
    rb"oom-kill",
    rb"^killed\b",
    rb"interrupted by signal 9\b",
    rb"exit(?:ed)?(?: with)? (?:code|status)[: ]{0,2}137\b",  # 128 + SIGKILL
    rb"failed to allocate",
    rb"failed to get convolution algorithm",
    rb"could not create cudnn handle",
    rb"failed to create cublas handle",
    rb"cublas_status_not_initialized",
    rb"cudnn_status_not_initialized",
    rb"defaultcpuallocator",
    rb"bad_alloc",
    rb"running low on memory",  # Ray's memory monitor
    "已杀死|已殺死".encode(),  # the shell's "Killed" in Chinese locales
    rb"killed due to memory pressure",
    rb"node_out_of_memory",
    rb"ray-oom-prevention",
    rb"hostalloc\w* failed",  # cudaHostAlloc / cuMemHostAlloc: pinned host memory
    rb"could not allocate pinned host memory",  # TensorFlow's host pool
    rb"memory_allocation_failure",  # Ascend CANN's EL0004
    rb"acl_error_rt_memory_allocation",
    rb"aclrtmalloc\w* failed",
    rb"cannot allocate memory",  # the C library's ENOMEM (errno 12): a host allocation
    rb"winerror 1455",  # Windows' commit limit; the paging-file sentence is translated, the code is not
    rb"paging file is too small",
    rb"\bmemoryerror\b",
    rb"insufficient memory",
    rb"insufficient shared memory",
    rb"not enough memory",
    rb"no available memory for the cache blocks",
    rb"allocation on device",
    rb"illegal memory access",
    rb"device-side assert",
    rb"too many resources requested",
    rb"out of resource: shared memory",  # Triton's per-block limit, recognised as no OOM
    rb"cuda failure",
    rb"memory summary, device id",
    rb"\bOOM\b",
    rb"tried to allocate",
    rb"cannot malloc",  # PaddlePaddle 1.x
    rb"attempting to allocate",
    rb"unable to allocate",
    rb"memory \(\d+ bytes\) could not be allocated",  # TensorRT
    rb"maximum allowed buffer size",
    rb"not enough space to allocate",
    rb"stored in kv cache",
    rb"hiperror_t\(1002\)",
    rb"device memory allocation of size",  # ggml's Vulkan backend
    rb"outofdevicememory",  # vulkan.hpp's ErrorOutOfDeviceMemory
    rb"out_of_device_memory",  # VK_ERROR_OUT_OF_DEVICE_MEMORY, Level Zero's UR_/ZE_ results
    rb"out_of_host_memory",
    rb"cudnn convolution algorithm",
    rb"all algorithms tried",
    rb"no algorithm worked",
    rb"segmentation fault",
    rb"invalid device ordinal",
    rb"no cuda-capable device",
    rb"collective operation timeout",
    rb"_status_execution_failed",
    rb"mem_object_allocation_failure",  # OpenCL
    rb"out of gpu resources",  # OpenVINO's GPU plugin
    rb"cl_out_of_resources",
    rb"cudandarray_\w+: allocation failed",  # Theano's old CUDA backend
    rb"failed to cudamalloc",  # faiss
    rb"alloc fail type",
    rb"can'?t allocate memory",  # OneFlow's host OOM, and libraries that wrap a host allocation
    rb"cuda execution failed with error 2\b",  # spconv: CUDA's error 2 is an OOM
    rb"cuda error 2\b",
    rb"not enough gpu video memory",  # torch-directml
    rb"gdf_memorymanager_error",  # early cuDF
]
# Python's regex engine tries every alternative at every byte, which costs ~30 s on 100 MB. So the
# scan first finds cheap lower-case literal keys with bytes.find (memchr speed), then checks only the
# lines that hold one against the full trigger pattern. Every trigger phrase contains one of these.
# Keys are chosen for speed too: bytes.find skips by the needle's last byte, so rare endings win.
PREFILTER_KEYS = [b"memory", b"exhausted", b"kill", b"alloc", b"_status_", b"algorithm", b"device-side",
                  b"resources", b"segmentation fault", b"device ordinal", b"cuda-capable", b"operation timeout",
                  b" 137", b"winerror 1455", "死".encode(), b"error 2", b"xla label"]
# (" 137" serves every "exit code 137" / "status: 137" spelling in one pass; "resources" serves CUDA's
# "too many resources requested", OpenCL's CL_OUT_OF_RESOURCES and OpenVINO's "out of GPU resources",
# which name no memory at all; "error 2" is CUDA's code for an OOM printed bare (spconv); Triton's
# "out of resource: shared memory" and Ray's lines all hold "memory"; "xla label" finds XLA's buffer dump; the paging-file message always carries its "[WinError 1455]"; "死" ends both Chinese spellings of "Killed", 已杀死
# and 已殺死: one pass for the two.)
TRIGGER_TEXT = re.compile("|".join(p.decode() for p in TRIGGER_PHRASES), re.IGNORECASE | re.MULTILINE)


@dataclass
class Region:
    """A window of the log around one or more trigger hits."""

    offset: int
    first_line: int | None
    text: str


@dataclass
class LogView:
    name: str
    size_bytes: int
    head: str
    tail: str
    regions: list[Region] = field(default_factory=list)
    hits: int = 0
    regions_dropped: int = 0
    saturated: bool = False  # every region was taken before the end: later triggers were not examined

    @property
    def whole(self) -> str | None:
        """The full text when the log was small enough to keep whole."""
        return self.head if self.size_bytes <= HEAD_BYTES else None


def decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def looks_binary(sample: bytes) -> bool:
    if not sample:
        return False
    if b"\x00" in sample[:8192]:
        return True
    text_chars = bytes(range(32, 127)) + b"\n\r\t\f\b\x1b"
    nontext = sum(1 for byte in sample[:8192] if byte not in text_chars and byte < 128)
    return nontext / min(len(sample), 8192) > 0.3


def open_log(path: str | Path) -> LogView:
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory, not a log file", path=str(path))
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror})", path=str(path)) from None
    with handle:
        return scan_log(handle, name=str(path))


def view_from_text(text: str, name: str = "<text>") -> LogView:
    return scan_log(io.BytesIO(text.encode("utf-8", errors="replace")), name=name)


def scan_log(stream: BinaryIO, name: str) -> LogView:
    """Scan a byte stream once; keep head, tail and the windows around trigger hits."""
    head = b""
    tail = b""
    buffer = b""
    base = 0  # absolute offset of buffer[0]
    searched_to = 0
    covered_to = -1
    size = 0
    view = LogView(name=name, size_bytes=0, head="", tail="")
    raw_regions: list[tuple[int, bytes]] = []
    while True:
        data = stream.read(CHUNK_BYTES)
        if size == 0 and looks_binary(data):
            raise InputError("looks like a binary file, not a text log", path=name)
        size += len(data)
        if len(head) < HEAD_BYTES:
            head += data[: HEAD_BYTES - len(head)]
        buffer += data
        eof = not data
        limit = len(buffer) if eof else max(0, len(buffer) - AFTER_BYTES)
        # Once every region is taken, later trigger lines are not verified one by one (that is the
        # cost of a log made of triggers): the scan only keeps the tail from there on.
        saturated = len(raw_regions) >= MAX_REGIONS
        view.saturated = view.saturated or saturated
        hits = [] if saturated else _trigger_lines(buffer, max(0, searched_to - base), limit, lambda: covered_to - base)
        for match in hits:
            if len(raw_regions) >= MAX_REGIONS and base + match.start() >= covered_to:
                view.saturated = True
                break
            view.hits += 1
            if base + match.start() < covered_to:
                continue
            if len(raw_regions) >= MAX_REGIONS:
                view.regions_dropped += 1
                covered_to = base + match.end()
                continue
            start = _line_start(buffer, max(0, match.start() - BEFORE_BYTES))
            end = _line_end(buffer, match.end(), min(len(buffer), match.end() + AFTER_BYTES))
            previous_end = raw_regions[-1][0] + len(raw_regions[-1][1]) if raw_regions else -1
            if raw_regions and base + start < previous_end and base + end - raw_regions[-1][0] <= MAX_REGION_BYTES:
                prev_offset, prev_text = raw_regions[-1]  # overlapping windows merge
                merged_start = prev_offset - base
                if merged_start >= 0:
                    raw_regions[-1] = (prev_offset, buffer[merged_start:end])
                else:
                    overlap = prev_offset + len(prev_text) - base
                    raw_regions[-1] = (prev_offset, prev_text + buffer[overlap:end])
            elif raw_regions and base + start < previous_end:
                # The previous region is full: the next one starts where it ends.
                from_here = max(start, previous_end - base)
                raw_regions.append((base + from_here, buffer[from_here:end]))
            else:
                raw_regions.append((base + start, buffer[start:end]))
            covered_to = base + end
        searched_to = base + limit
        if eof:
            tail = buffer[-TAIL_BYTES:]
            break
        keep = buffer[-(BEFORE_BYTES + 2 * AFTER_BYTES) :]
        base += len(buffer) - len(keep)
        buffer = keep
    view.size_bytes = size
    view.head = decode(head)
    view.tail = decode(tail) if size > HEAD_BYTES else ""
    view.regions = [Region(offset=offset, first_line=None, text=decode(text)) for offset, text in raw_regions]
    if size <= HEAD_BYTES:
        for region in view.regions:
            region.first_line = head.count(b"\n", 0, region.offset) + 1
    return view


@dataclass
class _Hit:
    """A verified trigger line inside the buffer (start of line, end of the matched phrase)."""

    line_start: int
    phrase_end: int

    def start(self) -> int:
        return self.line_start

    def end(self) -> int:
        return self.phrase_end


def _trigger_lines(buffer: bytes, start: int, limit: int, covered: Callable[[], int] = lambda: -1) -> Iterator[_Hit]:
    """Lines in ``buffer[start:limit]`` that hold a trigger phrase, in order (verified lazily, so a
    caller that has enough stops paying)."""
    lowered = buffer[start:limit].lower()
    line_starts: set[int] = set()
    for key in PREFILTER_KEYS:
        position = lowered.find(key)
        while position != -1:
            line_start = lowered.rfind(b"\n", 0, position) + 1
            line_starts.add(line_start)
            line_end = lowered.find(b"\n", position)
            if line_end == -1:
                break
            position = lowered.find(key, line_end)
    for line_start in sorted(line_starts):
        if start + line_start < covered():
            continue  # inside a window already kept: no need to verify it
        line_end = lowered.find(b"\n", line_start)
        line = decode(buffer[start + line_start : start + (line_end if line_end != -1 else len(lowered))])
        match = TRIGGER_TEXT.search(line)
        if match:
            yield _Hit(start + line_start, start + line_start + len(line[: match.end()].encode()))


def _line_start(buffer: bytes, position: int) -> int:
    if position == 0:
        return 0
    newline = buffer.find(b"\n", position)
    return newline + 1 if newline != -1 else position


def _line_end(buffer: bytes, lower: int, position: int) -> int:
    if position >= len(buffer):
        return position
    newline = buffer.rfind(b"\n", lower, position)
    return newline + 1 if newline != -1 else position
