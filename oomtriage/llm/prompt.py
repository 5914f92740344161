"""Render the seven-step prompt from ``prompts/*.j2`` in a jinja2 sandbox, redact it, and fit it
into a token budget by dropping the least useful content first, saying what was dropped."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from oomtriage.engine.fixes import VALIDATABLE_KINDS
from oomtriage.models import TriageContext, TriageReport
from oomtriage.taxonomy import taxonomy

from .redact import redact
from .schema import LLMAnswer
from .tokens import TokenCounter

STEPS = ["1_context", "2_error", "3_profiling", "4_diagnosis", "5_solutions", "6_validation", "7_documentation"]
TEMPLATES = ["system", *STEPS]

# Trimming levels, applied in order until the prompt fits. The OOM message and the computed facts
# are never dropped.
TRIM_LEVELS = [
    ("library frames", {"library_frames": False}),
    ("repeated log lines", {"collapse_repeats": True}),
    ("long tables (kept the top 5 rows)", {"table_rows": 5}),
    ("log excerpt beyond 40 lines (head and tail kept)", {"excerpt_lines": 40}),
    ("source lines around frames beyond the failing line", {"source_context": 1}),
    ("log excerpt beyond 12 lines", {"excerpt_lines": 12}),
    ("profiler tables and snapshot sites", {"table_rows": 0}),
    ("the rule engine's ranking", {"rule_causes": False}),
    ("the log excerpt", {"excerpt_lines": 0}),
]


@dataclass
class RenderedPrompt:
    system: str
    user: str
    section_tokens: dict[str, int]
    total_tokens: int
    budget: int
    encoding: str
    dropped: list[str] = field(default_factory=list)
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system}, {"role": "user", "content": self.user}]

    @property
    def over_budget(self) -> bool:
        return self.total_tokens > self.budget


def environment(prompts_dir: Path | None = None):
    from jinja2 import ChoiceLoader, FileSystemLoader, StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    loaders = [FileSystemLoader(str(prompts_dir))] if prompts_dir else []
    loaders.append(FileSystemLoader(str(resources.files("oomtriage.prompts"))))
    return SandboxedEnvironment(loader=ChoiceLoader(loaders), undefined=StrictUndefined, autoescape=False,
                                keep_trailing_newline=True, trim_blocks=False, lstrip_blocks=False)


def _collapse_repeats(text: str) -> str:
    """Consecutive lines that differ only in numbers (progress bars, step logs) become one line."""
    out: list[str] = []
    previous_shape, repeats = None, 0
    for line in text.splitlines():
        shape = re.sub(r"\d+(?:\.\d+)?", "#", line)
        if shape == previous_shape:
            repeats += 1
            continue
        if repeats:
            out.append(f"    [... {repeats} similar line(s)]")
        out.append(line)
        previous_shape, repeats = shape, 0
    if repeats:
        out.append(f"    [... {repeats} similar line(s)]")
    return "\n".join(out)


def _head_and_tail(text: str, lines: int) -> str:
    rows = text.splitlines()
    if lines <= 0:
        return ""
    if len(rows) <= lines:
        return text
    head = lines // 3
    return "\n".join(rows[:head] + [f"    [... {len(rows) - lines} line(s) cut]"] + rows[-(lines - head):])


def template_data(context: TriageContext, report: TriageReport | None, options: dict[str, Any]) -> dict[str, Any]:
    stack = context.stack.model_dump() if context.stack else {"frames": []}
    frames = stack["frames"]
    user_frames = [frame for frame in frames if frame["is_user"]]
    keep_context = options.get("source_context")
    for frame in user_frames:
        if keep_context is not None and frame["source_context"] and frame["lineno"] and frame["context_first_line"]:
            index = frame["lineno"] - frame["context_first_line"]
            frame["source_context"] = frame["source_context"][max(0, index - keep_context + 1): index + keep_context]
    excerpt = context.excerpt.text if context.excerpt else ""
    if options.get("collapse_repeats"):
        excerpt = _collapse_repeats(excerpt)
    if options.get("excerpt_lines") is not None:
        excerpt = _head_and_tail(excerpt, options["excerpt_lines"])
    rows = options.get("table_rows")
    snapshot = context.snapshot.model_dump() if context.snapshot else None
    profiler = [table.model_dump() for table in context.profiler]
    if rows is not None:
        if snapshot:
            snapshot["top_sites"] = snapshot["top_sites"][:rows]
        for table in profiler:
            table["top_ops"] = table["top_ops"][:rows]
        if rows == 0:
            snapshot, profiler = None, []
    memory_stats = context.memory_stats.model_dump(exclude={"raw"}) if context.memory_stats else None
    return {
        "error": context.error.model_dump() if context.error else None,
        "additional_ooms": context.additional_ooms,
        "environment": context.environment.model_dump(),
        "runtime": context.runtime.model_dump(exclude={"argv", "pid"}) if context.runtime else None,
        "note": context.note,
        "user_frames": user_frames,
        "library_frames": [f for f in frames if not f["is_user"]] if options.get("library_frames", True) else [],
        "excerpt": excerpt.strip(),
        "explanation": report.explanation if report else [],
        "memory_stats": memory_stats,
        "snapshot": snapshot,
        "profiler": profiler,
        "rule_causes": [c.model_dump() for c in report.causes] if report and options.get("rule_causes", True) else [],
        "taxonomy": taxonomy(),
        "fix_kinds": sorted(VALIDATABLE_KINDS),
        "schema": json.dumps(LLMAnswer.model_json_schema(), separators=(",", ":")),
    }


def render_prompt(context: TriageContext, report: TriageReport | None = None, *, max_tokens: int = 6000,
                  model: str | None = None, prompts_dir: Path | None = None, redact_secrets: bool = True) -> RenderedPrompt:
    """The prompt exactly as it would be sent: rendered, redacted, trimmed to the budget."""
    env = environment(prompts_dir)
    counter = TokenCounter(model)
    options: dict[str, Any] = {}
    dropped: list[str] = []
    levels = iter(TRIM_LEVELS)
    while True:
        data = template_data(context, report, options)
        sections = {name: env.get_template(f"{name}.j2").render(**data) for name in TEMPLATES}
        redactions: dict[str, int] = {}
        if redact_secrets:
            for name, text in sections.items():
                result = redact(text)
                sections[name] = result.text
                for kind, count in result.counts.items():
                    redactions[kind] = redactions.get(kind, 0) + count
        tokens = {name: counter.count(text) for name, text in sections.items()}
        total = sum(tokens.values()) + 8  # chat-template overhead for two messages
        level = next(levels, None) if total > max_tokens else None
        if level is None:
            break
        description, change = level
        options.update(change)
        dropped.append(description)
    user = "\n".join(sections[name].rstrip() + "\n" for name in STEPS)
    return RenderedPrompt(system=sections["system"].strip(), user=user, section_tokens=tokens, total_tokens=total,
                          budget=max_tokens, encoding=counter.encoding_name, dropped=dropped, redactions=redactions)
