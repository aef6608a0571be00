"""The add-ons of paper §4 that compose with every LLM paradigm: reflection, summarisation, STM.

* ``reflection``: after each move (or every ``reflect_every`` moves) the model looks at what it saw,
  did and got, and writes a short lesson; the lesson is attached to that step in memory and, for
  agents that keep no raw steps, shown as "My latest reflection".
* ``summarisation``: every ``summarise_every`` steps the model folds the steps since the last
  summary into running notes of at most ``summary_words`` words, shown as "Summary of my experience
  so far". Long Context then keeps only the steps the notes do not yet cover, which bounds its prompt.
* ``short_term_memory``: the last ``memory_size`` observation–reasoning–action tuples in the prompt.
  It gives a window to paradigms that have none (NoMemory, Mem1); Long Context and ShortTermMemory
  already show those steps, so asking for it there is a configuration error.

Each extra model call is recorded in the step's usage with its purpose (``reflect``, ``summarise``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from odyssey_agents.errors import ConfigError

__all__ = ["ADDONS", "AddonConfigError", "Addons", "canonical_addons"]

ADDONS: tuple[str, ...] = ("reflection", "short_term_memory", "summarisation")
_ALIASES = {
    "refl": "reflection",
    "reflect": "reflection",
    "sum": "summarisation",
    "summary": "summarisation",
    "summarization": "summarisation",
    "summarize": "summarisation",
    "summarise": "summarisation",
    "stm": "short_term_memory",
    "short_term": "short_term_memory",
}


class AddonConfigError(ConfigError):
    """An unknown add-on, a duplicate, or an add-on setting given without its add-on."""


def canonical_addons(names: Iterable[str] | str | None) -> tuple[str, ...]:
    """Known add-on names, aliases resolved, sorted (the order in run-directory names)."""
    if names is None:
        return ()
    if isinstance(names, str):
        names = [n for n in names.replace("+", ",").split(",") if n.strip()]
    out: list[str] = []
    for raw in names:
        name = _ALIASES.get(str(raw).strip().lower(), str(raw).strip().lower())
        if name not in ADDONS:
            raise AddonConfigError(f"unknown add-on {raw!r}; known add-ons: {', '.join(ADDONS)}")
        if name in out:
            raise AddonConfigError(f"add-on {name!r} is listed twice")
        out.append(name)
    return tuple(sorted(out))


@dataclass(frozen=True)
class Addons:
    """The add-ons of one agent and their settings."""

    names: tuple[str, ...] = ()
    reflect_every: int = 1
    reflect_max_tokens: int | None = None  # None: the backend's max_tokens
    summarise_every: int = 10
    summary_words: int = 200
    memory_size: int = 5

    def __post_init__(self) -> None:
        for key in ("reflect_every", "reflect_max_tokens", "summarise_every", "summary_words", "memory_size"):
            if getattr(self, key) is not None and int(getattr(self, key)) < 1:
                raise AddonConfigError(f"{key} must be at least 1, got {getattr(self, key)}")

    @property
    def reflection(self) -> bool:
        return "reflection" in self.names

    @property
    def summarisation(self) -> bool:
        return "summarisation" in self.names

    @property
    def short_term_memory(self) -> bool:
        return "short_term_memory" in self.names

    #: Which settings belong to which add-on (a setting without its add-on is refused).
    SETTINGS: ClassVar[dict[str, str]] = {
        "reflect_every": "reflection",
        "reflect_max_tokens": "reflection",
        "summarise_every": "summarisation",
        "summary_words": "summarisation",
    }
