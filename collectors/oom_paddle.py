"""PaddlePaddle's allocator: "Out of memory error on GPU 0. Cannot allocate 1.53GB memory on GPU 0,
[10.6GB memory has been allocated and] available memory is only 416MB." (2.x), and 1.x's "Cannot
malloc 49.0 MB GPU memory" that blames FLAGS_fraction_of_gpu_memory_to_use. The advice both print
("check whether there is any other process using GPU 0") is Paddle's boilerplate, not evidence."""

from __future__ import annotations

import re

from .message_formats import SIZE, Fields, Window, message_format, size_of


@message_format(
    "paddle_out_of_memory",
    rf"Out of memory error on GPU (\d+)\.\s*Cannot allocate ({SIZE}) (?:GPU )?memory on GPU \d+,\s*"
    rf"(?:({SIZE}) memory has been allocated and )?available memory is only ({SIZE})",
)
def parse_paddle_out_of_memory(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "paddle", "backend": "cuda", "device_index": int(match.group(1)),
            "requested_bytes": size_of(match, 2), "allocated_bytes": size_of(match, 3), "free_bytes": size_of(match, 4),
            "raw_message": match.group(0).strip()}


@message_format("paddle_cannot_malloc", rf"Cannot malloc ({SIZE}) GPU memory")
def parse_paddle_cannot_malloc(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "paddle", "backend": "cuda", "requested_bytes": size_of(match, 1),
            "raw_message": window.lines[0].strip()[:300]}
