"""The validation loop: a baseline of the repro (capped, and uncapped to learn what it needs), then
each fix alone in its own scratch copy, measured the same way, gated on fitting and on numerics."""

from __future__ import annotations

import os
import tempfile
import time
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field

from oomtriage.backend import Backend, choose_backend
from oomtriage.models import SCHEMA_VERSION, Measurement, TriageReport
from oomtriage.run import RunResult, run_command
from oomtriage.sizes import format_size
from oomtriage.timeline import MemoryTimeline

from .candidates import CandidateFix, FixAction, apply_args, candidates_from_report, describe
from .numerics import NumericsResult, compare, noise_floor
from .confine import confinement
from .screen import screen_diff, screen_env
from .patching import PatchError, apply_unified_diff, check_project, file_hash, scratch_copy, special_files, tree_digest

SAVING_MARGIN = 0.10  # without an OOM to remove, a fix must lower the peak by 10% to count


class ProgressSink(Protocol):
    """Told about each run of a validation: a bar per run in the CLI."""

    def started(self, label: str, total_steps: int | None) -> None: ...

    def advanced(self, elapsed: float, steps: int) -> None: ...

    def finished(self, outcome: str, steps: int) -> None: ...


class _NoProgress:
    def started(self, label: str, total_steps: int | None) -> None:
        pass

    def advanced(self, elapsed: float, steps: int) -> None:
        pass

    def finished(self, outcome: str, steps: int) -> None:
        pass


class SearchProbe(BaseModel):
    size: int
    title: str
    fits: bool
    peak_reserved_bytes: int | None = None


class FixResult(BaseModel):
    kind: str
    title: str
    cause_id: str
    source: str
    action: FixAction
    change: str
    accepted: bool
    reason: str
    fits: bool | None = None
    peak_before_bytes: int | None = None
    peak_after_bytes: int | None = None
    reserved_before_bytes: int | None = None
    reserved_after_bytes: int | None = None
    memory_ok: bool | None = Field(None, description="fits the card (or saves the margin), whatever the numerics")
    numerics: NumericsResult | None = None
    seconds: float = 0.0
    ran: bool = Field(False, description="the fix was applied and measured (advice, refused and unrun model patches were not)")
    confinement: str | None = Field(None, description="how a model-written patch's run was confined")
    file_hashes: dict[str, str] = Field(default_factory=dict, description="sha256 of each patched file at validation")
    searched: list[SearchProbe] = Field(default_factory=list, description="search fixes: each value tried, and whether it fit")
    headroom_bytes: int | None = Field(None, description="card capacity minus the fix's peak reserved")
    changes_workload: str | None = None

    @property
    def unchecked(self) -> bool:
        """Memory is fine but the numerics could not be checked (e.g. fake tensors): not accepted."""
        return bool(self.memory_ok and self.numerics and self.numerics.verdict == "not_checked")


class ValidationResult(BaseModel):
    schema_version: int = SCHEMA_VERSION
    command: list[str]
    capacity_bytes: int | None
    backend: Literal["execute", "fake"] = "execute"
    backend_reason: str = ""
    baseline: Measurement | None = None
    baseline_uncapped: Measurement | None = None
    needs_bytes: int | None = Field(None, description="peak reserved of the uncapped baseline: what the run needs")
    noise_floor: float | None = Field(None, description="run-to-run relative difference of the unchanged repro; "
                                      "measured only when a fix first fails the numerics gate")
    summary: str = ""
    report: TriageReport | None = None
    fixes: list[FixResult] = Field(default_factory=list)
    tree_unchanged: bool = True
    warnings: list[str] = Field(default_factory=list)
    baseline_error: str | None = Field(None, description="the repro failed before any OOM: its exit code and last lines")
    baseline_timeline: MemoryTimeline | None = Field(None, description="the capped baseline's memory timeline (when asked for)")
    baseline_stochastic_off: Measurement | None = Field(None, description="the uncapped baseline with dropout off, measured "
                                                        "when a fix that draws randomness differently is judged")


