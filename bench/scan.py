"""``oomtriage scan`` throughput and memory: N logs made from the fixture and example logs (every
format, OOM and not), triaged with 1 and with 2 workers side by side, through the library function
the CLI calls. Reports logs per second and the peak RSS of the parent and of the largest worker, for
two sizes of input (memory must not grow with the number of logs).

Run: python3 bench/scan.py [--logs 1000] [--small 200]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "tests" / "fixtures" / "logs").glob("*.log")) + sorted((ROOT / "examples" / "logs").glob("*.log"))

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from oomtriage.scan import expand, scan, summarise
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
files = expand([sys.argv[1]])
started = time.perf_counter()
summary = summarise(scan(files, jobs=int(sys.argv[2])), keep=False)
elapsed = time.perf_counter() - started
print(json.dumps({"logs": summary.inputs, "seconds": elapsed, "status": summary.by_status, "parent_mib": hwm(),
                  "largest_worker_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def make_logs(folder: Path, count: int) -> None:
    folder.mkdir(parents=True)
    for number in range(count):
        source = SOURCES[number % len(SOURCES)]
        shutil.copy(source, folder / f"job-{number:06d}-{source.name}")


def measure(folder: Path, jobs: int) -> dict:
    child = subprocess.run([sys.executable, "-c", CHILD, str(folder), str(jobs)], capture_output=True, text=True, check=True)
    return json.loads(child.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", type=int, default=1000)
    parser.add_argument("--small", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="oomtriage-bench-scan-") as work:
        print(f"{len(SOURCES)} distinct logs (tests/fixtures/logs, examples/logs), copied round-robin")
        print(f"{'logs':>6} {'jobs':>4} {'seconds':>8} {'logs/s':>8} {'parent MiB':>11} {'worker MiB':>11}  statuses")
        for count in (args.small, args.logs):
            folder = Path(work) / f"logs-{count}"
            make_logs(folder, count)
            for jobs in (1, 2):
                row = measure(folder, jobs)
                assert row["logs"] == count
                print(f"{count:>6} {jobs:>4} {row['seconds']:>8.2f} {count / row['seconds']:>8.1f} {row['parent_mib']:>11.1f} "
                      f"{row['largest_worker_mib']:>11.1f}  {row['status']}")


if __name__ == "__main__":
    main()
