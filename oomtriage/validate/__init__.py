"""Validate fixes: apply each suggested fix alone in a scratch copy of the project, re-run the repro
under measurement, check the numerics against the baseline, and record accepted fixes."""
