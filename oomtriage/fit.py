"""``oomtriage fit``: what fits a card before the run. The program runs on fake tensors (shapes, no
compute) against the simulated device, uncapped, so each run measures what the configuration needs;
the varied option (the batch by default) is searched for the largest value that fits, and the
catalog's fixes are measured for the configuration as given.

Card sizes by name: the card's memory (its marketed GB are GiB: an "80GB" H100 reports 79.6 GiB)
minus what CUDA holds outside PyTorch's allocator: the context (~274 MiB with lazy module loading,
pytorch#86509; reference §3.5) and one cuBLAS workspace (8.125 MiB; 32 MiB on Hopper and newer).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from .errors import InputError
from .models import Measurement
from .program import Option, ProgramOptions, read_program
from .program.setting import express

MIB = 1 << 20
CUDA_CONTEXT_BYTES = 274 * MIB
CUBLAS_WORKSPACE_BYTES = {"hopper_or_newer": 32 * MIB, "older": 8 * MIB + 128 * 1024}
_HOPPER_OR_NEWER = re.compile(r"\b(?:H100|H200|H800|GH200|B100|B200|GB200|RTX PRO 6000|50\d0)\b", re.IGNORECASE)
MAX_SEARCH_RUNS = 16


class CardSize(BaseModel):
    name: str
    spec_bytes: int
    reserve_bytes: int = Field(description="CUDA context and cuBLAS workspace, outside PyTorch's allocator")

    @property
    def usable_bytes(self) -> int:
        return self.spec_bytes - self.reserve_bytes


def card_by_name(name: str) -> CardSize:
    from .gpus import capacity_of_gpu

    marketed = capacity_of_gpu(name)
    if marketed is None:
        raise InputError(f"unknown GPU {name!r}: name it as nvidia-smi does (e.g. 'H100 80GB', 'A100 40GB', 'RTX 4090') "
                         "or pass --simulate-gpu SIZE")
    gigabytes = round(marketed / 10**9)
    workspace = CUBLAS_WORKSPACE_BYTES["hopper_or_newer" if _HOPPER_OR_NEWER.search(name) else "older"]
    return CardSize(name=name, spec_bytes=gigabytes * 2**30, reserve_bytes=CUDA_CONTEXT_BYTES + workspace)


class FitRun(BaseModel):
    value: str | None
    peak_allocated_bytes: int | None
    peak_reserved_bytes: int | None
    fits: bool | None
    error: str | None = None


class FixFit(BaseModel):
    kind: str
    title: str
    change: str
    peak_reserved_bytes: int | None
    fits: bool | None
    error: str | None = None


class FitResult(BaseModel):
    command: list[str]
    card: str
    card_bytes: int = Field(description="what the program's allocator can use: the card minus the CUDA reserve")
    card_spec_bytes: int | None = None
    backend: Literal["fake", "execute"] = "fake"
    peak_allocated_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    fits: bool = False
    varied: str | None = Field(None, description="the option searched, as the program names it")
    current: str | None = Field(None, description="its value in this command")
    largest_fitting: int | None = Field(None, description="the largest value of the varied option that fits")
    largest_proved: bool = Field(False, description="the next value was measured and does not fit")
    headroom_bytes: int | None = None
    runs: list[FitRun] = Field(default_factory=list)
    fixes: list[FixFit] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    error: str | None = None


class _Measurer:
    def __init__(self, command: list[str], project: Path, max_steps: int, timeout: float, backend: str,
                 cpu_visible: bool) -> None:
        self.command, self.project, self.max_steps, self.timeout = command, project, max_steps, timeout
        self.fake = backend != "execute"
        self.cpu_visible = cpu_visible
        self.count = 0

    def measure(self, command: list[str], diff: str | None = None) -> tuple[Measurement | None, str | None]:
        from .run import run_command
        from .validate.loop import relocate
        from .validate.patching import apply_unified_diff, scratch_copy

        self.count += 1
        with tempfile.TemporaryDirectory(prefix="oomtriage-fit-") as folder:
            # Each run in its own scratch copy: what the program writes (outputs, saved configs) stays
            # out of the user's tree and out of the next run.
            cwd = scratch_copy(self.project, Path(folder) / "project")
            if diff:
                apply_unified_diff(cwd, diff)
            measure = Path(folder) / "measure.json"
            result = run_command(relocate(command, self.project, cwd), max_steps=self.max_steps, measure_file=str(measure), timeout=self.timeout,
                                 cwd=str(cwd), quiet=True, fake=self.fake, own_group=True, cpu_visible=self.cpu_visible,
                                 report_dir=str(Path(folder) / "reports"))
            measured = result.measurement
        if measured is None or (result.returncode != 0 and not measured.oom):
            tail = (result.output_tail or "").strip().splitlines()
            return measured, f"the run failed (exit code {result.returncode})" + (f": {tail[-1][:200]}" if tail else "")
        return measured, None


def _option_to_vary(program: ProgramOptions, vary: str | None) -> Option | None:
    if vary is None:
        return program.find("batch")
    wanted = vary.lstrip("-").replace("-", "_").lower()
    role = {"seq_len": "sequence", "sequence": "sequence", "batch": "batch", "batch_size": None}.get(wanted)
    by_name = next((o for o in program.options if o.name.replace("-", "_").lower() == wanted
                    or (o.flag or "").lstrip("-").replace("-", "_").lower() == wanted), None)
    return by_name or (program.find(role) if role else None)


def fit(command: list[str], *, project: Path, card: CardSize, vary: str | None = None, max_steps: int = 2,
        timeout: float = 600, backend: str = "fake", with_fixes: bool = True, cpu_visible: bool = False) -> FitResult:
    from .validate.patching import check_project

    project = project.resolve()
    check_project(project, Path(tempfile.gettempdir()))
    result = FitResult(command=command, card=card.name, card_bytes=card.usable_bytes, card_spec_bytes=card.spec_bytes,
                       backend="execute" if backend == "execute" else "fake")
    measurer = _Measurer(command, project, max_steps, timeout, backend, cpu_visible)
    measured, error = measurer.measure(command)
    if error and measurer.fake:  # a program that reads values the fake backend does not have: execute it
        result.notes.append(f"fake tensors could not run it ({error}); measured by executing on the CPU instead")
        measurer.fake, result.backend = False, "execute"
        measured, error = measurer.measure(command)
    if error or measured is None:
        result.error = error or "the run produced no measurement"
        return result
    result.peak_allocated_bytes, result.peak_reserved_bytes = measured.peak_allocated_bytes, measured.peak_reserved_bytes
    result.fits = (measured.peak_reserved_bytes or 0) <= card.usable_bytes
    if result.fits:
        result.headroom_bytes = card.usable_bytes - (measured.peak_reserved_bytes or 0)
    program = read_program(command, project)
    option = _option_to_vary(program, vary)
    if option is None:
        result.notes.append(f"no option to vary found ({vary or 'a batch size'}): pass --vary NAME with the option's name")
    elif option.current_int() is None:
        result.notes.append(f"{option.name} has no integer value in this command ({option.current!r})")
    else:
        result.varied, result.current = option.name, option.current
        result.largest_fitting = _largest_fitting(measurer, command, project, option, measured, card.usable_bytes, result)
        largest = result.largest_fitting
        result.largest_proved = largest is not None and any(
            run.value == str(largest + 1) and run.fits is False for run in result.runs)
        if largest is not None and not result.largest_proved:
            result.notes.append(f"the search stopped after {MAX_SEARCH_RUNS} runs: {largest} fits, a larger value may too")
    if with_fixes and not result.fits:
        result.fixes = _fixes_that_fit(measurer, command, project, program, card.usable_bytes, result.largest_fitting)
    return result


def _peak_at(measurer: _Measurer, command: list[str], project: Path, option: Option, value: int,
             result: FitResult, cache: dict[int, int | None]) -> int | None:
    if value in cache:
        return cache[value]
    expressed = express(command, project, [(option, str(value))])
    if expressed is None:
        cache[value] = None
        return None
    measured, error = measurer.measure(expressed.command, expressed.diff)
    peak = measured.peak_reserved_bytes if measured and not error else None
    result.runs.append(FitRun(value=str(value), peak_allocated_bytes=measured.peak_allocated_bytes if measured else None,
                              peak_reserved_bytes=peak, fits=None if peak is None else peak <= result.card_bytes, error=error))
    cache[value] = peak
    return peak


def _largest_fitting(measurer: _Measurer, command: list[str], project: Path, option: Option, measured: Measurement,
                     card: int, result: FitResult) -> int | None:
    """The largest value whose measured peak fits, proved by a fitting run at it and a failing run at
    the next value. Peaks are close to affine in the batch, so two runs predict the boundary and one
    or two more confirm it; bisection takes over where the prediction misses."""
    current = option.current_int() or 1
    cache: dict[int, int | None] = {current: measured.peak_reserved_bytes}
    result.runs.append(FitRun(value=str(current), peak_allocated_bytes=measured.peak_allocated_bytes,
                              peak_reserved_bytes=measured.peak_reserved_bytes, fits=(measured.peak_reserved_bytes or 0) <= card))
    other = current * 2 if (measured.peak_reserved_bytes or 0) <= card else max(1, current // 2)
    if other == current:
        other = current + 1
    if _peak_at(measurer, command, project, option, other, result, cache) is None:
        return None
    guess = _predict(result.runs, card)
    guesses_left = 2  # reserved memory rises in segment steps, so the line only points near the boundary
    while True:
        fitting = [value for value, peak in cache.items() if peak is not None and peak <= card]
        failing = [value for value, peak in cache.items() if peak is not None and peak > card]
        fits_at, fails_at = max(fitting, default=None), min(failing, default=None)
        if fails_at == 1:
            return None  # not even one fits
        if fits_at is not None and fails_at == fits_at + 1:
            return fits_at
        if measurer.count >= MAX_SEARCH_RUNS:
            return fits_at  # the largest proved so far
        low, high = (fits_at or 0), fails_at
        if guesses_left and guess is not None and guess > low and (high is None or guess < high) and guess not in cache:
            probe, guesses_left = guess, guesses_left - 1
        elif high is None:
            probe = max(low * 2, low + 1)
        else:
            probe = (low + high) // 2 if high - low > 1 else high - 1
            probe = max(probe, 1)
        peak = _peak_at(measurer, command, project, option, probe, result, cache)
        if peak is None:
            return fits_at
        guess = _predict(result.runs, card)


def _predict(runs: list[FitRun], card: int) -> int | None:
    """Where the peak reaches the card: allocated memory is close to affine in the batch (reserved
    rises in segment steps), so the line through the two measured values nearest the card, less the
    reserved-but-unallocated gap seen there, points at the boundary."""
    points = sorted((int(run.value), run.peak_allocated_bytes, run.peak_reserved_bytes) for run in runs
                    if run.value and run.value.isdigit() and run.peak_allocated_bytes and run.peak_reserved_bytes)
    if len(points) < 2:
        return None
    nearest = sorted(points, key=lambda point: abs(point[2] - card))[:2]
    (a, allocated_a, reserved_a), (b, allocated_b, _) = sorted(nearest)
    if a == b or allocated_b <= allocated_a:
        return None
    slope = (allocated_b - allocated_a) / (b - a)
    gap = reserved_a - allocated_a
    return max(1, a + int((card - gap - allocated_a) // slope))


def _fixes_that_fit(measurer: _Measurer, command: list[str], project: Path, program: ProgramOptions, card: int,
                    largest: int | None) -> list[FixFit]:
    from .engine.fixes import FIXES_BY_CAUSE
    from .fixkinds import KINDS
    from .validate.candidates import apply_args, describe, fix_site

    site = fix_site(None, command, project, program)
    found = []
    seen = set()
    for fixes in FIXES_BY_CAUSE.values():
        for fix in fixes:
            entry = KINDS.get(fix.kind)
            if fix.kind in seen or entry is None or entry.apply is None or fix.kind == "alloc_conf":
                continue  # the allocator setting changes fragmentation, which fake runs do not have
            seen.add(fix.kind)
            try:
                proposals = entry.apply(site, fix)
            except (OSError, SyntaxError, ValueError):
                proposals = []
            if not proposals:
                continue
            if entry.search:  # the batch: the largest proposal within what the search proved to fit
                proposal = next((p for p in proposals if p.size is not None and largest is not None and p.size <= largest), None)
                if proposal is None:
                    continue
            else:
                proposal = proposals[0]
            measured, error = measurer.measure(apply_args(command, proposal.action),
                                               proposal.action.diff if proposal.action.type == "diff" else None)
            peak = measured.peak_reserved_bytes if measured and not error else None
            found.append(FixFit(kind=fix.kind, title=proposal.title, change=describe(proposal.action), peak_reserved_bytes=peak,
                                fits=None if peak is None else peak <= card, error=error))
    return found
