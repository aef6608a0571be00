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

from odyssey_agents.llm.cpu_threads import ThreadPolicy
from odyssey_agents.llm.prefix_cache import PrefixCache, boundaries
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


def _croppable(cache: Any) -> bool:
    """Whether ``cache`` can be cut back to a prefix and grown again (not a sliding window or a
    recurrent state, which forget what a crop would need)."""
    if cache is None or not hasattr(cache, "crop") or not hasattr(cache, "get_seq_length"):
        return False
    if getattr(cache, "is_croppable", True) is False:
        return False
    return not any(getattr(cache, "is_sliding", None) or ()) and not any(getattr(cache, "is_linear", None) or ())


def _reusable(cache: Any, seen: list[int], ids: list[int]) -> Any:
    """The cache cut back to the longest prefix ``ids`` shares with what it holds (or None)."""
    if not _croppable(cache):
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
    (bfloat16 on GPU, float32 on CPU) or a torch dtype name. ``threads``: torch's CPU threads, ``auto``
    (the usable cores other processes leave free, chosen before each call; see
    :mod:`~odyssey_agents.llm.cpu_threads`), a number, or None (torch's default).

    ``prefix_cache``: reuse the keys and values of prompt prefixes across calls (the system prompt,
    a QA round's shared memory, the steps a Long Context prompt repeats). The prompt is then always fed
    in pieces cut at the end of the system message and every ``prefix_chunk`` tokens after it, cached
    or not, so reuse never changes an output (:mod:`~odyssey_agents.llm.prefix_cache`); ``false`` feeds
    each prompt in one pass and reuses nothing.
    """

    #: How many prompt prefixes the cache keeps (act, reflect, summarise, answer prompts each have one).
    prefix_entries = 3

    backend = "hf"

    def __init__(
        self,
        model: str | Path,
        *,
        tokenizer: str | Path | None = None,
        device: str = "auto",
        dtype: str = "auto",
        max_tokens: int = 512,
        context_window: int | None = None,
        do_sample: bool = True,
        temperature: float = 0.7,
        top_p: float = 0.8,
        top_k: int | None = None,
        repetition_penalty: float | None = None,
        seed: int = 0,
        enable_thinking: bool | None = None,
        prefill_json: bool = False,
        guided_json: bool = False,
        constrain_starts: bool = False,
        stop_at_json: bool = True,
        trust_remote_code: bool = False,
        threads: int | str | None = "auto",
        prefix_cache: bool = True,
        prefix_chunk: int | None = None,
        backend: str = "hf",
    ):
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
        self._thread_policy = ThreadPolicy(threads)
        if prefix_chunk is not None and (
            not isinstance(prefix_chunk, int) or isinstance(prefix_chunk, bool) or prefix_chunk < 1
        ):
            raise ValueError(f"prefix_chunk must be a positive number of tokens, got {prefix_chunk!r}")
        if not isinstance(prefix_cache, bool):
            raise ValueError(f"prefix_cache must be true or false, got {prefix_cache!r}")
        self.prefix_cache = prefix_cache
        self._chunk_request = prefix_chunk
        self.prefix_chunk: int | None = None  # set by load(): the request, or 128 on CPU and 512 on GPU
        self._memo = PrefixCache(self.prefix_entries)
        self._system_ids: dict[str, list[int]] = {}  # system message text -> its templated tokens
        self._first_ids: dict[tuple[str, ...], dict[str, int]] = {}  # allowed beginnings -> first tokens
        self.calls = 0
        self._model: Any = None
        self._tokenizer: Any = None
        #: Hooks of an agent that works on the model itself: ``model_loader(path, dtype, device)`` builds the
        #: model instead of ``AutoModelForCausalLM`` (a released MemoryLLM checkpoint read as data);
        #: ``call_hooks`` run at the start of every call (M+ retrieves its long-term memory once per call);
        #: ``strip_bos`` drops the template's leading BOS (a memory model brings its own first token).
        self.model_loader: Any = None
        self.call_hooks: list[Any] = []
        self.strip_bos = False

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Load tokenizer and weights (done on the first call; call it to pay the cost up front)."""
        if self._model is not None:
            return
        torch, tf = self._torch, self._transformers
        self._use_threads()
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
            self._tokenizer = tf.AutoTokenizer.from_pretrained(tokenizer_path, trust_remote_code=self.trust_remote_code)
            if self._tokenizer.chat_template is None:
                raise ValueError(f"tokenizer of {tokenizer_path} has no chat template; give a chat model")
            if self.model_loader is not None:
                model = self.model_loader(model_path, dtype, device)
            else:
                model = tf.AutoModelForCausalLM.from_pretrained(
                    model_path, dtype=dtype, trust_remote_code=self.trust_remote_code
                )
        model.to(device)
        model.eval()
        self._model = model
        self.device = device
        major = int(tf.__version__.split(".", 1)[0])
        self._cache_arg = "cache" if major >= 5 else "past_key_values"
        self.prefix_chunk = self._chunk_request or (512 if device.startswith("cuda") else 128)
        if self._context_override is None:
            self.context_window = getattr(model.config, "max_position_embeddings", None)

    def _use_threads(self) -> None:
        """Set torch's CPU threads as the ``threads`` setting says (for ``auto``: as the load allows)."""
        count = self._thread_policy.choose()
        if count is not None and count != self._torch.get_num_threads():
            self._torch.set_num_threads(count)

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
        text = self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True, **kwargs)
        bos = self._tokenizer.bos_token
        if self.strip_bos and bos and text.startswith(bos):
            text = text[len(bos) :]
        return text

    def _encode(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(self._encode(self._prompt_text(messages)))

    def count_text(self, text: str) -> int:
        return len(self._encode(text))

    def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: str,
        max_tokens: int | None = None,
        json_keys: Sequence[str] | None = None,
        starts: Mapping[str, Sequence[str]] | None = None,
    ) -> Completion:
        start = time.perf_counter()
        self.load()
        self._use_threads()
        for hook in self.call_hooks:
            hook()
        prompt = self._prompt_text(messages)
        system = self._system_text(messages, prompt)
        thinking_on = self.enable_thinking is True
        self._torch.manual_seed((self.seed * 1_000_003 + self.calls) % (2**63 - 1))
        self.calls += 1
        if self.guided_json and json_keys and not thinking_on:
            return self._guided(
                prompt, system, json_keys, purpose, max_tokens, start, starts if self.constrain_starts else None
            )
        prefix = json_prefill(json_keys) if self.prefill_json and not thinking_on else ""
        prompt_ids = self._encode(prompt + prefix)
        budget = self.reply_budget(len(prompt_ids), max_tokens)
        tracker = None
        if self.stop_at_json and json_keys and not thinking_on:
            tracker = _BraceTracker()
            tracker.feed(prefix)
        cache, cuts = self._prefilled(prompt_ids, system)
        generated, cache = self._generate(prompt_ids, budget, tracker, cache)
        self._keep(cache, prompt_ids + generated, cuts, cuts[-1] if cuts else 0)
        text = prefix + self.decode(generated)
        answer, thinking = split_thinking(text)
        finish = "length" if len(generated) >= budget else "stop"
        return Completion(
            answer,
            len(prompt_ids),
            len(generated),
            time.perf_counter() - start,
            purpose,
            reasoning=thinking,
            finish_reason=finish,
        )

    def _guided(
        self,
        prompt: str,
        system: str,
        keys: Sequence[str],
        purpose: str,
        max_tokens: int | None,
        start: float,
        starts: Mapping[str, Sequence[str]] | None = None,
    ) -> Completion:
        """Fill the expected JSON object key by key: the keys and quotes are written for the model, the
        values are generated (each up to its closing quote). Input tokens are the prompt plus the
        scaffolding the model reads; output tokens are every generated id, discarded tails included."""
        text = "{"
        prompt_ids = self._encode(prompt + json_prefill(keys))
        input_tokens, output_tokens = len(prompt_ids), 0
        budget = self.reply_budget(len(prompt_ids), max_tokens)
        finish = "stop"
        cache, cuts = self._prefilled(prompt_ids, system)
        valid = cuts[-1] if cuts else 0  # how much of the cache was fed in pieces (reusable later)
        seen_ids: list[int] = prompt_ids if cache is not None else []
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
                firsts = self._first_tokens(beginnings)
                ids = prompt_ids if i == 0 else self._encode(prompt + text)
                cache = _reusable(cache, seen_ids, ids)
                valid = min(valid, cache.get_seq_length()) if cache is not None else 0
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
            ids = prompt_ids if i == 0 and not beginnings else self._encode(prompt + text)  # same text: same ids
            cache = _reusable(cache, seen_ids, ids)
            valid = min(valid, cache.get_seq_length()) if cache is not None else 0
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
        self._keep(cache, seen_ids, cuts, valid)
        return Completion(text, input_tokens, output_tokens, time.perf_counter() - start, purpose, finish_reason=finish)

    def _first_tokens(self, beginnings: Sequence[str]) -> dict[str, int]:
        """Each allowed beginning's first token (the same game's verbs come every step: tokenized once)."""
        key = tuple(beginnings)
        firsts = self._first_ids.get(key)
        if firsts is None:
            if len(self._first_ids) >= 64:
                self._first_ids.clear()
            firsts = self._first_ids[key] = {b: self._encode(b)[0] for b in beginnings if b}
        return firsts

    # ------------------------------------------------------------------ prefix cache
    def _system_text(self, messages: Sequence[Message], prompt: str) -> str:
        """The templated system message ``prompt`` opens with ("" if none): the first boundary."""
        if not self.prefix_cache or len(messages) < 2 or messages[0].get("role") != "system":
            return ""
        kwargs: dict[str, Any] = {}
        if self.enable_thinking is not None:
            kwargs["enable_thinking"] = self.enable_thinking
        try:
            text = self.tokenizer.apply_chat_template(
                [dict(messages[0])], tokenize=False, add_generation_prompt=False, **kwargs
            )
        except Exception:  # a template that refuses a conversation without a user turn: no system boundary
            return ""
        return text if isinstance(text, str) and prompt.startswith(text) else ""

    def _system_length(self, system: str, ids: list[int]) -> int:
        """Tokens of ``system`` at the start of ``ids``; 0 when the prompt does not tokenize into the
        system message's own tokens followed by the rest (then only the chunk grid cuts it)."""
        if not system:
            return 0
        system_ids = self._system_ids.get(system)
        if system_ids is None:
            if len(self._system_ids) >= 16:
                self._system_ids.clear()
            system_ids = self._system_ids[system] = self._encode(system)
        n = len(system_ids)
        return n if ids[:n] == system_ids else 0

    def _prefilled(self, ids: list[int], system: str) -> tuple[Any, tuple[int, ...]]:
        """A cache holding ``ids`` up to their last boundary, reused from an earlier call as far as
        possible and fed piece by piece from there; and the boundaries. ``(None, ())`` when the
        prefix cache is off or the prompt is too short to cut (generation then feeds it whole)."""
        if not self.prefix_cache:
            return None, ()
        cuts = boundaries(len(ids), self._system_length(system, ids), self.prefix_chunk or 128)
        if not cuts:
            return None, ()
        cache, done = self._memo.take(ids, cuts)
        if cache is None:
            cache = self._new_cache()
        torch, model = self._torch, self._model
        with torch.no_grad():
            for cut in cuts:
                if cut <= done:
                    continue
                piece = torch.tensor([ids[done:cut]], device=model.device)
                model(input_ids=piece, use_cache=True, logits_to_keep=1, **{self._cache_arg: cache})
                done = cut
        return cache, cuts

    def _new_cache(self) -> Any:
        tf = self._transformers
        try:
            return tf.DynamicCache(config=self._model.config)
        except TypeError:  # transformers 4 builds its layers lazily
            return tf.DynamicCache()

    def _keep(self, cache: Any, ids: list[int], cuts: tuple[int, ...], valid: int) -> None:
        """Give the cache of a finished call to the prefix cache (reusable up to ``valid`` tokens)."""
        if self.prefix_cache and cuts and valid > 0 and _croppable(cache):
            self._memo.put(cache, ids, cuts, valid)

    def decode(self, ids: Sequence[int]) -> str:
        """Generated ids as text, without end/pad markers but with thinking tags (which some
        tokenizers mark special): they are what separates a reasoning model's thinking from its answer."""
        text = self.tokenizer.decode(list(ids), skip_special_tokens=False)
        for special in self._tokenizer.all_special_tokens:
            if special and special.lower() not in ("<think>", "</think>"):
                text = text.replace(special, "")
        return text

    def _generate(
        self, prompt_ids: list[int], max_new: int, tracker: Any, cache: Any = None, first: list[int] | None = None
    ) -> tuple[list[int], Any]:
        """Generate after ``prompt_ids``; ``cache`` holds keys/values of a prefix of them (guided JSON);
        ``first`` restricts the first generated token."""
        torch, tokenizer, model = self._torch, self._tokenizer, self._model
        kwargs: dict[str, Any] = {
            "max_new_tokens": max_new,
            "do_sample": self.do_sample,
            "pad_token_id": tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
        }
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
            output = model.generate(
                input_ids=input_ids, attention_mask=torch.ones_like(input_ids), return_dict_in_generate=True, **kwargs
            )
        cache = getattr(output, "cache", None) or getattr(output, "past_key_values", None)
        return output.sequences[0, len(prompt_ids) :].tolist(), cache

    def _first_token_only(self, allowed: list[int], prompt_len: int) -> Any:
        """A logits processor that, at the first generated position only, allows just ``allowed``."""
        torch = self._torch

        class FirstToken(self._transformers.LogitsProcessor):  # type: ignore[name-defined]  # a base class from the lazily imported module: mypy needs a static one
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

        class TrackerDone(self._transformers.StoppingCriteria):  # type: ignore[name-defined]  # a base class from the lazily imported module: mypy needs a static one
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
        return {
            "backend": self.backend,
            "model": self.model_name,
            "max_tokens": self.max_tokens,
            "context_window": self.context_window,
            "do_sample": self.do_sample,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "top_k": self.top_k,
            "repetition_penalty": self.repetition_penalty,
            "seed": self.seed,
            "enable_thinking": self.enable_thinking,
            "prefill_json": self.prefill_json,
            "guided_json": self.guided_json,
            "constrain_starts": self.constrain_starts,
            "stop_at_json": self.stop_at_json,
            "prefix_cache": self.prefix_cache,
            "prefix_chunk": self.prefix_chunk or self._chunk_request,
        }
