"""The structure the LLM must answer in. Reasoning fields come before verdict fields (models write
keys in order, and reasoning first measurably helps); cause ids are checked against the taxonomy."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


def _cap(length: int) -> dict:
    """A length cap in the JSON schema only: grammar-constrained servers stop a rambling model at
    it, while pydantic still accepts a longer answer from a model that ignores it."""
    return {"maxLength": length}

from oomtriage.taxonomy import cause_ids, is_cause_id


def checked_cause_id(value: str) -> str:
    """A taxonomy id, or a validation error that lists the valid ones (the re-ask shows it to the model)."""
    value = value.strip()
    if not is_cause_id(value):
        raise ValueError(f"unknown cause id {value!r}; use one of: {', '.join(cause_ids())}")
    return value


class LLMCause(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(description="why the evidence points here, citing facts from the context", json_schema_extra=_cap(300))
    evidence: list[str] = Field(description="facts from the context that support this cause",
                                json_schema_extra={"maxItems": 3, "items": {"type": "string", "maxLength": 150}})
    # The enum goes into the JSON schema, so grammar-constrained servers can only emit valid ids.
    id: str = Field(description="one cause id from the taxonomy", json_schema_extra={"enum": cause_ids()})
    title: str = Field(json_schema_extra=_cap(80))
    confidence: float = Field(ge=0.0, le=1.0)

    @field_validator("confidence", mode="before")
    @classmethod
    def clamp_confidence(cls, value: object) -> object:
        # Grammar-constrained servers cannot enforce number bounds; 1.2 means "very sure", 85 means 85%.
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = value / 100 if 1 < value <= 100 else value
            return min(1.0, max(0.0, float(value)))
        return value

    @field_validator("id")
    @classmethod
    def known_id(cls, value: str) -> str:
        return checked_cause_id(value)


class LLMFix(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reasoning: str = Field(description="why this change removes the memory the cause uses", json_schema_extra=_cap(300))
    cause_id: str = Field(json_schema_extra={"enum": cause_ids()})
    kind: str = Field(description="fix kind from the catalog", json_schema_extra=_cap(40))
    title: str = Field(json_schema_extra=_cap(80))
    change: str = Field(description="what to change, concretely", json_schema_extra=_cap(300))
    code: str | None = Field(None, description="a code or configuration snippet", json_schema_extra=_cap(600))
    # No cap on diffs: a very long bounded repetition makes a grammar too large for llama.cpp.
    diff: str | None = Field(None, description="a unified diff against the user's files, when you can write one")
    expected_saving: str | None = Field(None, json_schema_extra=_cap(120))
    validation: str = Field(description="a quick test that proves the fix: what to re-measure", json_schema_extra=_cap(300))

    @field_validator("cause_id")
    @classmethod
    def known_cause(cls, value: str) -> str:
        return checked_cause_id(value)


class LLMAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    analysis: str = Field(description="step-by-step reasoning over the context, before any verdict",
                          json_schema_extra=_cap(600))
    causes: list[LLMCause] = Field(min_length=1, description="most likely causes, best first", json_schema_extra={"maxItems": 5})
    fixes: list[LLMFix] = Field(default_factory=list, json_schema_extra={"maxItems": 5})
    changelog_summary: str = Field("", description="one or two sentences for a changelog", json_schema_extra=_cap(300))
