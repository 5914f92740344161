"""The HTML report and the memory history: what they cost, measured side by side in one run.

1. Recording the history on the simulated device: the same real training run (tests/fixtures/
   scripts/mlp_steps.py and examples/batch_too_large.py, on the CPU) on the simulated device
   (``--measure``) with and without ``--snapshot``, alternated, median wall time of each (the
   process start included); the ratio is the history's cost.
2. Writing the page: ``render_html`` for a typical run's timeline (the fitting MLP run) and for a
   synthetic 100,000-event GPU history; time to build the timeline and to render, page size.

Run: python3 bench/html_report.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PROGRAMS = {
    "mlp_steps.py (3 AdamW steps)": [str(ROOT / "tests" / "fixtures" / "scripts" / "mlp_steps.py"), "--steps", "3"],
    "batch_too_large.py --batch-size 1024 --accumulate 4": [str(ROOT / "examples" / "batch_too_large.py"), "--batch-size", "1024",
                                                            "--accumulate", "4", "--steps", "2"],
    # many small allocations, little compute: where recording each event's stack shows most
    "mlp_steps.py --width 64 --batch-size 32 --steps 1000": [str(ROOT / "tests" / "fixtures" / "scripts" / "mlp_steps.py"),
                                                             "--width", "64", "--batch-size", "32", "--steps", "1000"],
}


def timed_run(arguments: list[str], snapshot: Path | None, measure: Path) -> float:
    # Both runs on the simulated device (--measure starts it, uncapped): the difference is the history.
    command = [sys.executable, "-m", "oomtriage", "run", "--measure", str(measure),
               *(["--snapshot", str(snapshot)] if snapshot else []), "--", sys.executable, *arguments]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from oomtriage.html_report import plotly_js, render_html
    from oomtriage.timeline import timeline_from_snapshot, timeline_from_snapshot_file
    from test_html_report import _synthetic_snapshot

    with tempfile.TemporaryDirectory(prefix="oomtriage-bench-html-") as work:
        print("1. history recording, `oomtriage run` with and without --snapshot (median of "
              f"{args.runs}, alternated)")
        snapshots = {}
        for name, arguments in PROGRAMS.items():
            plain, recorded = [], []
            for run in range(args.runs):
                measure = Path(work) / "measure.json"
                plain.append(timed_run(arguments, None, measure))
                snapshot = Path(work) / f"{len(snapshots)}-{run}.pickle"
                recorded.append(timed_run(arguments, snapshot, measure))
            snapshots[name] = snapshot
            events = timeline_from_snapshot_file(snapshot).events
            print(f"   {name}: {statistics.median(plain):.2f} s plain, {statistics.median(recorded):.2f} s recorded "
                  f"(x{statistics.median(recorded) / statistics.median(plain):.2f}); {events} events, "
                  f"snapshot {snapshot.stat().st_size / 1024:.0f} KiB")
        print("2. writing the page (plotly.js read once per process first)")
        plotly_js()
        cases = {name: timeline_from_snapshot_file(path) for name, path in snapshots.items()}
        started = time.perf_counter()
        synthetic = timeline_from_snapshot(_synthetic_snapshot(100_000))
        build = time.perf_counter() - started
        cases["synthetic GPU history, 100,000 events"] = synthetic
        for name, timeline in cases.items():
            started = time.perf_counter()
            html = render_html(None, timeline=timeline)
            elapsed = time.perf_counter() - started
            print(f"   {name}: rendered in {elapsed:.3f} s, {timeline.events} events -> {len(timeline.index)} points, "
                  f"page {len(html) / 2**20:.2f} MiB ({(len(html) - len(plotly_js())) / 1024:.0f} KiB without plotly.js)")
        print(f"   timeline of the 100,000-event history built in {build:.3f} s")


if __name__ == "__main__":
    main()
