"""TensorFlow / Keras: ``ResourceExhaustedError`` / ``OOM when allocating tensor``, the BFC
allocator's log lines and stats, and driver-level allocation failures. The BFC allocator's
"The caller indicates that this is not a failure" warnings are NOT OOMs (see ``not_oom``)."""

from __future__ import annotations

import re

from oomtriage.sizes import parse_size

from .message_formats import SIZE, Fields, Window, find_size, message_format, shape_of

_TENSOR = (
    r"OOM when allocating tensor(?: with shape ?\[(?P<shape>[\d, ]*)\])?(?: and type (?P<dtype>\w+))?"
    r"(?: on (?P<device>[^\s]+))?(?: by allocator (?P<allocator>\w+))?(?:.*?\[Op:(?P<op>\w+)\])?"
)
_DTYPE_BYTES = {"float": 4, "float32": 4, "half": 2, "float16": 2, "bfloat16": 2, "double": 8, "int32": 4,
                "int64": 8, "int8": 1, "uint8": 1, "bool": 1}


def _bfc_stats(window: Window) -> Fields:
    """BFC allocator stats printed before the error: ``Limit:`` is the usable memory."""
    text = "\n".join(window.lines)
    fields: Fields = {}
    limit = re.search(r"^\s*Limit:\s+(\d+)", text, re.MULTILINE)
    in_use = re.search(r"^\s*InUse:\s+(\d+)", text, re.MULTILINE)
    if limit:
        fields["total_bytes"] = int(limit.group(1))
    if in_use:
        fields["allocated_bytes"] = int(in_use.group(1))
    return fields


def _backend_of(device: str) -> str:
    """The backend a TensorFlow device or allocator name stands for: tensorflow-directml's are
    `/device:DML:0` and `DmlAllocator`; CUDA's and ROCm's are GPU devices."""
    if re.search(r"\bDML\b|Dml", device):
        return "directml"
    return "cuda" if "GPU" in device.upper() else "unknown"


@message_format("tensorflow_oom_tensor", _TENSOR)
def parse_oom_tensor(match: re.Match[str], window: Window) -> Fields:
    shape = shape_of(match.group("shape"))
    dtype = match.group("dtype")
    fields: Fields = {
        "framework": "tensorflow",
        "backend": _backend_of(match.group("device") or "GPU"),
        "tensor_shape": shape,
        "tensor_dtype": dtype,
        "operation": match.group("op"),
        "raw_message": window.flat[match.start() : match.end()],
        "exception_type": "ResourceExhaustedError",
    }
    if shape and dtype in _DTYPE_BYTES:
        count = 1
        for dim in shape:
            count *= dim
        fields["requested_bytes"] = count * _DTYPE_BYTES[dtype]
    device = re.search(r"(?:GPU|gpu):(\d+)", match.group("device") or "")
    if device:
        fields["device_index"] = int(device.group(1))
    node = re.search(r"\[\[(?:\{\{)?[Nn]ode:? ?([\w/]+)", window.flat[match.end() : match.end() + 400])
    if node:
        fields["operation"] = fields["operation"] or node.group(1)
    return fields


@message_format("tensorflow_resource_exhausted", r"ResourceExhaustedError\b[^\n]*?\bOOM\b|Resource exhausted: OOM")
def parse_resource_exhausted(match: re.Match[str], window: Window) -> Fields:
    if "OOM" not in window.lines[0]:
        raise ValueError("'Graph execution error:' header; the OOM line that follows is parsed on its own")
    return {"framework": "tensorflow", "raw_message": window.lines[0].strip(), "exception_type": "ResourceExhaustedError"}


@message_format(
    "tensorflow_bfc_allocator",
    rf"Allocator \((?P<allocator>\w+)\) ran out of memory trying to allocate (?P<size>{SIZE})",
    primary=False,
)
def parse_bfc_line(match: re.Match[str], window: Window) -> Fields:
    fields = {
        "framework": "tensorflow",
        "backend": _backend_of(match.group("allocator")),
        "requested_bytes": find_size(rf"trying to allocate ({SIZE})", match.group(0)),
        "raw_message": window.lines[0].strip(),
    }
    rounded = re.search(r"\(rounded to (\d+)\)", window.lines[0])
    if rounded:
        fields["requested_bytes"] = int(rounded.group(1))
    fields.update(_bfc_stats(window))
    return fields


@message_format("tensorflow_bfc_stats", r"^Limit:\s+\d+ InUse:\s+\d+", primary=False)
def parse_bfc_stats(match: re.Match[str], window: Window) -> Fields:
    fields = _bfc_stats(window)
    fields.update(framework="tensorflow", raw_message="\n".join(window.lines[:3]).strip())
    return fields


@message_format(
    "tensorflow_driver",
    # Older builds print the rounded size alone ("failed to allocate 8.00G from device: ...").
    rf"failed to allocate ({SIZE})(?: \((\d+) bytes\))? from device: (?:CUDA_ERROR_OUT_OF_MEMORY|HIP_ERROR_OutOfMemory|hipError_t\(1002\))",
    primary=False,
)
def parse_driver_line(match: re.Match[str], window: Window) -> Fields:
    return {
        "framework": "tensorflow",
        "backend": "hip" if "hip" in match.group(0).lower() else "cuda",
        "requested_bytes": int(match.group(2)) if match.group(2) else parse_size(match.group(1)),
        "raw_message": window.lines[0].strip(),
    }
