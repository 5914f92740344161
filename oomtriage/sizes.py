"""Byte sizes as the frameworks print them, in all three dialects.

PyTorch prints ``12.34 GiB`` / ``0 bytes`` (binary units, a space), MPS prints ``12.34 GB``
(also binary: its ``format_size`` divides by 1024), XLA/TF print ``12.34GiB`` / ``0B`` with no space,
and TF driver lines print ``32.00M (33554432 bytes)``. Everything here is base-1024, because every
one of those printers divides by 1024.
"""

from __future__ import annotations

import re

_UNIT_POWER = {
    "b": 0, "byte": 0, "bytes": 0,
    "k": 1, "kb": 1, "kib": 1,
    "m": 2, "mb": 2, "mib": 2,
    "g": 3, "gb": 3, "gib": 3,
    "t": 4, "tb": 4, "tib": 4,
    "p": 5, "pb": 5, "pib": 5,
    "eb": 6, "eib": 6,
}

# One number and one unit; the unit must not run into a following word ("MiBs" is not a size).
# Anchored after a non-digit and bounded in length: a pattern that may start anywhere inside a
# 16,000-digit run would backtrack quadratically. No real size has more than 20 digits.
# (EiB only spelled out: a garbage request of 16 EiB is a shape computed wrong, worth reading)
SIZE_PATTERN = r"(?<![\d.])\d{1,20}(?:\.\d{1,12})?\s?(?:bytes|byte|[KMGTPE]i?B|[KMGTP]|B)(?![A-Za-z])"
MAX_SIZE = 2**70  # beyond any device: a parsed size above this is garbage
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*$")


def parse_size(text: str) -> int:
    """Parse ``'1.50 GiB'``, ``'4.89GiB'``, ``'12.00 MB'``, ``'32.00M'`` or ``'0 bytes'`` into bytes."""
    match = _SIZE_RE.match(text)
    if not match:
        raise ValueError(f"not a size: {text!r}")
    number, unit = match.groups()
    power = _UNIT_POWER.get(unit.lower())
    if power is None:
        raise ValueError(f"unknown size unit in {text!r}")
    value = float(number) * (1024**power)
    if not value < MAX_SIZE:
        raise ValueError(f"size out of range: {text!r}")
    return int(round(value))


def pytorch_format_size(size: int | None) -> str:
    """Bytes as PyTorch's ``format_size`` prints them (bytes/KiB/MiB/GiB, two decimals): for messages
    that must read exactly like the caching allocator's own, such as the simulated GPU's OOM."""
    if size is None:
        return "unknown"
    sign = "-" if size < 0 else ""
    size = abs(size)
    if size <= 1024:
        return f"{sign}{size} bytes"
    for unit, power in (("KiB", 1), ("MiB", 2), ("GiB", 3)):
        if size <= 1024 ** (power + 1) or unit == "GiB":
            return f"{sign}{size / 1024**power:.2f} {unit}"
    raise AssertionError("unreachable")


def format_size(size: int | None) -> str:
    """Bytes for a person to read: PyTorch's units up to 1024 GiB, then TiB, PiB, EiB ("more than
    1EB" is stored as 1 EiB, which PyTorch's units would print as 1073741824.00 GiB)."""
    if size is None or abs(size) <= 1024 ** 4:
        return pytorch_format_size(size)
    sign, size = ("-" if size < 0 else ""), abs(size)
    for unit, power in (("TiB", 4), ("PiB", 5), ("EiB", 6)):
        if size < 1024 ** (power + 1) or unit == "EiB":
            return f"{sign}{size / 1024**power:.2f} {unit}"
    raise AssertionError("unreachable")


def parse_size_arg(text: str) -> int:
    """Parse a card size a user typed on the command line (``8GiB``, ``8G``, ``512MiB``). A unit is
    required (``8`` would be eight bytes, never what anyone means) and the size must be positive."""
    text = text.strip()
    try:
        float(text)
    except ValueError:
        pass
    else:
        raise ValueError(f"{text!r} has no unit: write e.g. {text}GiB or {text}MiB")
    size = parse_size(text)
    if size <= 0:
        raise ValueError("a card of zero bytes: give a positive size such as 8GiB")
    return size
