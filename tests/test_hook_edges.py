"""The hook under awkward exceptions: a __str__ that raises, a source line that looks like an OOM
message, several threads failing in the same second. The user's traceback and exit code stay."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def _run(tmp_path, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / "script.py"
    script.write_text("import oomtriage\noomtriage.install()\n" + body)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "OOMTRIAGE_REPORT_DIR": str(tmp_path / "reports")})


def test_an_exception_whose_str_raises(tmp_path):
    result = _run(tmp_path, "class Weird(MemoryError):\n    def __str__(self):\n        raise RuntimeError('x')\nraise Weird()\n")
    assert result.returncode == 1
    assert "Error in sys.excepthook" not in result.stderr and "Traceback" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("Weird")


def test_the_message_is_the_exceptions_not_a_source_line(tmp_path):
    body = ("msg = 'CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 8.00 GiB total capacity; 7.90 GiB already "
            "allocated; 1.00 MiB free; 7.95 GiB reserved in total by PyTorch)'\n"
            "raise MemoryError(msg)  # CUDA out of memory. Tried to allocate 9.00 GiB (an old note in a comment)\n")
    result = _run(tmp_path, body)
    assert result.returncode == 1
    report = json.loads(next((tmp_path / "reports").glob("oom-*/report.json")).read_text())
    assert report["error"]["requested_bytes"] == 2 * 1024**2


def test_threads_that_fail_in_the_same_second_each_get_a_report(tmp_path):
    body = ("import threading\n"
            "def work():\n    raise MemoryError('CUDA out of memory. Tried to allocate 20.00 MiB')\n"
            "threads = [threading.Thread(target=work) for _ in range(4)]\n"
            "[t.start() for t in threads]\n[t.join() for t in threads]\n")
    result = _run(tmp_path, body)
    assert result.returncode == 0  # threads' exceptions do not change the exit code
    folders = list((tmp_path / "reports").glob("oom-*"))
    assert len(folders) == 4 and all((folder / "report.json").exists() for folder in folders)
    assert result.stderr.count("triaged") == 4
