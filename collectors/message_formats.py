"""The registry of error-message formats. One module per family registers its formats here
(``oom_pytorch``, ``oom_libraries``, ``oom_tensorflow``, ``oom_jax``, ``oom_paddle``, ``oom_host``, ``not_oom``);
adding a format is adding one ``@message_format`` function."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from oomtriage.sizes import SIZE_PATTERN, parse_size

SIZE = f"(?:{SIZE_PATTERN})"
Fields = dict[str, Any]


@dataclass(frozen=True)
class Window:
    """The anchor line of a hit and the lines after it, in two forms."""

    lines: list[str]  # anchor line first, rank prefixes removed
    flat: str  # the same text with all whitespace runs collapsed to one space
    anchor_length: int  # length of the anchor line inside ``flat``


@dataclass(frozen=True)
class MessageFormat:
    name: str
    source: str
    flags: int
    parse: Callable[[re.Match[str], Window], Fields]
    primary: bool  # an exception-level message, not a log line that precedes one
    is_oom: bool

    @property
    def pattern(self) -> re.Pattern[str]:
        # Compiled on first use (re caches it): most runs try only the first few formats, and
        # compiling all of them up front costs more than the analysis of a typical log.
        return re.compile(self.source, self.flags)


FORMATS: list[MessageFormat] = []


def message_format(name: str, pattern: str, *, flags: int = 0, primary: bool = True, is_oom: bool = True):
    """Register ``parse(match, window) -> OomError fields`` for messages matching ``pattern``."""

    def register(parse: Callable[[re.Match[str], Window], Fields]):
        FORMATS.append(MessageFormat(name, pattern, flags, parse, primary, is_oom))
        return parse

    return register


def size_of(match: re.Match[str] | None, group: int | str = 1) -> int | None:
    if match is None or match.group(group) is None:
        return None
    return parse_size(match.group(group))


def find_size(pattern: str, text: str) -> int | None:
    """The size captured by the first group of ``pattern`` in ``text``, if any."""
    return size_of(re.search(pattern, text))


def shape_of(text: str | None) -> list[int] | None:
    if not text:
        return None
    dims = [int(dim) for dim in re.findall(r"\d+", text)]
    return dims or None
