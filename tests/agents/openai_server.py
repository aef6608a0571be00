"""A small OpenAI-compatible server for tests: real HTTP on 127.0.0.1, scripted or model-backed.

It serves ``POST /v1/chat/completions`` and ``GET /v1/models`` like vLLM does (``max_model_len``
included), records every request body, and follows a script of behaviours: answer with given
content/usage, fail with an HTTP status (and headers such as ``Retry-After``, and an error ``code``), or
stall (to test timeouts). It counts the requests in flight and the most it saw at once (``peak``).
With a ``backend`` (an ``odyssey_agents`` LLM such as a tiny transformers model) it generates real
replies and reports that model's exact token counts as ``usage``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAIServer:
    def __init__(self, model: str = "tiny", *, max_model_len: int | None = 4096, backend: Any = None):
        self.model = model
        self.max_model_len = max_model_len
        self.backend = backend
        self.script: list[dict[str, Any]] = []  # consumed one per completion request
        self.default: dict[str, Any] = {}  # the behaviour once the script is used up
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []  # time.monotonic() of each completion request's arrival
        self.in_flight = self.peak = 0
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    item = {"id": server.model, "object": "model", "created": 0, "owned_by": "test"}
                    if server.max_model_len is not None:
                        item["max_model_len"] = server.max_model_len
                    self._send(200, {"object": "list", "data": [item]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.times.append(time.monotonic())
                    step = server.script.pop(0) if server.script else dict(server.default)
                    server.in_flight += 1
                    server.peak = max(server.peak, server.in_flight)
                try:
                    if "delay" in step:
                        time.sleep(step["delay"])
                    if "status" in step:
                        error = {"message": step.get("message", "scripted failure"), "type": "server_error"}
                        if "code" in step:
                            error["code"] = step["code"]
                        status, reply, headers = step["status"], {"error": error}, step.get("headers")
                    else:
                        status, reply, headers = 200, server.reply(body, step), None
                finally:
                    # A request stops counting before its reply leaves: once the client has the reply it may send
                    # its next request, which must not find this one still counted (``peak`` would overcount).
                    with server._lock:
                        server.in_flight -= 1
                self._send(status, reply, headers)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def reply(self, body: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        usage: dict[str, Any] | None
        if self.backend is not None and "content" not in step:
            budget = body.get("max_tokens") or body.get("max_completion_tokens")
            done = self.backend.complete(body["messages"], purpose="act", max_tokens=budget)
            message["content"] = done.text
            usage = {
                "prompt_tokens": done.input_tokens,
                "completion_tokens": done.output_tokens,
                "total_tokens": done.input_tokens + done.output_tokens,
            }
        else:
            message["content"] = step.get("content", '{"reasoning": "r", "action": "wait"}')
            usage = step.get("usage", {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110})
        if "reasoning_content" in step:
            message["reasoning_content"] = step["reasoning_content"]
        out: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": step.get("finish_reason", "stop")}],
        }
        if usage is not None:
            out["usage"] = usage
        return out

    def __enter__(self) -> FakeOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)
