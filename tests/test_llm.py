"""The LLM path against crafted HTTP servers on 127.0.0.1: every fallback, the merge, redaction of
what is sent, the exchange log and cache, offline mode, the prompt and its budget."""

from __future__ import annotations

import json
import socket

import pytest

from oomtriage.api import analyze_inputs
from oomtriage.context import build_context
from oomtriage.engine import triage
from oomtriage.errors import ConfigError
from oomtriage.llm.config import load_config
from oomtriage.llm.prompt import STEPS, render_prompt
from tests.conftest import LOGS, analyze_json, run_cli
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.usefixtures("isolated_home")
EVAL_LOG = LOGS / "chained_traceback.log"
SECRETS = ("sk-proj-abcdefghijklmnopqrstuvwxyz123456", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
           "jane.doe@example.com", "hunter2secret")


def _analyze(server: FakeLLM, path=EVAL_LOG, **overrides):
    config = load_config(engine="llm", base_url=server.base_url, model="fake", timeout=overrides.pop("timeout", 10), **overrides)
    return analyze_inputs([path], note="fails in evaluate()", llm=config)


def test_valid_answer_is_merged_with_the_rules():
    with FakeLLM("valid") as server:
        report = _analyze(server)
    assert report.engine.used == "llm" and report.engine.model == "fake" and report.engine.exchange_id
    assert report.causes[0].id == "missing_no_grad" and report.causes[0].agreement == "both"
    assert any(item.startswith("rules: ") for item in report.causes[0].evidence)
    assert report.causes[0].fixes[0].source == "llm" and "no_grad" in report.causes[0].fixes[0].snippet
    assert {cause.agreement for cause in report.causes[2:]} == {"rules_only"}
    assert report.llm_analysis and report.changelog_summary
    assert server.requests[0]["response_format"]["type"] == "json_schema"


def test_server_refusing_json_schema_gets_json_object_with_the_schema():
    with FakeLLM("refuse_json_schema") as server:
        report = _analyze(server)
    assert report.engine.used == "llm"
    formats = [request.get("response_format", {}).get("type") for request in server.requests]
    assert formats == ["json_schema", "json_object"]
    assert server.requests[1]["response_format"]["schema"]["properties"]["causes"]


def test_fenced_json_in_prose_is_extracted():
    with FakeLLM("fenced") as server:
        assert _analyze(server).engine.used == "llm"


def test_invalid_reply_is_re_asked_with_the_error():
    with FakeLLM("invalid_then_valid") as server:
        report = _analyze(server)
    assert report.engine.used == "llm" and len(server.requests) == 2
    assert "invalid" in server.requests[1]["messages"][-1]["content"]


@pytest.mark.parametrize("mode, reason", [
    ("prose", "did not validate"), ("invalid_json", "did not validate"), ("unknown_cause", "unknown cause id"),
    ("http500", "HTTP 500"), ("truncated", "truncated"),
])
def test_bad_replies_fall_back_to_the_rules_and_say_why(mode, reason):
    with FakeLLM(mode) as server:
        report = _analyze(server)
    assert report.engine.used == "rules" and reason in report.engine.fallback_reason
    assert report.causes and report.causes[0].id == triage(build_context([EVAL_LOG], note="fails in evaluate()")).causes[0].id


def test_a_stalled_endpoint_times_out_and_falls_back():
    with FakeLLM("stall") as server:
        report = _analyze(server, timeout=1.5)
    assert report.engine.used == "rules" and "did not answer within 1.5 s" in report.engine.fallback_reason


def test_a_dead_endpoint_falls_back():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = load_config(engine="llm", base_url=f"http://127.0.0.1:{port}/v1", timeout=5)
    report = analyze_inputs([EVAL_LOG], llm=config)
    assert report.engine.used == "rules" and "cannot reach" in report.engine.fallback_reason


