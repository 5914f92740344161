"""The CUDA side of the hook, against a stand-in for torch (no GPU here): the OOM observer keeps
memory_summary() in the context and the report, digests only the failing device's part of the
snapshot, and history recording is asked for only when the user wants it."""

from __future__ import annotations

import types

from oomtriage import capture, hook
from oomtriage.collectors.snapshot import digest_snapshot


def _snapshot():
    def segment(device, size):
        return {"device": device, "total_size": size, "active_size": size,
                "blocks": [{"size": size, "state": "active_allocated", "frames": [{"filename": "train.py", "line": 3, "name": "f"}]}]}
    return {"segments": [segment(0, 2**30), segment(1, 2**21)],
            "device_traces": [[], [{"action": "oom", "size": 2**25, "device_free": 2**20}]]}


class FakeCuda:
    def __init__(self):
        self.observer = None
        self.history_calls = []
        self.memory = types.SimpleNamespace(_snapshot=_snapshot, _record_memory_history=lambda **kw: self.history_calls.append(kw))

    def is_available(self):
        return True

    def memory_stats(self, device=None):
        return {"allocated_bytes.all.current": 2**21, "reserved_bytes.all.current": 2**22, "num_ooms": 1}

    def memory_summary(self, device=None):
        return f"|  PyTorch CUDA memory summary, device ID {device}  |"


def _fake_torch():
    cuda = FakeCuda()
    torch = types.SimpleNamespace(cuda=cuda, _C=types.SimpleNamespace())
    torch._C._cuda_attach_out_of_memory_observer = lambda observer: setattr(cuda, "observer", observer)
    return torch


def test_only_the_failing_device_is_digested():
    digest = digest_snapshot(_snapshot(), device=1)
    assert digest.segments == 1 and digest.reserved_bytes == 2**21 and digest.oom_requested_bytes == 2**25
    assert digest_snapshot(_snapshot()).segments == 2


def test_observer_keeps_the_summary_and_the_failing_devices_snapshot():
    torch = _fake_torch()
    assert capture.attach_cuda_observer(torch)
    torch.cuda.observer(1, 2**25, 2**22, 2**20)
    try:
        context = capture.context_from_exception(MemoryError("CUDA out of memory. Tried to allocate 32.00 MiB"), None)
    finally:
        capture._OBSERVED.clear()
    assert context.memory_summary and "device ID 1" in context.memory_summary
    assert context.snapshot.segments == 1 and context.snapshot.reserved_bytes == 2**21
    from oomtriage.engine import triage

    assert triage(context).memory_summary == context.memory_summary


def test_history_is_recorded_only_when_asked(monkeypatch):
    torch = _fake_torch()
    monkeypatch.delenv("OOMTRIAGE_RECORD_HISTORY", raising=False)
    monkeypatch.setitem(hook._state, "record_history", None)
    hook._on_torch_imported(torch)
    assert torch.cuda.history_calls == []
    monkeypatch.setenv("OOMTRIAGE_RECORD_HISTORY", "1")
    hook._on_torch_imported(torch)
    assert torch.cuda.history_calls == [{"max_entries": capture.HISTORY_ENTRIES}]
