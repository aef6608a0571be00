"""A local OpenAI-compatible chat server for benchmarks: real HTTP (aiohttp), a latency, a rate limit, errors.

    pip install -e ".[bench]"
    python benchmarks/chat_server.py --latency 1.0 [--rpm 600] [--error-rate 0.05] [--port 8000]

It serves ``POST /v1/chat/completions`` and ``GET /v1/models`` as vLLM does, so ``llm=vllm
llm.base_url=http://127.0.0.1:PORT/v1`` plays against it. Every reply is the scripted backend's
rule-based player (:class:`odyssey_agents.llm.scripted.ScriptedLLM`) answering the request's prompt,
seeded by the prompt itself: the same prompt gets the same reply whatever the order, the concurrency or
the retries, so sweeps played by different launchers must end with the same trajectories. The reply's
keys are read from the prompt's output format, its token counts are the scripted backend's.

What it does to each request, in order: ``--rpm`` (a token bucket, a burst of ``--burst`` requests):
over the limit, ``429`` with ``Retry-After`` (and OpenAI's ``retry-after-ms``) saying when a request
would be admitted; then ``--latency`` seconds of waiting (asyncio: any number of requests wait together,
as on a batching server); then, with probability ``--error-rate`` (seeded, ``--seed``), a ``503``.
``GET /stats`` reports what it saw (requests, replies, 429s, 5xx, the most requests in flight at once).

Started from Python with :func:`start` (a subprocess, so that the server's work does not share the
interpreter lock with the sweep it serves), which returns its URL once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_KEY = re.compile(r'^\s+"([a-z_]+)": "', re.MULTILINE)


class Limiter:
    """The server's own rate limit: a token bucket of ``rpm`` a minute holding ``burst`` requests."""

    def __init__(self, rpm: float, burst: float):
        self.rate = rpm / 60.0
        self.capacity = max(1.0, burst)
        self.level = self.capacity
        self.at = time.monotonic()

    def admit(self) -> float:
        """0 if a request may go now (and take its token), else the seconds until one may."""
        now = time.monotonic()
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now
        if self.level >= 1.0:
            self.level -= 1.0
            return 0.0
        return (1.0 - self.level) / self.rate


def reply_keys(messages: list[dict[str, str]]) -> tuple[str, ...]:
    """The keys the prompt's output format asks for (the ReAct reply when it names none)."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    block = system.partition("Output format")[2]
    keys = tuple(dict.fromkeys(_KEY.findall(block)))
    return keys or ("reasoning", "action")


def scripted_reply(messages: list[dict[str, str]], seed: int) -> tuple[str, int, int]:
    """(text, prompt tokens, completion tokens) of the scripted player's reply to ``messages``."""
    from odyssey_agents.llm.scripted import ScriptedLLM

    digest = hashlib.sha256(json.dumps([seed, messages], sort_keys=True).encode()).hexdigest()
    llm = ScriptedLLM(seed=int(digest[:12], 16))
    done = llm.complete(messages, purpose="act", json_keys=reply_keys(messages))
    return done.text, done.input_tokens, done.output_tokens


def make_app(
    *,
    model: str,
    latency: float,
    rpm: float | None,
    burst: float,
    error_rate: float,
    seed: int,
    max_model_len: int,
) -> Any:
    from aiohttp import web

    limiter = Limiter(rpm, burst) if rpm else None
    errors = random.Random(f"odyssey:chat-server:{seed}")
    stats = {"requests": 0, "replies": 0, "rate_limited": 0, "errors": 0, "in_flight": 0, "peak_in_flight": 0}

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        stats["requests"] += 1
        if limiter is not None:
            wait = limiter.admit()
            if wait > 0:
                stats["rate_limited"] += 1
                headers = {"retry-after": str(math.ceil(wait)), "retry-after-ms": str(math.ceil(wait * 1000))}
                error = {"message": "Rate limit reached: slow down", "type": "requests", "code": "rate_limit_exceeded"}
                return web.json_response({"error": error}, status=429, headers=headers)
        stats["in_flight"] += 1
        stats["peak_in_flight"] = max(stats["peak_in_flight"], stats["in_flight"])
        try:
            await asyncio.sleep(latency)
            if error_rate and errors.random() < error_rate:
                stats["errors"] += 1
                error = {"message": "The server is overloaded, try again", "type": "server_error"}
                return web.json_response({"error": error}, status=503)
            text, prompt_tokens, completion_tokens = scripted_reply(body["messages"], int(body.get("seed") or 0))
        finally:
            stats["in_flight"] -= 1
        stats["replies"] += 1
        return web.json_response(
            {
                "id": f"chatcmpl-{stats['requests']}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", model),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    async def models(request: web.Request) -> web.Response:
        item = {"id": model, "object": "model", "created": 0, "owned_by": "bench", "max_model_len": max_model_len}
        return web.json_response({"object": "list", "data": [item]})

    async def show_stats(request: web.Request) -> web.Response:
        return web.json_response(stats)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.add_routes(
        [web.post("/v1/chat/completions", completions), web.get("/v1/models", models), web.get("/stats", show_stats)]
    )
    return app


def serve(args: argparse.Namespace) -> None:
    from aiohttp import web

    app = make_app(
        model=args.model,
        latency=args.latency,
        rpm=args.rpm,
        burst=args.burst,
        error_rate=args.error_rate,
        seed=args.seed,
        max_model_len=args.max_model_len,
    )

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", args.port, backlog=1024)
        await site.start()
        port = runner.addresses[0][1]
        print(f"listening on http://127.0.0.1:{port}/v1", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


def start(*options: str) -> tuple[subprocess.Popen[str], str]:
    """Start the server in a subprocess with these command-line options; (process, base URL)."""
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--port", "0", *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        raise SystemExit(f"the chat server did not start: {line!r}")
    return proc, line.split()[-1]


def fetch_stats(url: str) -> dict[str, Any]:
    import urllib.request

    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as response:
        return json.loads(response.read())


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model", default="bench")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds every call takes")
    parser.add_argument("--rpm", type=float, default=None, help="requests per minute admitted (429 beyond)")
    parser.add_argument("--burst", type=float, default=10.0, help="requests admitted at once under --rpm")
    parser.add_argument("--error-rate", type=float, default=0.0, help="share of calls answered 503")
    parser.add_argument("--seed", type=int, default=0, help="seed of the errors")
    parser.add_argument("--max-model-len", type=int, default=32768)
    return parser.parse_args(argv)


if __name__ == "__main__":
    serve(parse())
