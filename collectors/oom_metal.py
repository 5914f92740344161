"""Apple silicon outside PyTorch: MLX's Metal allocator (``[metal::malloc]``, ``[malloc_or_wait]``).
Metal caps a single buffer below the unified memory size, so "greater than the maximum allowed
buffer size" is one tensor too large, not a full device (PyTorch's MPS messages are in ``oom_pytorch``)."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format


@message_format(
    "metal_max_buffer",
    r"Attempting to allocate (\d+) bytes which is greater than the maximum allowed buffer size of (\d+) bytes",
)
def parse_metal_max_buffer(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "other", "backend": "mps", "requested_bytes": int(match.group(1)),
            "allowed_bytes": int(match.group(2)), "operation": "one Metal buffer above the per-buffer cap",
            "raw_message": window.flat[max(0, match.start() - 40) : match.end()].strip()}


@message_format("metal_malloc_or_wait", r"\[malloc(?:_or_wait)?\] Unable to allocate (\d+) bytes")
def parse_metal_malloc(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "other", "backend": "mps", "requested_bytes": int(match.group(1)),
            "raw_message": window.lines[0].strip()}


# Metal reports a command buffer it could not back with memory when the GPU work runs, not when a
# buffer is created: MLX raises it as "[METAL] Command buffer execution failed", ggml's Metal
# backend logs the status and the same IOGPU error code.
@message_format("metal_command_buffer",
                r"Command buffer execution failed: Insufficient Memory|kIOGPUCommandBufferCallbackErrorOutOfMemory")
def parse_metal_command_buffer(match: re.Match[str], window: Window) -> Fields:
    line = window.lines[0]
    library = "ggml" if "ggml" in line.lower() else "mlx" if "[METAL]" in line else None
    return {"framework": "other", "backend": "mps", "library": library,
            "operation": "a Metal command buffer that found no memory when it ran", "raw_message": line.strip()}
