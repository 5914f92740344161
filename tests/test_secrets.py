"""A corpus of secrets in many formats: none reaches `oomtriage prompt` (which is byte for byte what
a model gets), the request body of a local server, or the files the hook writes."""

from __future__ import annotations

import json
import sys

import pytest

from oomtriage.llm.redact import redact
from tests.conftest import run_cli
from tests.fake_llm import FakeLLM

# (log line holding the secret, the secret itself)
CORPUS = [
    ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234", "sk-proj-abcdefghijklmnopqrstuvwx1234"),
    ("using key sk-short12345", "sk-short12345"),
    ("ANTHROPIC=sk-ant-api03-abcdefghijklmnopqrstuvwxyz", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz"),
    ("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEF", "hf_abcdefghijklmnopqrstuvwxyzABCDEF"),
    ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
    ("GITLAB glpat-AbCdEfGhIjKlMnOpQrSt", "glpat-AbCdEfGhIjKlMnOpQrSt"),
    ("stripe sk_live_51Habcdefghijklmnop", "sk_live_51Habcdefghijklmnop"),
    ("restricted rk_live_51Habcdefghijklmnop", "rk_live_51Habcdefghijklmnop"),
    ("aws AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ('{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}', "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("aws_secret_access_key Zx9Yw8Xv7Wu6Vt5Us4Tr3Sq2Rp1Qo0PnMlKjIhG", "Zx9Yw8Xv7Wu6Vt5Us4Tr3Sq2Rp1Qo0PnMlKjIhG"),
    ("slack xoxb-123456789012-abcdefghijkl", "xoxb-123456789012-abcdefghijkl"),
    ("google AIzaSyA-abcdefghijklmnopqrstuvwxyz012345", "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("Authorization: Bearer abcdefghijklmnop.qrstuvwx", "abcdefghijklmnop.qrstuvwx"),
    ("Authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
    ("Cookie: sessionid=9f8e7d6c5b4a3210", "9f8e7d6c5b4a3210"),
    ("X-Api-Key: k3y-f0r-th3-gat3way", "k3y-f0r-th3-gat3way"),
    ("db postgres://admin:Pa55w0rdXYZ@db.local:5432/x", "Pa55w0rdXYZ"),
    ("cache redis://:R3disPw0rd@cache.local:6379", "R3disPw0rd"),
    ("wandb.login(key='0123456789abcdef0123456789abcdef01234567')", "0123456789abcdef0123456789abcdef01234567"),
    ("WANDB_API_KEY=0123456789abcdef0123456789abcdef89abcdef", "0123456789abcdef0123456789abcdef89abcdef"),
    ("python train.py --password hunter2hunter2", "hunter2hunter2"),
    ("python train.py --api-key=ak_9988776655", "ak_9988776655"),
    ("machine example.com login me password n3tRcS3cr3t", "n3tRcS3cr3t"),
    ("config {'api_key': 'dict-secret-4455'}", "dict-secret-4455"),
    ('config {"auth_token": "json-secret-6677"}', "json-secret-6677"),
    ("DB_PASSWORD=plainpw123", "plainpw123"),
    ("client_secret: cs-998877-aabbcc", "cs-998877-aabbcc"),
    ("contact me at jane.doe@example.com", "jane.doe@example.com"),
    ("encoded jane.doe%40example.com", "jane.doe%40example.com"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGCutPgpKeyMaterialXYZ", "lQOYBGCutPgpKeyMaterialXYZ"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEcutRsaKeyMaterial0099", "MIIEcutRsaKeyMaterial0099"),
]
OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 7.00 GiB of "
       "which 100.00 MiB is free. Of the allocated memory 6.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by "
       "PyTorch but unallocated.")


@pytest.mark.parametrize("line, secret", CORPUS, ids=[secret[:16] for _, secret in CORPUS])
def test_redaction_removes_every_format(line, secret):
    assert secret not in redact(line, home="").text


def test_ordinary_training_text_is_kept():
    text = "max_new_tokens=2048 tokenizer=gpt2 batch_size=32 key_padding_mask=None lr=3e-4 num_tokens: 512"
    assert redact(text, home="").text == text


def _log(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("\n".join(line for line, _ in CORPUS) + "\n" + OOM + "\n")
    return log


def test_no_secret_reaches_the_prompt(tmp_path, isolated_home):
    result = run_cli("prompt", str(_log(tmp_path)), "--note", "my key is sk-proj-notesecretabcdefghijklmn0")
    assert result.returncode == 0, result.stderr.decode()
    leaked = [secret for _, secret in CORPUS if secret in result.stdout.decode()]
    assert leaked == [] and "sk-proj-notesecret" not in result.stdout.decode()


def test_no_secret_reaches_a_server(tmp_path, isolated_home):
    with FakeLLM("valid") as server:
        result = run_cli("analyze", str(_log(tmp_path)), "--engine", "llm", "--base-url", server.base_url)
    assert result.returncode == 0 and server.raw_bodies
    body = b"".join(server.raw_bodies).decode()
    body = json.loads(server.raw_bodies[0])["messages"][1]["content"]  # the prompt itself, JSON-unescaped
    assert [secret for _, secret in CORPUS if secret in body] == []


def test_hook_files_keep_no_secret_from_argv_or_source(tmp_path, isolated_home):
    script = tmp_path / "train.py"
    script.write_text("import torch\n"
                      "API_KEY = 'sk-proj-sourcelinesecret1234567890'\n"
                      "x = torch.empty(2**34, device='cuda')  # HF_TOKEN=hf_sourcecommentsecretABCDEFGHIJKLMNOP\n")
    reports = tmp_path / "reports"
    run_cli("run", "--simulate-gpu", "64MiB", "--", sys.executable, str(script), "--api-key", "argv-secret-998877",
            cwd=tmp_path, env={"OOMTRIAGE_REPORT_DIR": str(reports)}, timeout=300)
    written = [path.read_text() for path in reports.rglob("*") if path.is_file()]
    assert written, "the hook wrote its files"
    joined = "\n".join(written)
    for secret in ("sk-proj-sourcelinesecret", "hf_sourcecommentsecret", "argv-secret-998877"):
        assert secret not in joined, secret
