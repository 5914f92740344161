"""Behaviour on every real case of ../shared/cases: the message is found (or the case is marked
suspected), the allocator's figures are extracted, the ranking is well formed, and the real
non-OOM errors raise no alarm. Accuracy (top-1 / top-3 per slice and label) is not asserted here:
it is measured by bench/accuracy.py and reported in BENCHMARKS.md."""

from __future__ import annotations

import json
import re

import pytest

from oomtriage.api import analyze_inputs
from oomtriage.taxonomy import is_cause_id
from tests.conftest import SHARED, load_cases

CASES = load_cases()
NEGATIVES_FILE = SHARED / "cases" / "dev_negatives.jsonl"
NEGATIVES = [json.loads(line) for line in NEGATIVES_FILE.read_text().splitlines() if line.strip()] \
    if NEGATIVES_FILE.exists() else []
pytestmark = pytest.mark.skipif(not CASES, reason="../shared/cases is not beside this checkout")

# Text that holds an OOM message of some framework, whatever its form. The rest (a traceback cut
# before the message, a title) must still be ranked, as suspected.
OOM_TEXT = re.compile(
    r"out of memory|OutOfMemory|RESOURCE_EXHAUSTED|ResourceExhausted|Resource exhausted|OOM when|ALLOC_FAILED|"
    r"killed by signal|oom-kill|Failed to allocate|Unable to allocate|maximum allowed buffer size|"
    r"Ran out of memory|cudaErrorMemoryAllocation|hipError_t\(1002\)|not enough memory|Not enough space to allocate|"
    r"Tried to allocate|exceeds the memory limit|stored in KV cache|cuDNN failed to initialize|Could not create cudnn handle|best cudnn convolution algorithm|All algorithms tried|No algorithm worked|\bOOM at ",
    re.IGNORECASE)


def _report(case):
    return analyze_inputs([], text=case["error_text"], note=case["user_note"])


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case_is_detected_or_suspected_and_ranked(case):
    report = _report(case)
    if OOM_TEXT.search(case["error_text"]):
        assert report.detected, "an OOM message in the text must be detected"
        assert not report.suspected
    else:
        assert report.suspected and not report.detected, "no message: ranked as suspected, detected stays false"
    assert report.causes, "every case is ranked"
    assert all(is_cause_id(cause.id) for cause in report.causes)
    assert len({cause.id for cause in report.causes}) == len(report.causes)
    confidences = [cause.confidence for cause in report.causes]
    assert confidences == sorted(confidences, reverse=True)
    assert all(cause.evidence and cause.fixes for cause in report.causes)


@pytest.mark.parametrize("case", [c for c in CASES if re.search(r"already allocated|allocated by PyTorch", c["error_text"])],
                         ids=lambda c: c["id"])
def test_allocator_figures_are_extracted(case):
    error = _report(case).error
    assert error.requested_bytes and error.total_bytes and error.allocated_bytes is not None


@pytest.mark.skipif(not NEGATIVES, reason="dev_negatives.jsonl is not beside this checkout")
@pytest.mark.parametrize("case", NEGATIVES, ids=lambda c: c["id"])
def test_real_non_oom_errors_raise_no_alarm(case):
    report = analyze_inputs([], text=case["error_text"])
    assert not report.detected and not report.causes
