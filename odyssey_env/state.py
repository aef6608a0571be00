"""The mutable world state: plain data that saves to JSON and loads back exactly.

Everything that changes during play lives here and nowhere else: rules are stateless and keep their
memory in :attr:`WorldState.rule_data`, so ``save_state()``/``load_state()`` and pickling are exact and
a resumed run continues identically. Object holdings are ``{handle: count}`` dicts, where a handle is an
object type name for stackable kinds (``apple``) or an instance name for containers and writables
(``small_bag_0``). Dicts keep insertion order, which keeps every iteration deterministic.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, cast

from odyssey_env import schema


@dataclass(slots=True)
class Instance:
    """An individually named object (a container or a writable) and what it carries."""

    type: str
    contents: dict[str, int] = field(default_factory=dict)
    text: str = ""


@dataclass(slots=True)
class Exit:
    """One direction of a path between areas. Both directions share the lock state by construction."""

    locked: bool = False
    key: str | None = None
    pickable: bool = True


@dataclass(slots=True)
class Area:
    name: str
    place: str
    level: int
    description: str = ""
    objects: dict[str, int] = field(default_factory=dict)
    npcs: list[str] = field(default_factory=list)
    exits: dict[str, Exit] = field(default_factory=dict)


@dataclass(slots=True)
class Npc:
    """A living NPC instance. ``stance_index`` walks its type's combat pattern while it fights."""

    handle: str
    type: str
    area: str
    hp: int
    max_hp: int
    attack: int
    defense: int
    level: int
    inventory: dict[str, int] = field(default_factory=dict)
    coins: int = 0
    engaged: str | None = None  # id of the agent it is fighting
    stance_index: int = 0
    wary_until: int = -1  # refuses to deal with agents until this step (after a failed pickpocket)
    origin: str = "world"  # world | spawn | quest | tutorial | expansion


@dataclass(slots=True)
class Agent:
    """A player body. Hands hold at most ``hands`` objects; coins stack in a single hand."""

    id: str
    name: str
    area: str
    hp: int
    max_hp: int
    base_attack: int
    attack: int
    defense: int
    level: int = 1
    xp: int = 0
    hands: dict[str, int] = field(default_factory=dict)
    equipment: dict[str, str] = field(default_factory=dict)  # slot -> handle
    stamina: float = 1.0
    combat: str | None = None  # handle of the NPC it is fighting
    defending: bool = False
    # First-time bookkeeping (ordered dicts used as sets); these drive rewards and metrics.
    visited: dict[str, int] = field(default_factory=dict)  # area -> first step
    crafted: dict[str, int] = field(default_factory=dict)  # object type -> first step
    defeated: dict[str, int] = field(default_factory=dict)  # npc type -> first step
    acquired: dict[str, int] = field(default_factory=dict)  # object type -> first step
    traded: dict[str, int] = field(default_factory=dict)  # object type -> first step
    kills: dict[str, int] = field(default_factory=dict)  # npc type -> times defeated
    deaths: int = 0
    home: str = ""  # where the agent wakes after dying (the spawn area; the tutorial room while in it)
    in_tutorial: bool = False  # rewards and first-time bookkeeping are off in the tutorial room

    @property
    def pack(self) -> str | None:
        """Handle of the container worn as inventory, if any."""
        return self.equipment.get("pack")


@dataclass(slots=True)
class WorldState:
    """The whole state of one episode."""

    step: int
    minute: int  # minutes since 00:00 of day 1
    spawn: str
    areas: dict[str, Area]
    npcs: dict[str, Npc]
    instances: dict[str, Instance]
    agents: dict[str, Agent]
    counters: dict[str, int] = field(default_factory=dict)  # next instance number per type
    modifiers: dict[str, float] = field(default_factory=dict)  # world-wide effects set by step rules
    rule_data: dict[str, Any] = field(default_factory=dict)  # per-rule memory, JSON-ready
    feedback: dict[str, list[str]] = field(default_factory=dict)  # this step's messages, per agent
    done: bool = False

    # ---------------------------------------------------------------- naming
    def new_handle(self, type_name: str) -> str:
        """A fresh instance name such as ``small_bag_3``: numbers are never reused within an episode."""
        n = self.counters.get(type_name, 0)
        self.counters[type_name] = n + 1
        return f"{type_name}_{n}"

    # ---------------------------------------------------------------- persistence
    def to_dict(self) -> dict[str, Any]:
        return cast(dict[str, Any], _dump_slots(self))  # a dataclass dumps to a dict of its fields

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorldState:
        return schema.load(cls, data, file="state")


def _dump_slots(obj: Any) -> Any:
    """Full dump (defaults included) so that a saved state is explicit and diffable."""
    if dataclasses.is_dataclass(obj):
        return {f.name: _dump_slots(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {k: _dump_slots(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_dump_slots(v) for v in obj]
    return obj
