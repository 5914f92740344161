"""Library entry points: what the CLI calls, usable from Python with the same arguments."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from .context import build_context
from .engine import triage
from .models import TriageContext, TriageReport

if TYPE_CHECKING:
    from .llm.config import LLMConfig


def analyze_inputs(paths: Sequence[str | Path], *, text: str | None = None, note: str | None = None,
                   llm: "LLMConfig | None" = None, source_roots: Sequence[str | Path] | None = None) -> TriageReport:
    """Collect a context from files (and/or text) and triage it (rules, then the LLM if asked for).
    ``source_roots``: folders whose files a traceback may quote (default: the current directory
    for files, none for ``text``)."""
    roots = [Path(root) for root in source_roots] if source_roots is not None else None
    return analyze_context(build_context(paths, text=text, note=note, roots=roots), llm=llm)


def analyze_each(paths: Sequence[str | Path], *, note: str | None = None, llm: "LLMConfig | None" = None,
                 source_roots: Sequence[str | Path] | None = None) -> list[tuple[str, TriageReport]]:
    """Several logs are several failures: each log is triaged on its own, with the inputs that are
    not logs (a snapshot, memory_stats, a trace) joined to each. One log: one report, as analyze_inputs."""
    from .context import classify_file

    logs = [path for path in paths if _is_log(Path(path), classify_file)]
    others = [path for path in paths if path not in logs]
    if len(logs) <= 1:
        return [(", ".join(map(str, paths)) or "<stdin>", analyze_inputs(paths, note=note, llm=llm, source_roots=source_roots))]
    return [(str(log), analyze_inputs([*others, log], note=note, llm=llm, source_roots=source_roots)) for log in logs]


def _is_log(path: Path, classify) -> bool:
    try:
        return path.is_file() and classify(path) == "log"
    except Exception:  # noqa: BLE001 - unreadable: analyze_inputs reports it in one line
        return False


def analyze_context(context: TriageContext, *, llm: "LLMConfig | None" = None) -> TriageReport:
    report = triage(context)
    if llm is None:
        return report
    from .llm.assist import assist, wants_llm

    return assist(context, report, llm) if wants_llm(llm) else report
