"""A script written for a GPU (hard-coded "cuda", .cuda(), .to(0), torch.cuda events and memory
figures, a checkpoint loaded onto "cuda") runs on the simulated GPU of a CPU-only machine, executed
or on fake tensors, and what torch.cuda tells the script agrees with what oomtriage measures."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import FIXTURES, run_cli

SCRIPT = str(FIXTURES / "scripts" / "gpu_style_train.py")
MIB = 1 << 20

pytestmark = pytest.mark.usefixtures("isolated_home")


def _run(tmp_path, *options: str) -> tuple[dict, dict]:
    measure = tmp_path / "measure.json"
    result = run_cli("run", *options, "--measure", str(measure), "--", sys.executable, SCRIPT, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    seen = json.loads(result.stdout.decode().strip().splitlines()[-1])
    return seen, json.loads(measure.read_text())


def test_a_gpu_script_runs_on_the_simulated_gpu_and_sees_its_figures(tmp_path):
    seen, measured = _run(tmp_path, "--simulate-gpu", "1GiB")
    assert measured["device"] == "simulated" and seen["parameter_device"] == "cpu"
    # The simulated card looks like a GPU to the script; --cpu-visible keeps the CPU path.
    assert seen["name"] == "oomtriage simulated GPU" and seen["is_available"] is True
    assert seen["peak_training"] == measured["peak_allocated_bytes"] > 40 * MIB  # the script's view is ours
    # The script reset its peak: it sees the 4 MiB probe on top of the model, oomtriage keeps the run's peak.
    assert seen["allocated"] + 4 * MIB <= seen["peak_after_reset"] == seen["stats_peak"] < seen["peak_training"]
    assert seen["total"] == 1 << 30 and seen["free"] == seen["total"] - seen["reserved_before_empty"]
    assert seen["reserved_after_empty"] < seen["reserved_before_empty"] <= measured["peak_reserved_bytes"]
    assert seen["milliseconds"] > 0 and "allocated" in seen["summary"] and "capacity:  1024.00 MiB" in seen["summary"]


def test_the_fake_backend_measures_the_gpu_script_as_execution_does(tmp_path):
    _, executed = _run(tmp_path, "--simulate-gpu", "1GiB")
    checkpoint = (tmp_path / "checkpoint.pt").read_bytes()  # written by the executed run
    seen, fake = _run(tmp_path, "--simulate-gpu", "1GiB", "--backend", "fake")
    assert fake["device"] == "fake"
    # The fake run's torch.save wrote nothing over the real checkpoint; its torch.load got new fake tensors.
    assert (tmp_path / "checkpoint.pt").read_bytes() == checkpoint
    assert (fake["peak_allocated_bytes"], fake["peak_reserved_bytes"]) == (executed["peak_allocated_bytes"],
                                                                          executed["peak_reserved_bytes"])
    assert seen["peak_training"] == fake["peak_allocated_bytes"]


def test_a_gpu_script_too_large_for_the_card_ends_in_a_cuda_oom(tmp_path):
    report = tmp_path / "report.json"
    result = run_cli("run", "--simulate-gpu", "32MiB", "--report", str(report), "--", sys.executable, SCRIPT,
                     cwd=tmp_path, timeout=300)
    assert result.returncode == 1
    assert b"CUDA out of memory. Tried to allocate" in result.stderr and b"not compiled with CUDA" not in result.stderr
    triage = json.loads(report.read_text())
    assert triage["detected"] is True and triage["error"]["total_bytes"] == 32 * MIB
    assert {"batch_too_large", "input_size_too_large"} & {cause["id"] for cause in triage["causes"][:2]}
