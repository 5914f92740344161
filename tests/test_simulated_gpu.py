"""The simulated GPU as a script sees it: torch.cuda says there is a card (unless --cpu-visible),
attention with dropout is measured as the CUDA kernels hold it, each loss is recorded once with the
gradient norm before clipping, --max-steps stops hand-written loops, OOMs a script catches count,
and fake tensors can be formatted."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import FIXTURES, run_cli

SCRIPTS = FIXTURES / "scripts"
MIB = 1 << 20

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]


def _run(tmp_path, script: str, *options: str, args: tuple[str, ...] = (), env: dict | None = None):
    measure = tmp_path / f"{script}.measure.json"
    result = run_cli("run", *options, "--measure", str(measure), "--", sys.executable, str(SCRIPTS / script), *args,
                     cwd=tmp_path, timeout=300, env=env)
    return result, (json.loads(measure.read_text()) if measure.exists() else None)


def test_the_script_sees_a_gpu_and_takes_its_gpu_path(tmp_path):
    result, _ = _run(tmp_path, "gpu_paths.py", "--simulate-gpu", "2GiB")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    seen = json.loads(result.stdout.decode().splitlines()[-1])
    assert seen["is_available"] is True and seen["count"] == 1 and seen["total"] == 2 << 30
    assert seen["bf16"] is True and seen["dtype"] == "torch.bfloat16" and seen["capability"] == [8, 0]
    assert seen["accelerator"] == "cuda" and seen["scaler_enabled"] is True


def test_cpu_visible_keeps_the_cpu_path(tmp_path):
    result, _ = _run(tmp_path, "gpu_paths.py", "--simulate-gpu", "2GiB", "--cpu-visible")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    seen = json.loads(result.stdout.decode().splitlines()[-1])
    assert seen["is_available"] is False and seen["dtype"] == "torch.float16" and seen["scaler_enabled"] is False


def test_attention_dropout_is_measured_as_the_cuda_kernel_holds_it(tmp_path):
    """The CPU's math fallback keeps batch x heads x T x T probabilities and masks (8 x 4 x 512 x 512:
    32 MiB each); the CUDA kernels keep none of them."""
    _, without = _run(tmp_path, "attention_dropout.py", "--simulate-gpu", "4GiB", args=("0.0",))
    _, with_dropout = _run(tmp_path, "attention_dropout.py", "--simulate-gpu", "4GiB", args=("0.2",))
    scores = 8 * 4 * 512 * 512 * 4
    # Without dropout the CPU already runs a flash kernel; with it, the peak is within a tenth of the
    # scores of that (the log-sum-exp and float32 gradients), not several times the scores above it.
    assert abs(with_dropout["peak_allocated_bytes"] - without["peak_allocated_bytes"]) < scores // 10


def test_each_loss_is_recorded_once_with_the_norm_before_clipping(tmp_path):
    result = run_cli("validate", "--simulate-gpu", "2GiB", "--format", "json", "--", sys.executable,
                     str(SCRIPTS / "gpu_paths.py"), cwd=SCRIPTS, timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    baseline = json.loads(result.stdout)["baseline"]
    assert len(baseline["losses"]) == 3 and len(baseline["step_losses"]) == 3
    assert all(norm > 1e-2 for norm in baseline["grad_norms"])  # the clip value is 1e-3
    assert baseline["steps"] == 3 and baseline["backward_calls"] == 3


def test_max_steps_counts_backward_calls_without_an_optimizer(tmp_path):
    result, measured = _run(tmp_path, "manual_sgd.py", "--simulate-gpu", "1GiB", "--max-steps", "3")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert measured["exit"] == "max_steps" and measured["steps"] == 3 and measured["steps_counted_by"] == "backward"
    assert b"done" not in result.stdout  # stopped in the first epoch, not after both
    assert b"counted backward() calls" in result.stderr


def test_ooms_the_script_catches_are_counted(tmp_path):
    result, measured = _run(tmp_path, "catches_oom.py", "--simulate-gpu", "48MiB")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert b"fitted batch" in result.stdout and measured["oom"] is False and measured["ooms_raised"] >= 1
    assert b"caught them itself" in result.stderr


def test_fake_tensors_survive_formatting(tmp_path):
    result, measured = _run(tmp_path, "gpu_paths.py", "--simulate-gpu", "2GiB", "--backend", "fake")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    seen = json.loads(result.stdout.decode().splitlines()[-1])
    assert seen["formatted"] == "1.0000" and measured["device"] == "fake"
