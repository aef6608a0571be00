"""What one step is made of: the :class:`Turn` a verb acts through, the :class:`Event` it records, and
the :class:`Outcome` an agent gets back.

They live apart from :mod:`odyssey_env.engine` because every rule module uses them and the engine uses
every rule module: here they import nothing of the engine at run time.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

if TYPE_CHECKING:
    from odyssey_env.content import ObjectType
    from odyssey_env.engine import Engine
    from odyssey_env.rewards import RewardBreakdown
    from odyssey_env.state import Agent, Area

__all__ = ["Event", "Outcome", "ProbeTurn", "Turn"]


class Event(NamedTuple):
    """Something that happened this step: ``kind`` from a documented vocabulary, the acting agent."""

    kind: str
    agent: str | None
    data: dict[str, Any]


@dataclass(slots=True)
class Outcome:
    """What one agent got from one step."""

    reward: RewardBreakdown
    invalid: bool = False
    failed: bool = False  # a well-formed command the state did not allow (corrective feedback)
    events: list[Event] = field(default_factory=list)


class ListingMemo(TypedDict, total=False):
    """The views the verbs share on a probe turn (:mod:`odyssey_env.verbs.common`), each filled on first use."""

    containers: list[str]  # reachable containers: held ones, then the pack
    carried: dict[str, int]  # handle -> units in hands and reachable containers
    ground: list[tuple[str, ObjectType]]  # (handle, type) of everything on the ground here
    coins: int  # currency units carried


class Turn:
    """The context of one agent's action: the rule reads and changes the world through it.

    ``probe`` turns are used for listing valid actions and must not change anything.
    """

    __slots__ = ("agent", "engine", "game", "memo", "ok", "state")

    def __init__(self, engine: Engine, agent: Agent, *, probe: bool = False):
        self.engine = engine
        self.game = engine.game
        self.state = engine.state
        self.agent = agent
        self.ok = True
        #: Views shared by the verbs while listing valid actions (the state cannot change meanwhile);
        #: None on acting turns, where every rule must read the live state.
        self.memo: ListingMemo | None = {} if probe else None

    @property
    def area(self) -> Area:
        return self.state.areas[self.agent.area]

    @property
    def rng(self) -> random.Random:
        return self.engine.rng

    def say(self, text: str) -> None:
        self.state.feedback[self.agent.id].append(text)

    def fail(self, text: str) -> None:
        """Refuse the command with corrective feedback (not an invalid action)."""
        self.ok = False
        self.state.feedback[self.agent.id].append(text)

    def emit(self, kind: str, /, **data: Any) -> None:
        engine = self.engine
        engine.events.append(Event(kind, self.agent.id, data))
        engine.kinds.add(kind)

    def first(self, book: str, key: str) -> bool:
        return self.engine.first(self.agent, book, key)


class ProbeTurn(Turn):
    """The probe turn of a listing: nothing changes while the verbs list their commands, so the area
    is looked up once instead of at every ``turn.area`` (the verbs ask for it a dozen times a listing)."""

    __slots__ = ("area",)
    area: Area  # the slot shadows Turn's property: a plain attribute where Turn computes it

    def __init__(self, engine: Engine, agent: Agent):
        Turn.__init__(self, engine, agent, probe=True)
        self.area = self.state.areas[agent.area]
