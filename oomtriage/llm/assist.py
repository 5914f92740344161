"""The LLM step of triage: render, ask, merge, or fall back to the rules with the reason."""

from __future__ import annotations

from oomtriage.errors import LLMError
from oomtriage.models import EngineInfo, TriageContext, TriageReport

from .config import LLMConfig


def wants_llm(config: LLMConfig) -> bool:
    return config.wants_llm


def assist(context: TriageContext, rules: TriageReport, config: LLMConfig) -> TriageReport:
    """The merged report, or the rules' report with ``engine.fallback_reason`` when the LLM fails."""
    if not rules.detected and not rules.causes:
        return rules  # nothing to diagnose: no model call
    if not config.configured:
        return _fallback(rules, config, "no LLM endpoint configured (set --base-url, or OPENAI_API_KEY for OpenAI's API)")
    from .client import ask
    from .merge import merge_answer
    from .prompt import render_prompt

    prompt = render_prompt(context, rules, max_tokens=config.max_prompt_tokens, model=config.model_name,
                           prompts_dir=config.prompts_dir, redact_secrets=config.redact)
    try:
        answer = ask(config, prompt.messages)
    except LLMError as error:
        report = _fallback(rules, config, str(error))
    else:
        report = merge_answer(rules, answer.answer, model=config.model_name, exchange_id=answer.exchange.id)
        if answer.cached:
            report.warnings.append(f"answered from the exchange cache ({answer.exchange.id}); --no-cache asks again")
    report.engine.prompt_tokens = prompt.total_tokens
    report.engine.dropped = prompt.dropped
    report.engine.redactions = prompt.redactions
    if prompt.over_budget:
        report.warnings.append(f"the prompt needs {prompt.total_tokens} tokens, over the {prompt.budget} budget, even after trimming")
    return report


def _fallback(rules: TriageReport, config: LLMConfig, reason: str) -> TriageReport:
    report = rules.model_copy(deep=True)
    report.engine = EngineInfo(used="rules", model=config.model_name if config.configured else None, fallback_reason=reason)
    return report
