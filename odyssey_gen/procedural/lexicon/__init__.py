"""The themed lexicon: curated words per theme, shipped as data, so an offline game reads as written for its theme.

Each ``<theme>.json`` beside this module holds one theme's words by *kind* (materials, tools, stations,
creatures, NPC roles, areas, place words...), its adjectives (the modifiers of compound names), its
*motifs* (noun phrases the descriptions use: "the slap of the tide"), and the raw matter of invented rules:
transformation verbs, spreading hazards, things that decay unless tended, omens. ``common.json`` holds the
kinds that read the same everywhere (armor slots, picks, drill rooms).

:func:`blend` reads a user's one-line theme and picks the lexicon themes it is about, by the theme's
keywords (3 points a word) and the words of its lists (less for words many themes share), after a light
stemming (``rusting`` -> ``rust``). A theme about two things ("a drowned cathedral city") blends the two
best themes. A theme no lexicon matches falls back to one theme chosen by a SHA-256 of the text, blended
with its first declared neighbour: unfamiliar, but coherent, and the same for the same text in any process.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["LIST_KINDS", "RULE_KINDS", "Blend", "LexiconError", "Theme", "blend", "stem", "themes"]

#: Kinds whose entries are handles (``lower_snake_case``), used as names or parts of names.
LIST_KINDS = (
    "raw",
    "made",
    "weapon",
    "station",
    "food_raw",
    "food_made",
    "container",
    "writable",
    "write",
    "currency",
    "key",
    "trophy",
    "enemy",
    "boss",
    "merchant",
    "guide",
    "villager",
    "area",
    "tool",
    "head",
    "body",
    "legs",
    "feet",
    "hands",
    "shield",
    "lockpick",
    "room",
    "ward",
)
#: Kinds whose entries are small records, the matter of invented rules.
RULE_KINDS = {
    "transforms": ("verb", "past"),
    "hazards": ("name", "noun", "moves", "harm", "ward"),
    "tended": ("thing", "tend", "fades"),
    "omens": ("name", "text"),
}
#: Fields a record may add: what a transformation suits (raw entries, space-separated: ``shuck`` works on
#: ``shell pearl``, not on sand), preferred when the draft has such a material.
RULE_OPTIONAL = {"transforms": ("on",)}
#: What a theme file must hold (``common.json`` holds only kinds).
REQUIRED = ("keywords", "adjectives", "motifs", "place", *LIST_KINDS[:19], *RULE_KINDS)
HANDLE = re.compile(r"^[a-z][a-z_]*[a-z]$")


class LexiconError(ValueError):
    """A lexicon file that does not hold what the generator needs (names the file and the field)."""


def stem(word: str) -> str:
    """A crude English stem, enough to match ``astronomers`` to ``astronomer`` and ``rusting`` to ``rust``."""
    w = word.lower()
    for suffix, repl in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: len(w) - len(suffix)] + repl
    return w


@dataclass(frozen=True)
class Theme:
    """One lexicon file."""

    name: str
    about: str
    keywords: tuple[str, ...]
    neighbours: tuple[str, ...]
    adjectives: tuple[str, ...]
    motifs: tuple[str, ...]
    places: tuple[str, ...]
    kinds: dict[str, tuple[str, ...]]
    rules: dict[str, tuple[dict[str, str], ...]]

    def tokens(self) -> set[str]:
        """Every word of every entry (stemmed), the evidence a theme text is about this theme."""
        out = {stem(k) for k in self.keywords}
        for entries in self.kinds.values():
            for entry in entries:
                out.update(stem(t) for t in entry.split("_"))
        return out


def _read(name: str, data: Any) -> Theme:
    where = f"odyssey_gen/procedural/lexicon/{name}.json"
    if not isinstance(data, dict):
        raise LexiconError(f"{where}: expected a JSON object")
    common = name == "common"
    for key in () if common else REQUIRED:
        if key not in data:
            raise LexiconError(f"{where}: missing field {key!r}")
    kinds: dict[str, tuple[str, ...]] = {}
    for kind in LIST_KINDS:
        if kind in data:
            entries = data[kind]
            if not isinstance(entries, list) or not entries:
                raise LexiconError(f"{where}: {kind}: expected a non-empty list of names")
            for entry in entries:
                if not isinstance(entry, str) or not HANDLE.match(entry) or "__" in entry:
                    raise LexiconError(f"{where}: {kind}: {entry!r} is not a lower_snake_case name of letters")
            if len(set(entries)) != len(entries):
                raise LexiconError(f"{where}: {kind}: repeated entries")
            kinds[kind] = tuple(entries)
    rules: dict[str, tuple[dict[str, str], ...]] = {}
    for kind, fields in RULE_KINDS.items():
        records = data.get(kind, [])
        for i, rec in enumerate(records):
            if (
                not isinstance(rec, dict)
                or not set(fields) <= set(rec) <= {*fields, *RULE_OPTIONAL.get(kind, ())}
                or not all(isinstance(v, str) for v in rec.values())
            ):
                extra = ", ".join(RULE_OPTIONAL.get(kind, ()))
                raise LexiconError(
                    f"{where}: {kind}[{i}]: expected exactly the text fields {', '.join(fields)}"
                    + (f" (optionally {extra})" if extra else "")
                )
            if not all(HANDLE.match(w) for w in rec.get("on", "").split()):
                raise LexiconError(f"{where}: {kind}[{i}].on: expected lower_snake_case names, space-separated")
        rules[kind] = tuple(records)
    for key in ("adjectives",):
        for entry in data.get(key, []):
            if not isinstance(entry, str) or not HANDLE.match(entry):
                raise LexiconError(f"{where}: {key}: {entry!r} is not a lower_snake_case word")
    return Theme(
        name=name,
        about=str(data.get("about", "")),
        keywords=tuple(data.get("keywords", ())),
        neighbours=tuple(data.get("neighbours", ())),
        adjectives=tuple(data.get("adjectives", ())),
        motifs=tuple(data.get("motifs", ())),
        places=tuple(data.get("place", ())),
        kinds=kinds,
        rules=rules,
    )


@cache
def themes() -> dict[str, Theme]:
    """Every theme of the shipped lexicon by name (sorted: the order never depends on the file system)."""
    folder = resources.files(__name__)
    found: dict[str, Theme] = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".json"):
            name = entry.name[: -len(".json")]
            found[name] = _read(name, json.loads(entry.read_text(encoding="utf-8")))
    if "common" not in found:
        raise LexiconError("odyssey_gen/procedural/lexicon/common.json is missing")
    for theme in found.values():
        for n in theme.neighbours:
            if n not in found or n == "common":
                raise LexiconError(f"odyssey_gen/procedural/lexicon/{theme.name}.json: neighbours: unknown theme {n!r}")
    return found


@cache
def _weights() -> dict[str, dict[str, float]]:
    """Per theme, each token's evidence: keywords 3, list words 1 divided by how many themes share them."""
    ts = {n: t for n, t in themes().items() if n != "common"}
    df = Counter(tok for t in ts.values() for tok in t.tokens())
    out: dict[str, dict[str, float]] = {}
    for n, t in ts.items():
        w = {tok: 1.0 / df[tok] for tok in t.tokens()}
        for k in t.keywords:
            w[stem(k)] = 3.0
        out[n] = w
    return out


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Blend:
    """The lexicon of one game: its themes in order of weight, and how it was chosen.

    ``matched`` is False for the fallback (no theme's words appear in the text); ``scores`` keeps the
    evidence for the report.
    """

    text: str
    order: tuple[str, ...]  # themes, the primary first
    shares: tuple[float, ...]  # the chance a draw comes from each (sums to 1)
    matched: bool
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def primary(self) -> Theme:
        return themes()[self.order[0]]

    @property
    def members(self) -> list[Theme]:
        return [themes()[n] for n in self.order]

    def pool(self, kind: str) -> list[tuple[str, ...]]:
        """The entries of ``kind`` per member theme (in order), ``common``'s when no member has any."""
        pools = [t.kinds.get(kind, ()) for t in self.members]
        if not any(pools):
            return [themes()["common"].kinds.get(kind, ())]
        return pools

    def words(self, kind: str) -> tuple[str, ...]:
        """Every entry of ``kind`` across the members, primary first, without repeats."""
        return tuple(dict.fromkeys(e for p in self.pool(kind) for e in p))

    def adjectives(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a for t in self.members for a in t.adjectives))

    def motifs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m for t in self.members for m in t.motifs))

    def places(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for t in self.members for p in t.places))

    def records(self, kind: str) -> tuple[dict[str, str], ...]:
        return tuple(r for t in self.members for r in t.rules[kind])

    def vocabulary(self) -> set[str]:
        """Every word this blend (and ``common``) may put in a handle: what a test of on-theme names allows."""
        out: set[str] = set()
        for t in [*self.members, themes()["common"]]:
            for entries in t.kinds.values():
                for e in entries:
                    out.update(e.split("_"))
            for a in t.adjectives:
                out.update(a.split("_"))
            for kind in RULE_KINDS:
                for rec in t.rules.get(kind, ()):
                    for key in ("verb", "past", "name", "ward", "thing", "tend"):
                        if key in rec:
                            out.update(rec[key].split("_"))
        return out


def blend(text: str) -> Blend:
    """The lexicon themes a one-line theme is about (see the module docstring)."""
    words = [stem(w) for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3]
    weights = _weights()
    scores = {n: sum(w.get(word, 0.0) for word in dict.fromkeys(words)) for n, w in weights.items()}
    # ties go to a hash of the text, so no theme wins every tie by its name
    ranked = sorted(scores, key=lambda n: (-scores[n], _digest(text, n)))
    best = ranked[0]
    if scores[best] < 1.0:  # a shared word or two is no evidence
        first = min(weights, key=lambda n: _digest("fallback", text.strip().lower(), n))
        neighbour = themes()[first].neighbours[0]
        return Blend(text, (first, neighbour), (0.7, 0.3), False, scores)
    second = ranked[1]
    if scores[second] >= 2.0 and scores[second] >= 0.45 * scores[best]:
        share = round(scores[best] / (scores[best] + scores[second]), 3)
        return Blend(text, (best, second), (share, round(1 - share, 3)), True, scores)
    return Blend(text, (best,), (1.0,), True, scores)
