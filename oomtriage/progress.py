"""Progress of a validation on the terminal: a rich bar per run (steps done of ``--max-steps``,
elapsed time, outcome), or one plain line per run start and end when stderr is not a terminal."""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class RunBars:
    """A bar per run; the bar pulses when the run has no step limit to count towards."""

    def __init__(self, console: Any | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("{task.description:<38}"), BarColumn(bar_width=24), TextColumn("{task.fields[steps]}"), TimeElapsedColumn(),
            TextColumn("{task.fields[outcome]}"), console=console or Console(stderr=True), transient=False)
        self._task: Any = None
        self._total: int | None = None

    def __enter__(self) -> "RunBars":
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def started(self, label: str, total_steps: int | None) -> None:
        self._total = total_steps
        self._task = self._progress.add_task(label, total=total_steps, steps=_steps(0, total_steps), outcome="")

    def advanced(self, elapsed: float, steps: int) -> None:
        self._progress.update(self._task, completed=steps, steps=_steps(steps, self._total))

    def finished(self, outcome: str, steps: int) -> None:
        # A pulsing bar (no step limit) ends full; a capped one shows how far the run got.
        total = self._total or max(steps, 1)
        self._progress.update(self._task, total=total, completed=min(steps, total) if self._total else total,
                              steps=_steps(steps, self._total), outcome=outcome)
        self._progress.stop_task(self._task)  # freezes its elapsed time


class RunLines:
    """The same events as plain lines, for logs and pipes."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream or sys.stderr
        self._start = time.perf_counter()
        self._run_start = self._start
        self._label = ""

    def __enter__(self) -> "RunLines":
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def started(self, label: str, total_steps: int | None) -> None:
        self._label, self._run_start = label, time.perf_counter()
        self._write(f"{label}: started" + (f" (up to {total_steps} steps)" if total_steps else ""))

    def advanced(self, elapsed: float, steps: int) -> None:
        pass  # one line per run is enough in a log

    def finished(self, outcome: str, steps: int) -> None:
        self._write(f"{self._label}: {outcome} in {time.perf_counter() - self._run_start:.1f} s")

    def _write(self, text: str) -> None:
        self._stream.write(f"[{time.perf_counter() - self._start:6.1f} s] {text}\n")
        self._stream.flush()


def _steps(done: int, total: int | None) -> str:
    return f"{done}/{total} steps" if total else f"{done} steps"


def for_terminal(stream: IO[str] | None = None) -> RunBars | RunLines:
    stream = stream or sys.stderr
    return RunBars() if stream.isatty() else RunLines(stream)
