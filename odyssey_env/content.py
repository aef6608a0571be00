"""The game format: what a game folder's ``world.json`` may say, as typed, frozen dataclasses.

A game is content plus small rule plugins (see ``docs/game-format.md``). Everything a designer or a
generator writes about places, areas, objects and NPCs lives here, so the engine holds no game content
of its own. Field names are the JSON keys; :mod:`odyssey_env.schema` validates files against these
classes and :mod:`odyssey_env.game` checks the cross references (recipes, areas, keys, quests).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

Category = Literal[
    "material",  # crafting input with no use of its own
    "tool",  # held for a purpose (writing, lockpicking, light); may add a little attack
    "weapon",  # held: raises attack
    "armor",  # equipped in a slot: raises defense
    "container",  # holds other objects; equipped in the pack slot it is the inventory
    "food",  # eaten to restore health
    "writable",  # paper and the like: carries text written with a writing tool
    "station",  # fixed furniture needed by recipes (workbench, furnace); cannot be carried
    "currency",  # coins: stack in one hand, pay for trades
    "key",  # opens locked paths
    "quest",  # story objects: never scattered at random
    "misc",
]
Use = Literal["write", "lockpick", "unlock", "light"]
Stance = Literal["attack", "defend", "wait"]

#: Categories whose instances are individually named (``small_bag_0``): they carry state of their own.
INSTANCED: frozenset[str] = frozenset({"container", "writable"})
#: Categories that may be individually named on request (``named``): a rule keeps state per object
#: (a lamp's oil, a corpse's age) in its ``rule_data`` under the object's own handle.
NAMEABLE: frozenset[str] = frozenset({"tool", "weapon", "key", "quest", "misc"})


#: A recipe's amount of one ingredient: whole units, or a fraction in hundredths (0.5: one unit makes two).
Amount = int | float
#: Fractional amounts count in hundredths, so that crafting stays exact integer arithmetic (0.1 x 3 is
#: 0.30000000000000004 in floats, and its ceiling would take one unit too many).
AMOUNT_STEPS = 100


def amount_text(k: Amount) -> str:
    """An amount as a player reads it: ``2``, ``0.5`` (never ``2.0``)."""
    return str(k) if isinstance(k, int) else f"{k:g}"


@dataclass(frozen=True)
class Recipe:
    """How an object is crafted: ingredients consumed from the agent, stations present in the area.

    An amount may be a fraction of a unit (the paper's games: a tension wrench takes 0.5 iron_bar).
    Crafting ``n`` batches then needs and uses the amount times ``n`` rounded up: 0.5 bar makes two
    wrenches of one bar in one ``craft 2``, while ``craft 1`` uses the whole bar (what is left of a unit
    is not kept). :meth:`uses` and :meth:`batches` are the only arithmetic on amounts: every rule, the
    listing and the agents ask them, so all agree.
    """

    ingredients: dict[str, Amount]
    stations: tuple[str, ...] = ()
    yields: int = 1

    @cached_property
    def _steps(self) -> dict[str, int]:
        """Fractional amounts in hundredths (whole ones are not looked up here)."""
        return {i: round(k * AMOUNT_STEPS) for i, k in self.ingredients.items() if not isinstance(k, int)}

    def uses(self, ingredient: str, times: int = 1) -> int:
        """Units of ``ingredient`` that ``times`` batches take: the amount times ``times``, rounded up."""
        k = self.ingredients[ingredient]
        if isinstance(k, int):
            return k * times
        return -(-self._steps[ingredient] * times // AMOUNT_STEPS)

    def batches(self, ingredient: str, have: int) -> int:
        """The most batches that ``have`` units of ``ingredient`` allow (``uses`` of it is at most ``have``)."""
        k = self.ingredients[ingredient]
        if isinstance(k, int):
            return have // k
        return have * AMOUNT_STEPS // self._steps[ingredient]

    def most_batches(self, times: int) -> int:
        """The most batches that take no more units than ``times`` batches do (``craft 1`` of 0.5 iron_bar
        uses the whole bar, as ``craft 2`` does: 2). ``times`` itself when every amount is whole."""
        return min(self.batches(i, self.uses(i, times)) for i in self.ingredients)

    def needs(self, times: int = 1) -> dict[str, int]:
        """Units of every ingredient that ``times`` batches take."""
        return {i: self.uses(i, times) for i in self.ingredients}

    @cached_property
    def needs_once(self) -> tuple[tuple[str, int], ...]:
        """``needs()`` of one batch as pairs, made once: rules ask it of every recipe at every step."""
        return tuple(self.needs().items())

    def salvage(self) -> dict[str, int]:
        """What taking one product apart gives back: half of each amount rounded up, but never more than
        the whole units of the amount (so a fraction of a unit gives nothing back: two wrenches made of one
        bar must not give two bars). Ingredients that give nothing are left out."""
        out = {}
        for i, k in self.ingredients.items():
            n = (k + 1) // 2 if isinstance(k, int) else min(math.ceil(k / 2), math.floor(k))
            if n > 0:
                out[i] = n
        return out


@dataclass(frozen=True)
class ObjectType:
    """A kind of object. Stackable kinds are counted; containers and writables get instance names.

    The derived properties are cached on first use (frozen: they never change); the rules ask them
    at every step.
    """

    name: str
    category: Category
    description: str
    level: int = 1
    value: int = 0
    size: int = 1
    attack: int = 0
    defense: int = 0
    slot: str | None = None  # armor slot (head, body, legs, feet, hands, shield); containers use "pack"
    capacity: int = 0
    hp_restore: int = 0
    max_text: int = 0
    uses: tuple[Use, ...] = ()
    recipe: Recipe | None = None
    salvageable: bool = True  # may be disassembled into part of its recipe
    spawn_weight: float = 1.0  # relative weight in random scatter; 0 keeps it out of the scatter
    areas: tuple[str, ...] = ()  # restrict random scatter to these areas (empty: any area of fitting level)
    named: bool = False  # each unit its own handle (lamp_0), like containers; only for NAMEABLE categories
    quest: bool = False  # brought in by the main quest, not part of the world's own content (counted apart)

    @cached_property
    def portable(self) -> bool:
        return self.category != "station"

    @cached_property
    def instanced(self) -> bool:
        return self.category in INSTANCED or self.named

    @cached_property
    def equip_slot(self) -> str | None:
        if self.category == "armor":
            return self.slot or "body"
        if self.category == "container":
            return "pack"
        return None


@dataclass(frozen=True)
class NpcType:
    """A kind of non-player character. Enemies fight in a repeating stance pattern; friendlies talk and trade.

    The derived properties are cached on first use, as :class:`ObjectType`'s are.
    """

    name: str
    kind: Literal["enemy", "friendly"]
    description: str
    role: Literal["fighter", "merchant", "guide", "villager", "boss"] = "fighter"
    level: int = 1
    hp: int = 20
    attack: int = 5
    defense: int = 0
    pattern: tuple[Stance, ...] = ("attack", "defend", "attack", "wait")
    drops: dict[str, int] = field(default_factory=dict)
    stock: dict[str, int] = field(default_factory=dict)
    buys: tuple[str, ...] = ()  # categories a merchant buys; empty: anything with a value
    coins: int = 0  # purse a pickpocket can lift from
    dialogue: tuple[str, ...] = ()
    unique: bool = False  # one named individual: its handle is its name, without a number
    spawn_weight: float = 1.0
    areas: tuple[str, ...] = ()
    xp: int = 0  # experience for defeating it; 0 means 10 per level
    #: Imported games (the reference's NPCs have no level of their own): an instance takes the level of the
    #: area it is placed in, and hp / attack grow by these amounts per level above 1.
    level_with_area: bool = False
    hp_per_level: int = 0
    attack_per_level: int = 0
    quest: bool = False  # brought in by the main quest, not part of the world's own content (counted apart)

    @cached_property
    def hostile(self) -> bool:
        return self.kind == "enemy"

    @cached_property
    def merchant(self) -> bool:
        return self.role == "merchant"

    @cached_property
    def common_enemy(self) -> bool:
        """A hostile kind of which there are many: it may be scattered, roam, respawn or come to noise.

        Unique individuals and bosses are placed by design (the world or the quest) and never multiply.
        """
        return self.kind == "enemy" and not self.unique and self.role != "boss"

    @cached_property
    def experience(self) -> int:
        return self.xp or 10 * self.level


@dataclass(frozen=True)
class AreaSpec:
    """One area of a place. ``objects`` and ``npcs`` are always placed there; scatter adds random ones."""

    name: str
    description: str
    level: int = 1
    objects: dict[str, int] = field(default_factory=dict)
    npcs: tuple[str, ...] = ()
    scatter: bool = True
    dark: bool = False  # unlit: nothing is seen there without a light in hand (games with the darkness rule)


@dataclass(frozen=True)
class PlaceSpec:
    name: str
    description: str
    areas: tuple[AreaSpec, ...]
    locked: bool = False  # "agentodyssey" graphs: paths into and inside the place may be locked


@dataclass(frozen=True)
class Connection:
    """A path between two areas. A locked path opens with ``key`` (an object with the ``unlock`` use)."""

    a: str
    b: str
    locked: bool = False
    key: str | None = None
    pickable: bool = True  # can it be lockpicked (when the game has the lockpick verb)?


@dataclass(frozen=True)
class GraphSpec:
    """The area graph: fixed connections, or a seeded random layout, or both (fixed edges kept)."""

    #: ``agentodyssey``: the reference release's layout, for imported games: each place a shuffled chain of
    #: its areas, places chained in shuffled order, paths of locked places locked with one of ``lock_keys``.
    mode: Literal["fixed", "random", "agentodyssey"] = "random"
    connections: tuple[Connection, ...] = ()
    extra_links: int = 1  # random mode: additional edges inside places, beyond a spanning tree
    locked_links: int = 1  # random mode: how many links between places are locked
    lock_key: str | None = None  # random mode: the key that opens them
    lock_keys: tuple[str, ...] = ()  # agentodyssey mode: the keys a lock is drawn from


@dataclass(frozen=True)
class PlacementSpec:
    """Level-conditioned scatter of objects and NPCs at world generation."""

    objects_per_area: tuple[int, int] = (2, 5)
    npcs_per_area: tuple[int, int] = (0, 2)
    level_decay: float = 0.35  # weight multiplier per level of difference between type and area
    max_level_above: int = 0  # how far above an area's level a scattered type may be
    #: ``agentodyssey``: the reference release's distribution, for imported games (odyssey_env/paperworld.py);
    #: the other fields are then unused, but for the two below.
    style: Literal["odyssey", "agentodyssey"] = "odyssey"
    #: ``agentodyssey`` only: an area draws ``k`` objects, ``k`` uniform between ``draws[0]`` and ``draws[1]``
    #: times its candidates (or ``d``): the reference's games differ (Mark 2.5 and 5, the others 2 and 4).
    draws: tuple[float, float] = (2.0, 4.0)
    #: ``agentodyssey`` only: every area first gets each material that names it among its areas (a level's
    #: worth of one without a recipe, one of one with a recipe), as Base and four other reference games do.
    guarantee: bool = False
    #: ``agentodyssey`` only: the ``[min, max]`` of an area's enemy count by area level (level 1 first), which
    #: each reference game writes its own way (Mark: 1 to the level; Remnant: half the level, rounded down, to
    #: the level / 1.5, rounded up). An area deeper than the table, or every area when it is empty, takes
    #: Remnant's bounds.
    enemies_per_level: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class AgentSpec:
    """The player's body and growth."""

    hp: int = 100
    attack: int = 10
    defense: int = 0
    hands: int = 2
    xp_per_level: int = 100
    hp_per_level: int = 20
    attack_per_level: int = 5


@dataclass(frozen=True)
class GameInfo:
    """Identity of a game and the engine features it switches on."""

    name: str
    title: str
    description: str
    intro: str = ""
    start_time: str = "08:00"
    minutes_per_step: int = 10
    verbs: tuple[str, ...] = ()  # optional verbs switched on (lockpick, eat, throw, disassemble, pickpocket)
    step_rules: tuple[str, ...] = ()  # optional step rules switched on (the engine's library of dynamics)
    disable: tuple[str, ...] = ()  # base rules switched off, by verb or step-rule name
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-rule parameter overrides
    #: Shipped games whose ``rules.py`` joins this game's rules (shipped code: no trust needed). An imported
    #: paper game plays its own verbs with the implementations of the shipped game that re-authored them,
    #: parameterised by its ids in ``params`` (odyssey_eval/paper/mechanics.py).
    rules_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class WorldSpec:
    """Everything in ``world.json``."""

    game: GameInfo
    places: tuple[PlaceSpec, ...]
    objects: tuple[ObjectType, ...]
    npcs: tuple[NpcType, ...]
    spawn: str
    format: int = 1
    agent: AgentSpec = field(default_factory=AgentSpec)
    graph: GraphSpec = field(default_factory=GraphSpec)
    placement: PlacementSpec = field(default_factory=PlacementSpec)
