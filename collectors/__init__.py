"""Collectors: one module per source of evidence, each a pure function from raw input to a typed
part of the ``TriageContext``.

The shared protocol is small: a collector has a ``name`` and
``collect(source, context) -> ContextPart``, where ``source`` is a ``LogView`` (a scanned log),
``context`` is what the collectors before it found, and the returned dict maps ``TriageContext``
field names to values. ``oomtriage.context`` runs every registered collector and merges the parts.
File-shaped inputs (snapshot pickles, memory_stats JSON, chrome traces) have their own loaders,
picked by ``oomtriage.context.classify_file``.
"""

from __future__ import annotations

from typing import Any, Protocol

ContextPart = dict[str, Any]


class Collector(Protocol):
    name: str

    def collect(self, source: Any, context: Any) -> ContextPart: ...


LOG_COLLECTORS: list[Collector] = []


def register(collector: Collector) -> Collector:
    LOG_COLLECTORS.append(collector)
    return collector
