"""Fit the rule engine's confidence calibration on the corpus's tuning split; check it on the
check split.

For the top 3 causes of every case, the raw score (``Cause.score``, the combined vote) and whether
the cause was the case's root cause. Isotonic regression (pool adjacent violators) over the tuning
split's pairs gives a monotone step function; its blocks' mean scores and hit rates are the knots of
``oomtriage/engine/calibration.py``, printed for pasting. Then the reliability of the calibrated
confidences on both splits, by bin.

Run: python3 bench/calibration.py
"""

from __future__ import annotations

from accuracy import in_check_split, load

from oomtriage.api import analyze_inputs
from oomtriage.engine.calibration import calibrate

BINS = ((0.0, 0.1), (0.1, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.01))
MIN_BLOCK = 12  # a knot rests on at least this many causes


def pairs(check: bool) -> list[tuple[float, bool]]:
    found = []
    for case in load("dev_cases.jsonl"):
        if in_check_split(case["id"]) != check:
            continue
        report = analyze_inputs([], text=case["error_text"], note=case["user_note"])
        found += [(cause.score if cause.score is not None else cause.confidence, cause.id == case["root_cause"])
                  for cause in report.causes[:3]]
    return found


def isotonic(points: list[tuple[float, bool]]) -> list[tuple[float, float, int]]:
    """Pool adjacent violators, then merge blocks smaller than MIN_BLOCK into a neighbour:
    [(mean score, hit rate, count)] with nondecreasing hit rates."""
    def merge(into: list[float], other: list[float]) -> None:
        for index in range(3):
            into[index] += other[index]

    blocks: list[list[float]] = []  # [sum of scores, hits, count]
    for score, hit in sorted(points):
        blocks.append([score, float(hit), 1])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            merge(blocks[-2], blocks.pop())
    # Small blocks rest on too few causes: fold each into its smaller neighbour (monotone stays monotone).
    while len(blocks) > 1 and min(block[2] for block in blocks) < MIN_BLOCK:
        index = min(range(len(blocks)), key=lambda i: blocks[i][2])
        neighbour = index - 1 if index == len(blocks) - 1 or (index > 0 and blocks[index - 1][2] <= blocks[index + 1][2]) else index + 1
        low, high = sorted((index, neighbour))
        merge(blocks[low], blocks.pop(high))
    return [(total / count, hits / count, int(count)) for total, hits, count in blocks]


def reliability(points: list[tuple[float, bool]]) -> list[str]:
    rows = []
    for low, high in BINS:
        inside = [hit for score, hit in points if low <= calibrate(score) < high]
        mean = sum(calibrate(score) for score, _ in points if low <= calibrate(score) < high) / max(1, len(inside))
        rows.append(f"| {low:.2f}-{min(high, 1):.2f} | {len(inside)} | {mean:.2f} | {sum(inside) / max(1, len(inside)):.0%} |")
    return rows


def main() -> None:
    tune, check = pairs(False), pairs(True)
    blocks = isotonic(tune)
    print("KNOTS = (\n    (0.0, 0.0),")
    for score, rate, count in blocks:
        print(f"    ({score:.3f}, {rate:.3f}),  # {count} causes")
    print("    (1.0, 1.0),\n)")
    for name, points in (("tune", tune), ("check", check)):
        print(f"\n{name}: calibrated confidence vs how often the cause was the root cause")
        print("| confidence | causes | mean confidence | root cause |\n|---|---|---|---|")
        print("\n".join(reliability(points)))


if __name__ == "__main__":
    main()
