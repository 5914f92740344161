"""``oomtriage run -- COMMAND``: run any command with the OOM hook in its Python processes, pass its
output through unchanged, return its exit code, and triage an OOM (from the hook's report, or from
the captured output when no hook was reachable)."""

from __future__ import annotations

import os
import shutil
import signal
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import BinaryIO, Callable

from pydantic import Field

from .models import Measurement, Model, TriageReport
from .timeline import MemoryTimeline

CAPTURE_BYTES = 4 * 1024 * 1024  # the tail of the output kept for analysis when no hook reported
_PYTHON = re.compile(r"^python(\d(\.\d+)?)?$")
_OPTIONS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}
POLL_SECONDS = 0.25
Ticker = Callable[[float, int], None]  # (seconds elapsed, optimizer steps done)


class RunResult(Model):
    returncode: int
    command: list[str]
    report: TriageReport | None = None
    reports_found: int = 0
    measurement: Measurement | None = None
    report_dir: str | None = None
    timed_out: bool = False
    output_tail: str = Field("", description="the last lines the command printed (stderr, else stdout)")
    source: str = Field("none", description="'hook' when the child's hook triaged, 'output' when the captured output was analysed")
    timeline: MemoryTimeline | None = Field(None, description="the memory timeline, when a snapshot was asked for")


def wrap_python(command: list[str]) -> list[str] | None:
    """``python [opts] SCRIPT|-m MOD args`` -> the same through ``oomtriage._child``; None otherwise."""
    if not command or not (_PYTHON.match(Path(command[0]).name) or command[0] == sys.executable):
        return None
    index, options = 1, []
    while index < len(command) and command[index].startswith("-") and command[index] not in ("-m", "-c", "-"):
        options.append(command[index])
        if command[index] in _OPTIONS_WITH_VALUE and index + 1 < len(command):
            options.append(command[index + 1])
            index += 1
        index += 1
    if index >= len(command) or command[index] in ("-c", "-"):
        return None
    return [command[0], *options, "-m", "oomtriage._child", *command[index:]]


