"""What appliers produce and see: the action a fix takes, a proposed change, the program site.
Imported only when fixes are applied (validate, fit), never by log analysis."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from oomtriage.program import ProgramOptions

NumericsRule = Literal["exact", "reordered", "precision"]


class FixAction(BaseModel):
    type: Literal["env", "args", "diff", "advice"]
    env: dict[str, str] = Field(default_factory=dict)
    args: dict[str, str | None] = Field(default_factory=dict, description="(legacy) flag -> value; None: a bare flag")
    command: list[str] | None = Field(None, description="the whole command with the program's options changed")
    diff: str | None = None
    described: str | None = Field(None, description="the change in the program's own terms")


class Proposal(BaseModel):
    """One concrete change an applier proposes for this program."""

    title: str
    action: FixAction
    rule: NumericsRule | None = Field(None, description="overrides the kind's rule for this change")
    changes_workload: str | None = Field(None, description="why this change alters what is trained (numerics not comparable)")
    size: int | None = Field(None, description="search fixes: the value searched over (the micro-batch)")


@dataclass
class FixSite:
    """What an applier sees of the program."""

    command: list[str]
    project: Path
    program: "ProgramOptions"
    script: Path | None
    source: str
    failing_lines: dict[str, set[int]]  # project-relative file -> its lines in the OOM's traceback
    phase: str = "unknown"

    def project_file(self, relative: str) -> str | None:
        try:
            return (self.project / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None


def option_proposal(title: str, expressed, **fields) -> Proposal:
    """A change expressed in the program's options: a new command, plus a diff when a config file
    or a literal in the code is what changes."""
    action = FixAction(type="diff" if expressed.diff else "args", command=expressed.command, diff=expressed.diff,
                       described=" ".join(expressed.described))
    return Proposal(title=title, action=action, **fields)
