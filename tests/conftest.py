from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
LOGS = FIXTURES / "logs"
SHARED = ROOT.parent / "shared"
CASES_FILE = SHARED / "cases" / "dev_cases.jsonl"


def load_cases() -> list[dict]:
    if not CASES_FILE.exists():
        return []
    return [json.loads(line) for line in CASES_FILE.read_text().splitlines() if line.strip()]


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    """Every test that runs the CLI gets an empty home and cache directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OOMTRIAGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return home


def run_cli(*args: str, input: bytes | str | None = None, cwd: Path | None = None, env: dict | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess, as a user runs it."""
    if isinstance(input, str):
        input = input.encode()
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "oomtriage", *args], input=input, capture_output=True,
                          cwd=cwd or ROOT, env=full_env, timeout=timeout)


def analyze_json(*args: str, **kwargs) -> dict:
    result = run_cli("analyze", *args, "--format", "json", **kwargs)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)
