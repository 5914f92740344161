"""A repro that never ran is reported as that failure (exit 1, its last lines), never as "fits";
a project that cannot be copied honestly is refused in one line; special files are skipped."""

from __future__ import annotations

import os

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("script, expected", [
    (None, "No such file"),
    ("import torch\nx = (\n", "SyntaxError"),
    ("import definitely_not_a_module_here\n", "ModuleNotFoundError"),
    ("raise RuntimeError('boom before any step')\n", "boom before any step"),
])
def test_a_repro_that_fails_before_any_oom_is_that_failure(tmp_path, isolated_home, script, expected):
    if script is not None:
        (tmp_path / "repro.py").write_text(script)
    result = run_cli("validate", "--simulate-gpu", "64MiB", "--", "python3", "repro.py", cwd=tmp_path, timeout=300)
    out = result.stdout.decode()
    assert result.returncode == 1, out + result.stderr.decode()
    assert "failed before any OOM" in out and expected in out
    assert "fits" not in out


def test_project_holding_the_scratch_folder_is_refused(tmp_path, isolated_home):
    (tmp_path / "repro.py").write_text("print('hi')\n")
    (tmp_path / "tmp").mkdir()
    result = run_cli("validate", "--simulate-gpu", "64MiB", "--project", str(tmp_path), "--", "python3", "repro.py",
                     cwd=tmp_path, env={"TMPDIR": str(tmp_path / "tmp")}, timeout=120)
    assert result.returncode == 2 and b"scratch folder" in result.stderr and b"Traceback" not in result.stderr


def test_fifo_in_the_project_is_skipped_with_a_warning(tmp_path, isolated_home):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "repro.py").write_text("print('fits easily')\n")
    result = run_cli("validate", "--simulate-gpu", "64MiB", "--", "python3", "repro.py", cwd=tmp_path, timeout=120)
    out = result.stdout.decode()
    assert result.returncode == 0, out + result.stderr.decode()
    assert "Not copied" in out and "pipe" in out


def test_sigterm_cleans_up_the_scratch_folder_and_the_repro(tmp_path, isolated_home):
    import signal
    import subprocess
    import sys
    import time

    project = tmp_path / "project"
    project.mkdir()
    (project / "slow.py").write_text("import subprocess, sys, time\n"
                                      "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)  # grandchild-marker'])\n"
                                      "time.sleep(300)\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    validate = subprocess.Popen([sys.executable, "-m", "oomtriage", "validate", "--timeout", "200", "--", sys.executable, "slow.py"],
                                cwd=project, env={**os.environ, "TMPDIR": str(scratch)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not list(scratch.glob("oomtriage-validate-*/baseline")):
        time.sleep(0.2)
    time.sleep(3)  # the repro and its child are running
    validate.send_signal(signal.SIGTERM)
    _, stderr = validate.communicate(timeout=60)
    assert validate.returncode == 128 + signal.SIGTERM, stderr.decode()
    assert b"stopped by signal" in stderr and b"Traceback" not in stderr
    assert list(scratch.iterdir()) == []
    time.sleep(1)
    leftover = subprocess.run(["pgrep", "-f", "grandchild-marker"], capture_output=True)
    assert leftover.stdout.strip() == b""


def test_a_step_limit_that_stops_before_the_oom_is_not_fits(tmp_path, isolated_home):
    (tmp_path / "train.py").write_text(
        "import torch\n"
        "model = torch.nn.Linear(64, 64)\n"
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "for step in range(6):\n"
        "    loss = model(torch.randn(8, 64)).pow(2).mean()\n"
        "    optimizer.zero_grad(); loss.backward(); optimizer.step()\n"
        "    if step == 4:  # the evaluation that OOMs comes after a few steps\n"
        "        big = torch.empty(2**28)\n")
    result = run_cli("validate", "--simulate-gpu", "64MiB", "--max-steps", "2", "--", "python3", "train.py", cwd=tmp_path, timeout=300)
    out = result.stdout.decode()
    assert "stopped at the --max-steps limit after 2 step(s)" in out and "fits" not in out
    assert "--max-steps 8" in out


def test_every_kind_called_validatable_has_an_applier():
    from oomtriage.engine.fixes import FIXES_BY_CAUSE, VALIDATABLE_KINDS
    from oomtriage.fixkinds import KINDS
    from oomtriage.fixkinds import advice

    assert VALIDATABLE_KINDS == {kind for kind, entry in KINDS.items() if entry.apply is not None}
    # Every fix the engine hands out is either a catalog kind with an applier or advice, never both.
    advice_kinds = {value.kind for value in vars(advice).values() if hasattr(value, "kind") and hasattr(value, "snippet")}
    handed_out = {fix.kind for fixes in FIXES_BY_CAUSE.values() for fix in fixes}
    assert handed_out <= VALIDATABLE_KINDS | advice_kinds and not (advice_kinds & VALIDATABLE_KINDS)