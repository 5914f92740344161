"""LLM-assisted triage: a seven-step chain-of-thought prompt (``prompts/*.j2``), an OpenAI-compatible
client with validated structured output and fallbacks, redaction, a token budget, an exchange log,
and the merge of the model's answer with the rule engine's."""
