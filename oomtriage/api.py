"""Library entry points: what the CLI calls, usable from Python with the same arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .context import build_context
from .engine import triage
from .models import TriageContext, TriageReport


def analyze_inputs(paths: Sequence[str | Path], *, text: str | None = None, note: str | None = None) -> TriageReport:
    """Collect a context from files (and/or text) and triage it with the rule engine."""
    return analyze_context(build_context(paths, text=text, note=note))


def analyze_context(context: TriageContext) -> TriageReport:
    return triage(context)
