"""PyTorch's OOM messages: the caching allocator's four generations (A: THC, B/C: parenthesised,
D1-D3: sentence form), HIP and XPU builds, the out-of-tree NPU/MUSA/MLU backends' copies of it,
cudaMallocAsync, MPS, the CPU allocator, and raw
``CUDA error: out of memory`` (in ``oom_runtime``)."""

from __future__ import annotations

import re

from oomtriage.sizes import parse_size

from .message_formats import SIZE, Fields, Window, find_size, message_format, size_of

# Where an allocator message ends: the hint or the closing parenthesis, whichever generation.
_MESSAGE_END = re.compile(
    r"environment-variables\)|and PYTORCH_(?:CUDA|HIP)_ALLOC_CONF|"
    r"unoccupied cached memory\.|reserved in total by PyTorch\)|\d (?:bytes|[KMG]iB) cached\)|by PyTorch but unallocated\.(?!\s*If reserved)"
)


def _message_text(match: re.Match[str], window: Window) -> str:
    end = _MESSAGE_END.search(window.flat, match.start())
    stop = end.end() if end and end.start() - match.start() < 2000 else window.anchor_length
    return window.flat[match.start() : max(stop, match.end())]


def parse_allocator_fields(message: str) -> Fields:
    """Every optional segment of every generation, each looked up on its own (in any letter case and
    with the spaces a hand-retyped message loses: "tried to allocate 50MiB(GPU 0; 1.96GiB totalcapacity")."""
    fields: Fields = {
        # torch_npu prints a size past its printer's range as "more than 1EB": garbage, kept as the floor
        "requested_bytes": find_size(rf"(?i)(?:Tried|trying) to allocate (?:more than )?({SIZE})", message),  # "trying": retyped in a title
        "total_bytes": find_size(rf"(?i)total ?capac(?:i)?ty of ({SIZE})", message)
        or find_size(rf"(?i)({SIZE}) total ?capac(?:i)?ty", message),
        "free_bytes": find_size(rf"of which ({SIZE}) is free", message)
        or find_size(rf"(?i)already allocated; ?(?:{SIZE} current active; ?)?({SIZE}) free", message),
        "allowed_bytes": find_size(rf"({SIZE}) allowed;", message),
        "private_pool_bytes": find_size(rf"with ({SIZE}) allocated in private pools", message),
        "self_process_bytes": find_size(rf"this process has ({SIZE}) memory in use", message),
    }
    sentence_alloc = find_size(rf"Of the allocated memory ({SIZE}) is allocated by PyTorch", message)
    unallocated = find_size(rf"and ({SIZE}) is reserved by PyTorch but unallocated", message)
    old_alloc = find_size(rf"(?i)({SIZE}) already allocated", message)
    old_reserved = find_size(rf"(?i)({SIZE}) (?:reserved in total by PyTorch|cached\))", message)
    if sentence_alloc is not None:
        fields["allocated_bytes"] = sentence_alloc
        fields["reserved_unallocated_bytes"] = unallocated
        if unallocated is not None:
            fields["reserved_bytes"] = sentence_alloc + unallocated
    else:
        fields["allocated_bytes"] = old_alloc
        fields["reserved_bytes"] = old_reserved
        if old_alloc is not None and old_reserved is not None:
            # "cached" (1.0-1.3) already meant held-but-unused; "reserved in total" includes allocated.
            cached_form = re.search(rf"{SIZE} cached\)", message) is not None
            fields["reserved_unallocated_bytes"] = old_reserved if cached_form else max(0, old_reserved - old_alloc)
            if cached_form:
                fields["reserved_bytes"] = old_alloc + old_reserved
    device = re.search(r"\(?(?:GPU|NPU|MLU|MUSA|XPU) (\d+)[;\s]| GPU (\d+) has", message)
    if device:
        fields["device_index"] = int(device.group(1) or device.group(2))
    fields["processes"] = [
        {"pid": int(pid), "used_bytes": parse_size(used)}
        for pid, used in re.findall(rf"Process (\d+) has ({SIZE}) memory in use", message)
    ]
    return {key: value for key, value in fields.items() if value is not None}


