"""`oomtriage run` and the exception hook in real subprocesses: every example OOMs for its stated
cause on the simulated GPU and fits with its fix; exit codes and tracebacks are untouched."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("isolated_home")]
MANIFEST = json.loads((ROOT / "examples" / "manifest.json").read_text())
KEYS = {"name", "command", "simulate_gpu", "expected_cause", "fix_kind"}

# How each fix kind is applied to an example for this test (issue 5's validator writes these itself).
TEXT_FIXES = {
    "no_grad_eval": ("def evaluate(model, batches):", "@torch.no_grad()\ndef evaluate(model, batches):"),
    "detach_accumulated_loss": ("total_loss += loss\n", "total_loss += loss.item()\n"),
    "sdpa_attention": ("torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v", "F.scaled_dot_product_attention(q, k, v)"),
    "free_references": ("history.append(out)", "history.append(out.detach())"),
}


def test_manifest_shape():
    assert len(MANIFEST) >= 6 and len({entry["expected_cause"] for entry in MANIFEST}) == len(MANIFEST)
    for entry in MANIFEST:
        assert KEYS <= set(entry) and (ROOT / entry["command"][1]).exists()


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["name"] for entry in MANIFEST])
def test_example_ooms_for_its_cause_and_fits_with_its_fix(entry, tmp_path):
    report_file, measure_file = tmp_path / "report.json", tmp_path / "measure.json"
    result = run_cli("run", "--simulate-gpu", entry["simulate_gpu"], "--report", str(report_file),
                     "--measure", str(measure_file), "--", sys.executable, *entry["command"][1:])
    assert result.returncode == 1, result.stderr.decode()[-2000:]
    stderr = result.stderr.decode()
    assert "torch.OutOfMemoryError: CUDA out of memory" in stderr  # the user's traceback, intact
    user_traceback = stderr.split("Traceback")[-1]
    assert "oomtriage/simulate" not in user_traceback  # no simulator frames in it
    assert "_child.py" not in user_traceback and "runpy" not in user_traceback  # nor the wrapper's: as python prints it
    assert user_traceback.splitlines()[1].strip().startswith(f'File "{entry["command"][1]}"')
    report = json.loads(report_file.read_text())
    assert report["causes"][0]["id"] == entry["expected_cause"], report["causes"][:3]
    assert json.loads(measure_file.read_text())["oom"] is True

    fixed = list(entry.get("fixed_command") or entry["command"])
    if entry["fix_kind"] in TEXT_FIXES:
        old, new = TEXT_FIXES[entry["fix_kind"]]
        source = (ROOT / entry["command"][1]).read_text()
        assert old in source
        patched = tmp_path / Path(entry["command"][1]).name
        patched.write_text(source.replace(old, new))
        fixed[1] = str(patched)
    fixed_result = run_cli("run", "--simulate-gpu", entry["simulate_gpu"], "--measure", str(measure_file),
                           "--", sys.executable, *fixed[1:])
    assert fixed_result.returncode == 0, fixed_result.stderr.decode()[-2000:]
    measured = json.loads(measure_file.read_text())
    assert measured["oom"] is False and measured["device"] == "simulated"
    assert measured["peak_reserved_bytes"] <= measured["capacity_bytes"]


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(body))
    return path


def _hooked(script: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    code = f"import oomtriage, runpy, sys; oomtriage.install(); sys.argv = [{str(script)!r}]; runpy.run_path({str(script)!r}, run_name='__main__')"
    import os

    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          cwd=script.parent, env={**os.environ, **(env or {})})


OOM_SCRIPT = """
    import sys
    class OutOfMemoryError(RuntimeError):
        pass
    def step():
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 8.00 GiB of which 1.00 GiB is free. Of the allocated memory 6.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.")
    step()
