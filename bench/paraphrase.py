"""Note reading under rephrasing: tune-split cases of the corpus with their note reworded by hand
(same facts, other words; `bench/paraphrased_notes.json`), ranked with the original note and with
the reworded one. A reader fitted to a phrasing loses the case when the words change; the check
split is never reworded here (it stays out of every tuning loop).

    python3 bench/paraphrase.py [--cases]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from oomtriage.api import analyze_inputs

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "cases" / "dev_cases.jsonl"


def in_check_split(case_id: str) -> bool:
    return int(hashlib.sha1(case_id.encode()).hexdigest(), 16) % 5 == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", action="store_true", help="one line per case")
    args = parser.parse_args()
    reworded = json.loads((HERE / "paraphrased_notes.json").read_text(encoding="utf-8"))
    cases = {case["id"]: case for case in map(json.loads, CORPUS.read_text(encoding="utf-8").splitlines())}
    original = rephrased = same = 0
    for case_id, note in reworded.items():
        case = cases[case_id]
        assert not in_check_split(case_id), f"{case_id} is in the check split"
        first = [c.id for c in analyze_inputs([], text=case["error_text"], note=case["user_note"]).causes][:1]
        second = [c.id for c in analyze_inputs([], text=case["error_text"], note=note).causes][:1]
        original += first == [case["root_cause"]]
        rephrased += second == [case["root_cause"]]
        same += first == second
        if args.cases:
            mark = "  " if first == second else "<>"
            print(f"{mark} {case_id[:44]:44} {case['root_cause']:24} {first} -> {second}")
    n = len(reworded)
    print(f"| notes | top-1 with the corpus note | top-1 reworded | same top-1 |\n|---|---|---|---|\n"
          f"| {n} | {original} ({original / n:.0%}) | {rephrased} ({rephrased / n:.0%}) | {same} ({same / n:.0%}) |")


if __name__ == "__main__":
    main()
