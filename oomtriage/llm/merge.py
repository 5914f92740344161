"""Merge the model's answer with the rule engine's report so that the result is never worse than
the rules alone: causes both agree on come first (their confidences combined), then a rules cause
that rests on decisive figures, then the rest by confidence, model-only causes among them. Each
cause says who proposed it, the model's fixes keep their code, and a disagreement on the top cause
is said in the report. Ids were already checked against the taxonomy when the answer was validated."""

from __future__ import annotations

from oomtriage.engine.fixes import fixes_for
from oomtriage.fixkinds.backends import spelling_of
from oomtriage.models import Cause, EngineInfo, Fix, TriageReport
from oomtriage.taxonomy import title_of

from .schema import LLMAnswer


def merge_answer(rules: TriageReport, answer: LLMAnswer, *, model: str, exchange_id: str) -> TriageReport:
    by_rules = {cause.id: cause for cause in rules.causes}
    framework = rules.error.framework if rules.error else "pytorch"
    library = rules.error.library if rules.error else None
    spelling = spelling_of(rules.error)
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
                            evidence=evidence, counter_evidence=[f"rules: {item}" for item in ruled.counter_evidence] if ruled else [],
                            fixes=model_fixes + (ruled.fixes if ruled else fixes_for(proposed.id, framework=framework, library=library, spelling=spelling)),
                            agreement="both" if ruled else "llm_only"))
    for cause in rules.causes:
        if cause.id not in {item.id for item in merged}:
            merged.append(cause.model_copy(update={"agreement": "rules_only"}))
    report = rules.model_copy(deep=True)
    report.causes = order_merged(merged, by_rules)
    model_top, rules_top = (answer.causes[0].id if answer.causes else None), (rules.causes[0].id if rules.causes else None)
    if model_top and rules_top and model_top != rules_top:
        report.warnings.append(f"The model and the rules disagree on the top cause: the model says {model_top}, "
                               f"the rules say {rules_top}.")
    report.llm_analysis = answer.analysis
    report.changelog_summary = answer.changelog_summary or None
    report.engine = EngineInfo(used="llm", model=model, exchange_id=exchange_id)
    return report


DECISIVE = 0.7  # a rules score (the combined vote, before calibration) this high rests on figures (others hold the card, one request > the card)


def order_merged(merged: list[Cause], by_rules: dict[str, Cause]) -> list[Cause]:
    def score(cause: Cause) -> float:
        ruled = by_rules.get(cause.id)
        if cause.agreement == "both" and ruled:
            return 1.0 - (1.0 - cause.confidence) * (1.0 - ruled.confidence)
        return cause.confidence

    def tier(cause: Cause) -> int:
        if cause.agreement == "both":
            return 0
        vote = cause.score if cause.score is not None else cause.confidence
        return 1 if cause.agreement == "rules_only" and vote >= DECISIVE else 2

    ordered = sorted(merged, key=lambda cause: (tier(cause), -score(cause)))
    result: list[Cause] = []
    ceiling = 1.0
    for cause in ordered:  # confidences fall with the rank, as in every report
        confidence = round(min(ceiling, score(cause)), 3)
        ceiling = confidence
        result.append(cause.model_copy(update={"confidence": confidence}))
    return result
