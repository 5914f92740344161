"""Collectors on real inputs: snapshots (and hostile pickles), memory stats, profiler output from a
real torch run, environments, tracebacks with the user's source lines."""

from __future__ import annotations

import json
import pickle
import textwrap

import pytest

from oomtriage.collectors.environment import collect_live_environment, parse_environment_text
from oomtriage.collectors.memory_stats import parse_memory_stats, parse_memory_summary
from oomtriage.collectors.profiler import parse_chrome_trace, parse_profiler_table
from oomtriage.collectors.snapshot import digest_snapshot, load_snapshot
from oomtriage.collectors.traceback import parse_traceback
from oomtriage.context import build_context
from oomtriage.errors import SnapshotError
from oomtriage.models import TriageContext
from tests.conftest import LOGS, run_cli

MIB = 1024**2


def _snapshot() -> dict:
    frames = [{"filename": "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", "line": 125, "name": "forward"},
              {"filename": "/home/me/train.py", "line": 42, "name": "step"}]
    return {
        "segments": [
            {"address": 0, "total_size": 100 * MIB, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
             "allocated_size": 60 * MIB, "active_size": 60 * MIB,
             "blocks": [{"size": 60 * MIB, "requested_size": 60 * MIB, "address": 0, "state": "active_allocated", "frames": frames},
                        {"size": 30 * MIB, "requested_size": 0, "address": 1, "state": "inactive", "frames": []},
                        {"size": 10 * MIB, "requested_size": 0, "address": 2, "state": "inactive", "frames": []}]},
        ],
        "device_traces": [[{"action": "alloc", "addr": 0, "size": 60 * MIB, "stream": 0, "frames": frames},
                           {"action": "oom", "size": 64 * MIB, "device_free": 2 * MIB, "stream": 0, "frames": frames}]],
    }


def test_snapshot_digest(tmp_path):
    path = tmp_path / "snap.pickle"
    path.write_bytes(pickle.dumps(_snapshot()))
    digest = digest_snapshot(load_snapshot(path))
    assert digest.reserved_bytes == 100 * MIB and digest.allocated_bytes == 60 * MIB
    assert digest.inactive_bytes == 40 * MIB and digest.largest_free_block_bytes == 30 * MIB
    assert digest.fragmentation == pytest.approx(0.25)
    assert digest.top_sites[0].location == "/home/me/train.py:42 in step"
    assert digest.oom_requested_bytes == 64 * MIB and digest.oom_device_free_bytes == 2 * MIB


class _Evil:
    def __reduce__(self):
        import os

        return (os.system, ("touch PWNED",))


def test_hostile_pickle_is_refused_without_running(tmp_path):
    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "x": _Evil()}))
    with pytest.raises(SnapshotError, match="refused"):
        load_snapshot(path)
    assert not (tmp_path / "PWNED").exists()
    result = run_cli("analyze", str(path), cwd=tmp_path)
    assert result.returncode == 2 and b"refused" in result.stderr and b"Traceback" not in result.stderr
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("data", [b"\x80\x04\x95", pickle.dumps([1, 2, 3]), pickle.dumps({"no": "segments"})])
def test_malformed_snapshot_is_one_clear_error(tmp_path, data):
    path = tmp_path / "bad.pickle"
    path.write_bytes(data)
    with pytest.raises(SnapshotError):
        load_snapshot(path)


def test_snapshot_and_log_together_through_cli(tmp_path):
    path = tmp_path / "snap.pickle"
    path.write_bytes(pickle.dumps(_snapshot()))
    result = run_cli("analyze", str(LOGS / "pytorch_d1_capacty.log"), str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["detected"] is True


def test_memory_stats_dict_real_keys(tmp_path):
    stats = {"allocated_bytes.all.current": 10 * MIB, "allocated_bytes.all.peak": 30 * MIB,
             "reserved_bytes.all.current": 50 * MIB, "reserved_bytes.all.peak": 60 * MIB,
             "allocation.all.current": 7, "num_alloc_retries": 3, "num_ooms": 1, "inactive_split_bytes.all.current": 5 * MIB}
    parsed = parse_memory_stats(stats)
    assert (parsed.allocated_bytes, parsed.reserved_peak_bytes, parsed.num_alloc_retries) == (10 * MIB, 60 * MIB, 3)
    path = tmp_path / "stats.json"
    path.write_text(json.dumps(stats))
    context = build_context([LOGS / "pytorch_c_reserved.log", path])
    assert context.memory_stats.num_ooms == 1


def test_memory_summary_new_units():
    summary = textwrap.dedent("""\
        |===========================================================================|
        |                  PyTorch CUDA memory summary, device ID 0                 |
        |---------------------------------------------------------------------------|
        |            CUDA OOMs: 0            |        cudaMalloc retries: 0         |
        |===========================================================================|
        |        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
        |---------------------------------------------------------------------------|
        | Allocated memory      |   8192 KiB |  10240 KiB |  20480 KiB |  12288 KiB |
        | Requested memory      |   8000 KiB |  10000 KiB |  20000 KiB |  12000 KiB |
        | GPU reserved memory   |  22528 KiB |  22528 KiB |  22528 KiB |      0 B   |
        """)
    parsed = parse_memory_summary(summary)
    assert parsed.allocated_bytes == 8192 * 1024 and parsed.reserved_bytes == 22528 * 1024
    assert parsed.num_alloc_retries == 0


def test_profiler_outputs_from_a_real_torch_run(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True) as prof:
        model(torch.randn(32, 128)).sum().backward()
    table = parse_profiler_table(prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=10))
    assert table.top_ops and table.top_ops[0].self_bytes > 0
    assert table.top_ops == sorted(table.top_ops, key=lambda op: op.self_bytes, reverse=True)
    trace_path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace_path))
    trace = parse_chrome_trace(json.loads(trace_path.read_text()))
    assert trace.device == "cpu" and trace.peak_allocated_bytes > 32 * 256 * 4
    context = build_context([trace_path])
    assert context.profiler[0].source == "chrome_trace"


