"""An OpenAI-compatible chat client: the OpenAI API, vLLM, SGLang, llama.cpp's server, Ollama, ...

Anything that serves ``/v1/chat/completions`` works through ``base_url``. Keys come from the standard
variables (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``) or a variable the config names; local servers
that want no key get a placeholder. Token counts are the server's ``usage`` (for OpenAI reasoning
models the output count includes the hidden reasoning tokens, which is what they cost).

``max_tokens`` never exceeds what the context window leaves: the window comes from the config or,
for vLLM, from the server's ``/v1/models`` (``max_model_len``). The prompt size is estimated before
the call with a ratio calibrated on the server's own counts.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

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
        openai = require("openai")
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
        self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries)

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
        start = time.perf_counter()
        try:
            response = self._client.chat.completions.create(**request)
        except self._openai.BadRequestError as exc:
            if _is_context_error(exc):
                raise ContextOverflow(
                    self.count_tokens(messages),
                    self.context_window or 0,
                    f"the server refused the prompt as too long: {exc}",
                ) from exc
            raise LLMError(f"{self._where()} refused the request: {exc}") from exc
        except self._openai.OpenAIError as exc:
            raise LLMError(f"{self._where()} failed after retries: {exc}") from exc
        seconds = time.perf_counter() - start
        return self._completion(messages, response, purpose, seconds)

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
        if usage is not None and usage.prompt_tokens is not None:
            input_tokens, output_tokens, estimated = usage.prompt_tokens, usage.completion_tokens or 0, False
            self._calibrator.observe(messages, input_tokens)
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


def _is_context_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return any(
        s in text
        for s in ("context length", "context_length", "maximum context", "too long", "max_model_len", "context window")
    )
