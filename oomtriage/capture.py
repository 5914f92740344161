"""What the hook does at the moment of an OOM: build the context from the live exception and the
allocator's state, triage it, and write the context and report to a folder named in one line."""

from __future__ import annotations

import os
import secrets
import threading
import sys
import time
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from .models import MemoryStats, OomError, RuntimeInfo, SnapshotDigest, TriageContext, TriageReport

_OBSERVED: dict[str, Any] = {}


def attach_cuda_observer(torch: Any) -> bool:
    """Capture allocator state inside the allocator's OOM observer, before unwinding frees memory."""
    try:
        if not torch.cuda.is_available():
            return False
        attach = torch._C._cuda_attach_out_of_memory_observer
    except Exception:
        return False

    def observer(device: int, alloc: int, device_alloc: int, device_free: int) -> None:
        # Called after the allocator lock is released and before the OOM is raised; may run more
        # than once (cuDNN retries with a smaller workspace): the last call wins.
        captured: dict[str, Any] = {"device": device, "alloc": alloc, "device_alloc": device_alloc, "device_free": device_free}
        try:
            captured["memory_stats"] = dict(torch.cuda.memory_stats(device))
            captured["memory_summary"] = torch.cuda.memory_summary(device)
            from oomtriage.collectors.snapshot import digest_snapshot

            # The snapshot covers every device: digest the one that failed.
            snapshot = torch.cuda.memory._snapshot()
            captured["snapshot"] = digest_snapshot(snapshot, device=device)
            _write_requested_snapshot(snapshot)
        except Exception as error:
            captured["error"] = f"{type(error).__name__}: {error}"
        _OBSERVED.clear()
        _OBSERVED.update(captured)

    try:
        attach(observer)
    except Exception:
        return False
    return True


def _write_requested_snapshot(snapshot: dict[str, Any]) -> None:
    """``oomtriage run --snapshot``: the snapshot as it was at the failure (after unwinding, the
    blocks the failing step held are already free)."""
    runtime_module = sys.modules.get("oomtriage.runtime")
    path = runtime_module.STATE.get("snapshot_file") if runtime_module else None
    if path:
        runtime_module.save_snapshot(snapshot, path)
        runtime_module.STATE["snapshot_written"] = True


HISTORY_ENTRIES = 100_000  # allocation events kept by PyTorch's history ring buffer


def record_memory_history(torch: Any) -> bool:
    """Ask PyTorch to record allocation sites and a trace (CUDA only); False where it cannot."""
    try:
        if not torch.cuda.is_available():
            return False
        torch.cuda.memory._record_memory_history(max_entries=HISTORY_ENTRIES)
    except Exception:
        return False
    return True


def _memory_state() -> tuple[MemoryStats | None, SnapshotDigest | None, dict[str, Any]]:
    from oomtriage.collectors.memory_stats import parse_memory_stats

    runtime_module = sys.modules.get("oomtriage.runtime")
    simulated = runtime_module.simulated_oom_state() if runtime_module else None
    if simulated:
        return parse_memory_stats(simulated["stats"]), None, simulated
    if _OBSERVED.get("memory_stats"):
        return parse_memory_stats(_OBSERVED["memory_stats"]), _OBSERVED.get("snapshot"), {}
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return parse_memory_stats(dict(torch.cuda.memory_stats())), None, {}
    except Exception:
        pass
    return None, None, {}


