"""JAX / XLA: ``RESOURCE_EXHAUSTED`` runtime OOMs with the BufferAssignment dump, ROCm's
"Failed to allocate request", and the TPU error codes (E0100, E1000)."""

from __future__ import annotations

import re

from oomtriage.sizes import parse_size

from .message_formats import SIZE, Fields, Window, message_format, shape_of


def _bytes(text: str) -> int:
    text = text.strip()
    return int(text.split()[0]) if text.endswith("bytes") else parse_size(text)


def _buffer_dump(window: Window) -> Fields:
    """The BufferAssignment stats and the largest peak buffer, when the dump follows."""
    text = "\n".join(window.lines)
    fields: Fields = {}
    total = re.search(rf"total allocation:\s+({SIZE})", text)
    if total:
        fields["allocated_bytes"] = parse_size(total.group(1))
    fragmentation = re.search(rf"total fragmentation:\s+({SIZE})", text)
    if fragmentation:
        fields["reserved_unallocated_bytes"] = parse_size(fragmentation.group(1))
    first = re.search(r"Buffer 1:\s*\n\s*Size: (\S+)(?P<rest>(?:\n\s+(?!Buffer \d).*){0,6})", text)
    if first:
        shape = re.search(r"Shape: \w+\[([\d,]*)\]", first.group("rest"))
        operator = re.search(r'op_name="([^"]+)"', first.group("rest"))
        if shape:
            fields["tensor_shape"] = shape_of(shape.group(1))
        if operator:
            fields["operation"] = operator.group(1)[:200]
    return fields


@message_format(
    "xla_resource_exhausted",
    # older XLA builds spell the status in words ("Resource exhausted")
    rf"(?:RESOURCE_EXHAUSTED|Resource exhausted): Out of (host )?memory while trying to allocate (\d+ bytes|{SIZE})",
)
def parse_xla_oom(match: re.Match[str], window: Window) -> Fields:
    fields = {
        "framework": "jax",
        "backend": "host" if match.group(1) else "cuda",
        "requested_bytes": _bytes(match.group(2)),
        "raw_message": window.lines[0].strip(),
    }
    if "tensorflow" in window.lines[0].lower():
        fields["framework"] = "tensorflow"
    fields.update(_buffer_dump(window))
    return fields


@message_format("xla_failed_request", rf"(?:RESOURCE_EXHAUSTED|Resource exhausted): Failed to allocate request for ({SIZE})")
def parse_xla_failed_request(match: re.Match[str], window: Window) -> Fields:
    fields = {"framework": "jax", "backend": "unknown", "requested_bytes": parse_size(match.group(1)),
              "raw_message": window.lines[0].strip()}
    fields.update(_buffer_dump(window))
    return fields


@message_format(
    "xla_tpu_buffer",
    r"(?:RESOURCE_EXHAUSTED|Resource exhausted): (?:Error allocating device buffer: )?Attempting to allocate ([\d.]+[KMGT]?)\. "
    r"That was not possible\. There are ([\d.]+[KMGT]?) free",
)
def parse_tpu_buffer(match: re.Match[str], window: Window) -> Fields:
    # PyTorch/XLA prints the same TPU runtime message as JAX.
    return {"framework": "pytorch" if re.search(r"torch", window.flat) else "jax", "backend": "tpu", "requested_bytes": parse_size(match.group(1) + "B" if match.group(1)[-1].isdigit() else match.group(1)),
            "free_bytes": parse_size(match.group(2) + "B" if match.group(2)[-1].isdigit() else match.group(2)),
            "raw_message": window.lines[0].strip()}


@message_format(
    "xla_tpu_compile",
    r"Ran out of memory in memory space (\w+)\. Used ([\d.]+[KMGT]) of ([\d.]+[KMGT]) \w+",
)
def parse_tpu_compile(match: re.Match[str], window: Window) -> Fields:
    used, capacity = parse_size(match.group(2)), parse_size(match.group(3))
    # XLA compiles for TPUs under TensorFlow (TPUEstimator, Mesh TensorFlow: "Compilation failure:",
    # errors "From /job:worker/...") and PyTorch/XLA as well as under JAX.
    if re.search(r"Compilation failure:|From /job:\w+|tensorflow|tpu_estimator", window.flat):
        framework = "tensorflow"
    elif re.search(r"torch_xla|xla_client/|XrtComputationClient", window.flat):
        framework = "pytorch"
    else:
        framework = "jax"
    # "Used X of Y" is the whole compiled program's footprint, not one request.
    return {"framework": framework, "backend": "tpu", "total_bytes": capacity, "allocated_bytes": used,
            "raw_message": window.lines[0].strip()}


@message_format("xla_generic", r"RESOURCE_EXHAUSTED\b")
def parse_xla_generic(match: re.Match[str], window: Window) -> Fields:
    size = re.search(rf"allocate (\d+ bytes|{SIZE})", window.lines[0])
    fields: Fields = {"framework": "jax", "raw_message": window.lines[0].strip()}
    if size:
        fields["requested_bytes"] = _bytes(size.group(1))
    return fields


# Not primary: only an excerpt that lost the message itself leaves the dump to stand for it.
@message_format("xla_buffer_dump_fragment", r"XLA Label: [\w-]+ Shape: \w+\[([\d,]*)\]", primary=False)
def parse_buffer_dump_fragment(match: re.Match[str], window: Window) -> Fields:
    """A line of XLA's BufferAssignment dump ("XLA Label: fusion / Shape: f32[1,64,1080,1920]"), which
    XLA prints only under its out-of-memory error: the first buffer listed is the largest live one."""
    return {"framework": "tensorflow" if "tensorflow" in window.flat.lower() else "jax", "backend": "unknown",
            "tensor_shape": shape_of(match.group(1)), "raw_message": window.lines[0].strip()}
