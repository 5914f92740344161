"""Turn a report's fixes into actions the validator can apply. Each fix kind's applier (in the
catalog, ``oomtriage.fixkinds``) expresses it in the program's own configuration (its options,
read by ``oomtriage.program``), an environment variable, or a code edit as a diff. The model's
fixes bring their own diff (run only with --run-model-patches). A fix no applier can express stays
advice and is never reported as validated."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from oomtriage.fixkinds import KINDS
from oomtriage.fixkinds.actions import FixAction, FixSite, NumericsRule, Proposal
from oomtriage.models import TriageReport
from oomtriage.program import ProgramOptions, entry_script, read_program

__all__ = ["CandidateFix", "FixAction", "apply_args", "candidates_from_report", "describe"]


class CandidateFix(BaseModel):
    kind: str
    title: str
    cause_id: str
    source: Literal["rules", "llm"] = "rules"
    action: FixAction
    rule: NumericsRule | None = None
    changes_workload: str | None = None
    search: list[Proposal] = Field(default_factory=list, description="the values a search fix tries, largest first")
    varies_randomness: bool = False


def failing_lines(report: TriageReport, project: Path) -> dict[str, set[int]]:
    lines: dict[str, set[int]] = {}
    root = project.resolve()
    for frame in (report.stack.frames if report.stack else []):
        if not frame.lineno:
            continue
        path = Path(frame.filename)
        candidates = [path] if path.is_absolute() else [root / path]
        for candidate in candidates:
            try:
                resolved = candidate.resolve()
            except OSError:
                continue
            if resolved.is_relative_to(root) and resolved.is_file():
                lines.setdefault(str(resolved.relative_to(root)), set()).add(frame.lineno)
    return lines


def fix_site(report: TriageReport | None, command: list[str], project: Path, program: ProgramOptions | None = None) -> FixSite:
    script = entry_script(command, project)
    source = ""
    if script is not None:
        try:
            source = script.read_text(encoding="utf-8", errors="replace")
        except OSError:
            source = ""
    return FixSite(command=list(command), project=project.resolve(), program=program or read_program(command, project),
                   script=script, source=source, failing_lines=failing_lines(report, project) if report else {},
                   phase=report.phase if report else "unknown")


def candidates_from_report(report: TriageReport, command: list[str], project: Path) -> list[CandidateFix]:
    site = fix_site(report, command, project)
    seen: set[tuple[str, str]] = set()
    found: list[CandidateFix] = []
    for cause in report.causes:
        for fix in cause.fixes:
            if (fix.kind, fix.source) in seen:
                continue
            seen.add((fix.kind, fix.source))
            found.append(_candidate(fix, cause.id, site))
    return found


def _candidate(fix, cause_id: str, site: FixSite) -> CandidateFix:
    entry = KINDS.get(fix.kind)
    base = dict(kind=fix.kind, cause_id=cause_id, source=fix.source, rule=entry.rule if entry else None,
                varies_randomness=bool(entry and entry.varies_randomness))
    if fix.source == "llm" and fix.diff:
        return CandidateFix(title=fix.title, action=FixAction(type="diff", diff=fix.diff), **base)
    proposals: list[Proposal] = []
    if entry is not None and entry.apply is not None:
        try:
            proposals = entry.apply(site, fix)
        except (OSError, SyntaxError, ValueError, RecursionError):
            proposals = []  # an applier that cannot read the program leaves the fix as advice
    if not proposals:
        return CandidateFix(title=fix.title, action=FixAction(type="advice"), **base)
    first = proposals[0]
    base["rule"] = first.rule or base["rule"]
    return CandidateFix(title=first.title, action=first.action, changes_workload=first.changes_workload,
                        search=proposals if entry and entry.search and len(proposals) > 1 else [], **base)


def apply_args(command: list[str], action: FixAction) -> list[str]:
    if action.command is not None:
        return list(action.command)
    if action.type == "args" and action.args:
        from oomtriage.program import set_flag

        result = list(command)
        for flag, value in action.args.items():
            result = set_flag(result, flag, value)
        return result
    return list(command)


def describe(action: FixAction) -> str:
    if action.described and action.type != "diff":
        return action.described
    if action.type == "env":
        return " ".join(f"{key}={value}" for key, value in action.env.items())
    if action.type == "args":
        return " ".join(flag if value is None else f"{flag} {shlex.quote(value)}" for flag, value in action.args.items())
    return action.diff or "advice only"
