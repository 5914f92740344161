"""A small OpenAI-compatible HTTP server on 127.0.0.1 that answers in crafted ways, records every
request body it receives, and can forward to a real server (to record what reaches it)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VALID_ANSWER = {
    "analysis": "Allocated memory fills the card during validation with autograd on.",
    "causes": [
        {"reasoning": "The OOM is in validate() and grad mode is on.", "evidence": ["failing frame: validate"],
         "id": "missing_no_grad", "title": "Validation keeps activations", "confidence": 0.8},
        {"reasoning": "Eval batch may be large.", "evidence": ["requested 20 MiB"], "id": "batch_too_large",
         "title": "Eval batch too large", "confidence": 0.3},
    ],
    "fixes": [{"reasoning": "no graph, no saved activations", "cause_id": "missing_no_grad", "kind": "no_grad_eval",
               "title": "Wrap validation in no_grad", "change": "decorate validate() with @torch.no_grad()",
               "code": "@torch.no_grad()\ndef validate(model, loader): ...", "diff": None,
               "expected_saving": "all eval activations", "validation": "re-run one eval pass; compare max_memory_allocated"}],
    "changelog_summary": "Validation ran with autograd on; wrapped it in torch.no_grad().",
}


class FakeLLM:
    def __init__(self, mode: str = "valid", upstream: str | None = None) -> None:
        self.mode = mode
        self.upstream = upstream
        self.requests: list[dict[str, Any]] = []
        self.raw_bodies: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        handler = self._handler()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "FakeLLM":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reply(self, body: dict[str, Any]) -> tuple[int, dict[str, Any] | str]:
        mode, format_type = self.mode, (body.get("response_format") or {}).get("type", "text")
        content: str
        finish = "stop"
        if mode == "http500":
            return 500, {"error": {"message": "internal error"}}
        if mode == "stall":
            time.sleep(30)
        if mode == "refuse_json_schema" and format_type == "json_schema":
            return 500, {"error": {"message": "Input should be 'text' or 'json_object'"}}
        if mode == "prose":
            content = "I think you ran out of memory. Try a smaller batch."
        elif mode == "invalid_json":
            content = '{"analysis": "x", "causes": [ {"id": '
        elif mode == "truncated":
            content, finish = '{"analysis": "a long', "length"
        elif mode == "unknown_cause":
            answer = json.loads(json.dumps(VALID_ANSWER))
            answer["causes"][0]["id"] = "gpu_gremlins"
            content = json.dumps(answer)
        elif mode == "invalid_then_valid" and len(self.requests) == 1:
            content = "not json at all"
        elif mode == "fenced":
            content = "Here you go:\n```json\n" + json.dumps(VALID_ANSWER) + "\n```"
        elif mode == "no_choices":
            return 200, {"id": "x", "object": "chat.completion", "created": 0, "model": "fake", "choices": []}
        elif mode == "odd_quotes":  # a docstring in a diff: an odd number of \" inside one string
            answer = json.loads(json.dumps(VALID_ANSWER))
            answer["analysis"] = 'a quote " inside, a backslash \\ and \\" more'
            content = json.dumps(answer)
        elif mode == "huge":
            answer = json.loads(json.dumps(VALID_ANSWER))
            answer["analysis"] = "x" * 10_000_000
            content = json.dumps(answer)
        else:
            content = json.dumps(VALID_ANSWER)
        return 200, {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": body.get("model", "fake"),
                     "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": content}}],
                     "usage": {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.raw_bodies.append(raw)
                fake.headers.append({key.lower(): value for key, value in self.headers.items()})
                body = json.loads(raw or b"{}")
                fake.requests.append(body)
                if fake.upstream:
                    request = urllib.request.Request(fake.upstream + self.path.removeprefix("/v1"), data=raw,
                                                     headers={"Content-Type": "application/json"})
                    try:
                        with urllib.request.urlopen(request, timeout=300) as response:
                            self._send(response.status, json.loads(response.read()))
                    except urllib.error.HTTPError as error:
                        self._send(error.code, {"error": {"message": error.read().decode(errors="replace")}})
                    return
                if fake.mode == "retry_after":
                    data = b'{"error": {"message": "slow down"}}'
                    self.send_response(429)
                    self.send_header("Retry-After", "100")
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if fake.mode in ("html", "empty", "drip"):
                    self._raw(fake.mode)
                    return
                status, payload = fake.reply(body)
                self._send(status, payload)

            def _raw(self, mode: str) -> None:
                data = {"html": b"<html><body>502 Bad Gateway</body></html>", "empty": b"", "drip": b"{" + b" " * 600}[mode]
                self.send_response(200)
                self.send_header("Content-Type", "text/html" if mode == "html" else "application/json")
                self.send_header("Content-Length", str(len(data) if mode != "drip" else 10**6))
                self.end_headers()
                try:
                    if mode == "drip":
                        for byte in data:
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(1)
                    else:
                        self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler
