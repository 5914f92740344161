"""What `oomtriage fit` says against what executing says, side by side in one run:

- the fake-tensor peak of each configuration against the executed peak of the same configuration
  (`oomtriage run --measure`, the simulated allocator on real CPU compute), target within 1%;
- the seconds each takes (ratio, measured in the same run: this machine is shared and noisy);
- accelerate's weights-only estimate (`calculate_maximum_sizes`, what `accelerate estimate-memory`
  prints) for the GPT-2-124M shape;
- `fit --gpu` on the GPT-2-124M shape: the largest batch for named cards.

    python3 bench/fit.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GPT2 = [sys.executable, "bench/programs/gpt2_124m.py"]
CASES = [
    ("examples/batch_too_large (batch 4096)", [sys.executable, "examples/batch_too_large.py", "--batch-size", "4096"], ROOT),
    ("configurator fixture (batch 32, block 128)", [sys.executable, "train.py", "--batch_size=32", "--block_size=128"],
     ROOT / "tests/fixtures/programs/configurator"),
    ("GPT-2-124M shape (batch 1, block 256)", GPT2 + ["--batch-size", "1", "--block-size", "256", "--steps", "2"], ROOT),
]


def _measure(command: list[str], cwd: Path, backend: str) -> tuple[dict, float]:
    with tempfile.TemporaryDirectory() as folder:
        measure = Path(folder) / "m.json"
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "oomtriage", "run", "--backend", backend, "--simulate-gpu", "200GiB",
                        "--max-steps", "2", "--measure", str(measure), "--", *command], cwd=cwd, capture_output=True, timeout=3600)
        return json.loads(measure.read_text()), time.perf_counter() - started


def _fit(gpu: str, command: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    output = subprocess.run([sys.executable, "-m", "oomtriage", "fit", "--gpu", gpu, "--format", "json", "--", *command],
                            cwd=ROOT, capture_output=True, timeout=3600)
    return json.loads(output.stdout), time.perf_counter() - started


def _accelerate_weights() -> int | None:
    try:
        from accelerate import init_empty_weights
        from accelerate.utils import calculate_maximum_sizes
    except ImportError:
        return None
    import runpy

    import torch

    original_to = torch.nn.Module.to
    torch.nn.Module.to = lambda self, *args, **kwargs: self  # the script moves its model; meta weights cannot move
    try:
        with init_empty_weights():
            sys.argv = ["gpt2_124m.py", "--steps", "0"]
            namespace = runpy.run_path(str(ROOT / "bench/programs/gpt2_124m.py"))
    finally:
        torch.nn.Module.to = original_to
    total, _ = calculate_maximum_sizes(namespace["model"])
    return int(total)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the fit --gpu searches")
    parser.add_argument("--cards", default="RTX 4090,A100 40GB,H100 80GB", help="cards for the fit --gpu searches")
    parser.add_argument("--skip-peaks", action="store_true", help="skip the executed-vs-fake table")
    options = parser.parse_args()
    if not options.skip_peaks:
        print("| program | executed peak | fake peak | difference | executed s | fake s | ratio |")
        print("|---|---|---|---|---|---|---|")
    for name, command, cwd in [] if options.skip_peaks else CASES:
        executed, executed_s = _measure(command, cwd, "execute")
        fake, fake_s = _measure(command, cwd, "fake")
        a, b = executed["peak_allocated_bytes"], fake["peak_allocated_bytes"]
        print(f"| {name} | {a / 2**20:.2f} MiB | {b / 2**20:.2f} MiB | {abs(a - b) / a:.3%} | {executed_s:.1f} | "
              f"{fake_s:.1f} | {executed_s / fake_s:.1f}x |")
    weights = _accelerate_weights()
    if weights:
        print(f"\naccelerate weights-only estimate for the GPT-2-124M shape: {weights / 2**20:.1f} MiB (fp32 weights; "
              "no gradients, optimizer state or activations)")
    if not options.quick:
        print("\n| card (fit --gpu) | usable | largest batch (block 1024) | proved | peak at that batch | runs | seconds |")
        print("|---|---|---|---|---|---|---|")
        for gpu in options.cards.split(","):
            result, seconds = _fit(gpu, GPT2 + ["--batch-size", "8"])
            runs = {run["value"]: run for run in result["runs"]}
            largest = result["largest_fitting"]
            peak = runs.get(str(largest), {}).get("peak_reserved_bytes")
            print(f"| {gpu} | {result['card_bytes'] / 2**30:.2f} GiB | {largest} | {result['largest_proved']} | "
                  f"{(peak or 0) / 2**30:.2f} GiB | {len(result['runs'])} | {seconds:.0f} |")


if __name__ == "__main__":
    main()
