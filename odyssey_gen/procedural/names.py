"""Names and descriptions from a theme: a seeded namer that never repeats a name.

Names are what commands refer to, so they follow the engine's rules (``lower_snake_case``, unique
across areas, objects and NPCs, never ending in ``_<number>``). They come from the curated lexicon of
the theme (:mod:`odyssey_gen.procedural.lexicon`): an entry of the right kind as it stands
(``lens_workshop``, ``brine_crab``) or compounded with one of the theme's adjectives (``tarnished_lens``),
never the user's raw words glued to a generic noun ("astronomers loam"). A share of compounds take an
invented word (``velmor_pike``): the unfamiliar vocabulary the paper asks for (A3.3), which an agent
must learn by inspecting things. Every draw comes from the one RNG the builder passes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from odyssey_gen.procedural.lexicon import blend

__all__ = ["Namer", "article", "sentence", "theme_words", "words_of"]

STOPWORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "nor",
        "of",
        "in",
        "on",
        "at",
        "to",
        "from",
        "by",
        "for",
        "with",
        "without",
        "into",
        "onto",
        "over",
        "under",
        "above",
        "below",
        "between",
        "where",
        "when",
        "while",
        "which",
        "who",
        "whom",
        "whose",
        "what",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "than",
        "then",
        "so",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "has",
        "have",
        "had",
        "having",
        "it",
        "its",
        "it's",
        "their",
        "them",
        "they",
        "we",
        "us",
        "our",
        "you",
        "your",
        "he",
        "she",
        "his",
        "her",
        "him",
        "i",
        "me",
        "my",
        "mine",
        "not",
        "no",
        "only",
        "own",
        "same",
        "too",
        "very",
        "can",
        "will",
        "just",
        "should",
        "could",
        "would",
        "may",
        "might",
        "must",
        "shall",
        "keeps",
        "keep",
        "kept",
        "make",
        "makes",
        "made",
        "let",
        "lets",
        "get",
        "gets",
        "got",
        "go",
        "goes",
        "went",
        "come",
        "comes",
        "came",
        "some",
        "any",
        "every",
        "each",
        "all",
        "both",
        "few",
        "more",
        "most",
        "other",
        "such",
        "up",
        "down",
        "out",
        "off",
        "again",
        "once",
        "also",
        "still",
        "ever",
        "never",
        "always",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "first",
        "last",
        "new",
        "old",
        "many",
        "much",
        "long",
        "little",
        "own",
    )
)

_ONSETS = (
    "b",
    "d",
    "f",
    "g",
    "h",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "z",
    "th",
    "sk",
    "dr",
    "gr",
    "br",
    "vr",
    "qu",
    "ch",
    "sh",
    "w",
)
_VOWELS = ("a", "e", "i", "o", "u", "ae", "ai", "ou", "y")
_CODAS = ("", "", "l", "n", "r", "s", "th", "k", "m", "sh", "nd", "rk", "lt")


def theme_words(theme: str) -> list[str]:
    """Content words of the theme in order of appearance (no stopwords, no repeats, 3+ letters)."""
    out: list[str] = []
    for word in re.findall(r"[a-z]+", theme.lower()):
        if len(word) >= 3 and word not in STOPWORDS and word not in out:
            out.append(word)
    return out


class Namer:
    """Unique names of every kind, drawn from one seeded RNG and the theme's lexicon blend.

    A name is a lexicon entry as it stands (``lens_workshop``) while unused ones remain (``plain``
    of the time), else the theme's adjective with an entry (``tarnished_eyepiece``); ``strangeness`` is
    the share of compounds that take an invented word instead (``velmor_eyepiece``): the unfamiliar
    vocabulary the paper asks for (A3.3), but never a word of another theme.
    """

    def __init__(self, theme: str, rng: random.Random, *, strangeness: float = 0.15, plain: float = 0.7):
        self.rng = rng
        self.words = theme_words(theme)
        self.lexicon = blend(theme)
        self.strangeness = strangeness
        self.plain = plain
        self.used: set[str] = set()
        self._nouns: set[str] = set()  # entries already in some name: compounds prefer the others
        self._invented: list[str] = []

    # ------------------------------------------------------------------ words
    def invented(self) -> str:
        """A new pronounceable word of two or three syllables (never one already made)."""
        rng = self.rng
        while True:
            n = rng.choice((2, 2, 3))
            word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(n)) + rng.choice(_CODAS)
            if 4 <= len(word) <= 10 and word not in self._invented and word not in STOPWORDS:
                self._invented.append(word)
                return word

    @property
    def invented_words(self) -> tuple[str, ...]:
        return tuple(self._invented)

    def modifier(self) -> str:
        """An adjective of the theme, or (``strangeness`` of the time) an invented word."""
        if self.rng.random() < self.strangeness:
            return self.rng.choice(self._invented) if self._invented and self.rng.random() < 0.5 else self.invented()
        return self.rng.choice(self.lexicon.adjectives())

    def motif(self) -> str:
        """A noun phrase of the theme for descriptions (``the slap of the tide``)."""
        return self.rng.choice(self.lexicon.motifs())

    def entry(self, kind: str) -> str:
        """One lexicon entry of ``kind``: a member theme by its share, then an entry of its list."""
        pools = [p for p in self.lexicon.pool(kind)]
        shares = list(self.lexicon.shares) if len(pools) == len(self.lexicon.shares) else [1.0] * len(pools)
        live = [(p, w) for p, w in zip(pools, shares, strict=True) if p]
        pool = self.rng.choices([p for p, _ in live], [w for _, w in live])[0]
        return self.rng.choice(pool)

    def claim(self, name: str, noun: str | None = None) -> str:
        self.used.add(name)
        self._nouns.add(noun or name)
        return name

    def free(self, name: str) -> bool:
        return (
            name not in self.used
            and re.match(r"^[a-z][a-z0-9_]*$", name) is not None
            and re.search(r"_\d+$", name) is None
        )

    # ------------------------------------------------------------------ names
    def name(self, kind: str, *, bare_first: bool = False) -> str:
        """A fresh name for ``kind`` (``bare_first``: the first unused entry, in lexicon order)."""
        entries = self.lexicon.words(kind)
        if bare_first:
            for e in entries:
                if self.free(e):
                    return self.claim(e)
        unused = [e for e in entries if self.free(e) and e not in self._nouns]
        if unused and self.rng.random() < self.plain:
            return self.claim(self.rng.choice(unused))
        for attempt in range(60):
            noun = self.entry(kind)
            if noun in self._nouns and attempt < 20 and any(e not in self._nouns for e in entries):
                continue
            mod = self.modifier() if attempt < 40 else self.invented()
            if mod in noun.split("_") or noun.startswith(mod):
                continue
            candidate = f"{mod}_{noun}"
            if self.free(candidate):
                return self.claim(candidate, noun)
        while True:  # invented words never run out
            candidate = f"{self.invented()}_{self.entry(kind)}"
            if self.free(candidate):
                return self.claim(candidate)

    def person(self, role: str) -> str:
        """A named individual: an invented given name and a role of the theme (``velmor_chandler``)."""
        while True:
            candidate = f"{self.invented()}_{self.entry(role)}"
            if self.free(candidate):
                return self.claim(candidate)

    def place_title(self) -> str:
        """A place's display name (free text, not a handle): ``The Starlit Quadrant``."""
        mod = " ".join(w.capitalize() for w in self.rng.choice(self.lexicon.adjectives()).split("_"))
        return f"The {mod} {self.rng.choice(self.lexicon.places())}"

    def phrase(self, kind: str = "raw") -> str:
        """An entry of ``kind`` read as words (``star chart``), for texts."""
        return words_of(self.entry(kind))


def words_of(name: str) -> str:
    """A handle read as words: ``tide_ore`` -> ``tide ore``."""
    return name.replace("_", " ")


def article(phrase: str) -> str:
    return ("an " if phrase[:1] in "aeiou" else "a ") + phrase


def sentence(rng: random.Random, choices: Sequence[str], **slots: str) -> str:
    """One of ``choices`` with its ``{slots}`` filled, first letter capitalised."""
    text = rng.choice(choices).format(**slots)
    return text[:1].upper() + text[1:]
