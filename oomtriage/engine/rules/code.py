"""Rules on the user's own code around the failure: the lines that ran (the failing line, the
frames' own lines and the lines above them in their loops), never a neighbouring branch."""

from __future__ import annotations

import re
from typing import Iterator

from oomtriage.models import Frame

from . import RuleInput, Vote, rule

_ACCUMULATED_LOSS = re.compile(r"\+=\s*\w*loss\w*(?!\.item|\.detach|\.cpu)\s*$|\.append\(\s*\w*loss\w*\s*\)")
_APPENDED_OUTPUT = re.compile(r"\.append\(\s*(?:out|output|outputs|logits|pred|preds|prediction|predictions|y_hat|features?|emb\w*)\s*\)")
_NAIVE_ATTENTION = re.compile(r"softmax\(.*(?:@|matmul|bmm|einsum).*(?:transpose|\.T\b|mT)|(?:@|matmul|bmm)\s*\(?\s*\w*\.transpose\(-2,\s*-1\)")
# A matrix over every pair of items of two collections (queries x database, all x all): an
# einsum that keeps one index of each operand and sums the shared one ("id,jd->ij"), a distance
# matrix, a product with the other collection's transpose. Its size is the product of the counts.
_PAIRWISE_EINSUM = re.compile(r"einsum\(\s*['\"]\s*(\w)(\w)\s*,\s*(\w)(\w)\s*->\s*(\w)(\w)\s*['\"]")
_PAIRWISE_CALL = re.compile(r"\b(?:torch\.)?cdist\(|\bpairwise_distances?\(|\b(?:torch\.)?mm\([^()]*,\s*\w+\.(?:T\b|t\(\))|@\s*\w+\.(?:T\b|t\(\))")
_BRANCH = re.compile(r"^(?:if|elif|else|try|except|finally|match|case)\b")
_LOOP = re.compile(r"^(?:async\s+)?(?:for|while)\b")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def executed_lines(frame: Frame) -> list[str]:
    """The frame's own line and the lines above it that ran before it: its enclosing block
    headers, and siblings at its level or above. Lines inside a branch the failing line is not
    in (``else:`` below an ``if`` that ran, say) may not have run, so they are left out; lines
    after the failing line have not run yet in this pass."""
    lines = [frame.code] if frame.code else []
    context, first = frame.source_context, frame.context_first_line
    if not context or first is None or frame.lineno is None:
        return [line for line in lines if line]
    index = frame.lineno - first
    if not 0 <= index < len(context):
        return [line for line in lines if line]
    own_level = level = _indent(context[index])
    taken: list[str] = []
    loop_level: int | None = None
    for line in reversed(context[:index]):
        if not line.strip():
            continue
        depth = _indent(line)
        if depth > level:
            continue  # inside a nested block before the failing line: a branch that may not have run
        if depth < level:
            level = depth  # an enclosing header: it ran
            if loop_level is None and _LOOP.match(line.strip()):
                loop_level = depth
        taken.append(line)
    if loop_level is not None:
        # Inside a loop, the lines after the failing one ran in the earlier iterations (where a
        # `total_loss += loss` below the backward lives), except those in branches.
        branch_level: int | None = None
        for line in context[index + 1:]:
            if not line.strip():
                continue
            depth = _indent(line)
            if depth <= loop_level:
                break
            if branch_level is not None and depth > branch_level:
                continue
            branch_level = None
            if depth <= own_level and _BRANCH.match(line.strip()):
                branch_level = depth
                continue
            if depth <= own_level:
                taken.append(line)
    return [line for line in [*lines, *taken] if line]


def _user_lines(data: RuleInput) -> list[str]:
    stack = data.context.stack
    if not stack:
        return []
    lines: list[str] = []
    for frame in stack.user_frames:
        lines.extend(executed_lines(frame))
    return [line.strip() for line in lines if line and line.strip()]


def pairwise_matrix_line(line: str) -> bool:
    """Whether the line builds a matrix over every pair of two collections' items."""
    einsum = _PAIRWISE_EINSUM.search(line)
    if einsum:
        i, d, j, d2, out_i, out_j = einsum.groups()
        return d == d2 and len({i, d, j}) == 3 and (out_i, out_j) == (i, j)
    return bool(_PAIRWISE_CALL.search(line)) and "softmax" not in line


@rule
def pairwise_matrix_at_the_failure(data: RuleInput) -> Iterator[Vote]:
    """The failing line builds a matrix over every pair of two collections (query x database
    similarities, a distance matrix): it grows with the product of the two counts, so a larger
    collection asks for quadratically more; the fix is to compute it in chunks of rows (or to use a
    nearest-neighbour index), not a smaller batch."""
    stack = data.context.stack
    frame = stack.user_frames[0] if stack and stack.user_frames else None
    line = (frame.code or "").strip() if frame else ""
    if line and pairwise_matrix_line(line):
        yield Vote("input_size_too_large", 0.65, f"`{line}` builds the matrix of every pair across two collections: its size is "
                   "the product of their counts; compute it in chunks of rows (keeping only the top matches of each) or use a "
                   "nearest-neighbour index.")
        yield Vote("reference_leak", -0.3, "The memory is one matrix of all pairs, not results kept batch after batch.")


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
