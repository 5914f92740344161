"""The simulated GPU: the allocator model's rules, a real torch training step under the tracker,
and agreement with PyTorch's own profiler accounting."""

from __future__ import annotations

import pytest

from oomtriage.simulate.allocator import (K_LARGE_BUFFER, K_SMALL_BUFFER, CachingAllocatorModel, SimulatedOutOfMemory,
                                          allocation_size, round_size)

MIB = 1 << 20


def test_rounding_and_segment_sizes_follow_the_allocator():
    assert round_size(1) == 512 and round_size(513) == 1024
    assert allocation_size(100) == K_SMALL_BUFFER           # small pool: 2 MiB segments
    assert allocation_size(3 * MIB) == K_LARGE_BUFFER       # 1-10 MiB: a 20 MiB segment
    assert allocation_size(15 * MIB + 1) == 16 * MIB        # larger: rounded to 2 MiB


def test_blocks_are_split_reused_and_merged():
    model = CachingAllocatorModel(None)
    model.malloc(1, 3 * MIB)
    model.malloc(2, 15 * MIB)  # fits in the 17 MiB left of the first 20 MiB segment
    assert model.stats.reserved == 20 * MIB and model.stats.segments == 1
    model.free(1)
    model.free(2)
    assert model.stats.allocated == 0
    model.malloc(3, 19 * MIB)  # the merged free block serves it: no new segment
    assert model.stats.reserved == 20 * MIB


def test_capacity_releases_cached_segments_then_raises():
    model = CachingAllocatorModel(40 * MIB)
    model.malloc(1, 30 * MIB)
    model.free(1)
    model.malloc(2, 34 * MIB)  # the free 30 MiB segment is released and the retry succeeds
    assert model.stats.num_alloc_retries == 1 and model.stats.reserved == 34 * MIB
    with pytest.raises(SimulatedOutOfMemory) as raised:
        model.malloc(3, 12 * MIB)
    assert raised.value.requested == 12 * MIB and model.stats.num_ooms == 1


def test_expandable_segments_do_not_fragment():
    native, expandable = CachingAllocatorModel(None), CachingAllocatorModel(None, expandable_segments=True)
    for model in (native, expandable):
        for key in range(20):
            model.malloc(key, 3 * MIB)  # each fragment of a 20 MiB segment...
        for key in range(0, 20, 2):
            model.free(key)
        model.malloc(100, 25 * MIB)  # ...cannot serve a larger request natively
    assert expandable.stats.peak_reserved < native.stats.peak_reserved


def test_empty_cache_and_a_scripts_peak_reset_leave_the_run_long_peaks_alone():
    for expandable in (False, True):
        model = CachingAllocatorModel(None, expandable_segments=expandable)
        model.malloc(1, 30 * MIB)
        model.malloc(2, 1 * MIB)
        model.free(1)
        model.reset_window_peaks()
        assert model.stats.window_peak_allocated == model.stats.allocated < 2 * MIB
        model.empty_cache()  # the freed 30 MiB goes back; the 1 MiB block's segment stays
        assert model.stats.reserved == K_SMALL_BUFFER
        assert model.stats.peak_allocated >= 31 * MIB and model.stats.peak_reserved >= 32 * MIB


def test_real_training_step_raises_torch_oom_in_pytorch_format():
    torch = pytest.importorskip("torch")
    from oomtriage.collectors.oom_messages import find_messages
    from oomtriage.simulate.tracker import SimulatedDevice

    device = SimulatedDevice(24 * MIB)
    with pytest.raises(torch.OutOfMemoryError) as raised:
        with device:
            model = torch.nn.Sequential(torch.nn.Linear(256, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 10))
            optimizer = torch.optim.AdamW(model.parameters())
            for _ in range(3):
                model(torch.randn(1024, 256)).sum().backward()
                optimizer.step()
    error = find_messages(str(raised.value))[0].error
    assert error.format == "pytorch_sentence" and error.total_bytes == 24 * MIB
    assert error.requested_bytes and error.allocated_bytes and error.reserved_unallocated_bytes is not None
    assert device.last_oom["stats"]["num_ooms"] == 1


def test_peak_matches_memtracker_on_an_example():
    """PyTorch's own tensor accounting (MemTracker) over a whole example script, several iterations."""
    pytest.importorskip("torch")
    import runpy
    import sys

    from oomtriage.simulate.reference import iteration_tolerant_memtracker, memtracker_peak_bytes
    from oomtriage.simulate.tracker import SimulatedDevice
    from tests.conftest import ROOT

    tracker, device = iteration_tolerant_memtracker(), SimulatedDevice(None)
    script = str(ROOT / "examples" / "reference_leak.py")
    saved_argv = sys.argv
    sys.argv = [script, "--steps", "4"]
    try:
        with device, tracker:
            runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = saved_argv
    reference = memtracker_peak_bytes(tracker)
    assert device.stats.peak_requested == reference
    assert device.stats.peak_allocated == pytest.approx(reference, rel=0.01)
