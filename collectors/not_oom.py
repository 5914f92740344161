"""Errors that look alarming but are not out-of-memory: TensorFlow's "not a failure" allocator
warnings and CUDA faults (illegal address, device-side assert, launch resources). Recognising them
keeps oomtriage from diagnosing an OOM that never happened."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format


def _not_oom(window: Window, reason: str) -> Fields:
    return {"framework": "unknown", "backend": "cuda", "raw_message": window.lines[0].strip(), "operation": reason}


@message_format(
    "tensorflow_not_a_failure",
    r"(?i)ran out of memory trying to allocate [^\s]+(?: with freed_by_count=\d+)?\. "
    r"The caller indicates that this is not a failure",
    primary=False,
    is_oom=False,
)
def parse_tf_warning(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "TensorFlow allocator warning: the caller says this is not a failure")


@message_format("cuda_illegal_address", r"an illegal memory access was encountered|misaligned address", is_oom=False)
def parse_illegal_access(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "illegal memory access (a kernel bug or bad index), not a lack of memory")


@message_format("cuda_device_assert", r"device-side assert triggered", is_oom=False)
def parse_device_assert(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "device-side assert (often an out-of-range index or label), not a lack of memory")


@message_format("cuda_launch_resources", r"too many resources requested for launch", is_oom=False)
def parse_launch_resources(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "a kernel asked for too many registers/threads per block, not device memory")


@message_format("nccl_other_cuda_failure", r"Cuda failure (?:\d+ )?'(?!out of memory)[^']+'", is_oom=False)
def parse_nccl_other(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, f"NCCL CUDA failure ({match.group(0)}), not out-of-memory")


@message_format("segmentation_fault", r"Segmentation fault(?: \(core dumped\))?|SIGSEGV", is_oom=False)
def parse_segfault(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "a segmentation fault (native code read bad memory), not a lack of memory")


@message_format("cuda_invalid_device", r"invalid device ordinal|no CUDA-capable device is detected", is_oom=False)
def parse_invalid_device(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "a device index or visibility problem, not a lack of memory")


@message_format("nccl_watchdog_timeout", r"Watchdog caught collective operation timeout", is_oom=False)
def parse_nccl_timeout(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "a collective that timed out (ranks out of step), not a lack of memory")


@message_format("library_execution_failed", r"CUBLAS_STATUS_EXECUTION_FAILED|CUDNN_STATUS_EXECUTION_FAILED", is_oom=False)
def parse_execution_failed(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "a library kernel failed to run (often a CUDA toolkit/driver mismatch), not an allocation")


# Triton compiles each kernel for the card it runs on: a block configuration that needs more on-chip
# shared memory per block than the card offers (smaller on older or consumer cards) fails to load.
# Device memory can be empty and this still happens; the fix is smaller blocks or fewer num_stages.
@message_format("triton_shared_memory", r"out of resource: shared memory", is_oom=False)
def parse_triton_shared_memory(match: re.Match[str], window: Window) -> Fields:
    return _not_oom(window, "a Triton kernel needs more on-chip shared memory per block than this card has "
                            "(smaller block sizes or num_stages), not device memory")
