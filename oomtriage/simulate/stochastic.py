"""Dropout off, for numerics that compare like with like.

Accumulation (two micro-batches of 8 instead of one of 16) and recomputation draw the same random
numbers in another order or shape, so the dropout masks differ and the losses differ by far more
than any rounding: a fix would fail the numerics gate for its RNG, not its math. The validator
compares such fixes on runs with dropout disabled in both the baseline and the candidate (and says
so); memory is still measured on the runs with dropout as written.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import torch
import torch.nn.functional as F

_DROPOUTS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")


def _identity(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def no_dropout(input: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        return input

    return no_dropout


def _without_attention_dropout(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: Any = None,
                  dropout_p: float = 0.0, *args: Any, **kwargs: Any) -> torch.Tensor:
        return original(query, key, value, attn_mask, 0.0, *args, **kwargs)

    return attention


def disable_dropout() -> None:
    """Every dropout of ``torch.nn.functional`` (and so of ``nn.Dropout*``) and SDPA's ``dropout_p``."""
    for name in _DROPOUTS:
        if hasattr(F, name):
            setattr(F, name, _identity(getattr(F, name)))
    torch.dropout = _identity(torch.dropout)
    F.scaled_dot_product_attention = _without_attention_dropout(F.scaled_dot_product_attention)


def watch(seen: dict) -> None:
    """Note in ``seen["dropout_seen"]`` whether any dropout actually drew a mask (p > 0, training), so
    the validator runs dropout-off comparisons only for programs that use dropout."""
    for name in _DROPOUTS:
        if hasattr(F, name):
            setattr(F, name, _noting(getattr(F, name), seen))
    original_attention = F.scaled_dot_product_attention

    @functools.wraps(original_attention)
    def attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attn_mask: Any = None,
                  dropout_p: float = 0.0, *args: Any, **kwargs: Any) -> torch.Tensor:
        if dropout_p:
            seen["dropout_seen"] = True
        return original_attention(query, key, value, attn_mask, dropout_p, *args, **kwargs)

    F.scaled_dot_product_attention = attention


def _noting(original: Callable[..., Any], seen: dict) -> Callable[..., Any]:
    @functools.wraps(original)
    def dropout(input: torch.Tensor, p: float = 0.5, training: bool = True, *args: Any, **kwargs: Any) -> torch.Tensor:
        if p and training:
            seen["dropout_seen"] = True
        return original(input, p, training, *args, **kwargs)

    return dropout
