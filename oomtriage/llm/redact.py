"""Redact secrets before anything leaves the machine: API keys and tokens of well-known formats,
``*_KEY=`` / ``*_TOKEN=`` / ``*_SECRET=`` / ``PASSWORD=`` assignments, bearer headers, passwords in
URLs, e-mail addresses and the user's home directory. Counts per kind go into the report."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field

# (kind, pattern, replacement). Order matters: specific token formats before generic assignments.
_RULES: list[tuple[str, re.Pattern[str], str]] = [
    ("private_key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S), "[REDACTED_PRIVATE_KEY]"),
    ("openai_key", re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), "[REDACTED_OPENAI_KEY]"),
    ("anthropic_key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}"), "[REDACTED_API_KEY]"),
    ("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), "[REDACTED_HF_TOKEN]"),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), "[REDACTED_GITHUB_TOKEN]"),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "[REDACTED_AWS_KEY]"),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), "[REDACTED_SLACK_TOKEN]"),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), "[REDACTED_API_KEY]"),
    ("wandb_key", re.compile(r"\b(?:WANDB_API_KEY\s*[=:]\s*)[0-9a-f]{40}\b"), "WANDB_API_KEY=[REDACTED_SECRET]"),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"), "[REDACTED_JWT]"),
    ("bearer", re.compile(r"(?i)\b(authorization\s*[:=]\s*)?bearer\s+[A-Za-z0-9._~+/=-]{12,}"), r"\1Bearer [REDACTED_TOKEN]"),
    ("url_password", re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+@"), r"\1[REDACTED_PASSWORD]@"),
    ("secret_assignment", re.compile(
        # the name ends in the secret word (max_new_tokens=2048 is not a secret); all-digit values are not
        r"(?i)\b([A-Z0-9_]*(?:API_?KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD))(\s*[=:]\s*)(['\"]?)(?!\[REDACTED)(?!\d+\b)[^\s'\",;]{4,}\3"),
     r"\1\2\3[REDACTED_SECRET]\3"),
    ("email", re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"), "[REDACTED_EMAIL]"),
]


@dataclass
class Redaction:
    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def redact(text: str, *, home: str | None = None) -> Redaction:
    counts: Counter[str] = Counter()
    for kind, pattern, replacement in _RULES:
        text, found = pattern.subn(replacement, text)
        if found:
            counts[kind] += found
    home = home if home is not None else os.path.expanduser("~")
    if home and home not in ("/", "~") and len(home) > 3:
        found = text.count(home)
        if found:
            text = text.replace(home, "~")
            counts["home_directory"] += found
    return Redaction(text=text, counts=dict(counts))