def child_environment(*, report_dir: str, simulate_gpu: int | None, max_steps: int | None, measure_file: str | None,
                      fingerprint: bool, note: str | None, site_hook: bool, fake: bool = False,
                      stochastic_off: bool = False, cpu_visible: bool = False,
                      snapshot_file: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("OOMTRIAGE_SNAPSHOT_FILE", None)
    if snapshot_file:
        env["OOMTRIAGE_SNAPSHOT_FILE"] = snapshot_file
    env["OOMTRIAGE_REPORT_DIR"] = report_dir
    for name, value in (("OOMTRIAGE_SIMULATE_GPU", simulate_gpu), ("OOMTRIAGE_MAX_STEPS", max_steps),
                        ("OOMTRIAGE_MEASURE_FILE", measure_file), ("OOMTRIAGE_NOTE", note)):
        if value is not None:
            env[name] = str(value)
    if fingerprint:
        env["OOMTRIAGE_FINGERPRINT"] = "1"
        # MKL's GEMM may round differently with the buffers' alignment or the thread count, so two runs
        # of the same math could differ; strict CNR makes them bit-reproducible at no measured cost.
        env.setdefault("MKL_CBWR", "AUTO,STRICT")
    for name, wanted in (("OOMTRIAGE_FAKE", fake), ("OOMTRIAGE_STOCHASTIC_OFF", stochastic_off),
                         ("OOMTRIAGE_CPU_VISIBLE", cpu_visible)):
        env.pop(name, None)  # inherited from an outer run, it would change this one too
        if wanted:
            env[name] = "1"
    # Only the sitecustomize folder goes on PYTHONPATH: the package's own parent folder would put
    # unrelated top-level names (an editable checkout's tests/, examples/) in front of the user's.
    if site_hook:
        site = str(Path(__file__).resolve().parent / "_site")
        env["PYTHONPATH"] = os.pathsep.join([site] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["OOMTRIAGE_HOOK"] = "1"
    return env


def _pump(source: BinaryIO, sink: BinaryIO, keep: deque[bytes]) -> None:
    """Copy a child's stream to ours as it arrives, keeping the tail for analysis."""
    kept = 0
    for chunk in iter(lambda: source.read1(65536), b""):  # type: ignore[attr-defined]
        sink.write(chunk)
        sink.flush()
        keep.append(chunk)
        kept += len(chunk)
        while kept > CAPTURE_BYTES and len(keep) > 1:
            kept -= len(keep.popleft())


class _Discard:
    def write(self, data: bytes) -> int:
        return len(data)

    def flush(self) -> None:
        pass


def run_command(command: list[str], *, simulate_gpu: int | None = None, max_steps: int | None = None,
                measure_file: str | None = None, fingerprint: bool = False, note: str | None = None,
                report_dir: str | None = None, timeout: float | None = None, cwd: str | None = None,
                quiet: bool = False, extra_env: dict[str, str] | None = None, fake: bool = False,
                on_tick: Ticker | None = None, wrapper: list[str] | None = None, own_group: bool = False,
                stochastic_off: bool = False, cpu_visible: bool = False, snapshot_file: str | None = None) -> RunResult:
    """Run ``command`` measured; ``wrapper`` is a confinement prefix (bubblewrap/unshare) for runs
    of code a model wrote."""
    wrapped = wrap_python(command)
    # Without a report folder of the user's, the hook's files go to a private temporary folder that
    # is removed once read: nothing (source lines, argv) is left behind in /tmp.
    folder = report_dir or os.environ.get("OOMTRIAGE_REPORT_DIR") or tempfile.mkdtemp(prefix="oomtriage-run-")
    temporary = folder != report_dir and folder != os.environ.get("OOMTRIAGE_REPORT_DIR")
    env = child_environment(report_dir=folder, simulate_gpu=simulate_gpu, max_steps=max_steps, measure_file=measure_file,
                            fingerprint=fingerprint, note=note, site_hook=wrapped is None, fake=fake,
                            stochastic_off=stochastic_off, cpu_visible=cpu_visible, snapshot_file=snapshot_file)
    env.update(extra_env or {})
    progress_file = Path(folder) / "progress"
    if on_tick is not None:
        env["OOMTRIAGE_PROGRESS_FILE"] = str(progress_file)
    try:
        # Its own process group, so a timeout or a signal to oomtriage ends the repro and its children.
        process = subprocess.Popen([*(wrapper or []), *(wrapped or command)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=env, cwd=cwd, start_new_session=own_group)
    except FileNotFoundError:
        from .errors import InputError

        if temporary:
            shutil.rmtree(folder, ignore_errors=True)  # nothing ran: leave no empty folder behind
        raise InputError(f"command not found: {command[0]}") from None
    RUNNING.add(process)
    try:
        outputs: dict[str, deque[bytes]] = {"stdout": deque(), "stderr": deque()}
        sinks = (_Discard(), _Discard()) if quiet else (sys.stdout.buffer, sys.stderr.buffer)
        pumps = [threading.Thread(target=_pump, args=(process.stdout, sinks[0], outputs["stdout"]), daemon=True),
                 threading.Thread(target=_pump, args=(process.stderr, sinks[1], outputs["stderr"]), daemon=True)]
        for pump in pumps:
            pump.start()
        returncode, timed_out = _wait(process, timeout, on_tick, progress_file)
        for pump in pumps:
            pump.join()
    finally:
        if process.poll() is None:  # interrupted: the repro does not outlive oomtriage
            stop(process)
            process.wait()
        RUNNING.discard(process)
    result = RunResult(returncode=returncode, command=command, report_dir=folder, timed_out=timed_out,
                       output_tail=_tail(b"".join(outputs["stderr"]) or b"".join(outputs["stdout"])))
    _collect_reports(result, Path(folder))
    if result.report is None and returncode != 0:
        _analyse_output(result, b"".join(outputs["stdout"]) + b"\n" + b"".join(outputs["stderr"]), note)
    if snapshot_file:
        result.timeline = read_timeline(snapshot_file)
    if measure_file and Path(measure_file).exists():
        try:
            result.measurement = Measurement.model_validate_json(Path(measure_file).read_text())
        except ValueError:
            pass
    if temporary:
        shutil.rmtree(folder, ignore_errors=True)
        result.report_dir = None
    return result


def read_timeline(snapshot_file: str) -> MemoryTimeline | None:
    """The timeline the child wrote beside its snapshot (None: the run recorded none)."""
    path = Path(snapshot_file + ".timeline.json")
    try:
        return MemoryTimeline.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


RUNNING: set[subprocess.Popen] = set()  # children to end if oomtriage itself is stopped


def stop(process: subprocess.Popen) -> None:
    """End a child and, when it leads its own process group, everything it started."""
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def stop_all() -> None:
    for process in list(RUNNING):
        stop(process)


def _tail(output: bytes, lines: int = 12, limit: int = 4000) -> str:
    text = output.decode("utf-8", errors="replace").rstrip()
    return "\n".join(text.splitlines()[-lines:])[-limit:]


def _wait(process: subprocess.Popen, timeout: float | None, on_tick: Ticker | None,
          progress_file: Path) -> tuple[int, bool]:
    """Wait for the child, telling ``on_tick`` how far it got; kill it at ``timeout``."""
    started = time.monotonic()
    deadline = None if timeout is None else started + timeout
    steps = 0
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            stop(process)
            return process.wait(), True
        wait = None if on_tick is None else POLL_SECONDS
        if deadline is not None:
            wait = deadline - now if wait is None else min(wait, deadline - now)
        try:
            return process.wait(timeout=wait), False
        except subprocess.TimeoutExpired:
            pass
        if on_tick is not None:
            # Steps only go up: a read that catches the file mid-write (empty) is not a step back.
            steps = max(steps, _steps_done(progress_file))
            on_tick(time.monotonic() - started, steps)


def _steps_done(progress_file: Path) -> int:
    try:
        return int(progress_file.read_text() or 0)
    except (OSError, ValueError):  # not written yet, or caught mid-write
        return 0


def _collect_reports(result: RunResult, folder: Path) -> None:
    reports = sorted(folder.glob("oom-*/report.json"))
    result.reports_found = len(reports)
    if reports:
        result.report = TriageReport.model_validate_json(reports[0].read_text())
        result.source = "hook"


def _analyse_output(result: RunResult, output: bytes, note: str | None) -> None:
    from .api import analyze_inputs

    text = output.decode("utf-8", errors="replace")
    if not text.strip():
        return
    report = analyze_inputs([], text=text, note=note)
    if report.detected:
        result.report = report
        result.source = "output"
