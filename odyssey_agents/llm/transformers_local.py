"""A local Hugging Face model: chat template, optional Qwen3 thinking, seeded sampling, CPU or GPU.

Token counts are exact: the input is the templated prompt as tokenized for the model (role markers
included) and the output is every generated id. Sampling is seeded per call from ``(seed, call
number)``, and the call number is part of the saved state, so a resumed run draws what an
uninterrupted one would.

Small models drift off format; ``prefill_json`` starts the reply with ``{"<first key>": "`` (the
caller's expected JSON) and ``stop_at_json`` ends generation when that object closes, which keeps a
135M model on the JSON contract and saves the tokens it would spend rambling afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey_agents.llm.protocol import LLM, Completion, Message, require
from odyssey_agents.llm.thinking import split_thinking

__all__ = ["TransformersLLM", "json_prefill"]


def json_prefill(json_keys: Sequence[str] | None) -> str:
    """The opening of the expected JSON object: ``{"reasoning": "``."""
    return f'{{"{json_keys[0]}": "' if json_keys else ""


class _BraceTracker:
    """Follows JSON nesting through streamed text; ``closed`` once the outermost object ends."""

    def __init__(self) -> None:
        self.depth = 0
        self.started = False
        self.in_string = False
        self.escape = False
        self.closed = False

    def feed(self, text: str) -> bool:
        for ch in text:
            if self.in_string:
                if self.escape:
                    self.escape = False
                elif ch == "\\":
                    self.escape = True
                elif ch == '"':
                    self.in_string = False
            elif ch == '"' and self.started:
                self.in_string = True
            elif ch == "{":
                self.depth += 1
                self.started = True
            elif ch == "}" and self.started:
                self.depth -= 1
                if self.depth == 0:
                    self.closed = True
                    return True
        return self.closed


class TransformersLLM(LLM):
    """``transformers`` causal LM behind the chat protocol.

    ``model``: a local folder or a hub id (hub ids need the network or a filled HF cache).
    ``enable_thinking``: passed to the chat template (Qwen3: thinking on/off); None leaves the default.
    ``device``: ``auto`` (CUDA when available), ``cpu``, ``cuda``, ``cuda:1``...; ``dtype``: ``auto``
    (bfloat16 on GPU, float32 on CPU) or a torch dtype name.
    """

    backend = "hf"

    def __init__(self, model: str | Path, *, tokenizer: str | Path | None = None, device: str = "auto",
                 dtype: str = "auto", max_tokens: int = 512, context_window: int | None = None,
                 do_sample: bool = True, temperature: float = 0.7, top_p: float = 0.8, top_k: int | None = None,
                 repetition_penalty: float | None = None, seed: int = 0, enable_thinking: bool | None = None,
                 prefill_json: bool = False, stop_at_json: bool = True, trust_remote_code: bool = False,
                 backend: str = "hf"):
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        self._torch = require("torch")
        self._transformers = require("transformers")
        self.backend = backend
        self.model_name = str(model)
        self.tokenizer_name = str(tokenizer or model)
        self.device_request, self.dtype_request = device, dtype
        self.max_tokens = max_tokens
        self._context_override = context_window
        self.context_window = context_window
        self.do_sample, self.temperature, self.top_p, self.top_k = do_sample, temperature, top_p, top_k
        self.repetition_penalty = repetition_penalty
        self.seed = int(seed)
        self.enable_thinking = enable_thinking
        self.prefill_json = prefill_json
        self.stop_at_json = stop_at_json
        self.trust_remote_code = trust_remote_code
        self.calls = 0
        self._model: Any = None
        self._tokenizer: Any = None

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Load tokenizer and weights (done on the first call; call it to pay the cost up front)."""
        if self._model is not None:
            return
        torch, tf = self._torch, self._transformers
        device = self.device_request
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype: Any = self.dtype_request
        if dtype == "auto":
            dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        elif isinstance(dtype, str):
            dtype = getattr(torch, dtype)
        model_path, tokenizer_path = self._sources()
        self._tokenizer = tf.AutoTokenizer.from_pretrained(tokenizer_path, trust_remote_code=self.trust_remote_code)
        if self._tokenizer.chat_template is None:
            raise ValueError(f"tokenizer of {tokenizer_path} has no chat template; give a chat model")
        model = tf.AutoModelForCausalLM.from_pretrained(model_path, dtype=dtype,
                                                        trust_remote_code=self.trust_remote_code)
        model.to(device)
        model.eval()
        self._model = model
        self.device = device
        if self._context_override is None:
            self.context_window = getattr(model.config, "max_position_embeddings", None)

    def _sources(self) -> tuple[str, str]:
        """Where the weights and the tokenizer load from."""
        return self.model_name, self.tokenizer_name

    @property
    def tokenizer(self) -> Any:
        self.load()
        return self._tokenizer

    # ------------------------------------------------------------------ protocol
    def _prompt_text(self, messages: Sequence[Message]) -> str:
        kwargs: dict[str, Any] = {}
        if self.enable_thinking is not None:
            kwargs["enable_thinking"] = self.enable_thinking
        return self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True,
                                                  **kwargs)

    def _encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self._encode(self._prompt_text(messages)))

    def count_text(self, text: str) -> int:
        return len(self._encode(text))

    def complete(self, messages: Sequence[Message], *, purpose: str, max_tokens: int | None = None,
                 json_keys: Sequence[str] | None = None) -> Completion:
        torch = self._torch
        start = time.perf_counter()
        self.load()
        prefix = json_prefill(json_keys) if self.prefill_json and self.enable_thinking is not True else ""
        prompt_ids = self._encode(self._prompt_text(messages) + prefix)
        budget = self.reply_budget(len(prompt_ids), max_tokens)
        tokenizer, model = self._tokenizer, self._model
        kwargs: dict[str, Any] = {"max_new_tokens": budget, "do_sample": self.do_sample,
                                  "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                                  else tokenizer.eos_token_id}
        if self.do_sample:
            kwargs.update(temperature=self.temperature, top_p=self.top_p)
            if self.top_k is not None:
                kwargs["top_k"] = self.top_k
        if self.repetition_penalty is not None:
            kwargs["repetition_penalty"] = self.repetition_penalty
        if self.stop_at_json and json_keys and self.enable_thinking is not True:
            kwargs["stopping_criteria"] = self._json_stop(prefix, len(prompt_ids))
        torch.manual_seed((self.seed * 1_000_003 + self.calls) % (2**63 - 1))
        self.calls += 1
        input_ids = torch.tensor([prompt_ids], device=model.device)
        with torch.no_grad():
            output = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs)
        generated = output[0, len(prompt_ids):].tolist()
        text = prefix + tokenizer.decode(generated, skip_special_tokens=True)
        answer, thinking = split_thinking(text)
        finish = "length" if len(generated) >= budget else "stop"
        return Completion(answer, len(prompt_ids), len(generated), time.perf_counter() - start, purpose,
                          reasoning=thinking, finish_reason=finish)

    def _json_stop(self, prefix: str, prompt_len: int) -> Any:
        """A stopping criterion that ends generation when the JSON object begun by ``prefix`` closes."""
        torch, tokenizer = self._torch, self._tokenizer
        tracker = _BraceTracker()
        tracker.feed(prefix)
        seen = prompt_len

        class JsonClosed(self._transformers.StoppingCriteria):  # type: ignore[misc, name-defined]
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                nonlocal seen
                new = input_ids[0, seen:].tolist()
                seen += len(new)
                done = tracker.feed(tokenizer.decode(new, skip_special_tokens=True))
                return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)

        return self._transformers.StoppingCriteriaList([JsonClosed()])

    def state(self) -> dict[str, Any]:
        return {"calls": self.calls}

    def set_state(self, state: dict[str, Any]) -> None:
        self.calls = int(state.get("calls", 0))

    def describe(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model_name, "max_tokens": self.max_tokens,
                "context_window": self.context_window, "do_sample": self.do_sample,
                "temperature": self.temperature, "top_p": self.top_p, "top_k": self.top_k,
                "repetition_penalty": self.repetition_penalty, "seed": self.seed,
                "enable_thinking": self.enable_thinking, "prefill_json": self.prefill_json,
                "stop_at_json": self.stop_at_json}
