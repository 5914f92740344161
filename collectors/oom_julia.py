"""Julia's GPU stack: CUDA.jl (and CuArrays.jl before it) raising ``OutOfGPUMemoryError`` with the
pool's own figures, and Knet's "Out of gpu memory". Flux and Lux training runs fail this way."""

from __future__ import annotations

import re

from .message_formats import SIZE, Fields, Window, find_size, message_format


@message_format("cuda_jl_out_of_memory", r"Out of GPU memory(?: trying to allocate|\b)", flags=re.IGNORECASE)
def parse_cuda_jl(match: re.Match[str], window: Window) -> Fields:
    text = window.flat[match.start() : match.start() + 1500]
    fields: Fields = {"framework": "other", "backend": "cuda", "library": "CUDA.jl", "raw_message": window.lines[0].strip(),
                      "requested_bytes": find_size(rf"(?i)Out of GPU memory trying to allocate ({SIZE})", text)}
    # "Effective GPU memory usage: 99.55% (11.688 GiB/11.741 GiB)": the whole device, every process's use
    device = re.search(rf"Effective GPU memory usage: [\d.]+% \(({SIZE})/({SIZE})\)", text)
    if device:
        used, total = find_size(rf"({SIZE})", device.group(1)), find_size(rf"({SIZE})", device.group(2))
        fields["total_bytes"] = total
        if used is not None and total is not None:
            fields["free_bytes"] = max(0, total - used)
    # "Memory pool usage: 8.505 GiB (10.406 GiB reserved)": what this process's pool holds and keeps
    pool = re.search(rf"Memory pool usage: ({SIZE}) \(({SIZE}) reserved\)", text)
    if pool:
        allocated, reserved = find_size(rf"({SIZE})", pool.group(1)), find_size(rf"({SIZE})", pool.group(2))
        fields.update(allocated_bytes=allocated, reserved_bytes=reserved)
        if allocated is not None and reserved is not None:
            fields["reserved_unallocated_bytes"] = max(0, reserved - allocated)
    return {key: value for key, value in fields.items() if value is not None}
