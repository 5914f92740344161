"""Wall time of `oomtriage analyze` (a fresh process, as a user runs it) on a typical log and on a
100 MB log, side by side with `python -c pass` and with importing pydantic+typer alone, in one run,
interleaved, so machine noise hits every command alike. Reports medians and ratios.
With --baseline DIR (a folder whose `oomtriage` package is another version, e.g. a shim of an
older commit), the analyze commands also run against it, interleaved in the same loop.
Run: python3 bench/cold_start.py [--runs 7] [--baseline DIR]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from make_big_log import write_log  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


# A user's Python caches bytecode; this workplace sets PYTHONDONTWRITEBYTECODE, which would make
# every run recompile oomtriage's modules. Measure what a user gets: bytecode on, warmed once.
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env or ENV)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 7
    with tempfile.TemporaryDirectory() as folder:
        big = Path(folder) / "big.log"
        write_log(str(big), 100)
        typical = ROOT / "examples" / "logs" / "train_fragmentation.log"
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "import pydantic, typer": [sys.executable, "-c", "import pydantic, typer"],
            "analyze typical log (json)": [sys.executable, "-m", "oomtriage", "analyze", str(typical), "-f", "json"],
            "analyze typical log (text)": [sys.executable, "-m", "oomtriage", "analyze", str(typical)],
            "analyze 100 MB log (json)": [sys.executable, "-m", "oomtriage", "analyze", str(big), "-f", "json"],
        }
        envs = {name: ENV for name in commands}
        if "--baseline" in sys.argv:
            baseline_env = {**ENV, "PYTHONPATH": sys.argv[sys.argv.index("--baseline") + 1]}
            for name in [name for name in commands if name.startswith("analyze")]:
                commands[f"{name} [baseline]"] = commands[name]
                envs[f"{name} [baseline]"] = baseline_env
        samples: dict[str, list[float]] = {name: [] for name in commands}
        for name, command in commands.items():
            timed(command, envs[name])  # warm-up: writes bytecode, fills the page cache
        for _ in range(runs):
            for name, command in commands.items():
                samples[name].append(timed(command, envs[name]))
    base = statistics.median(samples["python -c pass"])
    print(f"| command | median s | ratio to python -c pass |\n|---|---|---|")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.3f} | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
