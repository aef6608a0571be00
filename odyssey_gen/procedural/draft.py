"""The game being built: what each builder adds and what the next one needs to know.

The procedural builders run in a fixed order (layout, objects, NPCs, quest) over one :class:`Draft`.
Besides the JSON it will become, the draft keeps the facts that make the game solvable by
construction: each area's *zone* (the part of the world between two locked paths), each object's
zone and recipe tier, where things are guaranteed to lie, and which enemies are guaranteed to exist.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from odyssey_gen.procedural.names import Namer
from odyssey_gen.spec import GameSpec


@dataclass
class AreaDraft:
    name: str
    index: int  # position in the level order (spawn first)
    place: int
    level: int
    zone: int  # how many locked paths lie between the spawn and here
    description: str = ""
    objects: dict[str, int] = field(default_factory=dict)
    npcs: list[str] = field(default_factory=list)


@dataclass
class PlaceDraft:
    title: str
    description: str
    areas: list[AreaDraft]


@dataclass
class ObjDraft:
    """One object type: its JSON fields plus the facts the quest builder uses."""

    name: str
    kind: str  # raw, made, weapon, armor, container, writable, write, lockpick, food_raw, food_made, station,
    #            key, currency, trophy
    category: str
    level: int
    fields: dict[str, Any] = field(default_factory=dict)  # JSON fields besides name/category/description/level
    description: str = ""
    zone: int = 0  # the first zone where it can be had
    tier: int = 0  # recipe depth: 0 found, 1 crafted from found things, ...
    home: str | None = None  # an area where some are always placed

    @property
    def recipe(self) -> dict[str, Any] | None:
        return self.fields.get("recipe")


@dataclass
class NpcDraft:
    name: str
    role: str  # enemy, boss, merchant, guide, villager, trainer, dummy
    level: int
    fields: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    homes: list[str] = field(default_factory=list)  # areas where an instance is always placed


@dataclass
class Lock:
    a: str  # the side nearer the spawn
    b: str
    key: str = ""
    zone: int = 1  # the zone it opens


class Draft:
    """Everything the builders share for one generated game."""

    def __init__(self, spec: GameSpec, rng: random.Random, namer: Namer):
        self.spec = spec
        self.rng = rng
        self.namer = namer
        self.places: list[PlaceDraft] = []
        self.areas: list[AreaDraft] = []
        self.links: list[tuple[str, str]] = []
        self.locks: list[Lock] = []
        self.objects: dict[str, ObjDraft] = {}
        self.npcs: dict[str, NpcDraft] = {}
        self.verbs: tuple[str, ...] = ()
        self.dynamics: tuple[str, ...] = ()
        self.mechanics: Any = None  # odyssey_gen.procedural.mechanics.Mechanics: the rules.json it invented
        self.quest: dict[str, Any] = {}
        self.filler_ids: list[str] = []  # main-quest stages that are fillers (what invented verbs may take over)
        self.plot = ""  # the quest's plot shape (odyssey_gen.procedural.plots.PLOTS)
        self.structure = ""  # how its forking chapters are wired ("linear" when they do not fork)
        self.title = spec.display_title
        self.intro = ""
        self.description = ""

    # ------------------------------------------------------------------ lookups
    @property
    def spawn(self) -> AreaDraft:
        return self.areas[0]

    def area(self, name: str) -> AreaDraft:
        return next(a for a in self.areas if a.name == name)

    def home_of(self, obj: ObjDraft) -> AreaDraft:
        """The area ``obj`` lies in, for an object chosen among those that have one."""
        if obj.home is None:
            raise ValueError(f"{obj.name} has no home area")
        return self.area(obj.home)

    def place_title(self, area: AreaDraft) -> str:
        return self.places[area.place].title

    def of_kind(self, *kinds: str) -> list[ObjDraft]:
        return [o for o in self.objects.values() if o.kind in kinds]

    def npcs_of(self, *roles: str) -> list[NpcDraft]:
        return [n for n in self.npcs.values() if n.role in roles]

    def zone_areas(self, zone: int) -> list[AreaDraft]:
        return [a for a in self.areas if a.zone == zone]

    @property
    def zones(self) -> int:
        return 1 + len(self.locks)

    def add_object(self, o: ObjDraft) -> ObjDraft:
        self.objects[o.name] = o
        return o

    def place_object(self, area: AreaDraft, name: str, n: int = 1) -> None:
        area.objects[name] = area.objects.get(name, 0) + n
