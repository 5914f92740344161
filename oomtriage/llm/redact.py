"""Redact secrets before anything leaves the machine or lands in a report file, by kind rather than
by vendor list alone:

- blocks: PEM and PGP private keys, including blocks whose END line was cut;
- headers: ``Authorization`` (Bearer, Basic, anything), ``Cookie`` / ``Set-Cookie``, ``X-Api-Key``;
- URL credentials, with or without a user (``redis://:pw@host``);
- known token prefixes (OpenAI ``sk-``, Anthropic, Hugging Face, GitHub, GitLab ``glpat-``, Stripe
  ``sk_live_``/``rk_live_``, Slack, AWS access key ids, Google API keys, JWTs);
- any value next to a secret-ish name (key, token, secret, password, passwd, pwd, auth, cookie,
  credential, private) in every form a log holds it: ``NAME=v``, ``NAME: v``, ``"name": "v"``,
  ``'name': 'v'``, ``name=v`` in a call, ``--name v`` / ``--name=v`` on a command line, netrc's
  ``password v``, and ``name value`` when the value looks like a key (long and mixed);
- e-mail addresses (also URL-encoded) and the user's home directory.

Every pattern has bounded repetitions and starts at a boundary, so redaction is linear in the
text's length (a 40 KB ``a.a.a...`` line is not quadratic). Counts per kind go into the report."""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field

# A name that ends in a secret-ish word: api_key, HF_TOKEN, aws_secret_access_key, x-api-key,
# client_secret, db_password, authorization, auth_token, session_cookie, credentials, private_key.
# Not: tokenizer, max_new_tokens (plural counts are numbers), key_padding_mask.
_NAME = (r"[A-Za-z0-9_.-]{0,60}?(?:api[_-]?key|access[_-]?key|secret(?:[_-]?access)?[_-]?key|private[_-]?key|key|"
         r"token|secret|password|passwd|pwd|auth|authorization|cookie|credentials?|apikey)")
_VALUE_STOP = r"\s'\",;)}\]"
_NOT_A_SECRET = r"(?!\[REDACTED)(?!(?:None|null|true|false|True|False|\*+|x+)\b)(?!\d{1,12}\b)"
_MAX = 512  # no secret is longer; bounding the repetition keeps every pattern linear

