"""Allocation failures inside CUDA libraries: cuBLAS, cuDNN (and TensorFlow's wording of their
initialisation failures, which are almost always a full GPU), cuFFT/cuRAND/cuSOLVER, NCCL's
``Cuda failure 'out of memory'``, and TensorRT's allocator. All of these are OOMs that never mention "CUDA out of memory"."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format


def _library_fields(window: Window, library: str) -> Fields:
    line = window.lines[0]
    framework = "tensorflow" if re.search(r"tensorflow|stream_executor|Could not create cudnn handle|"
                                          r"Failed to get convolution algorithm|failed to create cublas", line) else "unknown"
    if re.search(r"%cudnn-conv|\bxla\b|jax", window.flat, re.IGNORECASE):
        framework = "jax" if re.search(r"jax|flax", window.flat, re.IGNORECASE) else "other"
    elif re.search(r"RuntimeError|torch|cublasCreate|CublasHandlePool", line):
        framework = "pytorch"
    return {"framework": framework, "backend": "cuda", "library": library, "raw_message": line.strip()}


@message_format("cublas_alloc_failed", r"CUBLAS_STATUS_ALLOC_FAILED|CUBLAS_STATUS_NOT_INITIALIZED")
def parse_cublas(match: re.Match[str], window: Window) -> Fields:
    return _library_fields(window, "cublas")


@message_format(
    "cudnn_alloc_failed",
    r"CUDNN_STATUS_ALLOC_FAILED|Could not create cudnn handle|Failed to get convolution algorithm\. "
    r"This is probably because cuDNN failed to initialize|cuDNN error: CUDNN_STATUS_NOT_SUPPORTED|"
    # cudnnCreate failing as the first convolution runs: like cuBLAS's NOT_INITIALIZED, almost always
    # the handle's allocation on a full card
    r"CUDNN_STATUS_NOT_INITIALIZED|"
    # XLA autotunes every convolution algorithm inside the memory left to it: "none fits" is a workspace OOM.
    r"Failed to determine best cudnn convolution algorithm|All algorithms tried for %cudnn|No algorithm worked!",
)
def parse_cudnn(match: re.Match[str], window: Window) -> Fields:
    return _library_fields(window, "cudnn")


@message_format("cuda_library_alloc_failed", r"CUFFT_ALLOC_FAILED|CURAND_STATUS_ALLOCATION_FAILED|CUSOLVER_STATUS_ALLOC_FAILED|CUSPARSE_STATUS_ALLOC_FAILED")
def parse_other_library(match: re.Match[str], window: Window) -> Fields:
    return _library_fields(window, match.group(0).split("_")[0].lower())


@message_format("nccl_cuda_oom", r"Cuda failure (?:\d+ )?'out of memory'")
def parse_nccl(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "pytorch" if "rank" in window.lines[0] or "torch" in window.flat else "unknown",
            "backend": "cuda", "library": "nccl", "raw_message": window.lines[0].strip()}


@message_format(
    "tensorrt_alloc_failed",
    r"nvinfer1::\S*[Aa]llocat\w*[^\n]{0,40}out of memory|\[TRT\][^\n]{0,160}(?:out of memory|could not be allocated)|"
    r"Requested amount of GPU memory \(\d+ bytes\) could not be allocated",
)
def parse_tensorrt(match: re.Match[str], window: Window) -> Fields:
    requested = re.search(r"Requested amount of GPU memory \((\d+) bytes\)", window.flat)
    return {"framework": "other", "backend": "cuda", "library": "tensorrt", "raw_message": window.lines[0].strip(),
            "requested_bytes": int(requested.group(1)) if requested else None}


# CUDA's error code 2 is the same in the runtime API (cudaErrorMemoryAllocation) and the driver API
# (CUDA_ERROR_OUT_OF_MEMORY): extensions that print only the number ("cuda execution failed with
# error 2", spconv's kernels) report an OOM. Other codes (9, invalid configuration; 700, illegal
# address) are not, and stay unread. ("CUDA error 2 at ggml-cuda.cu:512" is ggml's own format, read there.)
@message_format("cuda_error_code_2", r"\bcuda execution failed with error 2\b(?!\d)|\bCUDA error 2\b(?![\d.])(?!\s+at\s)", flags=re.IGNORECASE)
def parse_cuda_error_code(match: re.Match[str], window: Window) -> Fields:
    library = "spconv" if "spconv" in window.flat else None
    fields: Fields = {"framework": "pytorch" if "spconv" in window.flat or "torch" in window.flat else "unknown", "backend": "cuda",
                      "raw_message": window.lines[0].strip()}
    return fields | ({"library": library} if library else {})
