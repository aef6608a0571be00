"""A local Hugging Face model: chat template, optional Qwen3 thinking, seeded sampling, CPU or GPU.

Token counts are exact: the input is the templated prompt as tokenized for the model (role markers
included) and the output is every generated id. Sampling is seeded per call from ``(seed, call
number)``, and the call number is part of the saved state, so a resumed run draws what an
uninterrupted one would.

Small models drift off format. ``prefill_json`` starts the reply with ``{"<first key>": "`` (the
caller's expected JSON) and ``stop_at_json`` ends generation when that object closes. ``guided_json``
goes further: it writes the expected keys itself and lets the model generate only the values, each
up to its closing quote, so even a 135M model answers with every key (its values may still be poor);
with ``constrain_starts`` a value must also begin as the caller allows (an action with one of the game's
verbs, an answer with a choice letter), and the model writes the rest.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
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


def _closing_quote(text: str, escape: bool = False) -> tuple[int | None, bool]:
    """Index of the first unescaped ``"`` in ``text`` (None if there is none), and whether ``text``
    ends inside an escape; ``escape`` says whether the text before it did."""
    for i, ch in enumerate(text):
        if escape:
            escape = False
        elif ch == "\\":
            escape = True
        elif ch == '"':
            return i, False
    return None, escape


class _StringTracker:
    """Follows a JSON string value being written; done at its first unescaped closing quote."""

    def __init__(self) -> None:
        self.escape = False
        self.closed = False

    def feed(self, text: str) -> bool:
        if not self.closed:
            end, self.escape = _closing_quote(text, self.escape)
            self.closed = end is not None
        return self.closed


@contextlib.contextmanager
def quiet_loading(transformers: Any) -> Iterator[None]:
    """No per-tensor progress bars while weights load (the runner shows its own progress)."""
    logging = transformers.utils.logging
    was_on = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            logging.enable_progress_bar()


def _common_prefix(texts: Sequence[str]) -> str:
    """The longest text every one of ``texts`` starts with."""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _reusable(cache: Any, seen: list[int], ids: list[int]) -> Any:
    """The cache cut back to the longest prefix ``ids`` shares with what it holds (or None)."""
    if cache is None or not hasattr(cache, "crop") or not hasattr(cache, "get_seq_length"):
        return None
    held = cache.get_seq_length()
    common = 0
    limit = min(held, len(seen), len(ids) - 1)  # at least one new token must be fed
    while common < limit and seen[common] == ids[common]:
        common += 1
    if common == 0:
        return None
    if held > common:
        try:
            cache.crop(common - held)  # transformers 5: a negative count of tokens to remove
        except ValueError:
            cache.crop(common)  # transformers 4: the length to keep
    return cache


class TransformersLLM(LLM):
    """``transformers`` causal LM behind the chat protocol.

    ``model``: a local folder or a hub id (hub ids need the network or a filled HF cache).
    ``enable_thinking``: passed to the chat template (Qwen3: thinking on/off); None leaves the default.
    ``device``: ``auto`` (CUDA when available), ``cpu``, ``cuda``, ``cuda:1``...; ``dtype``: ``auto``
    (bfloat16 on GPU, float32 on CPU) or a torch dtype name. ``threads``: torch's CPU threads (None:
    torch's default).
    """

    backend = "hf"

    def __init__(self, model: str | Path, *, tokenizer: str | Path | None = None, device: str = "auto",
                 dtype: str = "auto", max_tokens: int = 512, context_window: int | None = None,
                 do_sample: bool = True, temperature: float = 0.7, top_p: float = 0.8, top_k: int | None = None,
                 repetition_penalty: float | None = None, seed: int = 0, enable_thinking: bool | None = None,
                 prefill_json: bool = False, guided_json: bool = False, constrain_starts: bool = False,
                 stop_at_json: bool = True,
                 trust_remote_code: bool = False, threads: int | None = None,
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
        self.guided_json = guided_json
        self.constrain_starts = constrain_starts
        self.stop_at_json = stop_at_json
        self.trust_remote_code = trust_remote_code
        self.threads = threads
        self.calls = 0
        self._model: Any = None
        self._tokenizer: Any = None

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Load tokenizer and weights (done on the first call; call it to pay the cost up front)."""
        if self._model is not None:
            return
        torch, tf = self._torch, self._transformers
        if self.threads is not None:
            torch.set_num_threads(int(self.threads))  # CPU threads; 1 helps on an oversubscribed machine
        device = self.device_request
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype: Any = self.dtype_request
        if dtype == "auto":
            dtype = torch.bfloat16 if device.startswith("cuda") else torch.float32
        elif isinstance(dtype, str):
            dtype = getattr(torch, dtype)
        model_path, tokenizer_path = self._sources()
        with quiet_loading(tf):
            self._tokenizer = tf.AutoTokenizer.from_pretrained(tokenizer_path,
                                                               trust_remote_code=self.trust_remote_code)
            if self._tokenizer.chat_template is None:
                raise ValueError(f"tokenizer of {tokenizer_path} has no chat template; give a chat model")
            model = tf.AutoModelForCausalLM.from_pretrained(model_path, dtype=dtype,
                                                            trust_remote_code=self.trust_remote_code)
        model.to(device)
        model.eval()
        self._model = model
        self.device = device
        major = int(tf.__version__.split(".", 1)[0])
        self._cache_arg = "cache" if major >= 5 else "past_key_values"
        if self._context_override is None:
            self.context_window = getattr(model.config, "max_position_embeddings", None)

    def _sources(self) -> tuple[str, str]:
        """Where the weights and the tokenizer load from."""
        return self.model_name, self.tokenizer_name

    @property
    def tokenizer(self) -> Any:
        self.load()
        return self._tokenizer

    @property
    def model(self) -> Any:
        """The loaded ``transformers`` model (loading it first): the agents that train adapters or attach
        a latent memory (:mod:`odyssey_agents.training`, :mod:`odyssey_agents.latent`) work on it in place,
        so every later call, QA answers included, uses what they learned."""
        self.load()
        return self._model

    def invalidate_caches(self) -> None:
        """The weights or the model's attached memory changed in place: keys and values computed before
        must not be reused. Whoever changes the model calls this after each change."""
        memo = getattr(self, "_memo", None)  # a cross-call prefix cache, where the backend keeps one
        if memo is not None:
            memo.clear()

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
                 json_keys: Sequence[str] | None = None,
                 starts: Mapping[str, Sequence[str]] | None = None) -> Completion:
        start = time.perf_counter()
        self.load()
        prompt = self._prompt_text(messages)
        thinking_on = self.enable_thinking is True
        self._torch.manual_seed((self.seed * 1_000_003 + self.calls) % (2**63 - 1))
        self.calls += 1
        if self.guided_json and json_keys and not thinking_on:
            return self._guided(prompt, json_keys, purpose, max_tokens, start,
                                starts if self.constrain_starts else None)
        prefix = json_prefill(json_keys) if self.prefill_json and not thinking_on else ""
        prompt_ids = self._encode(prompt + prefix)
        budget = self.reply_budget(len(prompt_ids), max_tokens)
        tracker = None
        if self.stop_at_json and json_keys and not thinking_on:
            tracker = _BraceTracker()
            tracker.feed(prefix)
        generated, _ = self._generate(prompt_ids, budget, tracker)
        text = prefix + self.decode(generated)
        answer, thinking = split_thinking(text)
        finish = "length" if len(generated) >= budget else "stop"
        return Completion(answer, len(prompt_ids), len(generated), time.perf_counter() - start, purpose,
                          reasoning=thinking, finish_reason=finish)

    def _guided(self, prompt: str, keys: Sequence[str], purpose: str, max_tokens: int | None,
                start: float, starts: Mapping[str, Sequence[str]] | None = None) -> Completion:
        """Fill the expected JSON object key by key: the keys and quotes are written for the model, the
        values are generated (each up to its closing quote). Input tokens are the prompt plus the
        scaffolding the model reads; output tokens are every generated id, discarded tails included."""
        text = "{"
        prompt_ids = self._encode(prompt + json_prefill(keys))
        input_tokens, output_tokens = len(prompt_ids), 0
        budget = self.reply_budget(len(prompt_ids), max_tokens)
        finish = "stop"
        cache: Any = None
        seen_ids: list[int] = []
        for i, key in enumerate(keys):
            opener = f'"{key}": "' if i == 0 else f', "{key}": "'
            if i > 0:
                input_tokens += len(self._encode(opener))
            text += opener
            room = budget - output_tokens - 8 * (len(keys) - i - 1)
            if room < 1:
                finish = "length"
                break
            beginnings = starts.get(key) if starts else None
            if beginnings:  # the value's opening: one constrained token, then the beginning it picks
                firsts = {b: self._encode(b)[0] for b in beginnings if b}  # each beginning's first token
                ids = self._encode(prompt + text)
                cache = _reusable(cache, seen_ids, ids)
                token, cache = self._generate(ids, 1, None, cache, sorted(set(firsts.values())) or None)
                seen_ids = ids + token
                output_tokens += len(token)
                chosen = [b for b, first in firsts.items() if token and first == token[0]]
                opening = _common_prefix(chosen) if chosen else self._tokenizer.decode(token)
                input_tokens += max(0, len(self._encode(opening)) - 1)  # the forced rest of the words
                text += opening
                room -= len(token)
                if room < 1:
                    finish = "length"
                    break
            tracker = _StringTracker()
            ids = self._encode(prompt + text)
            cache = _reusable(cache, seen_ids, ids)
            generated, cache = self._generate(ids, room, tracker, cache)
            seen_ids = ids + generated
            output_tokens += len(generated)
            value = self._tokenizer.decode(generated, skip_special_tokens=True)
            cut, _ = _closing_quote(value)
            if cut is None:
                finish = "length" if len(generated) >= room else finish
                text += value.rstrip("\\")  # ran out or ended without closing: keep what it said
                if len(generated) >= room:
                    break
                text += '"'
            else:
                text += value[:cut] + '"'
        else:
            text += "}"
        return Completion(text, input_tokens, output_tokens, time.perf_counter() - start, purpose,
                          finish_reason=finish)

    def decode(self, ids: Sequence[int]) -> str:
        """Generated ids as text, without end/pad markers but with thinking tags (which some
        tokenizers mark special): they are what separates a reasoning model's thinking from its answer."""
        text = self.tokenizer.decode(list(ids), skip_special_tokens=False)
        for special in self._tokenizer.all_special_tokens:
            if special and special.lower() not in ("<think>", "</think>"):
                text = text.replace(special, "")
        return text

    def _generate(self, prompt_ids: list[int], max_new: int, tracker: Any, cache: Any = None,
                  first: list[int] | None = None) -> tuple[list[int], Any]:
        """Generate after ``prompt_ids``; ``cache`` holds keys/values of a prefix of them (guided JSON);
        ``first`` restricts the first generated token."""
        torch, tokenizer, model = self._torch, self._tokenizer, self._model
        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "do_sample": self.do_sample,
                                  "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None
                                  else tokenizer.eos_token_id}
        if self.do_sample:
            kwargs.update(temperature=self.temperature, top_p=self.top_p)
            if self.top_k is not None:
                kwargs["top_k"] = self.top_k
        if self.repetition_penalty is not None:
            kwargs["repetition_penalty"] = self.repetition_penalty
        if tracker is not None:
            kwargs["stopping_criteria"] = self._stopper(tracker, len(prompt_ids))
        if cache is not None:
            kwargs[self._cache_arg] = cache
        if first:
            kwargs["logits_processor"] = self._first_token_only(first, len(prompt_ids))
        input_ids = torch.tensor([prompt_ids], device=model.device)
        with torch.no_grad():
            output = model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids),
                                    return_dict_in_generate=True, **kwargs)
        cache = getattr(output, "cache", None) or getattr(output, "past_key_values", None)
        return output.sequences[0, len(prompt_ids):].tolist(), cache

    def _first_token_only(self, allowed: list[int], prompt_len: int) -> Any:
        """A logits processor that, at the first generated position only, allows just ``allowed``."""
        torch = self._torch

        class FirstToken(self._transformers.LogitsProcessor):  # type: ignore[misc, name-defined]
            def __call__(self, input_ids: Any, scores: Any) -> Any:
                if input_ids.shape[1] != prompt_len:
                    return scores
                mask = torch.full_like(scores, float("-inf"))
                mask[:, allowed] = 0.0
                return scores + mask

        return self._transformers.LogitsProcessorList([FirstToken()])

    def _stopper(self, tracker: Any, prompt_len: int) -> Any:
        """A stopping criterion that ends generation once ``tracker`` has seen its end in the new text."""
        torch, tokenizer = self._torch, self._tokenizer
        seen = prompt_len

        class TrackerDone(self._transformers.StoppingCriteria):  # type: ignore[misc, name-defined]
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                nonlocal seen
                new = input_ids[0, seen:].tolist()
                seen += len(new)
                done = tracker.feed(tokenizer.decode(new, skip_special_tokens=True))
                return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)

        return self._transformers.StoppingCriteriaList([TrackerDone()])

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
                "guided_json": self.guided_json, "constrain_starts": self.constrain_starts,
                "stop_at_json": self.stop_at_json}
