"""The rule registry. A rule reads the facts and signals and votes for causes with a weight and
the evidence behind it; ``oomtriage.engine.rank`` combines the votes. Rules live in themed modules
(``messages``, ``numbers``, ``phases``, ``workload``, ``code``, ``sites``, ``live``, ``distributed``); adding a rule is adding one function."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from oomtriage.models import TriageContext

from ..facts import Numbers
from ..signals import Signals


@dataclass(frozen=True)
class Vote:
    cause: str
    weight: float  # in (0, 1]; negative weights count against the cause
    evidence: str


@dataclass(frozen=True)
class RuleInput:
    context: TriageContext
    signals: Signals
    numbers: Numbers

    @property
    def framework(self) -> str:
        return self.context.error.framework if self.context.error else "unknown"


Rule = Callable[[RuleInput], Iterable[Vote]]
RULES: list[Rule] = []


def rule(function: Rule) -> Rule:
    RULES.append(function)
    return function


def all_rules() -> list[Rule]:
    from . import code, distributed, live, messages, numbers, phases, sites, workload  # noqa: F401  (registration)

    return RULES
