"""Allocation failures on OpenCL devices: OpenCL's own CL_MEM_OBJECT_ALLOCATION_FAILURE (pyopencl,
tinygrad's GPU backend), OpenVINO's GPU plugin ("[GPU] out of GPU resources", its CL_OUT_OF_RESOURCES
exception on Intel GPUs, where the plugin itself asks for a smaller batch or lower precision) and
Mesa's amdgpu driver failing to allocate a buffer. A bare CL_OUT_OF_RESOURCES from another program
is not read as an OOM: OpenCL uses it for kernel launch limits too, as CUDA's "too many resources"."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format


@message_format("opencl_mem_object_alloc", r"\b(?:CL_)?MEM_OBJECT_ALLOCATION_FAILURE\b")
def parse_mem_object(match: re.Match[str], window: Window) -> Fields:
    library = "pyopencl" if "pyopencl" in window.flat else None
    fields: Fields = {"framework": "other", "backend": "opencl", "raw_message": window.lines[0].strip()}
    return fields | ({"library": library} if library else {})


@message_format("openvino_gpu_resources", r"\[GPU\][^\n]{0,120}(?:out of GPU resources|CL_OUT_OF_RESOURCES)|"
                r"to avoid CL_OUT_OF_RESOURCES exception")
def parse_openvino(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "other", "backend": "opencl", "library": "openvino", "raw_message": window.lines[0].strip()}


@message_format("mesa_buffer_alloc", r"amdgpu: Failed to allocate a buffer")
def parse_mesa(match: re.Match[str], window: Window) -> Fields:
    size = re.search(r"size\s*:\s*(\d+) bytes", window.flat)
    fields: Fields = {"framework": "other", "backend": "opencl", "library": "mesa", "raw_message": window.lines[0].strip(),
                      "operation": "amdgpu buffer allocation"}
    return fields | ({"requested_bytes": int(size.group(1))} if size else {})
