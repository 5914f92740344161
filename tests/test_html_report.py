"""The HTML report and the simulated device's snapshots, on real training runs on the CPU, checked
in a real browser (headless Chromium, network off) and with PyTorch's own snapshot tools."""

from __future__ import annotations

import json
import pickle
import re
import sys
import time
from pathlib import Path

import pytest

from browser import load
from conftest import ROOT, run_cli

MLP = ROOT / "tests" / "fixtures" / "scripts" / "mlp_steps.py"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def oom_run(tmp_path_factory):
    """One real run that OOMs in its first optimizer step on a 9 MiB card: its HTML and snapshot."""
    folder = tmp_path_factory.mktemp("oom-run")
    result = run_cli("run", "--simulate-gpu", "9MiB", "--format", "html", "-o", str(folder / "run.html"),
                     "--snapshot", str(folder / "run.pickle"), "--", sys.executable, str(MLP), cwd=folder, timeout=300)
    assert result.returncode == 1, result.stderr.decode()[-2000:]
    return folder


def test_the_run_report_renders_offline_with_its_plots(oom_run):
    page = oom_run / "run.html"
    html = page.read_text()
    assert "<script src=" not in html and "cdn." not in html.split("<script>")[0]  # nothing to fetch
    loaded = load(page, oom_run / "run.png")
    assert loaded.errors == [], loaded.errors
    assert loaded.count(r'class="main-svg"') >= 3  # the timeline, the sites, the kinds
    assert 'id="timeline"' in loaded.dom and 'id="held-by-site"' in loaded.dom and 'id="held-by-kind"' in loaded.dom
    assert "OOM: 2.00 MiB requested" in loaded.dom  # the OOM marked on the timeline
    assert "mlp_steps.py:" in loaded.dom  # the user's frames name the allocation sites
    assert loaded.screenshot.stat().st_size > 20_000


def test_the_snapshot_is_pytorchs_format(oom_run):
    import torch.cuda._memory_viz as memory_viz

    snapshot = pickle.loads((oom_run / "run.pickle").read_bytes())
    summary = memory_viz.segsum(snapshot)  # asserts that every segment's blocks add up to its size
    reserved = sum(segment["total_size"] for segment in snapshot["segments"])
    assert f"total_reserved: {memory_viz.Bytes(reserved)}" in summary
    trace = memory_viz.trace(snapshot)
    assert "raise OutOfMemoryError # 2.0MiB requested" in trace
    assert memory_viz.trace_plot(snapshot).count("snapshot.pickle") == 1
    assert memory_viz.segment_plot(snapshot).count("snapshot.pickle") == 1
    entries = snapshot["device_traces"][0]
    allocs = [entry for entry in entries if entry["action"] == "alloc"]
    assert allocs and all(entry["frames"] for entry in allocs)
    assert any(frame["filename"].endswith("mlp_steps.py") for frame in allocs[-1]["frames"])
    # at the OOM the cache is full: what it reserved plus the request exceeds the card
    oom = next(entry for entry in entries if entry["action"] == "oom")
    assert reserved + oom["size"] > 9 * 2**20


def test_analyze_reads_the_snapshot_back(oom_run):
    result = run_cli("analyze", str(oom_run / "run.pickle"), "--format", "json")
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    assert report["detected"] and report["error"]["requested_bytes"] == 2 * 2**20
    page = oom_run / "analyze.html"
    assert run_cli("analyze", str(oom_run / "run.pickle"), "--format", "html", "-o", str(page)).returncode == 0
    loaded = load(page, oom_run / "analyze.png")
    assert loaded.errors == [] and loaded.count(r'class="main-svg"') >= 3


