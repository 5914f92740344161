"""``oomtriage scan``: a folder of logs of every fixture format, non-OOM logs and unreadable inputs,
through the real CLI: one result per input, nothing lost, a clear status for each bad one."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from browser import load
from conftest import ROOT, run_cli

LOGS = ROOT / "tests" / "fixtures" / "logs"
pytestmark = pytest.mark.slow


@pytest.fixture
def folder(tmp_path):
    logs = tmp_path / "job-array"
    shutil.copytree(LOGS, logs / "logs")
    (logs / "nested" / "deeper").mkdir(parents=True)
    shutil.copy(LOGS / "pytorch_c_reserved.log", logs / "nested" / "deeper" / "rank3.log")
    (logs / "binary.bin").write_bytes(b"\x00\x01\x02PNG\x00" * 100)
    (logs / "empty.log").write_text("")
    (logs / "dangling.log").symlink_to(tmp_path / "gone.log")
    (logs / "snapshot.pickle").write_bytes(b"\x80\x04\x95 not a pickle at all")
    (logs / ".hidden").write_text("CUDA out of memory.")  # dot files are skipped, as a shell glob skips them
    return logs


def _inputs(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if (p.is_file() or p.is_symlink()) and not p.name.startswith("."))


def test_scan_streams_one_json_object_per_input(folder):
    result = run_cli("scan", str(folder), "--format", "jsonl", "--jobs", "2", timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert [record["input"] for record in records] == _inputs(folder)  # every input once, in order
    by_name = {Path(record["input"]).name: record for record in records}
    for name in os.listdir(LOGS):
        expected = "no_oom" if name.startswith(("not_oom", "tf_not_a_failure")) else "oom"
        assert by_name[name]["status"] == expected, (name, by_name[name])
        assert expected == "no_oom" or by_name[name]["top_cause"]
    assert by_name["binary.bin"]["status"] == "error" and "binary" in by_name["binary.bin"]["error"]
    assert by_name["dangling.log"]["status"] == "error" and "no such file" in by_name["dangling.log"]["error"]
    assert by_name["snapshot.pickle"]["status"] == "error" and "snapshot" in by_name["snapshot.pickle"]["error"]
    assert by_name["empty.log"]["status"] in ("no_oom", "error")
    assert by_name["rank3.log"]["top_cause"] == by_name["pytorch_c_reserved.log"]["top_cause"]
    summary = result.stderr.decode()
    assert f"{len(records)} inputs:" in summary and "causes (top cause per OOM):" in summary


def test_scan_text_and_glob(folder):
    result = run_cli("scan", str(folder / "logs" / "pytorch_*.log"), str(folder / "nested" / "**" / "*.log"), "-j", "1")
    assert result.returncode == 0
    lines = result.stdout.decode().splitlines()
    first_blank = lines.index("")
    expected = len(list((folder / "logs").glob("pytorch_*.log"))) + 1
    assert first_blank == expected and all(": OOM " in line for line in lines[:first_blank])
    assert lines[first_blank + 1].startswith(f"{expected} inputs: {expected} oom")
    assert run_cli("scan", str(folder / "nothing-*.log")).returncode == 2  # a glob that matches nothing is an error


def test_scan_html_links_each_report(folder, tmp_path):
    page = tmp_path / "out" / "scan.html"
    page.parent.mkdir()
    result = run_cli("scan", str(folder / "logs"), "--format", "html", "-o", str(page), "-j", "2", timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    loaded = load(page, tmp_path / "scan.png", height=3000)
    assert loaded.errors == [], loaded.errors
    assert loaded.count(r'class="main-svg"') >= 3  # causes, GPUs, frameworks
    links = [link for link in __import__("re").findall(r'href="([^"]+\.html)"', loaded.dom)]
    assert len(links) == len(os.listdir(LOGS))
    for link in links:
        report = page.parent / link
        assert report.is_file() and "Likely causes" in report.read_text() or "No out-of-memory" in report.read_text()
    one = load(page.parent / links[0], tmp_path / "one.png")
    assert one.errors == []


def test_analyze_of_several_logs_as_html_holds_each_report(tmp_path):
    page = tmp_path / "two.html"
    result = run_cli("analyze", str(LOGS / "pytorch_hip.log"), str(LOGS / "tf2_fit.log"), "--format", "html", "-o", str(page))
    assert result.returncode == 0, result.stderr.decode()
    loaded = load(page, tmp_path / "two.png")
    assert loaded.errors == [] and loaded.count(r'id="report-') == 2
    assert loaded.count(r'href="#report-') == 2 and "HIP out of memory" in loaded.dom and "tensorflow" in loaded.dom
