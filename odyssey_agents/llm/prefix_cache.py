"""Reusing the key-value cache of prompt prefixes across model calls, without changing any output.

An agent's prompts repeat themselves: every act prompt opens with the same system prompt (the game's
action space and the output format), the questions of a QA round share the system prompt and the
agent's memory sections, and a Long Context prompt repeats all the steps of the previous one. Each
call would otherwise run the model over those tokens again; on a CPU that prefill is most of a step.

Reuse must not change a single logit, or a run would depend on what the process happened to compute
before (a resumed run starts with nothing cached). A prefix computed in one forward pass and the same
prefix computed as part of a longer pass differ in the last bits (matrix kernels block differently),
so the prompt is always fed in the same pieces, whether or not a piece is cached: it is cut at fixed
*boundaries* that depend on the prompt alone — the end of the system message and every ``chunk``
tokens after it — and each piece is run with the cache of the pieces before it. The keys and values
of a prefix that ends on a boundary are then a function of those tokens only, and a cached copy is
exactly what a cold computation would produce: the cache is a memo, not an approximation.

:class:`PrefixCache` holds the memo (a few entries, least recently used first out) and knows nothing
of torch: a cache object needs ``get_seq_length()`` and ``crop(n)`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PrefixCache", "boundaries", "common_prefix_length"]


def boundaries(length: int, prefix: int, chunk: int) -> tuple[int, ...]:
    """Where a prompt of ``length`` tokens is cut: after its first ``prefix`` tokens (the system
    message; 0 for none) and every ``chunk`` tokens after that, always leaving at least one token for
    the call itself to feed (generation needs one)."""
    if chunk < 1:
        raise ValueError(f"chunk must be positive, got {chunk}")
    last = length - 1
    cuts = [prefix] if 0 < prefix <= last else []
    start = prefix if cuts else 0
    cuts.extend(range(start + chunk, last + 1, chunk))
    return tuple(cuts)


def common_prefix_length(a: Sequence[int], b: Sequence[int], limit: int | None = None) -> int:
    """How many leading tokens ``a`` and ``b`` share (at most ``limit``)."""
    n = min(len(a), len(b))
    if limit is not None:
        n = min(n, limit)
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


@dataclass
class _Entry:
    ids: list[int]  # the tokens whose keys and values the cache holds (a prompt, maybe its reply)
    cuts: tuple[int, ...]  # the boundaries the prompt was fed at
    valid: int  # how far the cache was built piece by piece (beyond it: one pass, not reusable)
    cache: Any


class PrefixCache:
    """A memo of key-value caches keyed by the tokens they hold.

    :meth:`take` hands out the cache of the longest reusable prefix of a prompt (cropped to a
    boundary both prompts share, in place: no copy), :meth:`put` gives a cache back after the call
    with the tokens it now holds. ``entries`` bounds the memo: an act prompt, a reflection and a QA
    round each keep their own system prompt, so a few entries are enough.
    """

    def __init__(self, entries: int = 3):
        if entries < 1:
            raise ValueError(f"entries must be positive, got {entries}")
        self.entries = entries
        self._memo: list[_Entry] = []  # most recently used last
        self.hits = 0
        self.reused_tokens = 0

    def __len__(self) -> int:
        return len(self._memo)

    def clear(self) -> None:
        self._memo.clear()

    def take(self, ids: Sequence[int], cuts: Sequence[int]) -> tuple[Any, int]:
        """The cache of the longest prefix of ``ids`` that a stored entry holds and that ends on a
        boundary where both were cut identically, and that prefix's length; ``(None, 0)`` if none.

        The entry leaves the memo (its cache is cropped and will grow in the call); :meth:`put` it back.
        """
        best, best_at = -1, 0
        for i, entry in enumerate(self._memo):
            shared = common_prefix_length(entry.ids, ids, entry.valid)
            at = 0
            for mine, theirs in zip(entry.cuts, cuts, strict=False):  # cut alike up to the reuse
                if mine != theirs or mine > shared:
                    break
                at = mine
            if at and at >= best_at:
                best, best_at = i, at
        if best < 0:
            return None, 0
        entry = self._memo.pop(best)
        held = entry.cache.get_seq_length()
        if held > best_at:
            entry.cache.crop(best_at - held)
        self.hits += 1
        self.reused_tokens += best_at
        return entry.cache, best_at

    def put(self, cache: Any, ids: Sequence[int], cuts: Sequence[int], valid: int) -> None:
        """Keep ``cache`` (holding the keys and values of ``ids``), reusable up to ``valid`` tokens."""
        kept = tuple(c for c in cuts if c <= valid)
        if cache is None or not kept:
            return
        self._memo.append(_Entry(list(ids), kept, kept[-1], cache))
        if len(self._memo) > self.entries:
            del self._memo[0]
