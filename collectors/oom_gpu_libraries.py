"""Device allocation failures of GPU libraries outside the deep-learning frameworks, each in its own
words and with its own figures: CatBoost's memory pool, faiss's GPU resources, Theano's CUDA
backend, Caffe's CHECK on cudaMalloc (OpenPose and other Caffe builds), OpenCV's CUDA module and
PyCUDA's driver. None of them says "CUDA out of memory" the way PyTorch does."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format

MIB = 1024 * 1024


def _fields(window: Window, library: str, **figures: int | str | None) -> Fields:
    fields: Fields = {"framework": "other", "backend": "cuda", "library": library, "raw_message": window.lines[0].strip()}
    fields.update({key: value for key, value in figures.items() if value is not None})
    return fields


# "Error: Out of memory. Requested 11032 MB; Free 8260.007324 MB" (older releases print no unit):
# CatBoost's stack-like pool on the GPU, in MiB. The pool is sized from gpu_ram_part of the card.
@message_format("catboost_memory_pool", r"TOutOfMemoryError|Out of memory\. Requested [\d.]+(?: ?MB)?; Free [\d.]+")
def parse_catboost(match: re.Match[str], window: Window) -> Fields:
    figures = re.search(r"Requested ([\d.]+)(?: ?MB)?; Free ([\d.]+)", window.flat)
    requested, free = (int(float(figures.group(1)) * MIB), int(float(figures.group(2)) * MIB)) if figures else (None, None)
    return _fields(window, "catboost", requested_bytes=requested, free_bytes=free, operation="CatBoost GPU memory pool")


# "StandardGpuResources: alloc fail type TemporaryMemoryBuffer dev 0 space Device stream 0x.. size
# 1610612736 bytes (cudaMalloc error out of memory [2])"; older: "Failed to cudaMalloc 4294967296 bytes".
@message_format("faiss_gpu_alloc", r"StandardGpuResources: alloc fail|[Ff]ailed to cudaMalloc \d+ bytes")
def parse_faiss(match: re.Match[str], window: Window) -> Fields:
    size = re.search(r"size (\d+) bytes|cudaMalloc (\d+) bytes", window.flat)
    device = re.search(r"\bdev (\d+)\b", window.flat)
    kind = re.search(r"alloc fail type (\w+)", window.flat)
    return _fields(window, "faiss", requested_bytes=int(size.group(1) or size.group(2)) if size else None,
                   device_index=int(device.group(1)) if device else None,
                   operation=f"faiss {kind.group(1)}" if kind else "faiss GPU allocation")


# "Error allocating 71323200 bytes of device memory (out of memory). Driver report 10526720 bytes free
# and 4294770688 bytes total"; "CudaNdarray_ZEROS: allocation failed." (the old CUDA backend)
@message_format("theano_device_alloc", r"Error allocating \d+ bytes of device memory|CudaNdarray_\w+: allocation failed")
def parse_theano(match: re.Match[str], window: Window) -> Fields:
    requested = re.search(r"Error allocating (\d+) bytes of device memory", window.flat)
    driver = re.search(r"Driver report (\d+) bytes free and (\d+) bytes total", window.flat)
    return _fields(window, "theano", requested_bytes=int(requested.group(1)) if requested else None,
                   free_bytes=int(driver.group(1)) if driver else None, total_bytes=int(driver.group(2)) if driver else None)


# Caffe's CUDA_CHECK: "Check failed: error == cudaSuccess (2 vs. 0)  out of memory" (2 is
# cudaErrorMemoryAllocation), from SyncedMemory when a blob is first put on the GPU.
@message_format("caffe_cuda_check", r"Check failed: (?:error|status) == cudaSuccess \(2 vs\. 0\)")
def parse_caffe(match: re.Match[str], window: Window) -> Fields:
    return _fields(window, "caffe", operation="Caffe blob allocation" if "SyncedMemory" in window.flat else None)


# OpenCV's CUDA module and its DNN backend: "error: (-217:Gpu API call) out of memory in function 'ManagedPtr'"
@message_format("opencv_cuda_alloc", r"\(-217(?::Gpu API call)?\) out of memory|Gpu API call \(out of memory\)")
def parse_opencv(match: re.Match[str], window: Window) -> Fields:
    function = re.search(r"out of memory\)? in (?:function )?'?([\w:<>, ]+?)'?(?:,|$| file)", window.flat)
    return _fields(window, "opencv", operation=f"OpenCV {function.group(1).strip()}" if function else "OpenCV CUDA allocation")


# PyCUDA: "pycuda._driver.MemoryError: cuMemAlloc failed: out of memory" (a device allocation, though
# the exception is named MemoryError)
@message_format("pycuda_alloc", r"pycuda\._driver\.MemoryError|cuMemAlloc failed: out of memory")
def parse_pycuda(match: re.Match[str], window: Window) -> Fields:
    return _fields(window, "pycuda")
