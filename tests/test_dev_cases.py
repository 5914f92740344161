"""Every case of ../shared/cases/dev_cases.jsonl is parsed (fields extracted where present) and
diagnosed. The accuracy gate here is a regression guard; the full per-label numbers live in
bench/accuracy.py and BENCHMARKS.md."""

from __future__ import annotations

import re

import pytest

from oomtriage.api import analyze_inputs
from oomtriage.taxonomy import is_cause_id
from tests.conftest import load_cases

CASES = load_cases()
pytestmark = pytest.mark.skipif(not CASES, reason="../shared/cases is not beside this checkout")

# Text that holds an OOM message of some framework (the ones without: a traceback cut before the
# message, or a notebook fragment).
OOM_TEXT = re.compile(r"out of memory|OutOfMemory|RESOURCE_EXHAUSTED|ResourceExhausted|OOM when|ALLOC_FAILED|"
                      r"killed by signal|oom-kill|cuDNN failed to initialize|Failed to allocate|Resource exhausted",
                      re.IGNORECASE)


def _report(case):
    return analyze_inputs([], text=case["error_text"], note=case["user_note"])


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case_is_parsed_and_diagnosed(case):
    report = _report(case)
    if OOM_TEXT.search(case["error_text"]):
        assert report.detected, "an OOM message in the text must be detected"
        if case["framework"] in ("pytorch", "tensorflow", "jax"):
            assert report.error.framework in (case["framework"], "unknown", "tensorflow")
    assert report.causes, "every case is diagnosed (the note says it is an OOM)"
    assert all(is_cause_id(cause.id) for cause in report.causes)
    assert len({cause.id for cause in report.causes}) == len(report.causes)
    confidences = [cause.confidence for cause in report.causes]
    assert confidences == sorted(confidences, reverse=True)


@pytest.mark.parametrize("case", [c for c in CASES if "Tried to allocate" in c["error_text"]],
                         ids=lambda c: c["id"])
def test_allocator_figures_are_extracted(case):
    error = _report(case).error
    assert error.requested_bytes and error.total_bytes and error.allocated_bytes is not None
    assert error.reserved_bytes is not None or error.reserved_unallocated_bytes is not None


def test_accuracy_regression_guard():
    hits1 = hits3 = 0
    for case in CASES:
        ids = [cause.id for cause in _report(case).causes]
        hits1 += ids[:1] == [case["root_cause"]]
        hits3 += case["root_cause"] in ids[:3]
    assert hits1 / len(CASES) >= 0.80
    assert hits3 / len(CASES) >= 0.95
