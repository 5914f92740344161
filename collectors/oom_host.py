"""Host (CPU RAM) exhaustion: the kernel OOM killer, Slurm's cgroup handler, DataLoader workers
killed by a signal or out of shared memory, ``MemoryError`` and ``std::bad_alloc``, ENOMEM
("Cannot allocate memory"), Windows' commit limit (error 1455, the paging file), Ray's memory
monitor. None of these is GPU memory, and telling the user so is half of the diagnosis."""

from __future__ import annotations

import re

from oomtriage.models import OomError, StackTrace

from .message_formats import Fields, Window, message_format


def _host(window: Window, **extra: object) -> Fields:
    return {"framework": "unknown", "backend": "host", "raw_message": window.lines[0].strip(), **extra}


@message_format("dataloader_worker_killed", r"DataLoader worker \(pid[^)]*\) is killed by signal: ([\w ]+)")
def parse_dataloader_killed(match: re.Match[str], window: Window) -> Fields:
    return _host(window, framework="pytorch", operation=f"DataLoader worker ({match.group(1).strip()})")


@message_format("dataloader_shared_memory", r"DataLoader worker .*out of shared memory|unable to write to file </torch_\d+|"
                # the worker's own message before it dies, PyTorch's and PaddlePaddle's: "ERROR: Unexpected bus error
                # encountered in worker. This might be caused by insufficient shared memory (shm)."
                r"(?i:unexpected bus error encountered in (?:dataloader )?worker|insufficient shared memory \(shm\))",)
def parse_dataloader_shm(match: re.Match[str], window: Window) -> Fields:
    return _host(window, framework="pytorch", operation="DataLoader shared memory")


@message_format("cgroup_oom_kill", r"Detected \d+ oom[-_]kill event|oom[-_]kill event")
def parse_cgroup(match: re.Match[str], window: Window) -> Fields:
    return _host(window, operation="cgroup OOM killer")


@message_format("kernel_oom_killer", r"Out of memory: Kill(?:ed)? process (\d+)|invoked oom-killer")
def parse_kernel(match: re.Match[str], window: Window) -> Fields:
    return _host(window, operation="kernel OOM killer")


@message_format(
    "process_killed",
    # exit code 137 is 128 + SIGKILL, what a shell, an IDE or a container reports for the OOM killer
    r"^Killed\b(?!.*DataLoader)|exitcode\s*:\s*-9\b|Signal 9 \(SIGKILL\) received|died with <Signals\.SIGKILL: 9>|"
    r"\bexit(?:ed)?(?: with)? (?:code|status)[: ]{0,2}137\b|\binterrupted by signal 9\b|\bexit code: 137\b|"
    # the shell's "Killed" in a Chinese locale, often glued to the progress bar it cut
    r"已杀死|已殺死",
    primary=False,
)
def parse_killed(match: re.Match[str], window: Window) -> Fields:
    return _host(window, operation="process killed (SIGKILL)")


# RMM and other device libraries raise MemoryError / std::bad_alloc for a *device* allocation too
# ("std::bad_alloc: CUDA error at ...: cudaErrorMemoryAllocation out of memory"): that is a GPU OOM.
_DEVICE_ERROR = r"(?!.*(?:cudaError|hipError|CUDA error|HIP error|CUDA_ERROR|HIP_ERROR))"


# NumPy names its own: "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 26.3 GiB for an
# array with shape (...)", printed as numpy.core._exceptions.MemoryError by older releases.
@message_format("python_memory_error", rf"^(?:\S+: )?(?:numpy(?:\.\w+)*\.)?_?(?:Array)?MemoryError\b{_DEVICE_ERROR}|std::bad_alloc{_DEVICE_ERROR}")
def parse_memory_error(match: re.Match[str], window: Window) -> Fields:
    return _host(window, operation="host allocation failed")


# Runtimes that report their *device* allocator's failure as Python's MemoryError: tinygrad's
# per-device allocators (runtime/ops_amd.py raising "Cannot allocate N bytes: no memory is available"
# on an MI300X), PyCUDA's driver, CuPy's pool. The frame that raised says whose memory ran out,
# whatever the exception is called.
_DEVICE_RUNTIME_FRAMES = (  # (the raising frame's path, whose memory it is, the library)
    (re.compile(r"tinygrad/runtime/ops_(?:amd|hip)\.py$"), "hip", "tinygrad"),
    (re.compile(r"tinygrad/runtime/ops_(?:nv|cuda)\.py$"), "cuda", "tinygrad"),
    (re.compile(r"tinygrad/runtime/ops_metal\.py$"), "mps", "tinygrad"),
    (re.compile(r"tinygrad/runtime/ops_(?:gpu|cl|qcom)\.py$"), "opencl", "tinygrad"),
    (re.compile(r"tinygrad/runtime/ops_webgpu\.py$"), "webgpu", "tinygrad"),
    (re.compile(r"(?:^|/)pycuda/[^/]+\.py$"), "cuda", "pycuda"),
    (re.compile(r"(?:^|/)cupy/cuda/[^/]+\.py$"), "cuda", "cupy"),
)