class _Runner:
    """Runs the repro (or a fix of it) in a scratch folder, measured, with a progress bar per run."""

    def __init__(self, command: list[str], project: Path, work: Path, *, max_steps: int | None, timeout: float | None,
                 fake: bool, progress: ProgressSink) -> None:
        self.command, self.project, self.work = command, project, work
        self.max_steps, self.timeout, self.fake, self.progress = max_steps, timeout, fake, progress
        self.noise_measured = False
        self.run_model_patches = False
        self.cpu_visible = False

    def measure(self, name: str, label: str, *, capacity: int | None, command: list[str] | None = None,
                env: dict[str, str] | None = None, wrapper: list[str] | None = None,
                stochastic_off: bool = False, snapshot_file: str | None = None) -> tuple[RunResult, Measurement | None]:
        measure_file = self.work / f"{name}.measure.json"
        self.progress.started(label, self.max_steps)
        result = run_command(relocate(command or self.command, self.project, self.work / name), simulate_gpu=capacity,
                             max_steps=self.max_steps, measure_file=str(measure_file), fingerprint=True,
                             report_dir=str(self.work / f"{name}.reports"), timeout=self.timeout, cwd=str(self.work / name),
                             quiet=True, extra_env=env, fake=self.fake, on_tick=self.progress.advanced, wrapper=wrapper,
                             own_group=True, stochastic_off=stochastic_off, cpu_visible=self.cpu_visible,
                             snapshot_file=snapshot_file)
        self.progress.finished(_outcome(result), result.measurement.steps if result.measurement else 0)
        return result, result.measurement


def _outcome(result: RunResult) -> str:
    measured = result.measurement
    if result.timed_out:
        return "stopped at the timeout"
    if measured is None or (result.returncode != 0 and not measured.oom and result.report is None):
        return f"failed (exit code {result.returncode})"
    peak = f"peak {format_size(measured.peak_allocated_bytes)}"
    return f"out of memory ({peak})" if measured.oom else peak