def test_seeded_secrets_never_reach_the_server(tmp_path):
    log = tmp_path / "secret.log"
    log.write_text(f"export OPENAI_API_KEY={SECRETS[0]}\nHF_TOKEN={SECRETS[1]}\nowner: {SECRETS[2]}\n"
                   f"db: postgres://admin:{SECRETS[3]}@db.internal/prod\n" + EVAL_LOG.read_text())
    with FakeLLM("valid") as server:
        report = _analyze(server, path=log)
    sent = b"".join(server.raw_bodies).decode()
    for secret in SECRETS:
        assert secret not in sent
    assert report.engine.redactions["openai_key"] == 1 and report.engine.redactions["email"] == 1
    assert "[REDACTED_HF_TOKEN]" in sent


def test_no_redact_opts_out(tmp_path):
    log = tmp_path / "secret.log"
    log.write_text(f"owner: {SECRETS[2]}\n" + EVAL_LOG.read_text())
    with FakeLLM("valid") as server:
        _analyze(server, path=log, redact=False)
    assert SECRETS[2] in b"".join(server.raw_bodies).decode()


def test_exchange_log_and_cache(isolated_home):
    with FakeLLM("valid") as server:
        first = _analyze(server)
        second = _analyze(server)
        assert len(server.requests) == 1  # the identical prompt was answered from the cache
        third = _analyze(server, cache=False)
        assert len(server.requests) == 2
    assert first.engine.exchange_id == second.engine.exchange_id == third.engine.exchange_id
    assert any("exchange cache" in warning for warning in second.warnings)
    logged = json.loads((isolated_home / ".cache" / "oomtriage" / "exchanges" / f"{first.engine.exchange_id}.json").read_text())
    assert logged["raw_reply"] and logged["messages"][1]["content"].startswith("## Step 1. Context")
    assert logged["usage"]["prompt_tokens"] == 100 and logged["latency_s"] is not None


def test_offline_refuses_remote_endpoints_and_auto_uses_rules_without_one():
    with pytest.raises(ConfigError, match="offline"):
        load_config(base_url="https://api.openai.com/v1", offline=True)
    assert load_config(base_url="http://127.0.0.1:9/v1", offline=True).is_local
    report = analyze_inputs([EVAL_LOG], llm=load_config(engine="auto"))
    assert report.engine.used == "rules" and report.engine.fallback_reason is None
    forced = analyze_inputs([EVAL_LOG], llm=load_config(engine="llm"))
    assert forced.engine.used == "rules" and "no LLM endpoint configured" in forced.engine.fallback_reason