_RULES: list[tuple[str, re.Pattern[str], str]] = [
    ("private_key", re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:.(?!-----END))*?.(?:-----END [A-Z0-9 ]{0,40}-----|\Z)"
                               r"|-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[^\n]*(?:\n[^\n]*){0,200}", re.S),
     "[REDACTED_PRIVATE_KEY]"),
    ("auth_header", re.compile(r"(?im)\b((?:proxy-)?authorization|set-cookie|cookie|x-api-key|api-key|x-auth-token)(\s{0,4}:\s{0,4})"
                               r"(?!\[REDACTED)[^\r\n]{1,2000}"), r"\1\2[REDACTED_SECRET]"),
    ("openai_key", re.compile(r"(?<![\w-])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{8,200}"), "[REDACTED_OPENAI_KEY]"),
    ("anthropic_key", re.compile(r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,200}"), "[REDACTED_API_KEY]"),
    ("stripe_key", re.compile(r"(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{8,200}"), "[REDACTED_API_KEY]"),
    ("gitlab_token", re.compile(r"(?<![\w-])gl(?:pat|dt|rt|ptt|ft)-[A-Za-z0-9_-]{16,200}"), "[REDACTED_GITLAB_TOKEN]"),
    ("huggingface_token", re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{30,200}"), "[REDACTED_HF_TOKEN]"),
    ("github_token", re.compile(r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{30,200}|github_pat_[A-Za-z0-9_]{40,200})"), "[REDACTED_GITHUB_TOKEN]"),
    ("aws_access_key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"), "[REDACTED_AWS_KEY]"),
    ("slack_token", re.compile(r"(?<![\w-])xox[abposr]-[A-Za-z0-9-]{10,200}"), "[REDACTED_SLACK_TOKEN]"),
    ("google_api_key", re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{30,40}(?![\w-])"), "[REDACTED_API_KEY]"),
    ("jwt", re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{10,2000}\.eyJ[A-Za-z0-9_-]{10,4000}\.[A-Za-z0-9_-]{10,2000}"), "[REDACTED_JWT]"),
    ("bearer", re.compile(r"(?i)(?<![\w-])bearer\s{1,4}(?!\[REDACTED)[A-Za-z0-9._~+/=-]{8,2000}"), "Bearer [REDACTED_TOKEN]"),
    ("url_password", re.compile(r"(?<![\w+.-])([a-z][a-z0-9+.-]{0,20}://[^\s:/@]{0,100}:)(?!\[REDACTED)[^\s@/]{1,200}@"),
     r"\1[REDACTED_PASSWORD]@"),
    # "name": "value" (JSON) and 'name': 'value' (a Python dict): the quoted name, any quoted value.
    ("secret_field", re.compile(rf"(?i)(['\"]){_NAME}\1(\s{{0,4}}[:=]\s{{0,4}})(['\"]){_NOT_A_SECRET}[^'\"\n]{{1,{_MAX}}}\3"),
     r"\g<0>"),  # replaced by _field below (keeps the name)
    # --password X, --api-key=X, --hf_token X
    ("secret_argument", re.compile(rf"(?i)(?<![\w-])(--?{_NAME})(=|\s{{1,4}})(['\"]?){_NOT_A_SECRET}[^{_VALUE_STOP}]{{2,{_MAX}}}\3"),
     r"\1\2\3[REDACTED_SECRET]\3"),
    # NAME=value, NAME: value, name=value inside a call (wandb.login(key=...)).
    ("secret_assignment", re.compile(rf"(?i)(?<![\w-])({_NAME})(\s{{0,4}}[=:]\s{{0,4}})(['\"]?){_NOT_A_SECRET}[^{_VALUE_STOP}]{{3,{_MAX}}}\3"),
     r"\1\2\3[REDACTED_SECRET]\3"),
    # netrc's "password X", and "name value" when the value looks like a key (16+ characters, letters and digits).
    ("secret_assignment", re.compile(rf"(?i)(?<![\w-])(password|passwd|login password)(\s{{1,4}})(?!\[REDACTED)(?!(?:is|was|for|of|to)\b)[^\s]{{3,{_MAX}}}"),
     r"\1\2[REDACTED_SECRET]"),
    ("secret_assignment", re.compile(rf"(?i)(?<![\w-])({_NAME})(\s{{1,4}})(?!\[REDACTED)(?=[A-Za-z0-9/+_=-]{{16,}})(?=[^\s]{{0,{_MAX}}}\d)"
                                     rf"(?=[^\s]{{0,{_MAX}}}[A-Za-z])[A-Za-z0-9/+_=-]{{16,{_MAX}}}"), r"\1\2[REDACTED_SECRET]"),
    ("email", re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}(?:@|%40)[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}"
                         r"\.[A-Za-z]{2,24}(?![A-Za-z0-9-])"), "[REDACTED_EMAIL]"),
]


def _field(match: re.Match[str]) -> str:
    quote, separator, value_quote = match.group(1), match.group(2), match.group(3)
    name = match.group(0)[: match.group(0).index(quote, 1) + 1]
    return f"{name}{separator}{value_quote}[REDACTED_SECRET]{value_quote}"


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
        text, found = pattern.subn(_field if kind == "secret_field" else replacement, text)
        if found:
            counts[kind] += found
    home = home if home is not None else os.path.expanduser("~")
    if home and home not in ("/", "~") and len(home) > 3:
        found = text.count(home)
        if found:
            text = text.replace(home, "~")
            counts["home_directory"] += found
    return Redaction(text=text, counts=dict(counts))


def redact_text(text: str | None) -> str | None:
    return redact(text, home="").text if text else text
