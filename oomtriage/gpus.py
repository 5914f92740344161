"""Memory of well-known accelerators, so a GPU named in a log or a note gives a capacity."""

from __future__ import annotations

import re

GIB = 1024**3

# (pattern, capacity in GB as marketed). Order matters: the more specific pattern first.
_KNOWN_GPUS: list[tuple[str, float]] = [
    (r"H200", 141), (r"H100.*(?:NVL|94)", 94), (r"H100|H800", 80), (r"GH200", 96), (r"B200", 180), (r"B100", 192),
    (r"A100.*80|A800.*80|A100-SXM4-80|A100 80", 80), (r"A100|A800", 40), (r"A6000|RTX 6000 Ada|A40\b|L40", 48),
    (r"A10G|A10\b|L4\b|A5000", 24), (r"A30\b", 24), (r"A4000", 16), (r"A2\b", 16),
    (r"V100.*32|V100-SXM2-32", 32), (r"V100", 16), (r"T4\b", 16), (r"P100", 16), (r"P40\b", 24), (r"K80", 12),
    (r"5090", 32), (r"5080|5070 Ti|5060 Ti", 16), (r"5070", 12), (r"5060", 8),
    (r"4090|3090|TITAN RTX", 24), (r"4080", 16), (r"4070 Ti", 12), (r"4070", 12), (r"4060 Ti", 16), (r"4060", 8),
    (r"3080 Ti", 12), (r"3080", 10), (r"3070|3060 Ti", 8), (r"3060", 12), (r"2080 Ti|1080 Ti", 11),
    (r"2080|2070|2060 SUPER|1080|1070", 8), (r"2060|1660|1060|4050", 6), (r"3050", 8), (r"1650|1050 Ti", 4),
    # the GTX 1050 itself ships with 2 GB (a rarer 3 GB part exists); the 1050 Ti with 4
    (r"1050", 2),
    # laptop MX parts: 2 GB is the common configuration (some MX150-MX570 ship with 4 GB)
    (r"MX ?[1-5][1-7]0(?:s\b|\b)", 2),
    (r"980 Ti", 6), (r"\b9[78]0\b", 4), (r"750 Ti|\b960\b", 2), (r"TITAN V", 12), (r"TITAN X", 12),
    (r"MI300X", 192), (r"MI250", 128), (r"MI210", 64), (r"MI100", 32), (r"7900 XTX", 24),
    # Radeon RX: the most common configuration of each (RX 480/580 also ship with 4 GB)
    (r"RX 7900 XT\b", 20), (r"RX 7900 GRE|RX 7800|RX 6[89]\d0", 16), (r"RX 7700|RX 6700", 12),
    (r"RX 7600|RX 66\d0|RX 5700|RX 5600|RX [45]80\b", 8),
]
# The most memory one accelerator in the table holds: a single buffer above it fits no card made.
LARGEST_CARD_BYTES = int(max(gigabytes for _, gigabytes in _KNOWN_GPUS) * 10**9)
GPU_NAME = re.compile(
    r"\b(?:(?:NVIDIA|Tesla|Quadro|GeForce|AMD|Instinct|Radeon) ){0,3}(?:"
    r"[HABGL]\d{2,3}[A-Z]?(?:[- ](?:SXM\d?|PCIe|NVL|\d{2}GB?))*(?:-\d{2}GB?)?|"
    r"[VPKT]\d{2,3}(?:-SXM2|-PCIE)?(?:-\d{2}GB?)?|RTX ?A?\d{4}(?: Ti| Ada| SUPER)?|(?:RTX|GTX) ?\d{3,4}(?: ?Ti| SUPER)?|"
    r"TITAN (?:X|V|RTX|Xp)|MI\d{3}X?|A\d{4}|RX \d{3,4}(?: XTX?| GRE)?|MX ?[1-5][1-7]0)(?:s\b|\b)"
)


def capacity_of_gpu(name: str) -> int | None:
    """Capacity in bytes of a GPU by name, or None when unknown. An explicit '80GB' in the name wins."""
    name = re.sub(r"(\d)\s?ti\b", r"\1 Ti", name, flags=re.IGNORECASE)  # "1050ti", "3080TI" are "1050 Ti", "3080 Ti"
    # "80GB", and the "-32G" that card names carry ("V100-32G", "A100-80G")
    explicit = re.search(r"(\d{2,3})\s?GB|-(\d{2,3})G\b", name, re.IGNORECASE)
    if explicit:
        return int(explicit.group(1) or explicit.group(2)) * 10**9
    for pattern, gigabytes in _KNOWN_GPUS:
        if re.search(pattern, name, re.IGNORECASE):
            return int(gigabytes * 10**9)
    return None


# Cards people name by number alone ("on a 4090", "my 3060 Ti"), and the one-digit data-centre
# cards. A bare number needs an article or a count before it and no resolution after it ("1080p",
# "1920x1080").
_BARE_GPU = re.compile(r"\b(?:a|an|my|our|one|single|the|two|three|four|six|eight|dual|\d ?x) (?:\d{1,3} ?G(?:i?B)? )?((?:[2345]0[5-9]0|1[06-9][5-8]0)(?: ?Ti| SUPER)?)(?:s\b|\b)(?!\s?(?:x|×|p\b))|"
                       r"\b([TL]4|A2|A10G?)\b", re.IGNORECASE)


def find_gpu_name(text: str, *, bare: bool = False) -> str | None:
    """The first GPU named in ``text``. ``bare``: also cards named by number alone ("on a 4090",
    "T4"), for what a person wrote; a log's tokens ("a2", "l4") are not read that way."""
    match = GPU_NAME.search(text)
    if match:
        return match.group(0).strip()
    found = _BARE_GPU.search(text) if bare else None
    return (found.group(1) or found.group(2)) if found else None
