"""Raw CUDA/HIP runtime OOMs (``C10_CUDA_CHECK``, ggml/llama.cpp, other runtimes), serving engines'
memory-reservation errors, ONNX Runtime's arena, and a last-resort generic "out of memory"."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format


def _framework_of(line: str) -> str:
    if re.search(r"ggml|llama\.cpp|ollama", line, re.IGNORECASE):
        return "llama.cpp"
    if re.search(r"torch|AcceleratorError|RuntimeError: CUDA error|OutOfMemoryError", line):
        return "pytorch"
    if re.search(r"onnxruntime|BFCArena", line):
        return "onnxruntime"
    return "unknown"


@message_format(
    "cuda_runtime_error",
    r"\b(CUDA|HIP|cuda|hip) (?:runtime )?error(?: \d+ at [^:]+:\d+)?: out of memory|"
    r"cudaMalloc failed: out of memory|CUDA_ERROR_OUT_OF_MEMORY|HIP_ERROR_OutOfMemory|"
    r"hipErrorOutOfMemory|hipError_t\(1002\)|cudaErrorMemoryAllocation|"
    r"^\W*out of (?:device )?memory\W*(?:cuda\w*\(|$|issue|error)|"
    # a runtime API call that returned cudaErrorMemoryAllocation, as XLA and others print it:
    # "cudaFuncSetAttribute(kernel, ...): out of memory"
    r"\b(?:cuda|hip)[A-Z]\w*\([^\n]{0,300}?\)\s?:\s?out of memory\b",
)
def parse_raw_cuda(match: re.Match[str], window: Window) -> Fields:
    line = window.lines[0]
    backend = "hip" if "hip" in match.group(0).lower() else "cuda"
    # ggml names the size on the failing line ("allocating 144.00 MiB on device 4: cudaMalloc failed")
    size = re.search(r"allocating ([\d.]+) MiB", line)
    requested = int(float(size.group(1)) * 1024**2) if size else None
    return {"framework": _framework_of(line), "backend": backend, "requested_bytes": requested, "raw_message": line.strip()}


@message_format(
    "directml_allocator",
    # torch-directml and ONNX Runtime's DirectML provider on Windows GPUs (AMD, Intel, NVIDIA);
    # tensorflow-directml's OOMs are TensorFlow's own formats, with the DML device as backend
    r"Could not allocate tensor with (\d+) bytes\. There is not enough GPU video memory available|DML allocator out of memory",
)
def parse_directml(match: re.Match[str], window: Window) -> Fields:
    framework = "onnxruntime" if "onnxruntime" in window.flat.lower() else "pytorch"
    return {"framework": framework, "backend": "directml", "requested_bytes": int(match.group(1)) if match.group(1) else None,
            "raw_message": window.lines[0].strip()}


@message_format("onnxruntime_arena", r"Failed to allocate memory for requested buffer(?: of size (\d+))?")
def parse_onnxruntime(match: re.Match[str], window: Window) -> Fields:
    requested = int(match.group(1)) if match.group(1) else None
    return {"framework": "onnxruntime", "requested_bytes": requested, "raw_message": window.lines[0].strip()}


@message_format("ggml_buffer", r"(?:failed to allocate|unable to allocate) (?:\w+ )?(?:CUDA|ROCm|Metal|Vulkan|SYCL|CPU)\d* buffer"
                r"|ggml_\w*alloc\w*: (?:failed|not enough)")
def parse_ggml(match: re.Match[str], window: Window) -> Fields:
    size = re.search(r"of size ([\d.]+) MiB|allocating ([\d.]+) MiB", window.flat)
    requested = int(float(size.group(1) or size.group(2)) * 1024**2) if size else None
    if requested is None:
        # "failed to allocate buffer of size 137438953504": the size in bytes
        in_bytes = re.search(r"\bof size (\d{4,})\b(?!\.\d| ?[KMG]i?B)", window.flat)
        requested = int(in_bytes.group(1)) if in_bytes else None
    return {"framework": "llama.cpp", "requested_bytes": requested, "raw_message": window.lines[0].strip()}


@message_format(
    "ascend_memory_allocation",
    # Huawei CANN's runtime under torch_npu, MindSpore or its own tools: error code EL0004 ("Failed to
    # allocate memory. Possible Cause: Available memory is insufficient.") and the ACL error's name.
    r"Memory_Allocation_Failure\(EL0004\)|\bACL_ERROR_RT_MEMORY_ALLOCATION\b|\baclrtMalloc\w* failed",
)
def parse_ascend(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "other", "backend": "npu", "library": "CANN", "raw_message": window.lines[0].strip()}


# Intel's Level Zero under SYCL (llama.cpp's SYCL backend, oneAPI programs): the Unified Runtime's
# result ("level_zero backend failed with error: 39 [UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY]") or Level
# Zero's own (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY). OUT_OF_HOST_MEMORY is the runtime's host-side
# allocation (USM host buffers, staging): the host's.
@message_format("level_zero_out_of_memory", r"\b(?:UR|ZE|PI)_(?:RESULT_)?ERROR_OUT_OF_(DEVICE|HOST)_MEMORY\b")
def parse_level_zero(match: re.Match[str], window: Window) -> Fields:
    framework = "llama.cpp" if re.search(r"ggml|llama", window.flat, re.IGNORECASE) else "other"
    return {"framework": framework, "backend": "xpu" if match.group(1) == "DEVICE" else "host", "library": "level_zero",
            "operation": "Level Zero host allocation" if match.group(1) == "HOST" else None, "raw_message": window.lines[0].strip()}


@message_format(
    "vulkan_device_memory",
    # ggml's Vulkan backend ("ggml_vulkan: Device memory allocation of size 4831838208 failed.") and the
    # Vulkan API's own result, as vulkan.hpp spells it or as the C enum.
    r"Device memory allocation of size (\d+) failed|vk::\w+::allocateMemory: ErrorOutOfDeviceMemory|"
    r"\bErrorOutOfDeviceMemory\b|\bVK_ERROR_OUT_OF_DEVICE_MEMORY\b",
)
def parse_vulkan(match: re.Match[str], window: Window) -> Fields:
    size = match.group(1) or (re.search(r"allocation of size (\d+)", window.flat) or [None, None])[1]
    return {"framework": "llama.cpp" if "ggml" in window.flat else "unknown", "backend": "vulkan",
            "requested_bytes": int(size) if size else None, "raw_message": window.lines[0].strip()}


@message_format("device_dram_buffer", r"Not enough space to allocate (\d+) B (?:DRAM|L1) buffer")
def parse_device_buffer(match: re.Match[str], window: Window) -> Fields:
    free = re.search(r"free: (\d+) B", window.flat)
    return {"framework": "other", "requested_bytes": int(match.group(1)), "free_bytes": int(free.group(1)) if free else None,
            "raw_message": window.lines[0].strip()}


@message_format(
    "serving_kv_cache",
    r"No available memory for the cache blocks|Insufficient memory to allocate KV-caches|"
    r"larger than the available KV cache memory|"
    r"is larger than the maximum number of tokens that can be stored in KV cache|"
    # text-generation-inference's warm-up: the batch token budgets do not fit beside the weights
    r"Not enough memory to handle \d+ (?:total tokens|prefill tokens)",
)
def parse_serving(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "pytorch", "operation": "KV cache reservation", "raw_message": window.lines[0].strip()}


@message_format(
    "cupy_memory_pool",
    r"[Oo]ut of memory (?:to allocate|allocating) ([\d,]+) bytes \((?:total ([\d,]+) bytes|allocated so far: ([\d,]+) bytes)"
    r"(?:, limit set to:? ([\d,]+) bytes)?",
)
def parse_cupy(match: re.Match[str], window: Window) -> Fields:
    """CuPy's memory pool (and Chainer's on top of it). Before v7 "total" was the pool's size had
    the request succeeded (so the pool already held total - request); from v7 it says "allocated so
    far". A limit set on the pool (`set_limit`, CUPY_GPU_MEMORY_LIMIT) is the cap that ran out."""
    number = lambda group: int(match.group(group).replace(",", "")) if match.group(group) else None  # noqa: E731
    requested = number(1)
    held = number(3) if match.group(3) else (number(2) - requested if match.group(2) else None)
    return {"framework": "other", "backend": "cuda", "library": "cupy", "requested_bytes": requested,
            "allocated_bytes": held if held is None or held >= 0 else None, "allowed_bytes": number(4),
            "raw_message": window.lines[0].strip()}


@message_format("bare_out_of_memory_error", r"\bOutOfMemoryError\b")
def parse_bare_exception(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "pytorch", "exception_type": "OutOfMemoryError", "raw_message": window.lines[0].strip()}


@message_format(
    "generic_out_of_memory",
    r"(?i)(?:error|exception|fail(?:ed|ure)?|fatal|abort)\b.{0,80}out of (?:device )?memory|"
    r"out of (?:device )?memory.{0,40}(?:error|fail|exception)|"
    r"\bOOM (?:at|in|during|while|when|on|error)\b|^\W*OOM\b",
)
def parse_generic(match: re.Match[str], window: Window) -> Fields:
    if match.end() > window.anchor_length:
        # An exception's name alone on its line ("ResourceExhaustedError:") with the message below: joined,
        # the message would lose its own format (Paddle's, a library's); the line that says "out of
        # memory" is an anchor of its own, so this window is not the message.
        raise ValueError("the generic match runs past its anchor line")
    line = window.lines[0]
    backend = "webgpu" if re.search(r"webgpu", line, re.IGNORECASE) else "cuda" if re.search(r"cuda|gpu", line, re.IGNORECASE) else "unknown"
    return {"framework": _framework_of(line), "backend": backend, "raw_message": line.strip()}
