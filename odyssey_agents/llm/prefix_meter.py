"""How much of each prompt a server's prompt cache could serve: the prefix it shares with earlier prompts.

vLLM's automatic prefix caching and the hosted APIs' prompt caching (billed at a lower price) skip the
work of a prompt's leading tokens when a recent prompt began with the same ones. Whether they can is a
property of the prompt layout: stable parts first (the system prompt, then memory that changes rarely,
then what changes every step) repeat; a layout that puts a changing line first repeats nothing.

:class:`PrefixMeter` measures it for one agent, whatever the backend: for each prompt, the longest
prefix it shares with the cell's previous prompt of any purpose it has seen (the last one of each
purpose: an act prompt after a reflection still finds the previous act prompt, as a server's cache
would), in characters of the rendered chat, converted to tokens in proportion to the call's own input
tokens (the server's count, or the local tokenizer's: no tokenizer is run again). It is an estimate of
what a cache *could* serve (a server caches in blocks: vLLM 16 tokens, OpenAI 128 after the first
1024), not of what it did; the server's own count, where it reports one, is kept apart
(``cached_tokens``).

The previous prompts are part of the agent's saved state (:meth:`state`), so a resumed run measures
its first prompt against the same prompts an uninterrupted run would. Questions (QA diagnostics) are
measured against the saved prompts and against each other within a round, but kept apart and dropped
at the next step (:meth:`step`): answering never changes what an agent saves, and a round is asked in
one process, so a resumed run measures them alike too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PrefixMeter", "common_prefix", "render_chat"]


def render_chat(messages: Sequence[Mapping[str, str]]) -> str:
    """The text a chat template is built from, in order: each message's role, then its content.

    What a template puts around them differs by model but is the same for equal messages, so two
    prompts share a template prefix exactly when they share this text's prefix (up to the markers)."""
    return "".join(f"<{m.get('role', '')}>\n{m.get('content') or ''}\n" for m in messages)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of ``a`` and ``b``, by bisection on slices (each
    comparison runs in C), so a Long Context prompt of megabytes costs a few dozen comparisons."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]; equality of prefixes is monotone in the length
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class PrefixMeter:
    """The cacheable prefix of each prompt of one agent (see the module docstring)."""

    def __init__(self) -> None:
        self._last: dict[str, str] = {}  # purpose -> the rendered text of its last prompt
        self._asked: dict[str, str] = {}  # the same for questions, since the last step

    def measure(self, messages: Sequence[Mapping[str, str]], purpose: str, question: bool = False) -> float:
        """The share of ``messages`` (by characters) that repeats the start of one of the previous
        prompts; remembers them as the last prompt of ``purpose`` (of questions, with ``question``)."""
        text = render_chat(messages)
        previous = [*self._last.values(), *self._asked.values()]
        shared = max((common_prefix(text, before) for before in previous), default=0)
        (self._asked if question else self._last)[purpose] = text
        return shared / len(text) if text else 0.0

    def step(self) -> None:
        """A new step begins: the questions asked since the last one are forgotten."""
        self._asked.clear()

    @staticmethod
    def tokens(share: float, input_tokens: int) -> int:
        """The cacheable tokens of a call of ``input_tokens`` whose prompt repeats ``share`` of itself."""
        return min(input_tokens, int(share * input_tokens))

    def state(self) -> dict[str, Any]:
        return {"last": dict(self._last)}

    def set_state(self, state: Mapping[str, Any] | None) -> None:
        self._last = dict((state or {}).get("last") or {})
