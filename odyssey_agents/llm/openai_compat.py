"""An OpenAI-compatible chat client: the OpenAI API, vLLM, SGLang, llama.cpp's server, Ollama, ...

Anything that serves ``/v1/chat/completions`` works through ``base_url``. Keys come from the standard
variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``) or a variable the config names; local servers
that want no key get a placeholder. Token counts are the server's ``usage`` (for OpenAI reasoning
models the output count includes the hidden reasoning tokens, which is what they cost).

``max_tokens`` never exceeds what the context window leaves: the window comes from the config or,
for vLLM, from the server's ``/v1/models`` (``max_model_len``). The prompt size is estimated before
the call with a ratio calibrated on the server's own counts.

Retries are this module's, not the client library's (whose own are switched off): every attempt passes
the process-wide gate of its server (:mod:`odyssey_agents.llm.limits`: requests and tokens per minute,
calls in flight, a ``Retry-After`` that holds every cell of the process), a wait between attempts holds
no slot, and the one line of a call that failed for good says how many attempts it took and why.
``429`` is back-pressure, not failure: it is retried for up to ``rate_limit_patience`` seconds of
waiting, apart from the ``max_retries`` that bound retries after errors (5xx, timeouts, lost
connections). A ``429`` for an exhausted quota is not retried. ``timeout`` bounds each attempt.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

from odyssey_agents.llm.limits import Backoff, ServerGate, ServerLimits, parse_retry_after, server_gate
from odyssey_agents.llm.protocol import LLM, Completion, ContextOverflow, LLMError, Message, require
from odyssey_agents.llm.thinking import split_thinking
from odyssey_agents.llm.tokens import Calibrator, approx_text_tokens, approx_tokens

__all__ = ["OpenAIChat"]

_TOKEN_PARAMS = ("auto", "max_tokens", "max_completion_tokens")


class OpenAIChat(LLM):
    """Chat completions over HTTP with timeouts, retries and honest usage.

    ``token_param``: which request field carries the reply budget. ``auto`` sends
    ``max_completion_tokens`` to the official API (its reasoning models refuse ``max_tokens``) and
    ``max_tokens`` to any other ``base_url`` (what every open server understands).
    ``enable_thinking``: for Qwen3-style templates on vLLM/SGLang, switches thinking on or off through
    ``chat_template_kwargs``; None leaves the server's default. ``reasoning_effort`` is passed to
    reasoning models (``low``/``medium``/``high``). ``json_mode`` asks the server for a JSON object.
    ``requests_per_minute``, ``tokens_per_minute``, ``max_in_flight``: the server's limits, shared by
    every backend of the process that calls it (see the module docstring).
    """

    backend = "openai"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_retries: int = 4,
        rate_limit_patience: float = 600.0,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        max_in_flight: int | None = None,
        max_tokens: int = 2048,
        context_window: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        reasoning_effort: str | None = None,
        enable_thinking: bool | None = None,
        token_param: str = "auto",
        json_mode: bool = False,
        probe_context: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        backend: str = "openai",
    ):
        if token_param not in _TOKEN_PARAMS:
            raise ValueError(f"token_param must be one of {_TOKEN_PARAMS}, got {token_param!r}")
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be a whole number >= 0, got {max_retries!r}")
        if not (isinstance(timeout, (int, float)) and timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        if not (isinstance(rate_limit_patience, (int, float)) and rate_limit_patience >= 0):
            raise ValueError(f"rate_limit_patience must be a number of seconds >= 0, got {rate_limit_patience!r}")
        limits = ServerLimits(requests_per_minute, tokens_per_minute, max_in_flight)
        openai = require("openai", "api")
        self.backend = backend
        self.model = model
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        from odyssey_agents.llm.factory import url_has_credentials

        if url_has_credentials(self.base_url):  # it would be stored with the run and printed: never repeated
            where = "llm.base_url" if base_url else "OPENAI_BASE_URL"
            raise LLMError(
                f"{where} carries credentials (user:password@ or ?key=); refused: put the key in an environment "
                "variable and name it with llm.api_key_env=VARIABLE (default OPENAI_API_KEY)"
            )
        key = api_key or os.environ.get(api_key_env)
        if not key:
            if self.base_url is None:
                raise LLMError(f"no API key: set {api_key_env} (or llm.base_url for a local server)")
            key = "EMPTY"  # local servers (vLLM, llama.cpp, Ollama) accept any key
        self.max_tokens = max_tokens
        self.context_window = context_window
        self.temperature, self.top_p, self.seed = temperature, top_p, seed
        self.reasoning_effort = reasoning_effort
        self.enable_thinking = enable_thinking
        self.json_mode = json_mode
        self.extra_body = dict(extra_body or {})
        self.token_param = (
            ("max_completion_tokens" if self.base_url is None else "max_tokens")
            if token_param == "auto"
            else token_param
        )
        self._probe = probe_context and context_window is None and self.base_url is not None
        self._calibrator = Calibrator()
        self._openai = openai
        self.timeout, self.max_retries, self.rate_limit_patience = float(timeout), max_retries, rate_limit_patience
        self.gate: ServerGate = server_gate(self.base_url, model, limits)
        # jitter only: when a retry happens changes timing, never a reply (the sampling seed is the server's)
        self._backoff = Backoff(rng=random.Random(f"odyssey:backoff:{self.base_url}:{model}:{seed}"))
        self.retries = 0  # attempts after the first, over this backend's life (progress lines)
        self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=0)
        # the client imports its resources on first use: now, in the thread that builds the backend, not
        # concurrently in the threads of a concurrent sweep (imports in two threads can deadlock)
        _ = self._client.chat.completions, self._client.models

    # ------------------------------------------------------------------ protocol
    def count_tokens(self, messages: Sequence[Message]) -> int:
        return self._calibrator.estimate(messages)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: str,
        max_tokens: int | None = None,
        json_keys: Sequence[str] | None = None,
        starts: Mapping[str, Sequence[str]] | None = None,
    ) -> Completion:
        if self._probe:
            self._probe = False
            self.context_window = self._served_context_window()
        budget = self.reply_budget(self.count_tokens(messages), max_tokens)
        request: dict[str, Any] = {"model": self.model, "messages": list(messages), self.token_param: budget}
        for key in ("temperature", "top_p", "seed", "reasoning_effort"):
            value = getattr(self, key)
            if value is not None:
                request[key] = value
        if self.json_mode and json_keys:
            request["response_format"] = {"type": "json_object"}
        extra = dict(self.extra_body)
        if self.enable_thinking is not None:
            extra.setdefault("chat_template_kwargs", {})["enable_thinking"] = self.enable_thinking
        if extra:
            request["extra_body"] = extra
        response, seconds = self._send(request, messages, self.count_tokens(messages) + budget)
        return self._completion(messages, response, purpose, seconds)

    def _send(self, request: dict[str, Any], messages: Sequence[Message], charge: int) -> tuple[Any, float]:
        """The server's response to ``request`` (and the seconds of the attempt that got it), through
        the server's gate, retrying as the module docstring says."""
        openai, gate = self._openai, self.gate
        started = time.monotonic()
        attempt = errors = 0
        waited_on_limits = 0.0
        while True:
            with gate.slot(charge) as ticket:
                start = time.perf_counter()
                try:
                    response = self._client.chat.completions.create(**request)
                except openai.OpenAIError as exc:
                    failure = exc
                else:
                    usage = getattr(response, "usage", None)
                    counted = getattr(usage, "total_tokens", None) if usage is not None else None
                    gate.settle(ticket, counted if isinstance(counted, int) else charge)
                    seconds = time.perf_counter() - start
                    gate.count_success()
                    return response, seconds
                gate.settle(ticket, 0)  # a refused call used no tokens
            status = getattr(failure, "status_code", None)
            if isinstance(failure, openai.BadRequestError):
                if _is_context_error(failure):
                    raise ContextOverflow(
                        self.count_tokens(messages),
                        self.context_window or 0,
                        f"the server refused the prompt as too long: {_one_line(failure)}",
                    ) from failure
                raise LLMError(f"{self._where()} refused the request: {_one_line(failure)}") from failure
            rate_limited = status == 429
            retry_after = parse_retry_after(getattr(getattr(failure, "response", None), "headers", None))
            retryable = _retryable(failure, openai)
            gate.count_failure(rate_limited)
            if rate_limited and retryable:
                if retry_after is not None and retry_after > self._backoff.max_retry_after:
                    why = f"it asks to wait {retry_after:.0f} s (Retry-After), over {self._backoff.max_retry_after:.0f}"
                    raise self._gave_up(attempt + 1, started, failure, why) from failure
                delay = self._backoff.delay(attempt, retry_after)
                if retry_after is not None:
                    gate.hold(retry_after)  # every cell of the process waits for this server, not only this one
                waited_on_limits += delay
                if waited_on_limits > self.rate_limit_patience:
                    why = f"still rate-limited after {waited_on_limits:.0f} s of waiting (llm.rate_limit_patience)"
                    raise self._gave_up(attempt + 1, started, failure, why) from failure
            elif retryable and errors < self.max_retries:
                errors += 1
                delay = self._backoff.delay(errors - 1, retry_after)
            elif retryable:
                raise self._gave_up(attempt + 1, started, failure, f"llm.max_retries={self.max_retries}") from failure
            else:
                raise LLMError(f"{self._where()} refused the request: {_one_line(failure)}") from failure
            attempt += 1
            self.retries += 1
            time.sleep(delay)

    def _gave_up(self, attempts: int, started: float, failure: BaseException, why: str) -> LLMError:
        seconds = time.monotonic() - started
        return LLMError(
            f"{self._where()} failed {attempts} time{'s' if attempts > 1 else ''} in {seconds:.0f} s "
            f"({why}); last: {_one_line(failure)}"
        )

    def state(self) -> dict[str, Any]:
        """The calibrated characters-per-token ratio: a resumed run clips ``max_tokens`` the same way."""
        return {"chars_per_token": self._calibrator.chars_per_token}

    def set_state(self, state: dict[str, Any]) -> None:
        if "chars_per_token" in state:
            self._calibrator.chars_per_token = float(state["chars_per_token"])

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "model": self.model,
            "base_url": self.base_url,
            "max_tokens": self.max_tokens,
            "context_window": self.context_window,
            "token_param": self.token_param,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "reasoning_effort": self.reasoning_effort,
            "enable_thinking": self.enable_thinking,
            "limits": {k: v for k, v in vars(self.gate.limits).items() if v is not None},
        }

    # ------------------------------------------------------------------ internals
    def _completion(self, messages: Sequence[Message], response: Any, purpose: str, seconds: float) -> Completion:
        if not response.choices:
            raise LLMError(f"{self._where()} returned no choices")
        choice = response.choices[0]
        message = choice.message
        content = message.content or ""
        extra = getattr(message, "model_extra", None) or {}
        thinking = extra.get("reasoning_content") or extra.get("reasoning")
        answer, inline = split_thinking(content)
        if inline:
            thinking = f"{thinking}\n{inline}" if thinking else inline
        usage = response.usage
        cached = 0
        if usage is not None and usage.prompt_tokens is not None:
            input_tokens, output_tokens, estimated = usage.prompt_tokens, usage.completion_tokens or 0, False
            self._calibrator.observe(messages, input_tokens)
            details = getattr(usage, "prompt_tokens_details", None)  # OpenAI; vLLM with --enable-prompt-tokens-details
            found = getattr(details, "cached_tokens", None) if details is not None else None
            if isinstance(found, int) and found > 0:
                cached = min(found, input_tokens)
        else:  # some servers omit usage: estimate, and say so
            input_tokens = approx_tokens(messages)
            output_tokens = approx_text_tokens(content + (thinking or ""))
            estimated = True
        return Completion(
            answer,
            input_tokens,
            output_tokens,
            seconds,
            purpose,
            reasoning=thinking or None,
            finish_reason=choice.finish_reason,
            estimated=estimated,
            cached_tokens=cached,
        )

    def _served_context_window(self) -> int | None:
        """vLLM reports ``max_model_len`` per model; other servers may not say (then: unknown)."""
        try:
            listing = self._client.models.list()
        except self._openai.OpenAIError:
            return None
        for item in getattr(listing, "data", []) or []:
            extra = getattr(item, "model_extra", None) or {}
            if getattr(item, "id", None) == self.model and isinstance(extra.get("max_model_len"), int):
                return extra["max_model_len"]
        return None

    def _where(self) -> str:
        return f"model {self.model!r} at {self.base_url or 'the OpenAI API'}"


def _retryable(exc: BaseException, openai: Any) -> bool:
    """Whether another attempt may succeed: lost connections, timeouts, ``408``, ``409``, ``429`` (but not
    an exhausted quota), ``5xx``; a server's ``x-should-retry`` header decides where it says."""
    response = getattr(exc, "response", None)
    said = getattr(response, "headers", {}).get("x-should-retry") if response is not None else None
    if said in ("true", "false"):
        return said == "true"
    if isinstance(exc, openai.APIConnectionError):  # timeouts included
        return True
    status = getattr(exc, "status_code", None)
    if status == 429:
        return getattr(exc, "code", None) != "insufficient_quota"
    return status in (408, 409) or (isinstance(status, int) and status >= 500)


def _one_line(exc: BaseException) -> str:
    """An error as one line: its type, HTTP status and first line of message."""
    status = getattr(exc, "status_code", None)
    text = " ".join(str(getattr(exc, "message", None) or exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    head = type(exc).__name__ + (f" (HTTP {status})" if status else "")
    return f"{head}: {text}" if text else head


def _is_context_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(
        s in text
        for s in ("context length", "context_length", "maximum context", "too long", "max_model_len", "context window")
    )