"""


def test_hook_keeps_traceback_and_exit_code_and_writes_a_report(tmp_path):
    result = _hooked(_script(tmp_path, OOM_SCRIPT))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    summary = [line for line in lines if line.startswith("oomtriage:")]
    assert len(summary) == 1 and "report in" in summary[0]
    assert lines[-1].startswith("OutOfMemoryError: CUDA out of memory")  # the user's error is printed last
    assert "Traceback (most recent call last)" in result.stderr and "in step" in result.stderr
    folder = Path(summary[0].split("report in ")[1])
    report = json.loads((folder / "report.json").read_text())
    assert report["detected"] and report["error"]["requested_bytes"] == 2 * 1024**3
    context = json.loads((folder / "context.json").read_text())
    assert context["runtime"]["pid"] and context["environment"]["source"] == "live"


def test_hook_ignores_other_errors_and_keeps_their_exit_codes(tmp_path):
    result = _hooked(_script(tmp_path, "raise ValueError('not memory')"))
    assert result.returncode == 1 and "oomtriage" not in result.stderr and "ValueError: not memory" in result.stderr
    assert _hooked(_script(tmp_path, "import sys; sys.exit(7)")).returncode == 7
    assert not (tmp_path / "oomtriage-reports").exists()


def test_hook_failure_is_one_line_and_the_error_goes_through(tmp_path):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the report folder should go")
    result = _hooked(_script(tmp_path, OOM_SCRIPT), env={"OOMTRIAGE_REPORT_DIR": str(blocker)})
    assert result.returncode == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("oomtriage:")][0].startswith("oomtriage: could not triage")
    assert result.stderr.splitlines()[-1].startswith("OutOfMemoryError")


def test_hook_in_a_thread(tmp_path):
    script = _script(tmp_path, OOM_SCRIPT.replace("    step()", "    import threading\n    t = threading.Thread(target=step, name='loader')\n    t.start(); t.join()\n    print('main survived')"))
    result = _hooked(script)
    assert result.returncode == 0 and "main survived" in result.stdout
    assert "OOM in thread loader triaged" in result.stderr and "OutOfMemoryError" in result.stderr


def test_hook_can_be_disabled(tmp_path):
    result = _hooked(_script(tmp_path, OOM_SCRIPT), env={"OOMTRIAGE_DISABLE": "1"})
    assert result.returncode == 1 and "oomtriage:" not in result.stderr


def test_two_ranks_write_their_own_reports_at_once(tmp_path):
    script = _script(tmp_path, OOM_SCRIPT)
    import os

    processes = [subprocess.Popen([sys.executable, "-c", f"import oomtriage, runpy; oomtriage.install(); runpy.run_path({str(script)!r}, run_name='__main__')"],
                                  cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                                  env={**os.environ, "RANK": str(rank), "WORLD_SIZE": "2", "OOMTRIAGE_REPORT_DIR": str(tmp_path / "reports")})
                 for rank in range(2)]
    outputs = [process.communicate(timeout=120)[1] for process in processes]
    assert all(process.returncode == 1 for process in processes)
    for rank, stderr in enumerate(outputs):
        lines = [line for line in stderr.splitlines() if line.startswith("oomtriage:")]
        assert len(lines) == 1 and lines[0].startswith(f"oomtriage: [rank {rank}] OOM triaged")
    folders = sorted((tmp_path / "reports").glob("oom-*"))
    assert len(folders) == 2 and {folder.name.rsplit("-", 1)[1] for folder in folders} == {"rank0", "rank1"}
    for folder in folders:
        json.loads((folder / "report.json").read_text())  # whole, valid JSON


def test_install_imports_neither_torch_nor_openai():
    probe = ("import sys, time; start = time.perf_counter(); import oomtriage; oomtriage.install();"
             "print(sorted(m for m in ('torch', 'openai', 'jinja2', 'rich', 'pydantic') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "[]"


def test_run_passes_output_and_exit_code_through(tmp_path):
    script = _script(tmp_path, "import sys\nprint('hello out')\nprint('hello err', file=sys.stderr)\nsys.exit(3)\n")
    result = run_cli("run", "--", sys.executable, str(script))
    assert result.returncode == 3 and result.stdout == b"hello out\n" and result.stderr == b"hello err\n"


def test_run_falls_back_to_the_output_of_a_non_python_command(tmp_path):
    log = tmp_path / "crash.log"
    log.write_text("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n")
    report = tmp_path / "report.json"
    result = run_cli("run", "--report", str(report), "--", "bash", "-c", f"cat {log} >&2; exit 4")
    assert result.returncode == 4
    # ranked from the command's output: a cuBLAS handle PyTorch could not create means the card was full
    causes = [cause["id"] for cause in json.loads(report.read_text())["causes"]]
    assert causes[0] == "batch_too_large" and "cudnn_or_workspace" in causes[:3]


def test_max_steps_stops_cleanly_and_measures(tmp_path):
    measure = tmp_path / "measure.json"
    result = run_cli("run", "--max-steps", "2", "--measure", str(measure), "--", sys.executable,
                     str(ROOT / "examples" / "graph_retained.py"))
    assert result.returncode == 0, result.stderr.decode()[-1500:]
    measured = json.loads(measure.read_text())
    assert measured["steps"] == 2 and measured["exit"] == "max_steps" and measured["device"] == "simulated"
    assert measured["peak_allocated_bytes"] > 0 and measured["peak_reserved_bytes"] >= measured["peak_allocated_bytes"]


def test_run_rejects_a_bad_size_and_a_missing_command():
    assert run_cli("run", "--simulate-gpu", "lots", "--", "true").returncode == 2
    missing = run_cli("run", "--", "no-such-command-xyz")
    assert missing.returncode == 2 and b"command not found" in missing.stderr


def test_ipython_extension_triages_after_showing_the_traceback(tmp_path, monkeypatch, capsys):
    pytest.importorskip("IPython")
    from IPython.testing.globalipapp import get_ipython

    monkeypatch.setenv("OOMTRIAGE_REPORT_DIR", str(tmp_path / "reports"))
    shell = get_ipython()
    shell.run_line_magic("load_ext", "oomtriage")
    shell.run_cell("class OutOfMemoryError(RuntimeError): pass")
    result = shell.run_cell("raise OutOfMemoryError('CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
                            "capacity of 8.00 GiB of which 0 bytes is free.')")
    assert isinstance(result.error_in_exec, RuntimeError)  # the cell still fails, with its own error
    captured = capsys.readouterr()
    assert "OutOfMemoryError" in captured.out + captured.err
    assert "OOM in notebook cell triaged" in captured.err
    assert list((tmp_path / "reports").glob("oom-*/report.json"))
    shell.set_custom_exc((), None)


def test_run_reaches_python_started_by_another_command(tmp_path):
    """torchrun, accelerate or a shell script start Python themselves: the sitecustomize hook reaches it."""
    script = _script(tmp_path, OOM_SCRIPT)
    report = tmp_path / "report.json"
    result = run_cli("run", "--report", str(report), "--", "bash", "-c", f"{sys.executable} {script}")
    assert result.returncode == 1
    assert b"OOM triaged" in result.stderr
    assert b"OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." in result.stderr  # the user's traceback
    assert json.loads(report.read_text())["error"]["requested_bytes"] == 2 * 1024**3
