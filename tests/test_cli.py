"""The real CLI as a user runs it: files, stdin, notes, formats, the installed entry point."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import LOGS, ROOT, analyze_json, run_cli

pytestmark = pytest.mark.usefixtures("isolated_home")


def test_stdin_and_file_give_the_same_report():
    text = (LOGS / "pytorch_d2_expandable.log").read_bytes()
    from_stdin = analyze_json("-", input=text)
    from_file = analyze_json(str(LOGS / "pytorch_d2_expandable.log"))
    assert from_stdin["error"] == from_file["error"] and from_stdin["causes"] == from_file["causes"]


def test_note_steers_the_ranking():
    log = str(LOGS / "pytorch_a_thc.log")
    plain = analyze_json(log)
    validation = analyze_json(log, "--note", "training is fine but it dies during validation, memory climbing every batch")
    assert plain["causes"][0]["id"] != "missing_no_grad"
    assert validation["causes"][0]["id"] == "missing_no_grad"
    assert validation["phase"] == "evaluation"
    assert any("validation" in item for item in validation["causes"][0]["evidence"])


def test_note_with_sequence_length_points_at_attention(tmp_path):
    log = tmp_path / "attn.log"
    # 8 heads x 8192 x 8192 fp32 scores = 2 GiB, on a 24 GiB card
    log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
                   "23.65 GiB of which 1.10 GiB is free. Of the allocated memory 21.80 GiB is allocated by PyTorch, and "
                   "200.00 MiB is reserved by PyTorch but unallocated.\n")
    report = analyze_json(str(log), "--note", "fine-tuning a llama model, seq len 8192")
    assert report["causes"][0]["id"] == "attention_quadratic"
    assert any("8192" in item for item in report["causes"][0]["evidence"])


def test_every_cause_has_concrete_fixes():
    report = analyze_json(str(LOGS / "pytorch_d1_capacty.log"))
    for cause in report["causes"]:
        assert cause["fixes"], cause["id"]
        assert all(fix["title"] and fix["how"] and fix["kind"] for fix in cause["fixes"])
    frag = next(c for c in report["causes"] if c["id"] == "fragmentation")
    assert frag["fixes"][0]["env"] == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_text_and_markdown_formats(tmp_path):
    text = run_cli("analyze", str(LOGS / "pytorch_c_reserved.log"))
    assert text.returncode == 0 and b"Likely causes" in text.stdout and b"What the numbers say" in text.stdout
    out = tmp_path / "report.md"
    result = run_cli("analyze", str(LOGS / "pytorch_c_reserved.log"), "--format", "markdown", "-o", str(out))
    assert result.returncode == 0 and result.stdout == b""
    markdown = out.read_text()
    assert markdown.startswith("# oomtriage report") and "## Likely causes" in markdown and "```python" in markdown


def test_json_is_one_object_with_the_documented_fields():
    report = analyze_json(str(LOGS / "tf_eager.log"))
    assert {"detected", "error", "causes", "engine", "schema_version"} <= set(report)
    assert report["engine"]["used"] == "rules" and report["engine"]["fallback_reason"] is None
    for cause in report["causes"]:
        assert {"id", "title", "confidence", "evidence", "fixes"} <= set(cause)


def test_analysis_path_imports_neither_torch_nor_openai():
    probe = ("import sys; from oomtriage.cli import app; from typer.testing import CliRunner;"
             f"r = CliRunner().invoke(app, ['analyze', {str(LOGS / 'pytorch_d1_capacty.log')!r}]);"
             "assert r.exit_code == 0, r.output;"
             "print(sorted(m for m in ('torch', 'openai', 'jinja2', 'tiktoken') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_version_and_help():
    assert run_cli("--version").stdout.decode().strip()
    help_text = run_cli("analyze", "--help").stdout.decode()
    assert "--note" in help_text and "--format" in help_text


def test_console_script_matches_python_m():
    exe = shutil.which("oomtriage")
    if exe is None:
        pytest.skip("the oomtriage console script is not on PATH")
    result = subprocess.run([exe, "analyze", str(LOGS / "pytorch_hip.log"), "--format", "json"], capture_output=True, timeout=60)
    assert json.loads(result.stdout) == analyze_json(str(LOGS / "pytorch_hip.log"))


def test_wheel_installs_collectors_and_prompts_inside_the_package(tmp_path):
    pytest.importorskip("build")
    # A clean copy: setuptools reuses a stale build/ folder, which would hide a package left out of pyproject.toml.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", ".git", "__pycache__", ".pytest_cache"))
    result = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    wheel = next(tmp_path.glob("oomtriage-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    # Every module of the source tree, so a new subpackage missing from pyproject.toml fails here.
    sources = [path.relative_to(ROOT).as_posix() for path in (ROOT / "oomtriage").rglob("*.py")]
    sources += ["oomtriage/" + path.relative_to(ROOT).as_posix() for path in (ROOT / "collectors").rglob("*.py")]
    assert len(sources) > 50
    for module in [*sources, "oomtriage/taxonomy.md"]:
        assert module in names, module
    assert any(name.startswith("oomtriage/prompts/") and name.endswith(".j2") for name in names)
    assert not any(name.startswith(("collectors/", "prompts/")) for name in names)


def test_two_logs_are_two_failures(tmp_path):
    import json as _json

    from tests.conftest import LOGS

    result = run_cli("analyze", str(LOGS / "pytorch_c_reserved.log"), str(LOGS / "tf2_fit.log"), "--format", "json")
    assert result.returncode == 0, result.stderr.decode()
    reports = _json.loads(result.stdout)["reports"]
    assert [entry["input"].rsplit("/", 1)[-1] for entry in reports] == ["pytorch_c_reserved.log", "tf2_fit.log"]
    assert [entry["report"]["error"]["framework"] for entry in reports] == ["pytorch", "tensorflow"]
    text = run_cli("analyze", str(LOGS / "pytorch_c_reserved.log"), str(LOGS / "tf2_fit.log")).stdout.decode()
    assert text.startswith("2 logs, each triaged on its own") and "== " in text


def test_a_finished_analysis_does_not_load_the_validation_loop():
    """Every normal exit is a SystemExit: the handler for stop signals must not import validate's loop
    (and the runner, the timeline, the program readers) on the way out."""
    probe = ("import sys; from oomtriage.cli import main; sys.argv = ['oomtriage', 'analyze', "
             f"{str(LOGS / 'pytorch_d1_capacty.log')!r}, '-f', 'json'];\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "sys.stderr.write(repr(sorted(m for m in ('oomtriage.validate.loop', 'oomtriage.run', 'oomtriage.timeline', 'plotly') "
             "if m in sys.modules)))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "[]"
