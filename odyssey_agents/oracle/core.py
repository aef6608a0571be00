"""What every part of the oracle's planner shares: the per-step state, the memory kept between
steps, the :class:`Stuck` outcome, and the bookkeeping of what the goal being planned needs.

The planner is split by job into mixins (:mod:`.goals`, :mod:`.navigation`, :mod:`.supply`,
:mod:`.tactics`) that all work on this state; :class:`~odyssey_agents.oracle.planner.Planner` puts
them together.
"""

from __future__ import annotations

import ast
import contextlib
import math
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from odyssey_agents.oracle import combat
    from odyssey_agents.oracle.view import View

INF = math.inf
MAX_DEPTH = 6  # recipe nesting considered when costing a source
SAFE_TEXT = "notes"
LONG_FIGHT = 16  # a fight forecast to take longer than this is worth preparing for
RESERVE_STEPS = 60  # a type some plan needed this recently is not sold for coins
LET_GO_STEPS = 40  # what a goal put down is left alone by opportunism for this long
PICK_GAMBLE = 8  # steps added to picking a lock over using its key: picks snap and may run out
DEATH_COST = 150  # steps an avoidable death is reckoned to cost (walking back, fetching what fell)
KIT = frozenset({"weapon", "armor", "key", "quest", "tool", "container", "writable"})  # never sold for coins


class Stuck(Exception):
    """This goal cannot be reached from the current state (the caller may try another)."""


class Offer(NamedTuple):
    """A way to get units of something: steps for the first unit and for each further one, how many
    it can give, a key naming it (for memory and bans), and the function that returns its next command."""

    first: float
    per: float
    cap: int
    key: tuple[Any, ...]
    run: Callable[[], str | None]


class PlannerBase:
    """State shared by the planner's parts. Only tie-breaking memory and bans outlive a step."""

    def __init__(self, agent_id: str = "player"):
        self.agent_id = agent_id
        self.banned: dict[tuple[Any, ...], int] = {}  # source key -> step until which it is avoided
        self.last_choice: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # goal -> source key chosen last
        self.used: list[tuple[Any, ...]] = []  # source keys followed this step (for stall handling)
        self._fights: dict[tuple[Any, ...], combat.Forecast] = {}  # forecasts kept across steps
        self.calm_until = 0  # no opportunism before this step (set when the agent stalls)
        self.plan_progress: dict[str, int] = {}  # predicate condition -> plan steps done (event steps count once)
        self.let_go: dict[str, int] = {}  # handle -> step a goal put it down (not picked up on a whim)
        self.reserved: dict[str, int] = {}  # object type -> last step a plan needed it (never sold)
        self.v: View  # set by decide() every step
        self._memo: dict[tuple[Any, ...], float] = {}
        self._needed: dict[str, int] = {}
        self._keep: list[str] = []
        self._costing: int = 0
        self._protect: frozenset[str] = frozenset()
        self._routing: int = 0
        self._stages_memo: dict[tuple[Any, ...], Any] = {}
        self._wanted_later: dict[str, tuple[int, str | None]] = {}
        self._not_from: tuple[str, str] | None = None  # (area, type): not taken from that ground (it goes there)
        self._pursuing: list[str] = []  # types whose getting is being planned (cycle guard)
        self._causing: list[str] = []  # event kinds whose verbs' needs are being pursued (cycle guard)

    @contextlib.contextmanager
    def need(self, type_name: str, n: int) -> Iterator[None]:
        """Mark ``n`` units of a type as needed by the goal being planned (not to be dropped)."""
        before = self._needed.get(type_name, 0)
        self._needed[type_name] = before + n
        self.reserved[type_name] = self.v.state.step
        try:
            yield
        finally:
            if before:
                self._needed[type_name] = before
            else:
                del self._needed[type_name]

    @contextlib.contextmanager
    def sparing(self, area: str | None, type_name: str) -> Iterator[None]:
        """Plan without taking ``type_name`` from the ground of ``area`` (the goal is to put it there).

        Only that type is spared: its ingredients may still be taken there (a recipe whose materials
        lie where its product must end up is no obstacle).
        """
        before = self._not_from
        self._not_from = (area, type_name) if area is not None else None
        try:
            yield
        finally:
            self._not_from = before

    @contextlib.contextmanager
    def keeping(self, handle: str | None) -> Iterator[None]:
        """Mark a held object as one that must stay in hand while the goal is planned."""
        if handle is None:
            yield
            return
        self._keep.append(handle)
        try:
            yield
        finally:
            self._keep.pop()

    def sticky_min(self, key: tuple[Any, ...], options: list[Any], cost: Callable[[Any], float]) -> Any | None:
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

    # ------------------------------------------------------------------ memory that outlives a step
    def memory(self) -> dict[str, Any]:
        """What the planner remembers between steps, as JSON-ready data (for checkpoints).

        Forecasts are not included: they are a cache whose entries depend only on their keys.
        """
        return {
            "banned": [[repr(k), until] for k, until in self.banned.items()],
            "last_choice": [[repr(k), repr(c)] for k, c in self.last_choice.items()],
            "reserved": dict(self.reserved),
            "let_go": dict(self.let_go),
            "calm_until": self.calm_until,
            "plan_progress": dict(self.plan_progress),
        }

    def restore(self, data: dict[str, Any]) -> None:
        """Take back what :meth:`memory` returned (keys are tuples of plain values)."""
        self.banned = {ast.literal_eval(k): until for k, until in data["banned"]}
        self.last_choice = {ast.literal_eval(k): ast.literal_eval(c) for k, c in data["last_choice"]}
        self.reserved = dict(data["reserved"])
        self.let_go = dict(data["let_go"])
        self.calm_until = int(data["calm_until"])
        self.plan_progress = {k: int(n) for k, n in data.get("plan_progress", {}).items()}
