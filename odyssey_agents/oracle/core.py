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
        self._not_from: str | None = None  # an area whose ground is not a source (things are put there)
        self._pursuing: list[str] = []  # types whose getting is being planned (cycle guard)

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
    def sparing(self, area: str | None) -> Iterator[None]:
        """Plan without taking anything from the ground of ``area`` (the goal is to put it there)."""
        before = self._not_from
        self._not_from = area
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
        }

    def restore(self, data: dict[str, Any]) -> None:
        """Take back what :meth:`memory` returned (keys are tuples of plain values)."""
        self.banned = {ast.literal_eval(k): until for k, until in data["banned"]}
        self.last_choice = {ast.literal_eval(k): ast.literal_eval(c) for k, c in data["last_choice"]}
        self.reserved = dict(data["reserved"])
        self.let_go = dict(data["let_go"])
        self.calm_until = int(data["calm_until"])
