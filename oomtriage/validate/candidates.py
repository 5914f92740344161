"""Turn a report's fixes into actions the validator can apply: environment variables, a change to
the command's arguments, or a unified diff against the project's files. The rule engine's code
fixes get their diff from an AST rewrite; the model's fixes bring their own diff. A fix that
cannot be expressed as an action stays advice and is never reported as validated."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from oomtriage.models import TriageReport

from .rewrite import REWRITES, rewrite_project_file


class FixAction(BaseModel):
    type: Literal["env", "args", "diff", "advice"]
    env: dict[str, str] = Field(default_factory=dict)
    args: dict[str, str | None] = Field(default_factory=dict, description="flag -> value (None: a bare flag)")
    diff: str | None = None


class CandidateFix(BaseModel):
    kind: str
    title: str
    cause_id: str
    source: Literal["rules", "llm"] = "rules"
    action: FixAction


def _script(command: list[str], project: Path) -> Path | None:
    for item in command[1:]:
        if item.endswith(".py") and (project / item).is_file():
            return project / item
    return None


def _set_args(command: list[str], changes: dict[str, str | None]) -> list[str]:
    result = list(command)
    for flag, value in changes.items():
        if flag in result:
            index = result.index(flag)
            if value is not None and index + 1 < len(result):
                result[index + 1] = value
        else:
            result += [flag] if value is None else [flag, value]
    return result


def args_fix(kind: str, command: list[str], source: str) -> dict[str, str | None] | None:
    """What a script's own options allow: a smaller batch with accumulation, an AMP flag."""
    if kind == "reduce_batch_size":
        batch_flag = next((flag for flag in ("--batch-size", "--batch_size", "--bs") if flag in source), None)
        if not batch_flag:
            return None
        current = command[command.index(batch_flag) + 1] if batch_flag in command else _default(source, batch_flag)
        if not current or not current.isdigit() or int(current) < 2:
            return None
        accumulate = next((flag for flag in ("--accumulate", "--grad-accum", "--gradient-accumulation-steps",
                                             "--gradient_accumulation_steps") if flag in source), None)
        factor = 4 if int(current) % 4 == 0 else 2
        change: dict[str, str | None] = {batch_flag: str(int(current) // factor)}
        if accumulate:
            change[accumulate] = str(factor)
        return change
    if kind == "mixed_precision":
        flag = next((flag for flag in ("--amp", "--bf16", "--mixed-precision", "--fp16") if re.search(rf"['\"]{flag}['\"]", source)), None)
        return {flag: None} if flag else None
    return None


def _default(source: str, flag: str) -> str | None:
    match = re.search(rf"['\"]{re.escape(flag)}['\"][^)]*default\s*=\s*(\d+)", source)
    return match.group(1) if match else None


def candidates_from_report(report: TriageReport, command: list[str], project: Path) -> list[CandidateFix]:
    script = _script(command, project)
    source = script.read_text(encoding="utf-8", errors="replace") if script else ""
    frames = [f for f in (report.stack.frames if report.stack else []) if f.is_user and f.lineno]
    seen: set[tuple[str, str]] = set()
    found: list[CandidateFix] = []
    for cause in report.causes:
        for fix in cause.fixes:
            if (fix.kind, fix.source) in seen:
                continue
            seen.add((fix.kind, fix.source))
            action = _action(fix, command, source, script, project, frames)
            found.append(CandidateFix(kind=fix.kind, title=fix.title, cause_id=cause.id, source=fix.source, action=action))
    return found


def _action(fix, command, source, script, project, frames) -> FixAction:
    if fix.source == "llm" and fix.diff:
        return FixAction(type="diff", diff=fix.diff)
    if fix.env:
        return FixAction(type="env", env=fix.env)
    changes = args_fix(fix.kind, command, source)
    if changes:
        return FixAction(type="args", args=changes)
    if fix.kind in REWRITES and script is not None:
        relative = str(script.relative_to(project))
        lines = {f.lineno for f in frames if Path(f.filename).name == script.name}
        edit = rewrite_project_file(project, relative, fix.kind, lines)
        if edit:
            return FixAction(type="diff", diff=edit.diff)
    return FixAction(type="advice")


def apply_args(command: list[str], action: FixAction) -> list[str]:
    return _set_args(command, action.args) if action.type == "args" else list(command)


def describe(action: FixAction) -> str:
    if action.type == "env":
        return " ".join(f"{key}={value}" for key, value in action.env.items())
    if action.type == "args":
        return " ".join(flag if value is None else f"{flag} {shlex.quote(value)}" for flag, value in action.args.items())
    return action.diff or "advice only"
