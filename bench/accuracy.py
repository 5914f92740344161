"""Diagnosis accuracy on ../shared/cases/dev_cases.jsonl, plus false alarms on non-OOM errors.

Input per case: ``error_text`` and ``user_note`` (as the note). Output: detection rate over the
cases whose text holds an OOM message, top-1 / top-3 accuracy against ``root_cause``, per label.
Run: python3 bench/accuracy.py [--json]
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from oomtriage.api import analyze_inputs

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT.parent / "shared" / "cases" / "dev_cases.jsonl"
OOM_TEXT = re.compile(r"out of memory|OutOfMemory|RESOURCE_EXHAUSTED|ResourceExhausted|OOM when|ALLOC_FAILED|killed by signal|"
                      r"oom-kill|cuDNN failed to initialize|Failed to allocate|Resource exhausted", re.IGNORECASE)
NON_OOM = [
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


def evaluate() -> dict:
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    per_label: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    detected = with_message = top1 = top3 = 0
    for case in cases:
        report = analyze_inputs([], text=case["error_text"], note=case["user_note"])
        if OOM_TEXT.search(case["error_text"]):
            with_message += 1
            detected += report.detected
        ids = [cause.id for cause in report.causes]
        hit1, hit3 = ids[:1] == [case["root_cause"]], case["root_cause"] in ids[:3]
        top1, top3 = top1 + hit1, top3 + hit3
        row = per_label[case["root_cause"]]
        row[0], row[1], row[2] = row[0] + 1, row[1] + hit1, row[2] + hit3
    false_alarms = sum(analyze_inputs([], text=text).detected for text in NON_OOM)
    return {
        "cases": len(cases), "detection_rate": detected / with_message, "cases_with_oom_message": with_message,
        "top1": top1 / len(cases), "top3": top3 / len(cases),
        "false_alarms": false_alarms, "non_oom_samples": len(NON_OOM),
        "per_label": {label: {"n": n, "top1": h1 / n, "top3": h3 / n} for label, (n, h1, h3) in sorted(per_label.items())},
    }


def main() -> None:
    result = evaluate()
    if "--json" in sys.argv:
        print(json.dumps(result, indent=2))
        return
    print(f"cases {result['cases']}  detection {result['detection_rate']:.1%} of {result['cases_with_oom_message']} with a message  "
          f"top-1 {result['top1']:.1%}  top-3 {result['top3']:.1%}  false alarms {result['false_alarms']}/{result['non_oom_samples']}")
    print("| label | cases | top-1 | top-3 |\n|---|---|---|---|")
    for label, row in result["per_label"].items():
        print(f"| {label} | {row['n']} | {row['top1']:.0%} | {row['top3']:.0%} |")


if __name__ == "__main__":
    main()
