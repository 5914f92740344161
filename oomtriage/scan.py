"""``oomtriage scan PATHS|GLOB``: many failures at once. Every log of a folder, a glob or a job array
is triaged on its own in a process pool, streamed as one record per log in input order, and summed
up: causes by count, by GPU and by framework.

Memory stays flat with the number of logs: at most ``IN_FLIGHT_PER_WORKER`` chunks of ``CHUNK``
logs per worker are submitted ahead of the one being written, and the summary keeps counts plus one short row per log.
"""

from __future__ import annotations

import glob
import os
from collections import Counter, deque
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Iterable, Iterator, Literal

from pydantic import Field

from .errors import InputError, OomtriageError
from .models import Model, TriageReport

IN_FLIGHT_PER_WORKER = 4  # chunks submitted ahead per worker
CHUNK = 16  # logs per task: a task's overhead (pickling, a queue round trip) is paid per chunk
MAX_FILES = 1_000_000

Status = Literal["oom", "suspected", "no_oom", "error"]


class ScanRecord(Model):
    """One log's outcome: what ``--format jsonl`` prints, one per line."""

    input: str
    status: Status
    error: str | None = Field(None, description="why this input could not be triaged (status 'error')")
    top_cause: str | None = None
    confidence: float | None = None
    causes: list[str] = Field(default_factory=list, description="the ranked cause ids, best first (at most 3)")
    framework: str | None = None
    backend: str | None = None
    gpu: str | None = None
    message_format: str | None = None
    requested_bytes: int | None = None
    phase: str | None = None
    report_file: str | None = Field(None, description="this log's own HTML report (with --format html)")


class ScanSummary(Model):
    inputs: int = 0
    by_status: dict[str, int] = Field(default_factory=dict)
    by_cause: dict[str, int] = Field(default_factory=dict, description="top cause of each OOM (and suspected OOM)")
    by_gpu: dict[str, int] = Field(default_factory=dict)
    by_framework: dict[str, int] = Field(default_factory=dict)
    records: list[ScanRecord] = Field(default_factory=list)


def expand(patterns: Iterable[str]) -> list[Path]:
    """Files named, found under folders (recursively), or matched by globs; each once, in order."""
    found: dict[str, Path] = {}
    for pattern in patterns:
        path = Path(pattern)
        if path.is_dir():
            # a dangling link is kept: it is reported as that input's error, not silently dropped
            matches = sorted((p for p in path.rglob("*") if (p.is_file() or p.is_symlink()) and not p.name.startswith(".")), key=str)
        elif glob.has_magic(pattern):
            matches = [Path(p) for p in sorted(glob.glob(pattern, recursive=True)) if not Path(p).is_dir()]
            if not matches:
                raise InputError(f"{pattern}: no file matches")
        else:
            matches = [path]  # a missing file is reported as that log's error, not a stop
        for match in matches:
            found.setdefault(str(match), match)
            if len(found) > MAX_FILES:
                raise InputError(f"more than {MAX_FILES:,} files: scan fewer at a time")
    return list(found.values())


def record_of(name: str, report: TriageReport) -> ScanRecord:
    error = report.error
    status: Status = "oom" if report.detected else "suspected" if report.suspected else "no_oom"
    top = report.causes[0] if report.causes else None
    return ScanRecord(input=name, status=status, top_cause=top.id if top else None,
                      confidence=round(top.confidence, 3) if top else None, causes=[cause.id for cause in report.causes[:3]],
                      framework=error.framework if error else None, backend=error.backend if error else None,
                      gpu=report.environment.gpu_name, message_format=error.format if error else None,
                      requested_bytes=error.requested_bytes if error else None,
                      phase=report.phase if report.phase != "unknown" else None)


def triage_one(path: str, note: str | None = None, report_dir: str | None = None, number: int = 0) -> ScanRecord:
    """Runs in a worker: never raises for one bad input; its error becomes the record's status."""
    from .api import analyze_inputs

    try:
        report = analyze_inputs([path], note=note, source_roots=[])
    except OomtriageError as error:
        return ScanRecord(input=path, status="error", error=str(error))
    except Exception as error:  # noqa: BLE001 - one broken input must not end the scan of the others
        return ScanRecord(input=path, status="error", error=f"could not triage ({type(error).__name__}: {str(error)[:200]})")
    record = record_of(path, report)
    if report_dir is not None:
        from .html_report import render_html

        target = Path(report_dir) / f"{number:05d}-{_safe_name(path)}.html"
        try:
            target.write_text(render_html(report, title=f"oomtriage: {path}"), encoding="utf-8")
            record.report_file = str(target)
        except OSError as error:
            record.error = f"its report could not be written ({error.strerror})"
    return record


