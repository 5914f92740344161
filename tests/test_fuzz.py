"""A fuzzer over every input kind through the real entry point (analyze_inputs, then every
renderer): a malformed input gives a report or oomtriage's one-line error, never another
exception, within a per-case time bound. Fixed seeds; the larger run is bench/fuzz.py."""

from __future__ import annotations

import time

import pytest

from tests.fuzz_inputs import cases, run_case

SEEDS = [11, 23, 47]
CASES_PER_SEED = 100
SECONDS_PER_CASE = 10.0  # generous for a shared 2-core machine; typical cases take milliseconds


@pytest.mark.parametrize("seed", SEEDS)
def test_malformed_inputs_never_raise_and_never_hang(seed, tmp_path):
    failures = []
    for kind, name, data in cases(seed, CASES_PER_SEED):
        path = tmp_path / name
        path.write_bytes(data)
        started = time.perf_counter()
        try:
            run_case(path)
        except Exception as error:  # noqa: BLE001 - the point of the test
            failures.append(f"{kind} {name}: {type(error).__name__}: {str(error)[:160]}")
        elapsed = time.perf_counter() - started
        if elapsed > SECONDS_PER_CASE:
            failures.append(f"{kind} {name}: {elapsed:.1f} s")
        path.unlink()
    assert not failures, "\n".join(failures[:20])


def test_memory_stays_bounded_over_many_malformed_inputs():
    """The fuzz run in its own process (no torch imported): peak RSS bounded, no crash."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, str(root / "bench" / "fuzz.py"), "--cases", "300", "--seed", "5"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = result.stdout.splitlines()[0]
    assert "crashes 0;" in summary, result.stdout
    rss = float(summary.rsplit("peak RSS ", 1)[1].split()[0])
    assert rss < 400, summary  # MiB
