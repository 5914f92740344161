"""The fake backend (FakeTensorMode: shapes, no values) against real CPU execution, side by side in
one run: peak allocated and reserved of the simulated device, wall time and the child's peak RSS.
Each example runs as shipped and scaled up (the case the fake backend is for: workloads too large or
too slow for this machine). Run: python3 bench/fake_backend.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from oomtriage.run import child_environment, wrap_python

ROOT = Path(__file__).resolve().parents[1]
SCALED = {  # bigger configurations of the same scripts
    "batch_too_large": ["--batch-size", "32768"],
    "full_precision": ["--batch-size", "16", "--seq-len", "1024"],
    "attention_quadratic": ["--batch-size", "4", "--seq-len", "2048"],
    "missing_no_grad": ["--eval-batch-size", "65536"],
}


def measure(command: list[str], fake: bool) -> dict:
    """One uncapped run through ``oomtriage._child``: its measurement, seconds and peak RSS."""
    with tempfile.TemporaryDirectory() as folder:
        measure_file, log = Path(folder) / "measure.json", Path(folder) / "output.log"
        env = child_environment(report_dir=folder, simulate_gpu=None, max_steps=None, measure_file=str(measure_file),
                                fingerprint=False, note=None, site_hook=False, fake=fake)
        started = time.perf_counter()
        with log.open("wb") as output:  # Popen + wait4 rather than run_command: wait4 gives this child's RSS
            process = subprocess.Popen(wrap_python([sys.executable, *command]), cwd=ROOT, env=env,
                                       stdout=output, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(process.pid, 0)  # wait4: this child's own max RSS
            process.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        if process.returncode != 0 or not measure_file.exists():
            raise SystemExit(f"{command} (fake={fake}) failed:\n{log.read_text()[-2000:]}")
        record = json.loads(measure_file.read_text())
    return {**record, "seconds": seconds, "rss_mib": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3, help="runs per backend; the median time is reported")
    args = parser.parse_args()
    manifest = json.loads((ROOT / "examples" / "manifest.json").read_text())
    configs = [(entry["name"], entry["command"][1:]) for entry in manifest]
    configs += [(f"{name} (scaled)", [f"examples/{name}.py", *extra]) for name, extra in SCALED.items()]
    print("| workload | peak allocated real / fake (diff) | peak reserved real / fake (diff) | real s | fake s | speed-up | RSS real / fake |")
    print("|---|---|---|---|---|---|---|")
    for name, command in configs:
        runs = {fake: [measure(command, fake) for _ in range(args.repeat)] for fake in (False, True)}
        real, fake = runs[False][0], runs[True][0]
        real_s = statistics.median(run["seconds"] for run in runs[False])
        fake_s = statistics.median(run["seconds"] for run in runs[True])
        print(f"| {name} | {_mib(real['peak_allocated_bytes'])} / {_mib(fake['peak_allocated_bytes'])} "
              f"({_diff(real['peak_allocated_bytes'], fake['peak_allocated_bytes'])}) | "
              f"{_mib(real['peak_reserved_bytes'])} / {_mib(fake['peak_reserved_bytes'])} "
              f"({_diff(real['peak_reserved_bytes'], fake['peak_reserved_bytes'])}) | {real_s:.2f} | {fake_s:.2f} | "
              f"{real_s / fake_s:.2f}x | {real['rss_mib']:.0f} / {fake['rss_mib']:.0f} MiB |", flush=True)


def _mib(value: int) -> str:
    return f"{value / 2**20:.1f} MiB"


def _diff(real: int, fake: int) -> str:
    return f"{(fake - real) / real:+.2%}"


if __name__ == "__main__":
    main()
