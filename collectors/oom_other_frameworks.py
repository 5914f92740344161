"""Deep-learning frameworks of their own allocators, tried before PyTorch's formats because their
wording overlaps it: OneFlow ("Error: CUDA out of memory. Tried to allocate 12.5 GB" and the host's
"CPU can't allocate memory"), MegEngine ("out of memory while requesting N bytes", with its
MGB_CUDA_RESERVE_MEMORY advice)."""

from __future__ import annotations

import re

from .message_formats import Fields, Window, message_format

GB = 10**9  # OneFlow divides by 1e9 and prints one decimal


@message_format("oneflow_out_of_memory", r"Error: (CUDA out of memory|CPU can't allocate memory)\. Tried to allocate ([\d.]+) ?GB")
def parse_oneflow(match: re.Match[str], window: Window) -> Fields:
    device = match.group(1).startswith("CUDA")
    return {"framework": "other", "library": "oneflow", "backend": "cuda" if device else "host",
            "requested_bytes": int(float(match.group(2)) * GB), "raw_message": window.lines[0].strip()}


@message_format("megengine_out_of_memory", r"out of memory while requesting (\d+) bytes")
def parse_megengine(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "other", "library": "megengine", "backend": "cuda", "requested_bytes": int(match.group(1)),
            "raw_message": window.lines[0].strip()}