def test_what_held_the_memory_is_told_by_kind(tmp_path):
    """A run that fits: held at the peak, with the parameters, gradients and AdamW's two moments."""
    from oomtriage.timeline import timeline_from_snapshot_file

    snapshot = tmp_path / "fits.pickle"
    result = run_cli("run", "--snapshot", str(snapshot), "--", sys.executable, str(MLP), "--width", "256", cwd=tmp_path,
                     timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    timeline = timeline_from_snapshot_file(snapshot)
    parameters = (256 * 256 + 256) * 2 + 256 * 10 + 10  # float32 elements of the three layers
    assert timeline.held_at == "peak" and len(timeline.steps) == 3
    kinds = timeline.held_by_kind
    assert parameters * 4 <= kinds["parameters"] <= parameters * 4 + 6 * 512  # rounded up to 512-byte blocks
    assert kinds["gradients"] == kinds["parameters"]
    assert kinds["optimizer state"] >= 2 * kinds["parameters"]  # exp_avg and exp_avg_sq
    assert timeline.peak_allocated_bytes == max(timeline.allocated)


def test_the_timeline_keeps_every_peak_when_downsampled():
    from oomtriage.timeline import downsample

    allocated = [(i * 7919) % 10007 for i in range(100_000)]
    allocated[54_321] = 50_000
    reserved = [value + 5 for value in allocated]
    index, kept, kept_reserved = downsample(allocated, reserved, 4000)
    assert len(index) <= 4000 and index == sorted(index)
    assert max(kept) == 50_000 and index[kept.index(50_000)] == 54_321
    assert max(kept_reserved) == 50_005 and min(kept) == min(allocated)


def _synthetic_snapshot(events: int) -> dict:
    """A GPU's snapshot as PyTorch writes it (no oomtriage keys): a ring buffer that lost its start."""
    frames = [{"filename": "/home/user/train.py", "line": 42, "name": "forward"},
              {"filename": "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", "line": 125, "name": "forward"}]
    trace, live = [], []
    for i in range(events):
        address = 0x7000_0000 + (i % 64) * 2**20
        if i % 2 == 0:
            trace.append({"action": "alloc", "addr": address, "size": 2**20, "stream": 0, "frames": frames, "time_us": i})
            live.append(address)
        else:
            trace.append({"action": "free_completed", "addr": live.pop(0), "size": 2**20, "stream": 0, "frames": [], "time_us": i})
    trace.append({"action": "oom", "addr": 0, "size": 3 * 2**30, "stream": 0, "frames": frames, "device_free": 2**20, "time_us": events})
    blocks = [{"address": 0x7000_0000, "size": 2**20, "requested_size": 2**20, "state": "active_allocated", "frames": frames},
              {"address": 0x7010_0000, "size": 2**20, "requested_size": 0, "state": "inactive", "frames": []}]
    # 5 GiB allocated before the trace began (not in it), one MiB block of the trace still live
    old = {"address": 0x1_0000_0000, "size": 5 * 2**30, "requested_size": 5 * 2**30, "state": "active_allocated", "frames": []}
    return {"segments": [{"device": 0, "address": 0x7000_0000, "total_size": 2 * 2**20, "stream": 0, "segment_type": "large",
                          "allocated_size": 2**20, "active_size": 2**20, "blocks": blocks},
                         {"device": 0, "address": 0x1_0000_0000, "total_size": 5 * 2**30, "stream": 0, "segment_type": "large",
                          "allocated_size": 5 * 2**30, "active_size": 5 * 2**30, "blocks": [old]}],
            "device_traces": [trace]}


def test_a_gpus_truncated_history_is_anchored_to_its_segments():
    from oomtriage.timeline import timeline_from_snapshot

    timeline = timeline_from_snapshot(_synthetic_snapshot(1001))
    assert timeline.source == "snapshot" and timeline.truncated and timeline.held_at == "oom"
    assert timeline.allocated[-1] == 5 * 2**30 + 2**20  # ends where the segments say
    # held at the OOM: the segments' blocks, the 5 GiB from before the history included
    assert timeline.held_bytes == 5 * 2**30 + 2**20
    assert [site.location for site in timeline.held_by_site] == ["<no stack recorded>", "/home/user/train.py:42 in forward"]
    assert timeline.oom_requested_bytes == 3 * 2**30


def test_a_truncated_history_without_an_oom_counts_what_came_before():
    from oomtriage.timeline import BEFORE_HISTORY, timeline_from_snapshot

    snapshot = _synthetic_snapshot(1001)
    snapshot["device_traces"][0].pop()  # no OOM: held at the peak, replayed from the trace
    timeline = timeline_from_snapshot(snapshot)
    assert timeline.held_at == "peak" and timeline.held_bytes == timeline.peak_allocated_bytes
    assert timeline.held_by_site[-1].location == BEFORE_HISTORY and timeline.held_by_site[-1].bytes == 5 * 2**30


def test_a_large_history_renders_quickly_and_stays_small(tmp_path):
    """100k events: the page plots a few thousand points and is written in well under a second."""
    from oomtriage.html_report import plotly_js, render_html
    from oomtriage.timeline import timeline_from_snapshot

    snapshot = _synthetic_snapshot(100_000)
    plotly_js()  # read once per process, like any report after the first
    started = time.perf_counter()
    html = render_html(None, timeline=timeline_from_snapshot(snapshot))
    elapsed = time.perf_counter() - started
    assert len(html) - len(plotly_js()) < 1_000_000
    page = tmp_path / "big.html"
    page.write_text(html)
    loaded = load(page, tmp_path / "big.png")
    assert loaded.errors == [] and loaded.count(r'class="main-svg"') >= 3
    print(f"100k events rendered in {elapsed:.2f} s")  # the target lives in bench/html_report.py


def test_user_text_is_escaped(tmp_path):
    from oomtriage.html_report import render_html
    from oomtriage.models import Cause, Fix, OomError, TriageReport

    hostile = "</script><script>document.title='owned'</script><img src=x onerror=alert(1)>"
    report = TriageReport(detected=True, error=OomError(format="pytorch_sentence", raw_message=hostile),
                          causes=[Cause(id="batch_too_large", title=hostile, confidence=0.5, evidence=[hostile],
                                        fixes=[Fix(kind="reduce_batch_size", title="t", how=hostile,
                                                   diff=f"--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-{hostile}\n+ok\n")])])
    html = render_html(report)
    assert hostile not in html and "&lt;/script&gt;" in html
    page = tmp_path / "escaped.html"
    page.write_text(html)
    loaded = load(page, tmp_path / "escaped.png")
    assert "<title>owned</title>" not in loaded.dom and 'class="del"' in loaded.dom and 'class="add"' in loaded.dom


def test_a_log_report_needs_no_plotting_library():
    result = run_cli("analyze", str(ROOT / "tests" / "fixtures" / "logs" / "pytorch_c_reserved.log"), "--format", "html")
    assert result.returncode == 0
    html = result.stdout.decode()
    assert "Likely causes" in html and "Plotly" not in html and len(html) < 200_000


def test_the_report_renders_itself_in_a_notebook():
    from oomtriage.api import analyze_inputs

    report = analyze_inputs([ROOT / "tests" / "fixtures" / "logs" / "pytorch_c_reserved.log"])
    fragment = report._repr_html_()
    assert fragment.lstrip().startswith("<style>") and "<html" not in fragment and 'class="oomtriage-report"' in fragment
    assert re.search(r"\.oomtriage-report h2 \{", fragment)  # styles scoped: the notebook's own are untouched


def test_the_validation_report_shows_each_fix_against_the_card(tmp_path):
    page = tmp_path / "validate.html"
    result = run_cli("validate", "--simulate-gpu", "100MiB", "--max-steps", "2", "--kind", "reduce_batch_size", "--format", "html",
                     "-o", str(page), "--", sys.executable, "examples/batch_too_large.py", timeout=600)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    loaded = load(page, tmp_path / "validate.png", height=2600)
    assert loaded.errors == [], loaded.errors
    for element in ("fix-peaks", "fix-numerics", "timeline", "held-by-site"):
        assert f'id="{element}"' in loaded.dom, element
    assert loaded.count(r'class="main-svg"') >= 5
    assert "ACCEPTED" in loaded.dom and "card 100.00 MiB" in loaded.dom
    assert "gradient norm per step" in loaded.dom and "compared on runs as written" in loaded.dom


PHASED = """
import torch, torch.nn as nn, torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

class Square(torch.autograd.Function):  # its forward runs with grad off, yet it is the forward pass
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 2 * x * grad

torch.manual_seed(0)
layer, head = nn.Linear(64, 64), nn.Linear(64, 4)
optimizer = torch.optim.AdamW([*layer.parameters(), *head.parameters()], lr=1e-3)  # foreach: temporaries every step
for step in range(2):
    x = torch.randn(128, 64)
    hidden = checkpoint(lambda t: Square.apply(layer(t)), x, use_reentrant=False)
    loss = F.cross_entropy(head(hidden), torch.randint(0, 4, (128,)))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
with torch.no_grad():
    for _ in range(3):
        head(layer(torch.randn(512, 64))).sum()
"""


def test_phases_follow_the_training_loop(tmp_path):
    """Forward (also inside an autograd.Function and a checkpointed block), backward, the optimizer
    step, and the evaluation under no_grad afterwards, each a span of its own."""
    from oomtriage.timeline import timeline_from_snapshot_file

    script = tmp_path / "phased.py"
    script.write_text(PHASED)
    snapshot = tmp_path / "phased.pickle"
    result = run_cli("run", "--snapshot", str(snapshot), "--", sys.executable, str(script), cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    timeline = timeline_from_snapshot_file(snapshot)
    names = [span.name for span in timeline.phases]
    assert names == ["forward", "backward", "optimizer step"] * 2 + ["no-grad (evaluation)"], names
    assert len(timeline.steps) == 2 and timeline.steps[0] < timeline.phases[3].start <= timeline.steps[1]


def test_run_refuses_an_unwritable_snapshot_and_html_without_a_file(tmp_path):
    missing = run_cli("run", "--snapshot", str(tmp_path / "no" / "such" / "s.pickle"), "--", sys.executable, "-c", "pass")
    assert missing.returncode == 2 and missing.stderr.decode().count("\n") == 1 and b"--snapshot" in missing.stderr
    no_file = run_cli("run", "--format", "html", "--", sys.executable, "-c", "pass")
    assert no_file.returncode == 2 and b"needs -o FILE" in no_file.stderr
