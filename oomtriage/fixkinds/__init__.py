"""The fix catalog: one module per fix kind that the validator can apply, each owning the kind's
titles and snippets (the ``Fix`` objects the engine hands out), its applier (how the change is made
to this program: its options, an environment variable, or a code edit as a diff) and its numerics
rule. Kinds without an applier live in ``advice``: they are shown, never called validated.

``VALIDATABLE_KINDS`` is derived from the registry, so the engine, the prompt and the validator can
never disagree about which kinds can be measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Literal

if TYPE_CHECKING:  # appliers' types: imported where fixes are applied, not by log analysis
    from oomtriage.models import Fix

    from .actions import FixSite, Proposal

NumericsRule = Literal["exact", "reordered", "precision"]


Applier = Callable[["FixSite", "Fix"], "list[Proposal]"]


@dataclass(frozen=True)
class FixKind:
    kind: str
    rule: NumericsRule | None  # None: the change alters the workload; its numerics are not comparable
    apply: Applier | None = None
    varies_randomness: bool = False  # draws random numbers in another order or shape: judge with dropout off
    search: bool = False  # proposals run from the largest value down; the validator keeps the largest that fits


KINDS: dict[str, FixKind] = {}


def register(kind: str, *, rule: NumericsRule | None, varies_randomness: bool = False, search: bool = False):
    def decorate(apply: Applier) -> Applier:
        KINDS[kind] = FixKind(kind=kind, rule=rule, apply=apply, varies_randomness=varies_randomness, search=search)
        return apply

    return decorate


def _load() -> None:
    from . import (alloc_conf, batch_size, checkpointing, detach_loss, free_references, input_size,  # noqa: F401
                   mixed_precision, no_grad, optimizer, sdpa)


_load()
VALIDATABLE_KINDS = frozenset(KINDS)


def rule_for(kind: str) -> NumericsRule | None:
    entry = KINDS.get(kind)
    return entry.rule if entry else None

