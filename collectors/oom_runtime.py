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
    r"hipErrorOutOfMemory|cudaErrorMemoryAllocation",
)
def parse_raw_cuda(match: re.Match[str], window: Window) -> Fields:
    line = window.lines[0]
    backend = "hip" if "hip" in match.group(0).lower() else "cuda"
    return {"framework": _framework_of(line), "backend": backend, "raw_message": line.strip()}


@message_format("onnxruntime_arena", r"Failed to allocate memory for requested buffer of size (\d+)")
def parse_onnxruntime(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "onnxruntime", "requested_bytes": int(match.group(1)), "raw_message": window.lines[0].strip()}


@message_format(
    "serving_kv_cache",
    r"No available memory for the cache blocks|Insufficient memory to allocate KV-caches|"
    r"larger than the available KV cache memory",
)
def parse_serving(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "pytorch", "operation": "KV cache reservation", "raw_message": window.lines[0].strip()}


@message_format("bare_out_of_memory_error", r"\bOutOfMemoryError\b")
def parse_bare_exception(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "pytorch", "exception_type": "OutOfMemoryError", "raw_message": window.lines[0].strip()}


@message_format(
    "generic_out_of_memory",
    r"(?i)(?:error|exception|fail(?:ed|ure)?|fatal|abort)\b.{0,80}out of (?:device )?memory|"
    r"out of (?:device )?memory.{0,40}(?:error|fail)",
)
def parse_generic(match: re.Match[str], window: Window) -> Fields:
    line = window.lines[0]
    backend = "cuda" if re.search(r"cuda|gpu", line, re.IGNORECASE) else "unknown"
    return {"framework": _framework_of(line), "backend": backend, "raw_message": line.strip()}
