"""What the oracle's planning parts share, and who may write it.

The parts (:mod:`.navigation`, :mod:`.supply`, :mod:`.tactics`, :mod:`.events`, :mod:`.foresight`,
:mod:`.opportunism`, and the quest conditions in :mod:`.planner`) are separate objects that call each
other. Besides the read-only :class:`~odyssey_agents.oracle.view.View` of the world, they share two
pieces of state, kept apart because they live for different times:

* :class:`Memory` outlives a step and is saved with checkpoints: only what breaks ties in favour of
  last step's choices, and what the agent has found not to work. A resumed run must decide exactly
  as an uninterrupted one, so nothing else may carry over.
* :class:`Focus` lives for one step: what the goal being planned needs kept in hand, not sold, not
  taken from where it must end up, and which ways the planning leaned on (the agent bans the most
  used one when the quest stalls).

Each part also owns its own per-step caches, cleared by its ``begin`` when the world moves on.
"""

from __future__ import annotations

import ast
import contextlib
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from odyssey_agents.oracle.view import View

INF = math.inf
MAX_DEPTH = 6  # recipe nesting considered when costing a source
SAFE_TEXT = "notes"
LONG_FIGHT = 16  # a fight forecast to take longer than this is worth preparing for
RESERVE_STEPS = 60  # a type some plan needed this recently is not sold for coins
LET_GO_STEPS = 40  # what a goal put down is left alone by opportunism for this long
PICK_GAMBLE = 8  # steps added to picking a lock over using its key: picks snap and may run out
UNARMED_COST = 150  # steps giving up my only weapon is reckoned to cost (fights bare-handed until another)
TOOL_SALVAGE_COST = 100  # steps added to buying a tool (a light, a pen) only to take it apart for its parts
DEATH_COST = 150  # steps an avoidable death is reckoned to cost (walking back, fetching what fell)
KIT = frozenset({"weapon", "armor", "key", "quest", "tool", "container", "writable"})  # never sold for coins

#: A key naming a way of doing something (a source, a route, a fight), for tie-breaking memory and bans.
Key = tuple[Any, ...]


class Stuck(Exception):
    """This goal cannot be reached from the current state (the caller may try another)."""


class Offer(NamedTuple):
    """A way to get units of something: steps for the first unit and for each further one, how many
    it can give, a key naming it (for memory and bans), and the function that returns its next command."""

    first: float
    per: float
    cap: int
    key: Key
    run: Callable[[], str | None]