def test_environment_from_collect_env_and_nvidia_smi():
    text = textwrap.dedent("""\
        PyTorch version: 2.3.1+cu121
        CUDA used to build PyTorch: 12.1
        Python version: 3.10.14 (main) [GCC 11.2.0] (64-bit runtime)
        | NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |
        |   0  NVIDIA A100-SXM4-80GB          On  | 00000000:07:00.0 Off |
        PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
        """)
    env = parse_environment_text(text)
    assert (env.torch_version, env.cuda_version, env.driver_version) == ("2.3.1+cu121", "12.1", "535.104.05")
    assert env.python_version == "3.10.14" and "A100" in env.gpu_name and env.gpu_capacity_bytes == 80 * 10**9
    assert env.allocator_env == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


def test_live_environment(monkeypatch):
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "8")
    env = collect_live_environment()
    assert env.source == "live" and env.rank == 3 and env.world_size == 8 and env.python_version


def test_traceback_marks_user_frames_and_reads_their_source(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("import torch\n\ndef step(model, x):\n    out = model(x)\n    return out.sum()\n")
    lines = [
        "Traceback (most recent call last):",
        f'  File "{script}", line 4, in step',
        "    out = model(x)",
        '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1532, in _wrapped_call_impl',
        "    return self._call_impl(*args, **kwargs)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB.",
    ]
    assert parse_traceback(lines).frames[0].source_context == [], "no source is read outside the given roots"
    stack = parse_traceback(lines, roots=[tmp_path])
    assert [frame.is_user for frame in stack.frames] == [True, False]
    assert stack.frames[0].source_context[stack.frames[0].lineno - stack.frames[0].context_first_line] == "    out = model(x)"
    assert stack.exception_line.startswith("torch.OutOfMemoryError")


def test_notebook_traceback():
    context = build_context(text=(
        "OutOfMemoryError                          Traceback (most recent call last)\n"
        "Cell In[21], line 2\n----> 2 eval_metrics = trainer.evaluate(metric_key_prefix='eval')\n"
        "File /usr/local/lib/python3.8/dist-packages/transformers/trainer.py:2113, in Trainer.evaluate(self)\n"))
    assert context.stack.frames[0].code.startswith("eval_metrics = trainer.evaluate")
    assert context.stack.frames[1].is_user is False


def test_chained_traceback_reaches_the_oom_frames():
    context = build_context([LOGS / "chained_traceback.log"])
    assert context.stack.frames[0].function == "evaluate" and context.stack.frames[0].code == "out = model(batch)"


def test_context_round_trips_through_json(tmp_path):
    context = build_context([LOGS / "multirank_torchrun.log"], note="seq len 8192")
    again = TriageContext.model_validate_json(context.model_dump_json())
    assert again == context
    saved = tmp_path / "context.json"
    saved.write_text(context.model_dump_json())
    reloaded = build_context([saved])
    assert reloaded.error == context.error and reloaded.note == "seq len 8192"



def test_a_device_allocation_raised_as_bad_alloc_is_a_gpu_oom():
    from oomtriage.api import analyze_inputs

    report = analyze_inputs([], text="MemoryError: std::bad_alloc: CUDA error at: ../include/rmm/mr/device/cuda_memory_resource.hpp:70: "
                                     "cudaErrorMemoryAllocation out of memory")
    assert report.detected and report.error.backend == "cuda"
    host = analyze_inputs([], text="MemoryError: Unable to allocate 12.0 GiB for an array with shape (40000, 40000)")
    assert host.detected and host.error.backend == "host"



def test_older_xla_spells_resource_exhausted_in_words():
    from oomtriage.api import analyze_inputs

    report = analyze_inputs([], text="RuntimeError: Resource exhausted: Out of memory while trying to allocate 4398046511104 bytes.: "
                                     "while running replica 0 and partition 0 of a replicated computation")
    assert report.detected and report.error.framework == "jax" and report.error.requested_bytes == 4398046511104


def test_older_ipython_and_colab_frames_are_parsed_with_their_arrow_lines():
    text = textwrap.dedent("""\
        ---------------------------------------------------------------------------
        OutOfMemoryError                          Traceback (most recent call last)
        <ipython-input-3-9f2c1e0a7b11> in <cell line: 2>()
              1 trainer = build_trainer()
        ----> 2 trainer.train()

        [/usr/local/lib/python3.10/dist-packages/mylib/loop.py](https://localhost:8080/#) in step(self, batch)
            140         out = self.model(batch)
        --> 141         return out.float()

        /usr/local/lib/python3.10/dist-packages/mylib/other.py in helper(x)
        ---> 12     return x * 2

        OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 14.75 GiB of which 1.00 GiB is free.
        """)
    stack = build_context(text=text).stack
    assert [(f.filename, f.lineno, f.function) for f in stack.frames] == [
        ("<ipython-input-3-9f2c1e0a7b11>", 2, "<cell line: 2>"),
        ("/usr/local/lib/python3.10/dist-packages/mylib/loop.py", 141, "step"),
        ("/usr/local/lib/python3.10/dist-packages/mylib/other.py", 12, "helper")]
    assert stack.frames[0].is_user and not stack.frames[1].is_user
    assert stack.frames[1].code == "return out.float()"
