"""Bad input gets one clear line and exit code 2, or detected: false — never a traceback."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest

from tests.conftest import LOGS, ROOT, run_cli

pytestmark = pytest.mark.usefixtures("isolated_home")


def _one_line_error(result):
    assert result.returncode == 2
    err = result.stderr.decode().strip()
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1 and err.startswith("oomtriage: ")
    return err


def test_missing_file(tmp_path):
    assert "no such file" in _one_line_error(run_cli("analyze", str(tmp_path / "nope.log")))


def test_directory(tmp_path):
    assert "directory" in _one_line_error(run_cli("analyze", str(tmp_path)))


def test_empty_file(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert "empty" in _one_line_error(run_cli("analyze", str(empty)))


def test_empty_stdin():
    assert "empty" in _one_line_error(run_cli("analyze", "-", input=b""))


def test_empty_stdin_with_a_note_ranks_the_note_as_suspected():
    # A job killed without printing anything: the note is all the user has, and it is still ranked.
    result = run_cli("analyze", "-", "--format", "json", "--note",
                     "the run dies with CUDA out of memory on the first step at batch size 64", input=b"")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["detected"] is False and report["suspected"] is True
    assert report["causes"] and report["causes"][0]["id"] == "batch_too_large"


def test_empty_stdin_with_a_blank_note_is_still_empty():
    assert "empty" in _one_line_error(run_cli("analyze", "-", "--note", "   ", input=b""))


def test_binary_file(tmp_path):
    binary = tmp_path / "core.bin"
    binary.write_bytes(bytes(range(256)) * 64)
    assert "binary" in _one_line_error(run_cli("analyze", str(binary)))


def test_non_utf8_log_is_still_analysed(tmp_path):
    log = tmp_path / "latin1.log"
    log.write_bytes("Fehler: Ger\xe4t voll\n".encode("latin-1") + (LOGS / "pytorch_c_reserved.log").read_bytes())
    result = run_cli("analyze", str(log), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["error"]["format"] == "pytorch_parenthesised"


def test_truncated_message_keeps_what_it_has(tmp_path):
    log = tmp_path / "cut.log"
    log.write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capac")
    report = json.loads(run_cli("analyze", str(log), "--format", "json").stdout)
    assert report["detected"] is True
    assert report["error"]["requested_bytes"] == 2 * 1024**3
    assert report["error"]["total_bytes"] is None


def test_log_without_oom_is_not_detected(tmp_path):
    log = tmp_path / "fine.log"
    log.write_text("epoch 1 loss 0.3\nepoch 2 loss 0.2\ndone\n")
    result = run_cli("analyze", str(log), "--format", "json")
    assert result.returncode == 0
    report = json.loads(result.stdout)
    assert report["detected"] is False and report["causes"] == []


def test_several_ooms_report_the_first_and_count_the_rest(tmp_path):
    first = (LOGS / "pytorch_c_reserved.log").read_text()
    second = (LOGS / "pytorch_d2_expandable.log").read_text()
    log = tmp_path / "many.log"
    log.write_text(first + "retrying...\n" * 3000 + second + "retrying...\n" * 3000 + second)
    report = json.loads(run_cli("analyze", str(log), "--format", "json").stdout)
    assert report["error"]["requested_bytes"] == 152 * 1024**2
    assert report["additional_ooms"] == 2


def test_large_log_is_streamed_not_read_whole(tmp_path):
    """A 256 MiB log is analysed with far less memory than its size (the scan keeps windows only)."""
    sys.path.insert(0, str(ROOT / "bench"))
    from make_big_log import write_log

    big = tmp_path / "big.log"
    write_log(str(big), 256)
    probe = (
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss across fork+exec from the (torch-sized) pytest.
        "import re, json; from oomtriage.api import analyze_inputs;"
        f"r = analyze_inputs([{str(big)!r}]);"
        "hwm = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1));"
        "print(json.dumps({'rss': hwm, 'req': r.error.requested_bytes}))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    measured = json.loads(result.stdout)
    assert measured["req"] == 20 * 1024**2
    assert measured["rss"] < 200 * 1024  # KiB: well under the 256 MiB file
    assert resource  # the parent process is untouched either way


def test_unwritable_output(tmp_path):
    result = run_cli("analyze", str(LOGS / "pytorch_c_reserved.log"), "-o", str(tmp_path / "missing" / "r.json"))
    assert "cannot write" in _one_line_error(result)