def device_behind_memory_error(error: OomError, stack: StackTrace | None) -> OomError:
    """A MemoryError read as the host's, raised inside a device runtime's allocator, is that device's OOM."""
    if error.backend != "host" or error.format != "python_memory_error" or stack is None:
        return error
    for frame in reversed(stack.frames[-4:]):  # the innermost frames: the allocator that refused
        path = frame.filename.replace("\\", "/")
        for pattern, backend, library in _DEVICE_RUNTIME_FRAMES:
            if pattern.search(path):
                return error.model_copy(update={"backend": backend, "library": library, "framework": "other",
                                                "operation": f"device allocation in {path.rsplit('/', 1)[-1]}"})
    return error


# Windows has no overcommit: every process must fit its committed memory in RAM plus the paging file.
# Each DataLoader worker is a spawned process that loads torch's CUDA libraries again, so a loader
# with many workers hits the commit limit as "Error loading ...\torch\lib\<name>.dll" (error 1455, in
# the system's language: "页面文件太小", "ページング ファイルが小さすぎる").
@message_format("windows_commit_limit", r"\[WinError 1455\]|The paging file is too small for this operation|"
                r"页面文件太小|頁面檔案太小|ページング ファイルが小さすぎ")
def parse_windows_commit(match: re.Match[str], window: Window) -> Fields:
    loading = re.search(r"""Error loading "([^"]+)"|Error loading '([^']+)'""", window.flat)
    library = (loading.group(1) or loading.group(2)).replace("\\", "/").rsplit("/", 1)[-1] if loading else None
    operation = "Windows commit limit (paging file)" + (f", loading {library}" if library else "")
    return _host(window, operation=operation, library=library)


# Page-locked (pinned) host memory: the CUDA runtime's host allocator failing, for a DataLoader's
# pin_memory, a framework's host arena or an offload buffer. Host RAM (and, under WSL2 or a
# container, a much smaller pinning limit), not the card's memory, though CUDA says "out of memory".
@message_format("pinned_host_alloc", r"\bcu(?:da)?(?:Mem)?HostAlloc\w* failed|\b(?:failed|unable) to cu(?:da)?(?:Mem)?HostAlloc\b|\bcudaMallocHost\b[^\n]{0,80}(?:fail|out of memory)|"
                r"CachingHostAllocator[^\n]{0,120}(?:fail|out of memory)|(?:failed|unable) to allocate (?:[\d.,]+ ?\w* (?:of )?)?(?:pinned|page-locked) (?:host )?memory|"
                # TensorFlow's stream executor and host pool: "failed to alloc 34358689792 bytes on host:
                # CUDA_ERROR_OUT_OF_MEMORY", "could not allocate pinned host memory of size: 34358689792"
                r"\bfailed to alloc \d+ bytes on host\b|\bcould not allocate pinned host memory\b")
def parse_pinned(match: re.Match[str], window: Window) -> Fields:
    return _host(window, operation="pinned (page-locked) host memory")


# The C library's ENOMEM text, from any host-side allocation that failed: fork() of a DataLoader
# worker, mmap of a checkpoint, a JIT's code buffers ("[Errno 12] Cannot allocate memory").
# ("can't allocate memory" said by a library that wraps the host allocation, DeepSpeed's offload among them)
@message_format("host_enomem", rf"\[Errno 12\] Cannot allocate memory|\bCannot allocate memory\b{_DEVICE_ERROR}|\bcan'?t allocate memory\b(?!: you tried){_DEVICE_ERROR}")
def parse_enomem(match: re.Match[str], window: Window) -> Fields:
    return _host(window, operation="host allocation failed (ENOMEM)")


# Ray's memory monitor kills a worker when its node's RAM passes the usage threshold (0.95 by
# default): "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory".
# The node's RAM, whichever device the task trains on.
@message_format("ray_memory_monitor", r"(?:Task|Actor|Worker) was killed due to the node running low on memory|"
                r"which exceeds the memory usage threshold of [\d.]+\. Ray killed this worker|"
                # the raylet's summary and its advice, printed when the kill itself scrolled away
                r"Workers \(tasks / actors\) killed due to memory pressure \(OOM\)|Worker exit type: NODE_OUT_OF_MEMORY|"
                r"docs\.ray\.io/[\w./-]*ray-oom-prevention|"
                # the older monitor (ray/memory_monitor.py, Ray 1.x) raised before the node ran out:
                # "RayOutOfMemoryError: More than 95% of the memory on node h1 is used (59.62 / 62.75 GB)"
                r"RayOutOfMemoryError: More than [\d.]+% of the memory on node \S+ is used")
def parse_ray_memory_monitor(match: re.Match[str], window: Window) -> Fields:
    return _host(window, framework="other", library="ray", operation="Ray's memory monitor stopped the task (node RAM)")