class Memory:
    """What the planner remembers between steps (and saves with checkpoints).

    Writers: ``banned`` by the agent (a stalled way, an invalid command) and by tactics (gear whose
    fetching overran its estimate), pruned by the planner;
    ``calm_until`` by the agent; ``last_choice`` by each part under its own keys (``("goal",)``,
    ``("any_of", ...)``, ``("equip_any", ...)`` by the planner, ``("have", t)`` and ``("craft", t)``
    by supply, ``("prep", npc)`` by tactics); ``plan_progress`` by the planner; ``let_go`` by the
    planner; ``reserved`` by :meth:`Focus.need`.
    """

    def __init__(self) -> None:
        self.banned: dict[Key, int] = {}  # source key -> step until which it is avoided
        self.last_choice: dict[Key, Key] = {}  # goal -> source key chosen last
        self.calm_until = 0  # no opportunism before this step (set when the agent stalls)
        self.plan_progress: dict[str, int] = {}  # predicate condition -> plan steps done (event steps count once)
        self.let_go: dict[str, int] = {}  # handle -> step a goal put it down (not picked up on a whim)
        self.reserved: dict[str, int] = {}  # object type -> last step a plan needed it (never sold)

    def prune(self, step: int) -> None:
        """Forget bans that have run out, so a way is tried again once the world may have changed."""
        self.banned = {k: until for k, until in self.banned.items() if until > step}

    def sticky_min(self, key: Key, options: list[Any], cost: Callable[[Any], float]) -> Any | None:
        """The cheapest of ``options`` (file order breaks ties), except that last step's choice under
        ``key`` is kept while it costs at most half as much again as the cheapest (plus 5 steps): as
        the agent moves, estimates of alternatives swap, and a plain minimum walks back and forth."""
        costed = [(c, i, o) for i, o in enumerate(options) if (c := cost(o)) < INF]
        if not costed:
            return None
        cheapest = min(costed, key=lambda x: (x[0], x[1]))
        last = self.last_choice.get(key, (None,))[0]
        choice = next((o for c, _, o in costed if repr(o) == last and c <= cheapest[0] * 1.5 + 5), cheapest[2])
        self.last_choice[key] = (repr(choice),)
        return choice

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (tuple keys as their ``repr``, read back with :func:`ast.literal_eval`)."""
        return {
            "banned": [[repr(k), until] for k, until in self.banned.items()],
            "last_choice": [[repr(k), repr(c)] for k, c in self.last_choice.items()],
            "reserved": dict(self.reserved),
            "let_go": dict(self.let_go),
            "calm_until": self.calm_until,
            "plan_progress": dict(self.plan_progress),
        }

    def restore(self, data: dict[str, Any]) -> None:
        """Take back what :meth:`to_json` returned, in place: the parts hold this very object."""
        self.banned = {ast.literal_eval(k): until for k, until in data["banned"]}
        self.last_choice = {ast.literal_eval(k): ast.literal_eval(c) for k, c in data["last_choice"]}
        self.reserved = dict(data["reserved"])
        self.let_go = dict(data["let_go"])
        self.calm_until = int(data["calm_until"])
        self.plan_progress = {k: int(n) for k, n in data.get("plan_progress", {}).items()}


class Focus:
    """The step being planned: what the goals under way need, so that no part undoes another's work.

    A part planning a goal marks what it relies on (:meth:`need`, :meth:`keeping`, :meth:`sparing`)
    for the duration of a ``with`` block; supply reads the marks when it frees a hand, empties a bag
    or sells. ``protect`` (what any open or later stage may need) is written once per step by
    :class:`~odyssey_agents.oracle.foresight.Foresight`; ``used`` collects the keys of the ways
    followed, written by every part that commits to one, read by the agent after the step.
    """

    def __init__(self, memory: Memory) -> None:
        self._memory = memory
        self.view: View  # set by begin() every step
        self.needed: dict[str, int] = {}
        self.keep: list[str] = []
        self.not_from: tuple[str, str] | None = None  # (area, type): not taken from that ground (it goes there)
        self.protect: frozenset[str] = frozenset()
        self.unbought: frozenset[str] = frozenset()  # types a later stage must buy: not bought before
        self.used: list[Key] = []  # source keys followed this step (for stall handling)

    def begin(self, view: View) -> None:
        """Start a step: marks of the last one no longer apply (``protect`` is replaced by foresight)."""
        self.view = view
        self.needed = {}
        self.keep = []
        self.used = []

    @contextlib.contextmanager
    def need(self, type_name: str, n: int) -> Iterator[None]:
        """Mark ``n`` units of a type as needed by the goal being planned (not to be dropped)."""
        before = self.needed.get(type_name, 0)
        self.needed[type_name] = before + n
        self._memory.reserved[type_name] = self.view.state.step
        try:
            yield
        finally:
            if before:
                self.needed[type_name] = before
            else:
                del self.needed[type_name]

    @contextlib.contextmanager
    def sparing(self, area: str | None, type_name: str) -> Iterator[None]:
        """Plan without taking ``type_name`` from the ground of ``area`` (the goal is to put it there).

        Only that type is spared: its ingredients may still be taken there (a recipe whose materials
        lie where its product must end up is no obstacle).
        """
        before = self.not_from
        self.not_from = (area, type_name) if area is not None else None
        try:
            yield
        finally:
            self.not_from = before

    @contextlib.contextmanager
    def keeping(self, handle: str | None) -> Iterator[None]:
        """Mark a held object as one that must stay in hand while the goal is planned."""
        if handle is None:
            yield
            return
        self.keep.append(handle)
        try:
            yield
        finally:
            self.keep.pop()
