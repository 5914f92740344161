"""The numerics gate on its own: the rule's bound, the bound widened to a measured run-to-run noise,
a reason that names the metric and the size of the difference, and the child's reproducible BLAS."""

from __future__ import annotations

import pytest

from oomtriage.models import Measurement
from oomtriage.run import child_environment
from oomtriage.validate.numerics import NOISE_FACTOR, compare, noise_floor


def _run(losses: list[float], norms: list[float]) -> Measurement:
    return Measurement(device="simulated", peak_allocated_bytes=1, step_losses=losses, grad_norms=norms)


GOLDEN = _run([2.0, 1.5, 1.2], [0.5, 0.4, 0.3])


def test_an_exact_fix_fails_on_a_difference_beyond_the_rule_bound():
    candidate = _run([2.0, 1.5, 1.2], [0.5, 0.4 * (1 + 3e-6), 0.3])
    result = compare(GOLDEN, candidate, "free_references")
    assert result.verdict == "failed" and result.bound == 1e-6 and result.first_step_out_of_bound == 1
    assert result.reason.startswith("step 1: the grad norm differs by 3.0e-06")


def test_measured_noise_widens_the_bound_and_no_further():
    candidate = _run([2.0, 1.5, 1.2], [0.5, 0.4 * (1 + 3e-6), 0.3])
    repeat = _run([2.0, 1.5 * (1 + 5e-7), 1.2], [0.5, 0.4, 0.3])
    noise = noise_floor(GOLDEN, repeat)
    assert noise == pytest.approx(5e-7, rel=1e-3)
    widened = compare(GOLDEN, candidate, "free_references", noise)
    assert widened.verdict == "passed" and widened.bound == pytest.approx(NOISE_FACTOR * noise)
    harmful = _run([2.0, 1.5 * 1.01, 1.2], [0.5, 0.4, 0.3])
    rejected = compare(GOLDEN, harmful, "free_references", noise)
    assert rejected.verdict == "failed" and "differs from itself by 5.0e-07" in rejected.reason


def test_noise_never_tightens_the_rule_bound_and_is_none_without_common_steps():
    assert compare(GOLDEN, GOLDEN, "reduce_batch_size", 0.0).bound == 1e-4
    assert noise_floor(GOLDEN, _run([], [])) is None
    assert compare(GOLDEN, _run([], []), "free_references").verdict == "not_checked"


def test_fingerprint_runs_ask_mkl_for_reproducible_results_unless_the_user_chose(monkeypatch):
    arguments = dict(report_dir="r", simulate_gpu=None, max_steps=None, measure_file=None, note=None, site_hook=False)
    monkeypatch.delenv("MKL_CBWR", raising=False)
    assert child_environment(**arguments, fingerprint=True)["MKL_CBWR"] == "AUTO,STRICT"
    assert "MKL_CBWR" not in child_environment(**arguments, fingerprint=False)
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    assert child_environment(**arguments, fingerprint=True)["MKL_CBWR"] == "COMPATIBLE"


def test_the_gradient_norm_fingerprint_is_float64_and_costs_the_measured_device_nothing():
    import math

    import torch

    from oomtriage import runtime
    from oomtriage.simulate.tracker import SimulatedDevice

    torch.manual_seed(0)
    parameter = torch.nn.Parameter(torch.zeros(1 << 20))
    parameter.grad = torch.randn(1 << 20) * 1e-3
    optimizer = torch.optim.SGD([parameter], lr=0.1)
    expected = math.sqrt(math.fsum(value * value for value in parameter.grad.double().tolist()))
    device = SimulatedDevice(None)
    recorded = runtime.STATE["grad_norms"]
    before = len(recorded)
    with device:
        peak = device.stats.peak_allocated
        runtime._record_grad_norm(optimizer)
        assert device.stats.peak_allocated == peak  # a squared copy of the 4 MiB gradient was not counted
    del recorded[before + 1:]
    assert abs(recorded.pop() - expected) / expected < 1e-12  # float32 summation would be ~1e-7 off


def test_a_checkpoint_is_loaded_onto_the_cpu_whatever_way_its_location_is_given():
    from oomtriage.simulate.cuda_on_cpu import _load_on_cpu

    load = _load_on_cpu(lambda *args, **kwargs: (args, kwargs))
    assert load("a.pt") == (("a.pt",), {"map_location": "cpu"})
    assert load("a.pt", map_location="cuda:1", weights_only=True) == (("a.pt",), {"map_location": "cpu", "weights_only": True})
    marker = object()  # a positional pickle_module after map_location is kept
    assert load("a.pt", "cuda", marker) == (("a.pt", "cpu", marker), {})
    remap = {"cuda:1": "cuda:0"}  # the user's own mapping is left alone
    assert load("a.pt", map_location=remap) == (("a.pt",), {"map_location": remap})


def test_widening_stops_at_the_next_looser_rule_and_a_too_noisy_repro_is_not_checked():
    # 16% run-to-run noise: a "precision-preserving" fix that changed the losses by 44% must not pass.
    noisy = noise_floor(GOLDEN, _run([2.0 * 1.16, 1.5, 1.2], [0.5, 0.4, 0.3]))
    changed = _run([2.0 * 1.44, 1.5 * 1.44, 1.2 * 1.44], [0.5, 0.4, 0.3])
    verdict = compare(GOLDEN, changed, "free_references", noisy)
    assert verdict.verdict == "not_checked" and "seed it" in verdict.reason and "differs from itself by" in verdict.reason
    # Noise that widens an exact bound up to the reordered one (1e-4) is still judged.
    mild = compare(GOLDEN, _run([2.0, 1.5 * (1 + 5e-5), 1.2], [0.5, 0.4, 0.3]), "free_references", 8e-6)
    assert mild.verdict == "passed" and mild.bound == pytest.approx(8e-5)
    assert compare(GOLDEN, GOLDEN, "free_references", 2e-5).verdict == "not_checked"  # 10x would pass 2e-4 > 1e-4
