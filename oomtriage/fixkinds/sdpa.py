"""Fused attention: ``softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v`` ->
``F.scaled_dot_product_attention(q, k, v)``, which never stores the T x T matrix."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from oomtriage.models import Fix

if TYPE_CHECKING:
    from .actions import FixSite, Proposal

from . import register
from .edits import diff_proposal, edit_first_file, near, replace_nodes

SDPA = Fix(
    kind="sdpa_attention", title="Use fused scaled_dot_product_attention",
    how="Replace softmax(q @ k.T * scale) @ v with the fused kernel (flash / memory-efficient), which never "
        "stores the sequence x sequence matrix; for diffusers use enable_xformers_memory_efficient_attention() or "
        "attention slicing.",
    snippet="import torch.nn.functional as F\nout = F.scaled_dot_product_attention(q, k, v, is_causal=True)",
    expected_saving="the T x T attention matrices: ~10x at 2K tokens, ~20x at 4K")


@register("sdpa_attention", rule="reordered")
def propose(site: FixSite, fix: Fix) -> list[Proposal]:
    edit = edit_first_file(site, fused_attention)
    if edit is not None:
        return diff_proposal(edit, "Replace the hand-written attention with scaled_dot_product_attention")
    return []


def fused_attention(source: str, lines: set[int]) -> str | None:
    tree = ast.parse(source)
    edits = []
    for node in ast.walk(tree):
        match = _attention_operands(node)
        if match and near(node, lines):
            scale = f", scale={match[3]}" if match[3] else ""
            edits.append((node, f"torch.nn.functional.scaled_dot_product_attention({match[0]}, {match[1]}, {match[2]}{scale})"))
    return replace_nodes(source, edits)


def _attention_operands(node: ast.AST) -> tuple[str, str, str, str | None] | None:
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
        return None
    softmax = node.left
    if not (isinstance(softmax, ast.Call) and ast.unparse(softmax.func).endswith("softmax") and softmax.args):
        return None
    scores, scale = softmax.args[0], None
    if isinstance(scores, ast.BinOp) and isinstance(scores.op, (ast.Mult, ast.Div)):
        product_left = isinstance(scores.left, ast.BinOp) and isinstance(scores.left.op, ast.MatMult)
        factor = ast.unparse(scores.right if product_left else scores.left)
        scale = factor if isinstance(scores.op, ast.Mult) else f"1.0 / ({factor})"
        scores = scores.left if product_left else scores.right
    if not (isinstance(scores, ast.BinOp) and isinstance(scores.op, ast.MatMult)):
        return None
    key = scores.right
    transposed = (isinstance(key, ast.Call) and isinstance(key.func, ast.Attribute) and key.func.attr == "transpose"
                  and [ast.unparse(arg) for arg in key.args] in (["-2", "-1"], ["-1", "-2"]))
    if not transposed:
        return None
    return ast.unparse(scores.left), ast.unparse(key.func.value), ast.unparse(node.right), scale
