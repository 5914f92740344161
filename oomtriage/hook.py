"""The exception hook: triage any OOM that escapes, at the moment it escapes.

A polite guest: it chains to the hooks it replaces, installs once, can be turned off with
``OOMTRIAGE_DISABLE=1``, never changes the exit code, and prints the user's own traceback last.
If oomtriage itself fails it says so in one line and the original error goes through untouched.
Importing this module and calling ``install()`` imports neither torch nor openai.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .models import TriageReport

_OOM_TEXT = re.compile(r"out of memory|RESOURCE_EXHAUSTED|OOM when allocating|_ALLOC_FAILED|"
                       r"DefaultCPUAllocator|Allocation on device|killed by signal", re.IGNORECASE)
_OOM_TYPES = {"OutOfMemoryError", "ResourceExhaustedError", "CUDAOutOfMemoryError"}

_state: dict[str, Any] = {"installed": False, "previous": None, "previous_thread": None, "report_dir": None}


def is_oom_exception(error: BaseException) -> bool:
    if type(error).__name__ in _OOM_TYPES:
        return True
    if isinstance(error, MemoryError):
        return True
    return isinstance(error, Exception) and bool(_OOM_TEXT.search(str(error)[:4000]))


def install(report_dir: str | os.PathLike | None = None, record_history: bool | None = None) -> bool:
    """Triage OOMs that escape ``sys.excepthook`` and ``threading.excepthook``. Returns False when
    disabled by ``OOMTRIAGE_DISABLE=1``; calling it twice is harmless. ``record_history`` (or
    ``OOMTRIAGE_RECORD_HISTORY=1``) turns on PyTorch's allocation history on CUDA when torch is
    imported, so the snapshot at the OOM has allocation sites and a trace (it costs time per step)."""
    if os.environ.get("OOMTRIAGE_DISABLE", "") not in ("", "0"):
        return False
    if report_dir is not None:
        _state["report_dir"] = os.fspath(report_dir)
    if record_history is not None:
        _state["record_history"] = record_history
    if _state["installed"]:
        if record_history and "torch" in sys.modules:
            from .capture import record_memory_history

            record_memory_history(sys.modules["torch"])
        return True
    _state["previous"] = sys.excepthook
    _state["previous_thread"] = threading.excepthook
    sys.excepthook = _excepthook
    threading.excepthook = _thread_excepthook
    _state["installed"] = True
    _watch_for_torch()
    return True


def uninstall() -> None:
    if not _state["installed"]:
        return
    if sys.excepthook is _excepthook:
        sys.excepthook = _state["previous"]
    if threading.excepthook is _thread_excepthook:
        threading.excepthook = _state["previous_thread"]
    _state["installed"] = False


def report_dir() -> str:
    return _state["report_dir"] or os.environ.get("OOMTRIAGE_REPORT_DIR") or os.path.join(os.getcwd(), "oomtriage-reports")


def triage_safely(error: BaseException, tb: TracebackType | None, where: str = "") -> "TriageReport | None":
    """Triage an OOM and return its report; any failure of oomtriage's own (an exception whose str()
    raises, Ctrl-C during triage, a full disk) becomes one line on stderr (and None), and the user's
    traceback still follows."""
    try:
        if not is_oom_exception(error):
            return None
        from .capture import triage_exception

        return triage_exception(error, tb, report_dir(), where=where)
    except KeyboardInterrupt:
        _say("oomtriage: triage interrupted; the original error follows\n")
    except BaseException as failure:  # noqa: BLE001 - whatever happens, the user's error goes through
        _say(f"oomtriage: could not triage this OOM ({type(failure).__name__}: {_safe_text(failure)})\n")
    return None


def _safe_text(value: BaseException) -> str:
    try:
        return str(value)[:300]
    except BaseException:  # noqa: BLE001 - a __str__ that raises
        return "<unprintable>"


def _say(line: str) -> None:
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - stderr itself may be gone
        pass


def _excepthook(etype: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    try:
        triage_safely(value, tb)
    finally:
        (_state["previous"] or sys.__excepthook__)(etype, value, tb)


def _thread_excepthook(args: threading.ExceptHookArgs) -> None:
    try:
        if args.exc_value is not None:
            name = args.thread.name if args.thread is not None else "thread"
            triage_safely(args.exc_value, args.exc_traceback, where=f"thread {name}")
    finally:
        (_state["previous_thread"] or threading.__excepthook__)(args)


# --- the allocator's OOM observer, attached once torch is imported ---------------------------------


def _watch_for_torch() -> None:
    if "torch" in sys.modules:
        _on_torch_imported(sys.modules["torch"])
        return
    sys.meta_path.insert(0, _TorchImportWatcher(_on_torch_imported))


class _TorchImportWatcher:
    """A meta-path finder that does nothing but run a callback right after ``torch`` is imported."""

    def __init__(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        from importlib.util import find_spec

        spec = find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        original = spec.loader.exec_module
        callback = self.callback

        def exec_module(module: Any) -> None:
            original(module)
            try:
                callback(module)
            except Exception:  # never break the user's import of torch
                pass

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _on_torch_imported(torch: Any) -> None:
    from .capture import attach_cuda_observer, record_memory_history

    attach_cuda_observer(torch)
    wanted = _state.get("record_history")
    if wanted is None:
        wanted = os.environ.get("OOMTRIAGE_RECORD_HISTORY", "") not in ("", "0")
    if wanted:
        record_memory_history(torch)


def _show_in_notebook(shell: Any, report: Any) -> None:
    """The report as HTML under the cell's traceback, in a notebook (a kernel with a frontend); a
    terminal IPython has the one-line summary already."""
    if getattr(shell, "kernel", None) is None:
        return
    try:
        from IPython.display import display

        display(report)
    except BaseException as failure:  # noqa: BLE001 - the traceback was shown; the report is a nicety
        _say(f"oomtriage: could not show the report ({type(failure).__name__}: {_safe_text(failure)})\n")


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext oomtriage``: triage OOMs raised in cells, after IPython shows the traceback."""

    def handler(shell: Any, etype: type, value: BaseException, tb: TracebackType, tb_offset: Any = None) -> Any:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        report = triage_safely(value, tb, where="notebook cell")
        if report is not None:
            _show_in_notebook(shell, report)

    install()
    ipython.set_custom_exc((Exception,), handler)
