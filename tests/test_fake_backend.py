"""The fake backend (FakeTensorMode on CPU: shapes, no values): the same peak as executing, a
workload larger than this machine measured without running it, numerics never passed; and the
progress a validation shows (a bar per run, elapsed time, steps)."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys

import pytest

from oomtriage.progress import RunBars, RunLines
from oomtriage.run import run_command
from oomtriage import backend
from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.usefixtures("isolated_home")


def _measure(tmp_path, name: str, args: list[str], *, fake: bool, max_steps: int | None = None):
    measure_file = tmp_path / f"{name}.{'fake' if fake else 'real'}.json"
    result = run_command([sys.executable, str(ROOT / "examples" / f"{name}.py"), *args], measure_file=str(measure_file),
                         fake=fake, quiet=True, fingerprint=True, max_steps=max_steps, cwd=str(tmp_path))
    assert result.returncode == 0 and result.measurement is not None
    return result.measurement


@pytest.mark.slow
@pytest.mark.parametrize("name", ["batch_too_large", "attention_quadratic"])
def test_fake_peak_equals_executed_peak(tmp_path, name):
    real = _measure(tmp_path, name, [], fake=False)
    fake = _measure(tmp_path, name, [], fake=True)
    assert (real.device, fake.device) == ("simulated", "fake")
    assert fake.peak_allocated_bytes == real.peak_allocated_bytes > 0
    assert fake.peak_reserved_bytes == real.peak_reserved_bytes  # the optimizer takes the same (foreach) path
    assert fake.steps == real.steps >= 2
    # No values on fake tensors: the fingerprint is left empty rather than filled with placeholders.
    assert real.step_losses and not fake.step_losses and not fake.grad_norms


def _host_total_bytes() -> int:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def test_a_workload_larger_than_this_machine_is_measured_without_running_it(tmp_path):
    batch = 2**21  # 4 GiB per activation of the 512-wide MLP: far beyond this machine's memory
    fake = _measure(tmp_path, "batch_too_large", ["--batch-size", str(batch), "--steps", "1"], fake=True)
    assert fake.peak_allocated_bytes > _host_total_bytes()
    assert fake.peak_allocated_bytes > 8 * batch * 512 * 4  # at least the saved activations of 8 layers
    assert fake.exit == "completed" and fake.steps == 1


def test_item_and_python_numbers_read_from_fake_tensors_do_not_crash(tmp_path):
    script = tmp_path / "reads.py"
    script.write_text(
        "import torch\n"
        "model = torch.nn.Linear(8, 1).to('cpu').half().float()\n"  # .to()/.half() swap parameters
        "opt = torch.optim.Adam(model.parameters())\n"
        "for step in range(3):\n"
        "    loss = model(torch.randn(4, 8)).pow(2).mean()\n"
        "    if torch.isnan(loss):\n"
        "        raise SystemExit('nan')\n"
        "    print(f'step {step} loss {loss.item():.3f} {float(loss):.3f} {int(loss.argmax())}')\n"
        "    predictions = model(torch.randn(64, 8)).argmax(1).cpu().numpy()\n"  # metrics code
        "    assert predictions.shape == (64,) and len(model.weight.tolist()) == 1\n"
        "    loss.backward(); opt.step(); opt.zero_grad()\n")
    measure_file = tmp_path / "m.json"
    result = run_command([sys.executable, str(script)], measure_file=str(measure_file), fake=True, quiet=True, cwd=str(tmp_path))
    assert result.returncode == 0, result.report
    assert result.measurement.steps == 3 and result.measurement.device == "fake"


@pytest.mark.slow
def test_validation_on_fake_tensors_never_passes_numerics(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(ROOT / "examples", project, ignore=shutil.ignore_patterns("__pycache__"))
    changelog = project / "CHANGELOG.md"
    result = run_cli("validate", "--simulate-gpu", "48MiB", "--backend", "fake", "--kind", "detach_accumulated_loss",
                     "--changelog", str(changelog), "--project", str(project), "--format", "json", "--",
                     sys.executable, "graph_retained.py", cwd=project, timeout=600)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    report = json.loads(result.stdout)
    assert report["backend"] == "fake" and report["baseline"]["oom"] is True and report["baseline"]["device"] == "fake"
    fix = report["fixes"][0]
    assert fix["memory_ok"] is True and fix["peak_after_bytes"] < fix["peak_before_bytes"]
    assert fix["numerics"]["verdict"] == "not_checked" and "fake tensors" in fix["numerics"]["reason"]
    assert fix["accepted"] is False and "numerics not checked" in fix["reason"]
    assert not changelog.exists()  # nothing is written for a fix whose numerics were not checked
    # Progress lines (stderr is a pipe here): one start and one end line per run, with times.
    progress = result.stderr.decode()
    assert "baseline (capped): started" in progress and "fix detach_accumulated_loss: peak" in progress
    assert progress.count(" s] ") >= 6


def test_auto_backend_fakes_only_cards_larger_than_the_host(monkeypatch):
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 16 * 2**30)
    assert backend.choose_backend("auto", 80 * 2**30)[0] is True
    assert "80.00 GiB card" in backend.choose_backend("auto", 80 * 2**30)[1]
    assert backend.choose_backend("auto", 2 * 2**30) == (False, "executed")
    assert backend.choose_backend("auto", None) == (False, "executed")
    assert backend.choose_backend("execute", 80 * 2**30)[0] is False
    assert backend.choose_backend("fake", None)[0] is True


def test_run_reports_steps_while_it_runs(tmp_path):
    script = tmp_path / "steps.py"
    script.write_text(
        "import time, torch\n"
        "p = torch.nn.Parameter(torch.ones(2))\n"
        "opt = torch.optim.SGD([p], lr=0.1)\n"
        "for _ in range(4):\n"
        "    p.sum().backward(); opt.step(); opt.zero_grad(); time.sleep(0.6)\n")
    ticks: list[tuple[float, int]] = []
    result = run_command([sys.executable, str(script)], measure_file=str(tmp_path / "m.json"), quiet=True,
                         on_tick=lambda elapsed, steps: ticks.append((elapsed, steps)), cwd=str(tmp_path))
    assert result.returncode == 0 and result.measurement.steps == 4
    steps = [step for _, step in ticks]
    assert steps == sorted(steps) and 1 <= max(steps) <= 4
    assert len({step for step in steps if step > 0}) >= 2  # seen while running, not only at the end
    assert all(b > a for (a, _), (b, _) in zip(ticks, ticks[1:]))


def test_bars_show_steps_elapsed_time_and_outcome():
    from rich.console import Console

    buffer = io.StringIO()
    with RunBars(Console(file=buffer, force_terminal=True, width=140, color_system=None)) as bars:
        bars.started("baseline (capped)", 3)
        bars.advanced(0.4, 1)
        bars.finished("out of memory (peak 47.23 MiB)", 1)
        bars.started("fix no_grad_eval", None)
        bars.advanced(0.4, 2)
        bars.finished("peak 19.08 MiB", 5)
    final = buffer.getvalue().rsplit("\x1b[2K", 1)[-1]  # the last frame drawn
    assert "baseline (capped)" in final and "1/3 steps" in final and "out of memory (peak 47.23 MiB)" in final
    assert "fix no_grad_eval" in final and "5 steps" in final and "peak 19.08 MiB" in final
    assert final.count("0:00:0") == 2  # an elapsed time per run


def test_lines_report_each_run_with_its_duration():
    stream = io.StringIO()
    lines = RunLines(stream)
    lines.started("baseline", 2)
    lines.finished("peak 1.00 MiB", 2)
    text = stream.getvalue().splitlines()
    assert text[0].endswith("baseline: started (up to 2 steps)")
    assert text[1].startswith("[") and "baseline: peak 1.00 MiB in " in text[1] and text[1].endswith(" s")


def test_run_cli_measures_on_fake_tensors_when_asked(tmp_path):
    measure = tmp_path / "measure.json"
    result = run_cli("run", "--backend", "fake", "--measure", str(measure), "--", sys.executable,
                     str(ROOT / "examples" / "batch_too_large.py"), "--batch-size", str(2**21), "--steps", "1", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert b"measuring with fake tensors" in result.stderr
    recorded = json.loads(measure.read_text())
    assert recorded["device"] == "fake" and recorded["peak_allocated_bytes"] > _host_total_bytes()


def test_an_inherited_fake_flag_does_not_fake_an_executed_run(monkeypatch):
    from oomtriage.run import child_environment

    monkeypatch.setenv("OOMTRIAGE_FAKE", "1")
    arguments = dict(report_dir="r", simulate_gpu=None, max_steps=None, measure_file=None, fingerprint=False, note=None,
                     site_hook=False)
    assert "OOMTRIAGE_FAKE" not in child_environment(**arguments, fake=False)
    assert child_environment(**arguments, fake=True)["OOMTRIAGE_FAKE"] == "1"


def test_progress_never_goes_back_when_a_read_catches_the_file_mid_write(tmp_path):
    """The child rewrites its step count each step; a poll between truncate and write reads an
    empty file, which must not show as a step back to 0."""
    import subprocess
    import threading
    import time

    from oomtriage import run as run_module

    progress = tmp_path / "progress"
    progress.write_text("1")
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1.5)"])

    def rewrite() -> None:
        time.sleep(0.3)
        progress.write_text("")  # caught mid-write for a while
        time.sleep(0.6)
        progress.write_text("2")

    writer = threading.Thread(target=rewrite)
    writer.start()
    ticks: list[int] = []
    returncode, timed_out = run_module._wait(process, None, lambda elapsed, steps: ticks.append(steps), progress)
    writer.join()
    assert (returncode, timed_out) == (0, False)
    assert ticks == sorted(ticks) and ticks[0] == 1 and max(ticks) == 2
