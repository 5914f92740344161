"""The larger fuzz run: thousands of malformed inputs of every kind (tests/fuzz_inputs.py) through
analyze_inputs and every renderer, each in the same process, timed; RSS of the process at the end.
Reports cases, crashes (anything but oomtriage's one-line error), worst time per case, peak RSS.

Run: python3 bench/fuzz.py [--cases 3000] [--seed 1]
"""

from __future__ import annotations

import argparse
import collections
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz_inputs import cases, run_case  # noqa: E402


def _peak_rss_mib() -> float:
    """This process's own peak (VmHWM): ru_maxrss would carry a parent's peak across fork+exec."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    crashes: collections.Counter[str] = collections.Counter()
    outcomes: collections.Counter[str] = collections.Counter()
    worst = (0.0, "")
    folder = Path(tempfile.mkdtemp(prefix="oomtriage-fuzz-"))
    started = time.perf_counter()
    for kind, name, data in cases(args.seed, args.cases):
        path = folder / name
        path.write_bytes(data)
        begin = time.perf_counter()
        try:
            outcome = run_case(path)
            outcomes[f"{kind}: {'report' if outcome == 'report' else 'one-line error'}"] += 1
        except Exception as error:  # noqa: BLE001
            crashes[f"{kind}: {type(error).__name__}: {str(error)[:80]}"] += 1
        elapsed = time.perf_counter() - begin
        worst = max(worst, (elapsed, f"{kind} {name}"))
        path.unlink()
    folder.rmdir()  # every case removed its file: leave no empty folder in /tmp
    total = time.perf_counter() - started
    rss = _peak_rss_mib()
    print(f"cases {args.cases} (seed {args.seed}) in {total:.1f} s; crashes {sum(crashes.values())}; "
          f"worst case {worst[0]:.2f} s ({worst[1]}); peak RSS {rss:.0f} MiB")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome}: {count}")
    for crash, count in crashes.most_common(20):
        print(f"  CRASH x{count}: {crash}")


if __name__ == "__main__":
    main()