def test_config_file_and_environment(isolated_home, monkeypatch):
    config_dir = isolated_home / ".config" / "oomtriage"
    config_dir.mkdir(parents=True)
    (config_dir / "config.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:1234/v1"\nmodel = "from-file"\n')
    assert load_config().model == "from-file"
    monkeypatch.setenv("OOMTRIAGE_MODEL", "from-env")
    assert load_config().model == "from-env"
    assert load_config(model="from-flag").model == "from-flag"


def test_cli_analyze_with_llm_and_fallback_in_json():
    with FakeLLM("valid") as server:
        report = analyze_json(str(EVAL_LOG), "--engine", "llm", "--base-url", server.base_url, "--model", "fake")
    assert report["engine"]["used"] == "llm" and report["causes"][0]["agreement"] == "both"
    with FakeLLM("http500") as server:
        report = analyze_json(str(EVAL_LOG), "--engine", "llm", "--base-url", server.base_url)
    assert report["engine"]["used"] == "rules" and "HTTP 500" in report["engine"]["fallback_reason"]
    refused = run_cli("analyze", str(EVAL_LOG), "--offline", "--base-url", "https://example.com/v1")
    assert refused.returncode == 2 and b"offline" in refused.stderr


def test_prompt_has_seven_steps_in_order_and_counts_tokens():
    result = run_cli("prompt", str(EVAL_LOG), "--note", "my key is sk-proj-abcdefghijklmnopqrstuvwxyz123456")
    assert result.returncode == 0
    text, counts = result.stdout.decode(), result.stderr.decode()
    positions = [text.index(f"## Step {n}.") for n in range(1, 8)]
    assert positions == sorted(positions)
    for heading in ("Context", "Error", "Profiling", "Diagnosis", "Solutions", "Validation", "Documentation"):
        assert heading in text
    assert "sk-proj-" not in text and "[REDACTED_OPENAI_KEY]" in text
    for name in STEPS:
        assert name in counts
    assert "total" in counts and "redacted: openai_key x1" in counts


def test_budget_drops_least_useful_content_first_and_keeps_message_and_facts():
    context = build_context([LOGS / "multirank_torchrun.log"])
    report = triage(context)
    full = render_prompt(context, report, max_tokens=100_000)
    tight = render_prompt(context, report, max_tokens=full.total_tokens - 50)
    assert not full.dropped and tight.dropped[0] == "library frames"
    assert tight.total_tokens <= full.total_tokens - 50
    tiny = render_prompt(context, report, max_tokens=500)
    assert tiny.over_budget and "the log excerpt" in tiny.dropped
    assert context.error.raw_message.split(".")[0] in tiny.user
    assert report.explanation[0] in tiny.user


def test_user_templates_override_the_built_in_ones(tmp_path):
    (tmp_path / "2_error.j2").write_text("## Step 2. Error\nCUSTOM ERROR SECTION for {{ error.format }}\n")
    result = run_cli("prompt", str(EVAL_LOG), "--prompts", str(tmp_path))
    assert b"CUSTOM ERROR SECTION for pytorch_sentence" in result.stdout
    (tmp_path / "2_error.j2").write_text("{{ no_such_variable }}")
    broken = run_cli("prompt", str(EVAL_LOG), "--prompts", str(tmp_path))
    assert broken.returncode == 2 and b"template" in broken.stderr and b"Traceback" not in broken.stderr


def test_sandbox_blocks_unsafe_templates(tmp_path):
    (tmp_path / "1_context.j2").write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    result = run_cli("prompt", str(EVAL_LOG), "--prompts", str(tmp_path))
    assert result.returncode == 2 and b"template" in result.stderr


def test_token_counting_works_offline():
    from oomtriage.llm.tokens import TokenCounter

    counter = TokenCounter("gpt-4o")
    assert counter.encoding_name != "chars/3.3"
    assert counter.count("hello world") == counter.raw("hello world") <= 3
    local = TokenCounter("llama3")
    assert local.count("hello world, how are you") > local.raw("hello world, how are you")


@pytest.mark.parametrize("mode, reason", [
    ("html", r"not a chat completion|without a choice"),
    ("empty", r"not a chat completion|without a choice"),
    ("no_choices", r"without a choice"),
    ("huge", r"over the [\d,]+ limit"),
])
def test_malformed_replies_fall_back_with_their_reason(mode, reason, isolated_home):
    import re

    with FakeLLM(mode) as server:
        report = _analyze(server, timeout=20)
    assert report.engine.used == "rules" and re.search(reason, report.engine.fallback_reason), report.engine.fallback_reason
    assert report.causes, "the rules' report is still there"


def test_a_dripping_server_is_cut_off_at_the_timeout_for_the_whole_exchange(isolated_home):
    import time

    with FakeLLM("drip") as server:
        started = time.monotonic()
        report = _analyze(server, timeout=3)
        elapsed = time.monotonic() - started
    assert report.engine.used == "rules" and "within 3 s" in report.engine.fallback_reason
    assert elapsed < 15


def test_escaped_quotes_in_a_reply_are_not_a_truncation(isolated_home):
    with FakeLLM("odd_quotes") as server:
        report = _analyze(server)
    assert report.engine.used == "llm", report.engine.fallback_reason
    assert 'a quote " inside' in report.llm_analysis


def test_retry_after_cannot_stall_past_the_timeout(isolated_home):
    import time

    with FakeLLM("retry_after") as server:
        started = time.monotonic()
        report = _analyze(server, timeout=3, max_retries=2)  # as for a remote host: the SDK honours Retry-After
        elapsed = time.monotonic() - started
    assert report.engine.used == "rules" and report.engine.fallback_reason and elapsed < 15
