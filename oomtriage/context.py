"""Build one ``TriageContext`` from the user's files (logs, snapshots, stats, traces) and note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from .errors import InputError
from .logread import LogView, open_log, view_from_text
from .models import OomError, TriageContext

EXCERPT_BEFORE = 80
EXCERPT_AFTER = 30
MAX_JSON_BYTES = 256 * 1024 * 1024


def _is_stream(path: Path) -> bool:
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _open_stream(path: Path) -> LogView:
    from .logread import scan_log

    try:
        with path.open("rb") as handle:
            return scan_log(handle, name=str(path))
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror})", path=str(path)) from None


def classify_file(path: Path) -> str:
    """'snapshot', 'json' or 'log', from the file's first bytes (not its name)."""
    try:
        with path.open("rb") as handle:
            start = handle.read(64)
    except FileNotFoundError:
        raise InputError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", path=str(path)) from None
    except OSError as error:
        raise InputError(f"cannot read ({error.strerror})", path=str(path)) from None
    if start[:1] == b"\x80":
        return "snapshot"
    if start[:2] == b"\x1f\x8b":
        return "gzip"  # a gzipped profiler trace (*.pt.trace.json.gz) or log
    if start.lstrip()[:1] in (b"{", b"[") and path.stat().st_size <= MAX_JSON_BYTES:
        return "json"
    return "log"


def build_context(paths: Iterable[str | Path] = (), *, text: str | None = None, note: str | None = None,
                  roots: list[Path] | None = None) -> TriageContext:
    """Run every collector on every input; the first OOM found anywhere is the one triaged.

    ``roots``: the folders whose source files a traceback may quote (default: the current
    directory for log files, none for ``text``, which came from stdin or a caller)."""
    context = TriageContext(note=note or None)
    views: list[LogView] = []
    for raw_path in paths:
        path = Path(raw_path)
        if _is_stream(path):
            # A FIFO or device can be read once only: scan it as a log from the one open handle.
            context.sources.append(str(path))
            views.append(_open_stream(path))
            continue
        kind = classify_file(path)
        context.sources.append(str(path))
        if kind == "snapshot":
            _add_snapshot(context, path)
        elif kind == "gzip":
            _add_gzip(context, path, views)
        elif kind == "json" and _add_json(context, path):
            pass
        else:
            views.append(open_log(path))
    if text is not None:
        if not text.strip():
            if not paths and note and note.strip():
                # A run that died without printing anything ("the job just crashes"): the note is all
                # there is, and it is still ranked (as suspected, never as detected).
                context.sources.append("<note>")
                return context
            raise InputError("the input is empty: pass a log file, or pipe the failed run's output on stdin")
        views.append(view_from_text(text, name="<stdin>"))
        context.sources.append("<stdin>")
    if paths and not views and context.error is None and not (context.snapshot or context.memory_stats or context.profiler):
        raise InputError("none of the inputs holds anything oomtriage can read")
    if context.error is None:
        context.error = error_from_recordings(context)
    for view in views:
        if view.size_bytes == 0:
            raise InputError("the file is empty: nothing to analyse", path=view.name)
        view_roots = roots if roots is not None else ([] if view.name == "<stdin>" else [Path.cwd()])
        context = collect_log(context, view, roots=view_roots)
    return context


def error_from_recordings(context: TriageContext) -> OomError | None:
    """A snapshot whose trace holds an OOM event (what PyTorch's OOM observer dumps), or a profiler
    trace with an [OutOfMemory] event, is an OOM even without a log."""
    snapshot = context.snapshot
    if snapshot is not None and snapshot.oom_requested_bytes is not None:
        return OomError(format="snapshot_oom_event", framework="pytorch", backend="cuda",
                        requested_bytes=snapshot.oom_requested_bytes, free_bytes=snapshot.oom_device_free_bytes,
                        allocated_bytes=snapshot.allocated_bytes, reserved_bytes=snapshot.reserved_bytes,
                        reserved_unallocated_bytes=max(0, snapshot.reserved_bytes - snapshot.allocated_bytes),
                        raw_message="OOM event in the memory snapshot's trace")
    for summary in context.profiler:
        if summary.oom_events:
            return OomError(format="profiler_oom_event", framework="pytorch", backend="cuda" if summary.device != "cpu" else "cpu",
                            allocated_bytes=summary.peak_allocated_bytes, reserved_bytes=summary.peak_reserved_bytes,
                            raw_message=f"{summary.oom_events} [OutOfMemory] event(s) in the profiler trace")
    return None