def relocate(command: list[str], project: Path, scratch: Path) -> list[str]:
    """Absolute paths into the project point into the scratch copy instead; a relative interpreter
    (``./venv/bin/python``, which the scratch copy leaves out) is the user's own, made absolute."""
    root = str(project.resolve())
    command = list(command)
    if command and os.sep in command[0] and not os.path.isabs(command[0]) and os.path.exists(command[0]):
        command[0] = os.path.abspath(command[0])
    return [str(scratch) + item[len(root):] if item.startswith(root + os.sep) and index > 0 else item
            for index, item in enumerate(command)]


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C, so scratch folders and repros are cleaned up."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def _stop_on_signals():
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Stopped(signum)

    previous = {signum: signal.signal(signum, handler) for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        from oomtriage.run import stop_all

        stop_all()
        for signum, old in previous.items():
            signal.signal(signum, old)


def validate(command: list[str], *, project: Path, capacity: int | None, max_steps: int | None = None,
             report: TriageReport | None = None, timeout: float | None = 600, kinds: set[str] | None = None,
             progress: ProgressSink | None = None, backend: Backend = "auto", run_model_patches: bool = False,
             cpu_visible: bool = False, timeline: bool = False) -> ValidationResult:
    """``timeline``: record the capped baseline's memory history for the HTML report."""
    project = project.resolve()
    check_project(project, Path(tempfile.gettempdir()))
    before = tree_digest(project)
    fake, why = choose_backend(backend, capacity)
    result = ValidationResult(command=command, capacity_bytes=capacity, backend="fake" if fake else "execute", backend_reason=why)
    skipped = special_files(project)
    if skipped:
        result.warnings.append(f"Not copied into the scratch folders (not regular files, or unreadable): {', '.join(skipped[:5])}"
                               + (f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""))
    with _stop_on_signals(), tempfile.TemporaryDirectory(prefix="oomtriage-validate-") as folder:
        work = Path(folder)
        runner = _Runner(command, project, work, max_steps=max_steps, timeout=timeout, fake=fake, progress=progress or _NoProgress())
        runner.run_model_patches = run_model_patches
        runner.cpu_visible = cpu_visible
        scratch_copy(project, work / "baseline")
        run, result.baseline = runner.measure("baseline", "baseline" + (" (capped)" if capacity else ""), capacity=capacity,
                                              snapshot_file=str(work / "baseline.snapshot.pickle") if timeline else None)
        result.baseline_timeline = run.timeline
        caught = result.baseline.caught_ooms if result.baseline is not None else 0
        oomed = (result.baseline is not None and result.baseline.oom) or run.report is not None or caught > 0
        if run.returncode != 0 and not oomed and not run.timed_out:
            # A repro that never ran (missing file, syntax or import error, a crash) measures nothing.
            result.baseline_error = f"exit code {run.returncode}" + (f":\n{run.output_tail}" if run.output_tail else "")
            result.summary = (f"The repro failed before any OOM (exit code {run.returncode}); nothing was measured, so "
                              "no fix can be validated. Its last lines:\n" + (run.output_tail or "(no output)"))
            result.tree_unchanged = tree_digest(project) == before
            return result
        result.report = report or run.report or (_report_of_caught_oom(result.baseline) if caught else None)
        if caught:
            result.warnings.append(f"The script raised {caught} OOM(s) and caught them itself (a batch-size finder or a "
                                   "retry loop): counted as OOMs; a fix must run without raising any.")
        scratch_copy(project, work / "uncapped")
        _, result.baseline_uncapped = runner.measure("uncapped", "baseline, uncapped (what the run needs)", capacity=None)
        if result.baseline_uncapped:
            result.needs_bytes = result.baseline_uncapped.peak_reserved_bytes
        result.summary = _summary(result)
        if run.timed_out:
            result.summary = f"The baseline run was stopped at the {timeout:g} s timeout. " + result.summary
        if result.report is None:
            result.summary += " No OOM and no report: nothing to validate."
        else:
            candidates = [c for c in candidates_from_report(result.report, command, project) if not kinds or c.kind in kinds]
            for index, candidate in enumerate(candidates):
                result.fixes.append(_try_fix(candidate, runner, f"fix{index}", result))
    result.tree_unchanged = tree_digest(project) == before
    return result


def _report_of_caught_oom(measured: Measurement) -> TriageReport:
    """A triage of the OOM the script caught (the hook only sees uncaught ones)."""
    from oomtriage.context import build_context
    from oomtriage.engine import triage

    message = measured.last_oom_message or "torch.OutOfMemoryError: CUDA out of memory."
    return triage(build_context([], text=f"torch.OutOfMemoryError: {message}\n" if "Error" not in message else message))


def _summary(result: ValidationResult) -> str:
    baseline, needs, capacity = result.baseline, result.needs_bytes, result.capacity_bytes
    if baseline is None:
        return "The baseline run produced no measurement."
    if (baseline.oom or baseline.caught_ooms) and needs and capacity:
        return f"The run needs {format_size(needs)}; the (simulated) card has {format_size(capacity)}."
    if baseline.oom or baseline.caught_ooms:
        return "The baseline run ran out of memory."
    if baseline.exit == "max_steps":
        # Stopping early is not fitting: the OOM may come in a later step or phase (evaluation after step N).
        phase = result.report.phase if result.report and result.report.phase != "unknown" else None
        where = f" (the report says it failed in {phase})" if phase else ""
        return (f"The run stopped at the --max-steps limit after {baseline.steps} step(s) without an OOM, before reaching "
                f"the part that failed{where}: nothing was reproduced. Try --max-steps {max(2, 4 * baseline.steps)} or more "
                f"(peak so far {format_size(baseline.peak_reserved_bytes)} reserved).")
    return f"The baseline fits: peak {format_size(baseline.peak_reserved_bytes)} reserved."


def _try_fix(candidate: CandidateFix, runner: _Runner, name: str, result: ValidationResult) -> FixResult:
    started = time.perf_counter()
    outcome = FixResult(kind=candidate.kind, title=candidate.title, cause_id=candidate.cause_id, source=candidate.source,
                        action=candidate.action, change=describe(candidate.action), accepted=False, reason="",
                        changes_workload=candidate.changes_workload)
    golden = result.baseline_uncapped
    if golden is not None:
        outcome.peak_before_bytes, outcome.reserved_before_bytes = golden.peak_allocated_bytes, golden.peak_reserved_bytes
    if candidate.action.type == "advice":
        outcome.reason = "advice only: no change oomtriage can apply and measure, so it is not validated"
        return outcome
    wrapper = None
    if candidate.source == "llm" and candidate.action.type in ("diff", "env"):
        refusals = screen_diff(candidate.action.diff or "") + screen_env(candidate.action.env)
        if refusals:
            outcome.reason = "model-written change refused by the static screen, not run: " + "; ".join(refusals[:3])
            return outcome
        if not runner.run_model_patches:
            outcome.reason = "model-written change shown, not run: pass --run-model-patches to measure it (confined)"
            return outcome
        wrapper, outcome.confinement = confinement(runner.work, runner.work / name)
    probed = None
    if candidate.search and result.capacity_bytes is not None:
        candidate, probed = _search(candidate, runner, name, result, outcome)
        outcome.title, outcome.action, outcome.change = candidate.title, candidate.action, describe(candidate.action)
        outcome.changes_workload = candidate.changes_workload
    command, env = apply_args(runner.command, candidate.action), candidate.action.env or None
    label = f"fix {candidate.kind}"
    if probed is not None:  # the search's fitting run is this fix's capped measurement
        prepared, run, measured = probed
    else:
        try:
            prepared = _prepare(candidate, runner, name, outcome)
        except (PatchError, OSError, UnicodeDecodeError) as error:
            outcome.reason = f"the patch was not applied: {error}"
            return outcome
        run, measured = runner.measure(name, label, capacity=result.capacity_bytes, command=command, env=env, wrapper=wrapper)
    outcome.ran = True
    if measured is None:
        outcome.seconds = round(time.perf_counter() - started, 2)
        outcome.reason = "timed out" if run.timed_out else f"the run failed (exit code {run.returncode}) before it could be measured"
        return outcome
    outcome.peak_after_bytes, outcome.reserved_after_bytes = measured.peak_allocated_bytes, measured.peak_reserved_bytes
    capacity = result.capacity_bytes
    if (measured.oom or measured.ooms_raised) and capacity is not None:
        # A run cut short by the OOM shows a truncated peak: measure what the fixed run really needs,
        # so a fix that saves nothing is never credited with a saving.
        scratch_copy(prepared, runner.work / f"{name}.uncapped")
        _, true_peak = runner.measure(f"{name}.uncapped", f"{label}, uncapped (what it needs)", capacity=None,
                                      command=command, env=env)
        if true_peak is not None:
            outcome.peak_after_bytes, outcome.reserved_after_bytes = true_peak.peak_allocated_bytes, true_peak.peak_reserved_bytes
    completed = not measured.oom and not measured.ooms_raised and run.returncode == 0 and measured.exit in ("completed", "max_steps")
    outcome.fits = completed and (capacity is None or (measured.peak_reserved_bytes or 0) <= capacity)
    if outcome.fits and capacity is not None and measured.peak_reserved_bytes is not None:
        outcome.headroom_bytes = capacity - measured.peak_reserved_bytes
    if golden is not None:
        outcome.numerics = _judge_like_with_like(candidate, golden, measured, prepared, command, env, runner, name, result)
    outcome.seconds = round(time.perf_counter() - started, 2)
    numerics_ok = outcome.numerics is not None and outcome.numerics.verdict == "passed"
    baseline_failed = result.baseline is not None and (result.baseline.oom or result.baseline.caught_ooms > 0)
    saved = (outcome.peak_before_bytes and outcome.peak_after_bytes is not None
             and outcome.peak_after_bytes <= (1 - SAVING_MARGIN) * outcome.peak_before_bytes)
    memory_ok = outcome.fits if baseline_failed else bool(completed and saved)
    outcome.memory_ok = bool(memory_ok)
    outcome.accepted = bool(memory_ok and numerics_ok)
    outcome.reason = _reason(outcome, memory_ok, numerics_ok, run)
    return outcome


def _prepare(candidate: CandidateFix, runner: _Runner, name: str, outcome: FixResult) -> Path:
    """The fix's own scratch copy, with its diff applied (hashes of the originals kept for apply)."""
    scratch = scratch_copy(runner.project, runner.work / name)
    if candidate.action.type == "diff":
        for relative in apply_unified_diff(scratch, candidate.action.diff or ""):
            original = runner.project / relative
            outcome.file_hashes[relative] = file_hash(original) if original.exists() else ""
    return scratch


def _search(candidate: CandidateFix, runner: _Runner, name: str, result: ValidationResult,
            outcome: FixResult) -> tuple[CandidateFix, tuple[Path, RunResult, Measurement] | None]:
    """Bisect the proposals (largest value first) for the largest that fits the card, by capped runs.

    Fitting is monotone in the micro-batch, so log2(n) runs find it; the chosen one is then measured
    in full (uncapped peak, numerics) like any other fix."""
    proposals = candidate.search
    low, high = 0, len(proposals) - 1
    fitting: int | None = None
    runs: dict[int, tuple[Path, RunResult, Measurement]] = {}
    while low <= high:
        middle = (low + high) // 2
        proposal = proposals[middle]
        probe = candidate.model_copy(update={"action": proposal.action})
        folder = f"{name}.probe{middle}"
        try:
            prepared = _prepare(probe, runner, folder, outcome)
        except (PatchError, OSError, UnicodeDecodeError):
            break
        run, measured = runner.measure(folder, f"search {candidate.kind}: {proposal.title}", capacity=result.capacity_bytes,
                                       command=apply_args(runner.command, proposal.action))
        fits = bool(measured and not measured.oom and not measured.ooms_raised and run.returncode == 0
                    and (measured.peak_reserved_bytes or 0) <= (result.capacity_bytes or 0))
        outcome.searched.append(SearchProbe(size=proposal.size or 0, title=proposal.title, fits=fits,
                                            peak_reserved_bytes=measured.peak_reserved_bytes if measured else None))
        if fits:
            fitting, high = middle, middle - 1
            runs[middle] = (prepared, run, measured)
        else:
            low = middle + 1
    chosen = proposals[fitting] if fitting is not None else proposals[-1]
    update = {"title": chosen.title, "action": chosen.action, "changes_workload": chosen.changes_workload,
              "rule": chosen.rule or candidate.rule}
    return candidate.model_copy(update=update), runs.get(fitting) if fitting is not None else None


def _judge_like_with_like(candidate: CandidateFix, golden: Measurement, measured: Measurement, prepared: Path,
                          command: list[str], env: dict[str, str] | None, runner: _Runner, name: str,
                          result: ValidationResult) -> NumericsResult:
    """Compare with the original run. A fix that draws random numbers in another order (micro-batches,
    recomputation) is compared on runs with dropout off in both, when the baseline used dropout."""
    if candidate.changes_workload:
        return NumericsResult(verdict="not_checked", rule="none", reason=f"the fix changes the workload "
                              f"({candidate.changes_workload}), so its numerics cannot be compared with the original run")
    rule = candidate.rule
    if candidate.varies_randomness and golden.dropout_seen and golden.device != "fake":
        if result.baseline_stochastic_off is None:
            scratch_copy(runner.project, runner.work / "baseline.no_dropout")
            _, result.baseline_stochastic_off = runner.measure("baseline.no_dropout", "baseline, dropout off (numerics)",
                                                               capacity=None, stochastic_off=True)
        scratch_copy(prepared, runner.work / f"{name}.no_dropout")
        _, candidate_off = runner.measure(f"{name}.no_dropout", f"fix {candidate.kind}, dropout off (numerics)", capacity=None,
                                          command=command, env=env, stochastic_off=True)
        if result.baseline_stochastic_off is None or candidate_off is None:
            return NumericsResult(verdict="not_checked", rule=rule or "none",
                                  reason="the runs with dropout off (to compare like with like) did not complete")
        numerics = _judge_numerics(result.baseline_stochastic_off, candidate_off, candidate.kind, runner, result, rule=rule,
                                   stochastic_off=True)
        numerics.compared_on = "runs with dropout disabled in both the baseline and the fix (it draws random numbers in another order)"
        return numerics
    numerics = _judge_numerics(golden, measured, candidate.kind, runner, result, rule=rule)
    numerics.compared_on = "runs as written"
    return numerics


def _judge_numerics(golden: Measurement, measured: Measurement, kind: str, runner: _Runner,
                    result: ValidationResult, rule: str | None = None, stochastic_off: bool = False) -> NumericsResult:
    """Compare with the original run; on a first failure, rerun the unchanged repro once to learn
    whether it is reproducible at all, and judge again with the bound widened to that noise."""
    numerics = compare(golden, measured, kind, result.noise_floor, rule=rule)
    if numerics.verdict != "failed" or runner.noise_measured:
        return numerics
    runner.noise_measured = True
    name = "repeat.no_dropout" if stochastic_off else "repeat"
    scratch_copy(runner.project, runner.work / name)
    _, repeat = runner.measure(name, "baseline, uncapped" + (", dropout off" if stochastic_off else "") + ", again (run-to-run noise)",
                               capacity=None, stochastic_off=stochastic_off)
    if repeat is not None:
        result.noise_floor = noise_floor(golden, repeat)
    return compare(golden, measured, kind, result.noise_floor, rule=rule)


def _reason(outcome: FixResult, memory_ok: bool, numerics_ok: bool, run: RunResult) -> str:
    headroom = f", {format_size(outcome.headroom_bytes)} headroom" if outcome.headroom_bytes is not None else ""
    if outcome.accepted:
        return f"fits{headroom} and keeps the numerics" if outcome.fits else "saves memory and keeps the numerics"
    if memory_ok and outcome.changes_workload:
        memory = f"fits{headroom}" if outcome.fits else f"saves at least {SAVING_MARGIN:.0%}"
        return f"{memory} (measured), but changes the workload ({outcome.changes_workload}): not accepted automatically"
    if outcome.unchecked:
        memory = "fits" if outcome.fits else f"saves at least {SAVING_MARGIN:.0%}"
        return f"{memory}, but numerics not checked ({outcome.numerics.reason}): not accepted until they are"
    if not memory_ok:
        if run.returncode != 0 and not (outcome.numerics and outcome.peak_after_bytes):
            return f"the run failed (exit code {run.returncode})"
        return "still runs out of memory" if not outcome.fits else f"saves less than {SAVING_MARGIN:.0%}"
    numerics = outcome.numerics
    return f"numerics {numerics.verdict}: {numerics.reason}" if numerics else "numerics not checked"


def changelog_entry(result: ValidationResult, fix: FixResult) -> str:
    report = result.report
    error = report.error if report else None
    headline = f"{error.exception_type or 'OOM'}: tried to allocate {format_size(error.requested_bytes)}" if error and error.requested_bytes \
        else (error.raw_message[:100] if error else "out of memory")
    engine = report.engine if report else None
    if fix.source == "llm" and engine and engine.exchange_id:
        provenance = f"proposed by {engine.model} (exchange {engine.exchange_id})"
    else:
        provenance = "proposed by the rule engine"
    numerics = fix.numerics
    verdict = (f"{numerics.verdict} ({numerics.rule}, max relative error {numerics.max_relative_error:.2e} over "
               f"{numerics.steps_compared} steps)" if numerics and numerics.max_relative_error is not None else "not checked")
    lines = [
        f"- Fix OOM `{fix.cause_id}`: {fix.title} ({date.today().isoformat()}).",
        f"  - OOM: {headline}.",
        f"  - Cause: `{fix.cause_id}`, {provenance}.",
        f"  - Peak allocated {format_size(fix.peak_before_bytes)} -> {format_size(fix.peak_after_bytes)}, reserved "
        f"{format_size(fix.reserved_before_bytes)} -> {format_size(fix.reserved_after_bytes)}"
        + (f" (card: {format_size(result.capacity_bytes)})." if result.capacity_bytes else "."),
        f"  - Numerics: {verdict}.",
    ]
    if fix.action.type == "diff":
        lines += ["  - Change:", "", "    ```diff", *("    " + line for line in (fix.action.diff or "").rstrip("\n").splitlines()), "    ```"]
    else:
        lines.append(f"  - Change: `{fix.change}`.")
    return "\n".join(lines)


class ApplyError(PatchError):
    """An accepted fix cannot be applied to the real tree."""


def apply_accepted(result: ValidationResult, kind: str, project: Path) -> FixResult:
    """Apply an accepted diff fix to the real tree, only if its files are unchanged since validation."""
    fix = next((fix for fix in result.fixes if fix.kind == kind and fix.accepted), None)
    if fix is None:
        raise ApplyError(f"no accepted fix of kind {kind!r} in this validation")
    if fix.action.type != "diff":
        raise ApplyError(f"the {kind} fix changes no file; apply it yourself: {fix.change}")
    for relative, digest in fix.file_hashes.items():
        path = project / relative
        if (file_hash(path) if path.exists() else "") != digest:
            raise ApplyError(f"{relative} changed since validation; validate again before applying")
    apply_unified_diff(project, fix.action.diff or "")
    return fix
