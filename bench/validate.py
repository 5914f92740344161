"""Validation on every example of examples/manifest.json: wall time per validated fix and the peak
before/after of the expected fix (and of alloc_conf, which should not help a plain batch OOM).
Run: python3 bench/validate.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from oomtriage.sizes import format_size, parse_size_arg
from oomtriage.validate.loop import validate

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    manifest = json.loads((ROOT / "examples" / "manifest.json").read_text())
    print("| example | card | needs (reserved) | fix | accepted | peak allocated before -> after | reserved after | numerics (max rel err) | s per fix |")
    print("|---|---|---|---|---|---|---|---|---|")
    for entry in manifest:
        kinds = {entry["fix_kind"], "alloc_conf"}
        started = time.perf_counter()
        result = validate([sys.executable, *entry["command"][1:]], project=ROOT, capacity=parse_size_arg(entry["simulate_gpu"]),
                          kinds=kinds)
        per_fix = (time.perf_counter() - started) / max(1, len(result.fixes))
        for fix in result.fixes:
            numerics = fix.numerics
            error = f"{numerics.verdict} ({numerics.max_relative_error:.1e})" if numerics and numerics.max_relative_error is not None \
                else (numerics.verdict if numerics else "-")
            print(f"| {entry['name']} | {entry['simulate_gpu']} | {format_size(result.needs_bytes)} | {fix.kind} | "
                  f"{'yes' if fix.accepted else 'no'} | {format_size(fix.peak_before_bytes)} -> {format_size(fix.peak_after_bytes)} | "
                  f"{format_size(fix.reserved_after_bytes)} | {error} | {per_fix:.1f} |")


if __name__ == "__main__":
    main()
