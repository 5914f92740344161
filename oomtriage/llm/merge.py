"""Merge the model's answer with the rule engine's report: the model's ranking leads, each cause
says whether the rules agree, the model's fixes keep their code, and causes only the rules found
follow. Ids were already checked against the taxonomy when the answer was validated."""

from __future__ import annotations

from oomtriage.engine.fixes import fixes_for
from oomtriage.models import Cause, EngineInfo, Fix, TriageReport
from oomtriage.taxonomy import title_of

from .schema import LLMAnswer


def merge_answer(rules: TriageReport, answer: LLMAnswer, *, model: str, exchange_id: str) -> TriageReport:
    by_rules = {cause.id: cause for cause in rules.causes}
    framework = rules.error.framework if rules.error else "pytorch"
    merged: list[Cause] = []
    for proposed in answer.causes:
        if any(cause.id == proposed.id for cause in merged):
            continue
        ruled = by_rules.get(proposed.id)
        model_fixes = [Fix(kind=fix.kind, title=fix.title, how=fix.change, snippet=fix.code, diff=fix.diff,
                           expected_saving=fix.expected_saving, validation=fix.validation, source="llm")
                       for fix in answer.fixes if fix.cause_id == proposed.id]
        evidence = [f"model: {proposed.reasoning}", *proposed.evidence]
        evidence += [f"rules: {item}" for item in ruled.evidence] if ruled else []
        merged.append(Cause(id=proposed.id, title=proposed.title or title_of(proposed.id), confidence=proposed.confidence,
                            evidence=evidence, fixes=model_fixes + (ruled.fixes if ruled else fixes_for(proposed.id, framework=framework)),
                            agreement="both" if ruled else "llm_only"))
    for cause in rules.causes:
        if cause.id not in {item.id for item in merged}:
            merged.append(cause.model_copy(update={"agreement": "rules_only"}))
    report = rules.model_copy(deep=True)
    report.causes = merged
    report.llm_analysis = answer.analysis
    report.changelog_summary = answer.changelog_summary or None
    report.engine = EngineInfo(used="llm", model=model, exchange_id=exchange_id)
    return report
