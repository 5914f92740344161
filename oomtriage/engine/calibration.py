"""From the rule engine's combined vote to a confidence that means what it says.

The votes combine by noisy-or, so a cause with one weak vote scores 0.3 although causes scored 0.3
are the root cause about one time in twenty on real reports. ``calibrate`` maps a score through a
monotone piecewise-linear curve fitted by isotonic regression (``bench/calibration.py``) on the
top-3 causes of the corpus's tuning split: of the causes scored about x there, the fraction that
was the root cause. The order of the causes never changes; only the number shown does.
"""

from __future__ import annotations

from bisect import bisect_right

# (score, share of causes with that score that were the root cause), from bench/calibration.py.
# Fitted 2026-12-01 on 312 top-3 causes of the 104 tuning cases (bench/calibration.py, after the
# last rule change of that day); each knot rests on >= 12 causes.
KNOTS: tuple[tuple[float, float], ...] = (
    (0.0, 0.0),
    (0.197, 0.013),
    (0.382, 0.083),
    (0.479, 0.150),
    (0.563, 0.400),
    (0.620, 0.524),
    (0.741, 0.653),
    (0.864, 0.750),
    (0.921, 0.960),
    (1.0, 1.0),
)

_SCORES = [score for score, _ in KNOTS]


def calibrate(score: float) -> float:
    """The confidence for a raw score: linear between the fitted knots, monotone, within [0, 1]."""
    score = min(1.0, max(0.0, score))
    index = bisect_right(_SCORES, score)
    if index == 0:
        return KNOTS[0][1]
    if index >= len(KNOTS):
        return KNOTS[-1][1]
    (x0, y0), (x1, y1) = KNOTS[index - 1], KNOTS[index]
    return round(y0 + (y1 - y0) * (score - x0) / (x1 - x0) if x1 > x0 else y1, 3)
