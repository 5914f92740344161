"""Nothing leaves the machine without an explicit opt-in to oomtriage's LLM, --offline refuses every
endpoint that is not on this machine whatever else is set, and an API key goes only to the
endpoint it belongs to. Checked with real listeners on the loopback range, through the real CLI."""

from __future__ import annotations

import socket
import threading

import pytest

from tests.conftest import LOGS, run_cli
from tests.fake_llm import FakeLLM

LOG = str(LOGS / "pytorch_d2_expandable.log")


class Listener:
    """Counts TCP connections on a loopback address; answers nothing."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.socket = socket.socket()
        self.socket.bind((host, 0))
        self.socket.listen(16)
        self.socket.settimeout(0.2)
        self.host, self.port = host, self.socket.getsockname()[1]
        self.connections = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.socket.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def clean_env(isolated_home, monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OOMTRIAGE_ENGINE", "OOMTRIAGE_BASE_URL", "OOMTRIAGE_API_KEY",
                 "OOMTRIAGE_OFFLINE", "OOMTRIAGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return isolated_home


@pytest.mark.parametrize("engine", [None, "auto", "rules"])
def test_variables_of_other_tools_are_not_consent(clean_env, listener, engine):
    env = {"OPENAI_API_KEY": "sk-test-not-consent-1234567890", "OPENAI_BASE_URL": listener.url}
    args = ["analyze", LOG] + (["--engine", engine] if engine else [])
    result = run_cli(*args, env=env)
    assert result.returncode == 0, result.stderr.decode()
    assert listener.connections == 0
    assert b"--engine llm" in result.stdout, "the text report says how to ask a model"


def test_oomtriage_own_setting_is_consent(clean_env):
    with FakeLLM("valid") as server:
        result = run_cli("analyze", LOG, "--format", "json", env={"OOMTRIAGE_ENGINE": "llm", "OOMTRIAGE_BASE_URL": server.base_url})
    assert result.returncode == 0 and len(server.requests) == 1


@pytest.mark.parametrize("how", ["flag", "env"])
def test_offline_refuses_an_endpoint_off_this_machine(clean_env, how):
    # 127.0.0.2 is on the loopback range but oomtriage only trusts localhost/127.0.0.1/::1 as "this machine".
    remote = Listener("127.0.0.2")
    try:
        env = {"OOMTRIAGE_BASE_URL": remote.url, "OOMTRIAGE_ENGINE": "llm", "OPENAI_API_KEY": "sk-test-1234567890abcdef"}
        args = ["analyze", LOG]
        if how == "flag":
            args.append("--offline")
        else:
            env["OOMTRIAGE_OFFLINE"] = "1"
        result = run_cli(*args, env=env)
    finally:
        remote.close()
    assert result.returncode == 2 and b"offline" in result.stderr
    assert remote.connections == 0


def test_offline_with_only_an_openai_key_sends_nothing(clean_env, listener):
    env = {"OPENAI_API_KEY": "sk-test-1234567890abcdef", "OOMTRIAGE_OFFLINE": "1", "OPENAI_BASE_URL": listener.url}
    result = run_cli("analyze", LOG, "--engine", "auto", env=env)
    assert result.returncode == 0 and listener.connections == 0
    # Asked for a model offline with nothing local configured: OpenAI's API is not local.
    refused = run_cli("analyze", LOG, "--engine", "llm", env={k: v for k, v in env.items() if k != "OPENAI_BASE_URL"})
    assert refused.returncode == 2 and b"offline" in refused.stderr and listener.connections == 0


def test_openai_key_is_not_sent_to_another_endpoint(clean_env):
    secret = "sk-openai-secret-abcdefghijklmnop"
    with FakeLLM("valid") as server:
        run_cli("analyze", LOG, "--engine", "llm", "--base-url", server.base_url, env={"OPENAI_API_KEY": secret})
        run_cli("analyze", LOG, "--engine", "llm", "--base-url", server.base_url, "--no-cache",
                env={"OPENAI_API_KEY": secret, "OOMTRIAGE_API_KEY": "own-key-for-this-server"})
    assert len(server.headers) == 2
    assert all(secret not in header.get("authorization", "") for header in server.headers)
    assert server.headers[1]["authorization"] == "Bearer own-key-for-this-server"


def test_prompt_quotes_only_the_projects_own_files(clean_env, tmp_path):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir(), elsewhere.mkdir()
    (project / "train.py").write_text("x = 1\n" * 3 + "out = model(batch)  # PROJECT-LINE\n")
    (elsewhere / "secret.py").write_text("a = 1\n" * 3 + "token = 'FOREIGN-FILE-CONTENT'\n")
    log = project / "run.log"
    log.write_text(f'''Traceback (most recent call last):
  File "{elsewhere / 'secret.py'}", line 4, in <module>
    token = 'x'
  File "{project / 'train.py'}", line 4, in <module>
    out = model(batch)
RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 7.00 GiB total capacity; 6.50 GiB already allocated; 1.00 MiB free; 6.60 GiB reserved in total by PyTorch)
''')
    from_file = run_cli("prompt", str(log), cwd=project).stdout.decode()
    assert "PROJECT-LINE" in from_file and "FOREIGN-FILE-CONTENT" not in from_file
    from_stdin = run_cli("prompt", "-", input=log.read_text(), cwd=project).stdout.decode()
    assert "PROJECT-LINE" not in from_stdin and "FOREIGN-FILE-CONTENT" not in from_stdin
    asked = run_cli("prompt", "-", "--source", str(project), input=log.read_text(), cwd=tmp_path).stdout.decode()
    assert "PROJECT-LINE" in asked and "FOREIGN-FILE-CONTENT" not in asked
