"""Rules on the user's own code around the failure: the failing line and its neighbours."""

from __future__ import annotations

import re
from typing import Iterator

from . import RuleInput, Vote, rule

_ACCUMULATED_LOSS = re.compile(r"\+=\s*\w*loss\w*(?!\.item|\.detach|\.cpu)\s*$|\.append\(\s*\w*loss\w*\s*\)")
_APPENDED_OUTPUT = re.compile(r"\.append\(\s*(?:out|output|outputs|logits|pred|preds|prediction|y_hat|features?|emb\w*)\s*\)")
_NAIVE_ATTENTION = re.compile(r"softmax\(.*(?:@|matmul|bmm|einsum).*(?:transpose|\.T\b|mT)|(?:@|matmul|bmm)\s*\(?\s*\w*\.transpose\(-2,\s*-1\)")
_LOGITS = re.compile(r"cross_entropy|lm_head|log_softmax|CrossEntropyLoss|logits")


def _user_lines(data: RuleInput) -> list[str]:
    stack = data.context.stack
    if not stack:
        return []
    lines: list[str] = []
    for frame in stack.user_frames:
        lines.extend(frame.source_context or ([frame.code] if frame.code else []))
    return [line.strip() for line in lines if line]


@rule
def code_patterns(data: RuleInput) -> Iterator[Vote]:
    lines = _user_lines(data)
    for line in lines:
        if _ACCUMULATED_LOSS.search(line):
            yield Vote("graph_retained", 0.8, f"`{line}` accumulates a tensor that carries its autograd graph.")
            break
    for line in lines:
        if "retain_graph=True" in line:
            yield Vote("graph_retained", 0.45, f"`{line}` keeps the graph (and its saved activations) after backward, "
                       "for as long as anything references it.")
            break
    for line in lines:
        if _APPENDED_OUTPUT.search(line) and ".detach()" not in line and ".cpu()" not in line:
            yield Vote("reference_leak", 0.7, f"`{line}` keeps GPU outputs alive in a list.")
            break
    for line in lines:
        if _NAIVE_ATTENTION.search(line):
            yield Vote("attention_quadratic", 0.75, f"`{line}` materialises the full attention matrix.")
            break
    failing = data.context.stack.frames[-1] if data.context.stack and data.context.stack.frames else None
    if failing and failing.code and _LOGITS.search(failing.code):
        yield Vote("large_logits", 0.45, f"It failed in `{failing.code.strip()}`, the output layer / loss.")