def _safe_name(path: str) -> str:
    name = Path(path).name or "input"
    return "".join(char if char.isalnum() or char in "._-" else "_" for char in name)[:80]


def triage_chunk(chunk: list[tuple[int, str]], note: str | None, report_dir: str | None) -> list[ScanRecord]:
    return [triage_one(path, note, report_dir, number) for number, path in chunk]


def scan(paths: list[Path], *, jobs: int | None = None, note: str | None = None, report_dir: Path | None = None) -> Iterator[ScanRecord]:
    """One record per path, in input order, triaged ``jobs`` at a time (default: the CPU count)."""
    jobs = max(1, jobs or os.cpu_count() or 1)
    folder = str(report_dir) if report_dir is not None else None
    numbered = [(number, str(path)) for number, path in enumerate(paths)]
    if jobs == 1 or len(paths) <= 1:
        for number, path in numbered:
            yield triage_one(path, note, folder, number)
        return
    size = max(1, min(CHUNK, len(numbered) // (jobs * 2) or 1))
    chunks = (numbered[start:start + size] for start in range(0, len(numbered), size))
    pending: deque[tuple[list[tuple[int, str]], Future]] = deque()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for chunk in chunks:
            pending.append((chunk, pool.submit(triage_chunk, chunk, note, folder)))
            if len(pending) >= jobs * IN_FLIGHT_PER_WORKER:
                yield from _results(*pending.popleft())
        while pending:
            yield from _results(*pending.popleft())


def _results(chunk: list[tuple[int, str]], future: Future) -> list[ScanRecord]:
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - a worker that died (killed, out of memory) fails its logs only
        return [ScanRecord(input=path, status="error", error=f"the worker triaging it failed ({type(error).__name__})")
                for _, path in chunk]


def summarise(items: Iterable[ScanRecord | tuple[str, TriageReport]], *, keep: bool = True) -> ScanSummary:
    """Counts over the records (``keep``: and the records themselves, for the table and the page)."""
    summary = ScanSummary()
    status, causes, gpus, frameworks = Counter(), Counter(), Counter(), Counter()
    for item in items:
        record = record_of(*item) if isinstance(item, tuple) else item
        summary.inputs += 1
        status[record.status] += 1
        if record.status in ("oom", "suspected"):
            causes[record.top_cause or "(none ranked)"] += 1
            gpus[record.gpu or "(not in the log)"] += 1
            frameworks[record.framework or "unknown"] += 1
        if keep:
            summary.records.append(record)
    summary.by_status, summary.by_cause = dict(status.most_common()), dict(causes.most_common())
    summary.by_gpu, summary.by_framework = dict(gpus.most_common()), dict(frameworks.most_common())
    return summary


def record_line(record: ScanRecord) -> str:
    if record.status == "error":
        return f"{record.input}: ERROR {record.error}"
    if record.status == "no_oom":
        return f"{record.input}: no OOM"
    where = f"{record.framework}/{record.backend}" if record.framework else "?"
    top = f"top cause {record.top_cause} ({record.confidence:.2f})" if record.top_cause else "no cause ranked"
    return f"{record.input}: {'OOM' if record.status == 'oom' else 'suspected OOM'} {where}, {top}"


def summary_text(summary: ScanSummary) -> str:
    lines = [f"{summary.inputs} inputs: " + ", ".join(f"{count} {name.replace('_', ' ')}" for name, count in summary.by_status.items())]
    for title, counts in (("causes (top cause per OOM)", summary.by_cause), ("by GPU", summary.by_gpu),
                          ("by framework", summary.by_framework)):
        if counts:
            lines.append(f"{title}:")
            lines += [f"  {count:>6}  {name}" for name, count in counts.items()]
    return "\n".join(lines) + "\n"


def summary_html(summary: ScanSummary, *, link_base: Path | None = None, reports: list[TriageReport] | None = None) -> str:
    from .html_report import render_scan_html

    return render_scan_html(summary, link_base=link_base, reports=reports)