def _runtime_info(live: dict[str, Any]) -> RuntimeInfo:
    runtime_module = sys.modules.get("oomtriage.runtime")
    torch = sys.modules.get("torch")
    grad = live.get("grad_enabled")
    autocast = None
    if torch is not None:
        try:
            grad = torch.is_grad_enabled() if grad is None else grad
            autocast = bool(torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda"))
        except Exception:
            pass
    return RuntimeInfo(
        simulated=bool(live), argv=list(sys.argv), grad_enabled=grad, autocast_enabled=autocast,
        steps_completed=runtime_module.STATE["steps"] if runtime_module else None,
        dtype_shares=live.get("dtype_shares", {}), pid=os.getpid(),
    )


def _error_of_the_exception(error: BaseException) -> "OomError | None":
    from oomtriage.collectors.oom_messages import find_messages, summarise

    try:
        message = f"{type(error).__module__}.{type(error).__qualname__}: {error}"
    except Exception:  # noqa: BLE001 - a __str__ that raises
        return None
    return summarise(find_messages(message[:20_000])).get("error")


def context_from_exception(error: BaseException, tb: TracebackType | None) -> TriageContext:
    from oomtriage.collectors.environment import collect_live_environment
    from oomtriage.context import build_context

    text = "".join(traceback.format_exception(type(error), error, tb))
    # The traceback is this process's own: quote the user's files from the current directory and
    # the script's folder (the project), never from elsewhere.
    roots = [Path.cwd()] + ([Path(sys.argv[0]).resolve().parent] if sys.argv and sys.argv[0].endswith(".py") else [])
    context = build_context(text=text, note=os.environ.get("OOMTRIAGE_NOTE") or None, roots=roots)
    own = _error_of_the_exception(error)
    if own is not None:
        # The message is the exception's own: a source line quoted in the traceback (an f-string
        # that says "Tried to allocate {n} GiB") must not be taken for it.
        context.error = own
    live_env = collect_live_environment()
    found = context.environment.model_dump(exclude_defaults=True)
    context.environment = live_env.model_copy(update={k: v for k, v in found.items() if v and k != "source"})
    stats, snapshot, live = _memory_state()
    context.memory_summary = (_OBSERVED.get("memory_summary") or None) if not live else None
    context.memory_stats = stats
    context.snapshot = snapshot
    context.runtime = _runtime_info(live)
    if context.environment.gpu_capacity_bytes is None and live.get("capacity"):
        context.environment.gpu_capacity_bytes = live["capacity"]
    context.sources = ["<live exception>"]
    return context


def _redacted(value: Any) -> Any:
    """Every string of a dumped model, redacted (argv, source lines, the note, the message)."""
    from .llm.redact import redact_text

    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    if isinstance(value, dict):
        return {key: _redact_argv(item) if key == "argv" else _redacted(item) for key, item in value.items()}
    return value


def _redact_argv(argv: Any) -> Any:
    """A command line is redacted as one text, so `--api-key VALUE` is seen as a pair."""
    from .llm.redact import redact_text

    if not isinstance(argv, list) or not all(isinstance(item, str) and "\n" not in item for item in argv):
        return _redacted(argv)
    return (redact_text("\n".join(argv)) or "").split("\n") if argv else argv


def write_reports(context: TriageContext, report: TriageReport, folder: Path) -> Path:
    """context.json, report.json and report.md, secrets redacted, each written whole (rename into place)."""
    import json

    from .render import to_markdown

    folder.mkdir(parents=True, exist_ok=True)
    safe_report = TriageReport.model_validate(_redacted(report.model_dump(mode="json")))
    texts = (("context.json", json.dumps(_redacted(context.model_dump(mode="json")), indent=2)),
             ("report.json", safe_report.model_dump_json(indent=2)), ("report.md", to_markdown(safe_report)))
    for name, text in texts:
        temporary = folder / f".{name}.{os.getpid()}.tmp"
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, folder / name)
    return folder


def triage_exception(error: BaseException, tb: TracebackType | None, report_dir: str, where: str = "") -> TriageReport:
    from .engine import triage

    runtime_module = sys.modules.get("oomtriage.runtime")
    if runtime_module:
        runtime_module.note_oom()
    context = context_from_exception(error, tb)
    report = triage(context)
    rank = context.environment.rank
    stamp = time.strftime("%Y%m%d-%H%M%S")
    suffix = f"-rank{rank}" if rank is not None else ""
    # Unique per exception: threads of one process, or two containers whose processes share a pid,
    # may fail in the same second.
    unique = f"{os.getpid()}-t{threading.get_ident() % 100000}-{secrets.token_hex(3)}"
    folder = write_reports(context, report, Path(report_dir) / f"oom-{stamp}-pid{unique}{suffix}")
    top = report.causes[0] if report.causes else None
    prefix = f"[rank {rank}] " if rank is not None else ""
    place = f" in {where}" if where else ""
    verdict = f"top cause {top.id} ({top.confidence:.2f}): {top.title}" if top else "no cause ranked"
    sys.stderr.write(f"oomtriage: {prefix}OOM{place} triaged, {verdict}; report in {folder}\n")
    sys.stderr.flush()
    return report