def collect_log(context: TriageContext, view: LogView, roots: list[Path] | None = None) -> TriageContext:
    from oomtriage.collectors import LOG_COLLECTORS, traceback  # noqa: F401  (imports register them)
    from oomtriage.collectors import environment, memory_stats, oom_messages, profiler  # noqa: F401

    had_error = context.error is not None
    for collector in LOG_COLLECTORS:
        if had_error and collector.name in ("oom_messages", "traceback"):
            continue  # the first log with an OOM is the one triaged; later logs add environment etc.
        if isinstance(collector, traceback.TracebackCollector) and roots is not None:
            collector = traceback.TracebackCollector(roots)
        part = collector.collect(view, context)
        context = context.model_copy(update=part)
    if context.error is not None and not had_error:
        from oomtriage.collectors.oom_host import device_behind_memory_error

        context.error = device_behind_memory_error(context.error, context.stack)
        context.excerpt = excerpt_around(view, context.error.raw_message)
    elif context.error is None and context.excerpt is None:
        # No message to centre on: the end of the log is where a run that died says why.
        from .models import LogExcerpt

        text = view.whole if view.whole is not None else view.tail
        lines = text.rstrip("\n").split("\n")[-EXCERPT_AFTER:]
        if any(line.strip() for line in lines):
            context.excerpt = LogExcerpt(text="\n".join(lines)[:8000])
    return context


def excerpt_around(view: LogView, message: str) -> "LogExcerpt | None":
    from .models import LogExcerpt

    probe = " ".join(message.split()[:6])
    for region in view.regions:
        lines = region.text.split("\n")
        for index, line in enumerate(lines):
            if probe and probe in " ".join(line.split()):
                start = max(0, index - EXCERPT_BEFORE)
                first = region.first_line + start if region.first_line else None
                return LogExcerpt(text="\n".join(lines[start : index + EXCERPT_AFTER]).strip("\n"), first_line=first)
    return None


def _add_snapshot(context: TriageContext, path: Path) -> None:
    from oomtriage.collectors.snapshot import digest_snapshot_file

    context.snapshot = digest_snapshot_file(path)


MAX_GZIP_BYTES = 256 * 1024 * 1024  # decompressed; a gzip bomb stops here


def _add_gzip(context: TriageContext, path: Path, views: list[LogView]) -> None:
    import gzip

    try:
        with gzip.open(path, "rb") as handle:
            data = handle.read(MAX_GZIP_BYTES + 1)
    except (OSError, EOFError) as error:
        raise InputError(f"not a readable gzip file ({error})", path=str(path)) from None
    if len(data) > MAX_GZIP_BYTES:
        raise InputError(f"decompresses to more than {MAX_GZIP_BYTES // 2**20} MiB", path=str(path))
    if data.lstrip()[:1] in (b"{", b"[") and _add_json_text(context, data.decode("utf-8", errors="replace"), str(path)):
        return
    from .logread import scan_log
    import io

    views.append(scan_log(io.BytesIO(data), name=str(path)))


def _add_json(context: TriageContext, path: Path) -> bool:
    """Memory stats, a chrome trace or a saved context; False when the JSON is none of these."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return _add_json_text(context, text, str(path))


MAX_JSON_DEPTH = 200


def _add_json_text(context: TriageContext, text: str, name: str) -> bool:
    from pydantic import ValidationError

    if _nesting_depth(text) > MAX_JSON_DEPTH:
        raise InputError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels: not memory stats, a trace or a context", path=name)
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return False
    try:
        return _add_json_data(context, data, name)
    except ValidationError as error:
        first = error.errors()[0] if error.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ())) or "the top level"
        raise InputError(f"not a valid saved context ({where}: {first.get('msg', 'invalid')})", path=name) from None
    except (TypeError, ValueError, OverflowError, AttributeError, KeyError) as error:
        raise InputError(f"malformed JSON input ({type(error).__name__}: {str(error)[:100]})", path=name) from None


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def _nesting_depth(text: str) -> int:
    """Deepest bracket nesting, counted without parsing (strings skipped): JSON's parser recurses."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _add_json_data(context: TriageContext, data: object, name: str) -> bool:
    from oomtriage.collectors.memory_stats import looks_like_memory_stats, parse_memory_stats
    from oomtriage.collectors.profiler import looks_like_chrome_trace, parse_chrome_trace

    if looks_like_memory_stats(data):
        context.memory_stats = parse_memory_stats(data)
        return True
    if looks_like_chrome_trace(data):
        context.profiler.append(parse_chrome_trace(data))
        return True
    if isinstance(data, dict) and "schema_version" in data and "environment" in data:
        saved = TriageContext.model_validate(data)
        for name in saved.model_fields_set - {"sources"}:
            setattr(context, name, getattr(saved, name))
        return True
    return False
