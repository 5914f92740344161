"""The simulated GPU's cost and accuracy on every example of examples/manifest.json:
- overhead: the script's run time under the tracker / the same run untracked (in one process,
  interleaved, median of --runs), target <= 1.5x; and with the "cuda" -> CPU device mapping that
  runs GPU scripts on a CPU-only machine (a TorchFunctionMode on top of the tracker);
- agreement: the tracker's peak against PyTorch's own tensor-memory accounting
  (torch.distributed._tools.mem_tracker.MemTracker), target within 1%; torch.profiler's CPU
  "Total Allocated" is shown too: it also counts CPU kernels' internal scratch buffers (oneDNN),
  which are not tensors and have no CUDA counterpart in the caching allocator;
- the hook: `import oomtriage; oomtriage.install()` wall time in a fresh process, target < 20 ms,
  and that it imports no torch.
Run: python3 bench/tracker.py [--runs 3]
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from oomtriage.simulate.cuda_on_cpu import CudaOnCpu
from oomtriage.simulate.reference import iteration_tolerant_memtracker, memtracker_peak_bytes
from oomtriage.simulate.tracker import SimulatedDevice

ROOT = Path(__file__).resolve().parents[1]


def run_script(argv: list[str], device: SimulatedDevice | None, *, map_cuda: bool = False) -> float:
    sys.argv = list(argv)
    start = time.perf_counter()
    with contextlib.ExitStack() as modes:
        if device is not None:
            modes.enter_context(device)
        if map_cuda:
            modes.enter_context(CudaOnCpu())
        runpy.run_path(argv[0], run_name="__main__")
    return time.perf_counter() - start


def memtracker_peak(argv: list[str]) -> int:
    tracker = iteration_tolerant_memtracker()
    with tracker:
        run_script(argv, None)
    return memtracker_peak_bytes(tracker)


def profiler_peak(argv: list[str]) -> tuple[int, int, int]:
    device = SimulatedDevice(None)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        run_script(argv, device)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(path))
        events = json.loads(path.read_text())["traceEvents"]
    peak = max(event["args"].get("Total Allocated", 0) for event in events if event.get("name") == "[memory]")
    return peak, device.stats.peak_requested, device.stats.peak_allocated


def install_cost(runs: int = 15) -> tuple[float, bool]:
    code = ("import time, sys; t = time.perf_counter(); import oomtriage; oomtriage.install(); "
            "print(time.perf_counter() - t, 'torch' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    samples, torch_loaded = [], False
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout.split()
        samples.append(float(out[0]))
        torch_loaded = torch_loaded or out[1] == "True"
    return statistics.median(samples), torch_loaded


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3
    manifest = json.loads((ROOT / "examples" / "manifest.json").read_text())
    torch.set_num_threads(1)  # steadier timings on a shared machine
    print("| example | untracked s | tracked s | overhead | tracked + cuda mapping s | overhead | MemTracker peak MiB | tracker requested MiB | tracker allocated (512 B blocks) MiB | allocated vs MemTracker | profiler CPU peak MiB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    stdout = sys.stdout
    for entry in manifest:
        argv = [str(ROOT / entry["command"][1]), *entry["command"][2:]]
        plain, tracked, mapped = [], [], []
        sys.stdout = open(os.devnull, "w")
        try:
            run_script(argv, None)  # warm-up
            for _ in range(runs):
                plain.append(run_script(argv, None))
                tracked.append(run_script(argv, SimulatedDevice(None)))
                mapped.append(run_script(argv, SimulatedDevice(None), map_cuda=True))
            cpu_peak, requested, allocated = profiler_peak(argv)
            reference = memtracker_peak(argv)
        finally:
            sys.stdout.close()
            sys.stdout = stdout
        p, t, m = statistics.median(plain), statistics.median(tracked), statistics.median(mapped)
        mib = 1 << 20
        print(f"| {entry['name']} | {p:.2f} | {t:.2f} | {t / p:.2f}x | {m:.2f} | {m / p:.2f}x | {reference / mib:.2f} | {requested / mib:.2f} | "
              f"{allocated / mib:.2f} | {allocated / reference - 1:+.3%} | {cpu_peak / mib:.2f} |")
    cost, loaded = install_cost()
    print(f"\nimport oomtriage + install(): {cost * 1000:.1f} ms (median of 15 fresh processes); torch imported: {loaded}")


if __name__ == "__main__":
    main()
