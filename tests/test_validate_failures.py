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
