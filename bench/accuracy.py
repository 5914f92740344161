"""Diagnosis accuracy on ../shared/cases/dev_cases.jsonl, plus false alarms on real non-OOM errors.

Input per case: ``error_text`` and ``user_note`` (as the note), exactly what ``analyze --note``
gets. Output: detection (of the cases whose text holds an OOM message; the others must come out
*suspected*), top-1 / top-3 against ``root_cause``, per label, on four slices:

- ``all``: the 127 cases;
- ``check``: the cases with ``int(sha1(id), 16) % 5 == 0``, never tuned on (the estimate of how
  the engine does on unseen real cases);
- ``tune``: the rest;
- ``first41`` / ``new86``: the first round's corpus and the cases added after it.

False alarms: ``dev_negatives.jsonl`` (real non-OOM GPU errors) and a few synthetic ones.
Calibration: for the top-3 causes of each case, binned by confidence, how often each was the root
cause (tune and check splits side by side).

Run: python3 bench/accuracy.py [--json] [--cases] [--slice check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

from oomtriage.api import analyze_inputs

ROOT = Path(__file__).resolve().parents[1]
CASES_DIR = ROOT.parent / "shared" / "cases"
FIRST_ROUND = 41
# Text that holds an OOM message of some framework. A case whose text has none (a traceback cut
# before the message, a title) must come out as suspected: ranked, with detected false.
OOM_TEXT = re.compile(
    r"out of memory|OutOfMemory|RESOURCE_EXHAUSTED|ResourceExhausted|Resource exhausted|OOM when|ALLOC_FAILED|"
    r"killed by signal|oom-kill|Failed to allocate|Unable to allocate|maximum allowed buffer size|"
    r"Ran out of memory|cudaErrorMemoryAllocation|hipErrorOutOfMemory|not enough memory|Not enough space to allocate|"
    r"Tried to allocate|exceeds the memory limit|KV cache|cuDNN failed to initialize|Could not create cudnn handle|best cudnn convolution algorithm|All algorithms tried|No algorithm worked|OOM at ",
    re.IGNORECASE)
SYNTHETIC_NEGATIVES = [
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "RuntimeError: CUDA error: device-side assert triggered",
    "RuntimeError: CUDA error: too many resources requested for launch",
    "RuntimeError: CUDA error: misaligned address",
    "W tensorflow/core/common_runtime/bfc_allocator.cc:239] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
    "3.46GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be "
    "performance gains if more memory were available.",
    "NCCL WARN Cuda failure 'invalid argument'",
    "RuntimeError: CUDA error: no kernel image is available for execution on the device",
]


def in_check_split(case_id: str) -> bool:
    return int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % 5 == 0


def load(name: str) -> list[dict]:
    path = CASES_DIR / name
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def score_case(case: dict) -> dict:
    report = analyze_inputs([], text=case["error_text"], note=case["user_note"])
    ids = [cause.id for cause in report.causes]
    return {
        "id": case["id"], "label": case["root_cause"], "ranked": ids[:3],
        "confidences": [(cause.confidence, cause.id == case["root_cause"]) for cause in report.causes[:3]],
        "has_message": bool(OOM_TEXT.search(case["error_text"])), "detected": report.detected,
        "suspected": getattr(report, "suspected", False), "top1": ids[:1] == [case["root_cause"]], "top3": case["root_cause"] in ids[:3],
    }


def summarise(rows: list[dict]) -> dict:
    if not rows:
        return {"cases": 0}
    with_message = [row for row in rows if row["has_message"]]
    without = [row for row in rows if not row["has_message"]]
    per_label: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        entry = per_label[row["label"]]
        entry[0], entry[1], entry[2] = entry[0] + 1, entry[1] + row["top1"], entry[2] + row["top3"]
    return {
        "cases": len(rows),
        "with_message": len(with_message),
        "detected": sum(row["detected"] for row in with_message) / max(1, len(with_message)),
        "without_message": len(without),
        "suspected_or_detected": sum(row["suspected"] or row["detected"] for row in without) / max(1, len(without)),
        "ranked": sum(bool(row["ranked"]) for row in rows) / len(rows),
        "top1": sum(row["top1"] for row in rows) / len(rows),
        "top3": sum(row["top3"] for row in rows) / len(rows),
        "per_label": {label: {"n": n, "top1": h1 / n, "top3": h3 / n} for label, (n, h1, h3) in sorted(per_label.items())},
    }


CALIBRATION_BINS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.7), (0.7, 0.85), (0.85, 1.01))


def calibration(rows: list[dict]) -> list[dict]:
    """Reliability of the confidences: of the causes ranked in the top 3 with a confidence in each
    bin, how many were the case's root cause. A calibrated engine's hit rate sits inside its bin."""
    table = []
    for low, high in CALIBRATION_BINS:
        hits = [hit for row in rows for confidence, hit in row["confidences"] if low <= confidence < high]
        table.append({"bin": f"{low:.2f}-{min(high, 1.0):.2f}", "causes": len(hits), "root_cause": sum(hits) / max(1, len(hits))})
    return table


def evaluate() -> dict:
    cases = load("dev_cases.jsonl")
    rows = [score_case(case) for case in cases]
    slices = {
        "all": rows,
        "check": [row for row in rows if in_check_split(row["id"])],
        "tune": [row for row in rows if not in_check_split(row["id"])],
        "first41": rows[:FIRST_ROUND],
        "new86": rows[FIRST_ROUND:],
    }
    negatives = [case["error_text"] for case in load("dev_negatives.jsonl")] + SYNTHETIC_NEGATIVES
    alarms = [text[:80] for text in negatives if (report := analyze_inputs([], text=text)).detected or report.causes]
    return {"slices": {name: summarise(part) for name, part in slices.items()},
            "calibration": {name: calibration(slices[name]) for name in ("tune", "check")},
            "false_alarms": len(alarms), "negatives": len(negatives), "alarms": alarms, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cases", action="store_true", help="print every case's ranking (misses marked)")
    parser.add_argument("--slice", default=None, help="with --cases: only this slice (check, tune)")
    args = parser.parse_args()
    result = evaluate()
    if args.json:
        print(json.dumps({key: value for key, value in result.items() if key != "rows"}, indent=2))
        return
    if args.cases:
        for row in result["rows"]:
            split = "check" if in_check_split(row["id"]) else "tune"
            if args.slice and args.slice != split:
                continue
            mark = "  " if row["top1"] else ("3 " if row["top3"] else "XX")
            state = "D" if row["detected"] else ("S" if row["suspected"] else "-")
            print(f"{mark} {state} {split:5} {row['id'][:44]:44} {row['label']:24} {' '.join(row['ranked'])}")
    print("| slice | cases | detected (with message) | suspected (without) | top-1 | top-3 |\n|---|---|---|---|---|---|")
    for name, part in result["slices"].items():
        print(f"| {name} | {part['cases']} | {part['detected']:.0%} of {part['with_message']} | "
              f"{part['suspected_or_detected']:.0%} of {part['without_message']} | {part['top1']:.1%} | {part['top3']:.1%} |")
    print(f"\nfalse alarms: {result['false_alarms']} of {result['negatives']} non-OOM errors {result['alarms']}")
    print("\n| confidence | tune: causes | tune: was the root cause | check: causes | check: was the root cause |\n|---|---|---|---|---|")
    for tune, check in zip(result["calibration"]["tune"], result["calibration"]["check"]):
        print(f"| {tune['bin']} | {tune['causes']} | {tune['root_cause']:.0%} | {check['causes']} | {check['root_cause']:.0%} |")
    print("\n| label | cases | top-1 | top-3 |\n|---|---|---|---|")
    for label, row in result["slices"]["all"]["per_label"].items():
        print(f"| {label} | {row['n']} | {row['top1']:.0%} | {row['top3']:.0%} |")


if __name__ == "__main__":
    main()