def _allocator_format(message: str) -> str:
    if "reserved by PyTorch but unallocated" in message:
        return "pytorch_sentence"
    if "total capacity;" in message or "already allocated" in message:
        return "pytorch_parenthesised"
    return "pytorch_bare"


@message_format("pytorch_allocator", r"\b(CUDA|HIP|XPU|NPU|MUSA|MLU) out of memory\b", flags=re.IGNORECASE)
def parse_caching_allocator(match: re.Match[str], window: Window) -> Fields:
    message = _message_text(match, window)
    fields = parse_allocator_fields(message)
    fields.update(
        format=_allocator_format(message),
        framework="pytorch",
        backend=match.group(1).lower(),
        raw_message=message,
    )
    return fields


@message_format("pytorch_thc", r"cuda runtime error \((\d+)\) ?: ?out of memory", flags=re.IGNORECASE)
def parse_thc(match: re.Match[str], window: Window) -> Fields:
    return {"framework": "pytorch", "backend": "cuda", "raw_message": window.lines[0].strip()}


@message_format("pytorch_cuda_malloc_async", r"Allocation on device (\d+) would exceed allowed memory")
def parse_malloc_async(match: re.Match[str], window: Window) -> Fields:
    text = window.flat[match.start() : match.start() + 600]
    return {
        "framework": "pytorch",
        "backend": "cuda",
        "device_index": int(match.group(1)),
        "allocated_bytes": find_size(rf"Currently allocated\s*: ({SIZE})", text),
        "requested_bytes": find_size(rf"Requested\s*: ({SIZE})", text),
        "total_bytes": find_size(rf"Device limit\s*: ({SIZE})", text),
        "free_bytes": find_size(rf"Free \(according to CUDA\)\s*: ({SIZE})", text),
        "allowed_bytes": find_size(rf"memory fraction\)\s*: ({SIZE})", text),
        "raw_message": "\n".join(window.lines[:6]).strip(),
    }


@message_format(
    "pytorch_mps",
    rf"MPS backend out of memory \(MPS allocated: ({SIZE}), other allocations: ({SIZE})"
    rf"(?:, max allowed: ({SIZE}))?\)\. Tried to allocate ({SIZE})",
)
def parse_mps(match: re.Match[str], window: Window) -> Fields:
    allocated = size_of(match, 1)
    other = size_of(match, 2)
    return {
        "framework": "pytorch",
        "backend": "mps",
        "allocated_bytes": allocated,
        "reserved_bytes": (allocated or 0) + (other or 0),
        "allowed_bytes": size_of(match, 3),
        "total_bytes": size_of(match, 3),
        "requested_bytes": size_of(match, 4),
        "raw_message": window.flat[match.start() : match.start() + 400].split(" pool.")[0] + " pool.",
    }


@message_format(
    "pytorch_cpu_allocator",
    r"DefaultCPUAllocator: (?:can't allocate memory|not enough memory): you tried to allocate (\d+) bytes",
)
def parse_cpu_allocator(match: re.Match[str], window: Window) -> Fields:
    return {
        "framework": "pytorch",
        "backend": "cpu",
        "requested_bytes": int(match.group(1)),
        "raw_message": window.lines[0].strip(),
    }


# Last in this module: the complete forms above (MPS also says "Tried to allocate") go first.
@message_format("pytorch_allocator_fragment", rf"\bTried to allocate (?:more than )?({SIZE})")
def parse_allocator_fragment(match: re.Match[str], window: Window) -> Fields:
    """An excerpt that lost the message's first words: only the caching allocator prints
    "Tried to allocate <size>", so the figures that follow are still its figures."""
    message = _message_text(match, window)
    fields = parse_allocator_fields(message)
    fields.update(format=_allocator_format(message), framework="pytorch",
                  backend="hip" if "HIP" in message else "cuda", raw_message=message)
    return fields
