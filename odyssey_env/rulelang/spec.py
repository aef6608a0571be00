"""The rule language's format (``rules.json``): typed, frozen dataclasses, like ``world.json``'s.

A rule file declares **verbs** (a command pattern with typed slots, preconditions each with its failure
message, effects, the line said), **step rules** (a trigger, a scope, a condition, effects), **variables**
(flags, counters and sets the rules keep, each with its bound) and **predicates** the quest may name.

Conditions and effects are small JSON objects told apart by one key (``{"has": "rope", "count": 2}``,
``{"consume": "rope"}``): each kind is one dataclass below, its *tag* its first field. The file level is
loaded by :func:`odyssey_env.schema.load`; :mod:`odyssey_env.rulelang.checks` then reads each condition
and effect by its tag, so an error names the field (``rules.json: verbs[0].requires[1].check.has: unknown
object 'rop'``). :func:`json_schema` exports the whole format for editors and generator prompts.

Values that name things are strings: a literal name (``"rope"``, ``"old_mill"``) or a reference to what
the rule is about: ``$here`` (the area), ``$<slot>`` (a verb's argument), ``$npc`` / ``$object`` (a step
rule's scope), ``$event.<field>`` (the triggering event), ``$<param>`` (a predicate's argument).
Texts are templates: ``{<slot>}``, ``{here}``, ``{npc}``, ``{object}``, ``{step}``, ``{event.<field>}``,
``{var.<name>}``, ``{<slot>.type}`` (an object or NPC slot's type), ``{stations}`` (the stations lying
here, joined with "and": "salt_kiln and grinding_wheel") and, in a verb, ``{received}`` (where
its last ``produce`` put things: "in my hands" or "on the ground") and ``{salvaged}`` are replaced;
nothing else is (no other attribute, no code).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from odyssey_env import schema

FORMAT = 1

Stat = Literal["hp", "max_hp", "attack", "defense", "xp", "level", "coins"]
#: Stats an effect may change on the agent (attack is its base attack; defense follows worn armor) or an NPC.
AgentStat = Literal["hp", "max_hp", "attack", "xp"]
NpcStat = Literal["hp", "attack", "defense"]
Domain = Literal["held", "carried", "worn", "ground", "near", "type", "npc", "exit", "area", "amount", "text", "any"]
#: The domains an ``any`` slot may join: what is here to be named (a thing, a creature, an area).
UnionDomain = Literal["held", "carried", "worn", "ground", "near", "npc", "exit", "area"]
Scope = Literal["agent", "area", "npc", "object", "recipe", "held", "instance", "world"]
VarKind = Literal["flag", "counter", "set", "tally"]
VarScope = Literal["global", "agent", "area", "object", "exit", "held"]


# ============================================================================ conditions
@dataclass(frozen=True)
class AllOf:
    """Every condition holds."""

    all_of: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class AnyOf:
    """At least one condition holds."""

    any_of: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class NoneOf:
    """No condition holds (``{"none_of": [c]}`` is "not c")."""

    none_of: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Has:
    """The agent carries (hands, held bags, pack) at least ``count`` of an object."""

    has: str
    count: int = 1


@dataclass(frozen=True)
class Holds:
    """The agent holds an object in its hands."""

    holds: str


@dataclass(frozen=True)
class Wears:
    """The agent wears an object."""

    wears: str


@dataclass(frozen=True)
class LiesHere:
    """At least ``count`` of an object lie on the ground of the area (``"*"``: of anything at all)."""

    lies_here: str
    count: int = 1


@dataclass(frozen=True)
class OnGround:
    """A thing (a reference to one named thing, ``$object``; or an object type) lies on the ground of the
    area, neither carried, bagged nor worn: what ``lies_here`` asks of a type, asked of the one thing, so
    that a rule of scope ``instance`` tells a corpse laid on a floor from one carried about."""

    on_ground: str


@dataclass(frozen=True)
class NpcHere:
    """An NPC of a type (``"*"``: any) stands in the area; ``hostile`` narrows to enemies or to the peaceful."""

    npc_here: str
    hostile: bool | None = None


@dataclass(frozen=True)
class InArea:
    """The area (here, or the area ``of`` names: a reference such as a hook's ``$to``) is one of these."""

    in_area: tuple[str, ...]
    of: str | None = None


@dataclass(frozen=True)
class InPlace:
    """The area belongs to one of these places."""

    in_place: tuple[str, ...]


@dataclass(frozen=True)
class Hour:
    """The hour of the day is in ``[from, to)`` (wrapping past midnight when ``from > to``)."""

    hour: tuple[int, int]


@dataclass(frozen=True)
class StatIs:
    """One of the agent's numbers is at least ``at_least`` and below ``below`` (either may be left out).

    With ``of`` (an object reference, ``$object``), the number is that object type's own ``attack`` or
    ``defense`` (a blade's edge, what a salt glaze can blunt), and no agent need be bound."""

    stat: Stat
    at_least: int | None = None
    below: int | None = None
    of: str | None = None


@dataclass(frozen=True)
class Flag:
    """A flag variable is set (``of``: whose, for a per-object or per-exit variable; see :class:`Var`)."""

    flag: str
    of: str | None = None


@dataclass(frozen=True)
class CounterIs:
    """A counter variable is at least ``at_least`` and below ``below``."""

    counter: str
    at_least: int | None = None
    below: int | None = None
    of: str | None = None


@dataclass(frozen=True)
class InSet:
    """A set variable holds a value (a template)."""

    in_set: str
    value: str
    of: str | None = None


@dataclass(frozen=True)
class Same:
    """Two values (references or templates) are equal."""

    same: tuple[str, str]


@dataclass(frozen=True)
class IsType:
    """A value (a slot's object, ``$object``) is an object of one of ``types`` or ``categories`` (either may
    be left out, not both): "is it a herb", asked apart from "do I carry it", so each refusal says which."""

    is_type: str
    types: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hostile:
    """An NPC (``$npc``, an npc slot) is (true) or is not (false) of a hostile type."""

    is_hostile: str
    value: bool = True


@dataclass(frozen=True)
class InCombat:
    """The agent is (true) or is not (false) fighting an enemy here."""

    in_combat: bool


@dataclass(frozen=True)
class ExitLocked:
    """The way from the area to a neighbouring one is locked."""

    exit_locked: str


@dataclass(frozen=True)
class Quest:
    """A condition of the quest vocabulary (docs/quests.md), as quest.json writes it."""

    quest: dict[str, Any]


# ---------------------------------------------------------------------------- lines built from what is there
@dataclass(frozen=True)
class Engaged:
    """An NPC (a reference) is fighting someone."""

    engaged: str


@dataclass(frozen=True)
class Noted:
    """This firing has (true) or has not (false) taken a ``note`` yet (``list``: into that named list)."""

    noted: bool
    list: str = ""


TargetKind = Literal["here", "exit", "area", "npc", "object"]


@dataclass(frozen=True)
class IsA:
    """What a value names (an ``any`` slot's: Mirror Salt's ``listen``): ``here`` (the area I stand in),
    ``exit`` (a neighbouring area), ``area`` (either), ``npc`` (someone standing here) or ``object`` (a thing
    I carry, wear or see lying here), so that a verb answers each kind of target in its own way."""

    is_a: str
    kind: TargetKind


@dataclass(frozen=True)
class Modified:
    """An NPC's stat is held now by ``by``, a step rule of this file with a ``modify`` (Mirror Salt's kin
    faltering at a death-note: ``imprint_falter``)."""

    modified: str
    by: str


@dataclass(frozen=True)
class IsPhantom:
    """A thing (a reference) lies on the ground here as a phantom: a pile of its type some rule's ``phantoms``
    keep in this area (a mirage, which ``listen`` hears for what it is)."""

    is_phantom: str


@dataclass(frozen=True)
class Predicate:
    """A predicate the game registers (its ``rules.py``'s or this file's) holds for the agent, with ``args``
    given as references or templates of this rule (``{"corpse": "$each"}``): how a rule reads what a Python
    rule keeps (a hybrid game's data asking its code)."""

    predicate: str
    args: dict[str, str] = dataclasses.field(default_factory=dict)


# ------------------------------------------------------------------------ NPC kinds (Mirror Salt's resonance_imprint)
@dataclass(frozen=True)
class CommonEnemy:
    """A value (an NPC, ``$event.type``, ``{npc.type}``) is of a kind of which there are many enemies.

    Hostile, neither unique nor a boss: the kinds that scatter, roam and respawn. Asked of a type, it holds
    for an NPC already gone (the one an ``npc_defeated`` event is about)."""

    common_enemy: str


# ---------------------------------------------------------------------------- recipes (Mirror Salt's forge_alert)
@dataclass(frozen=True)
class CanCraft:
    """The agent carries every ingredient of an object's recipe and each of its stations lies here.

    The object is ``$recipe`` in a step rule of scope ``recipe``, or a literal type."""

    can_craft: str


# ---------------------------------------------------------------------------- a quantifier (Lazaret's lockdown)
SomeKind = Literal["npc", "object", "agent", "carried"]


@dataclass(frozen=True)
class Some:
    """At least one NPC standing (``"npc"``) or thing lying on the ground (``"object"``) in an area (default:
    here), narrowed by ``types``, satisfies ``check``, asked with ``$each`` bound to it: "a corpse here has
    lain unburned 18 steps" (``{"some": "object", "types": ["plague_corpse"], "check": {"counter": "lain",
    "of": "$each", "at_least": 18}}``). At most 50 are asked; no ``some`` or ``for_each`` inside one, but
    for the one pair that stays small: a ``"carried"`` inside an ``"agent"``.

    ``"agent"``: an agent standing in the area (me too, others first to last as they joined; ``types`` none),
    with the check asked *as that agent* (``has``, ``$each`` = its id): "someone here carries a burning light"
    (Lazaret's dark). ``"carried"``: a thing the agent carries, in its hands then in the containers it holds
    (the engine's order; ``area`` none): "a light I carry has fuel left"."""

    some: SomeKind
    check: dict[str, Any]
    area: str = "$here"
    types: tuple[str, ...] = ()


# ---------------------------------------------------------------------------- phantoms (Mirror Salt's mirages)
@dataclass(frozen=True)
class PhantomsAre:
    """How many phantom piles (one per area and object type: :class:`Phantoms`) a rule keeps in an area (a
    reference, ``$here``) or, with ``"*"``, everywhere, is at least ``at_least`` and below ``below`` (either
    may be left out; each a number or ``"$param.<name>"``): "fewer than four mirages shimmer anywhere"."""

    phantoms: str
    at_least: int | str | None = None
    below: int | str | None = None


@dataclass(frozen=True)
class FitsLevel:
    """An object type (a reference: ``$each`` of a ``pick`` over types) is of a level at most the area's
    level plus ``above``: what may turn up in an area matches how far into the world it lies."""

    fits_level: str
    above: int = 0


CONDITIONS: tuple[type, ...] = (
    AllOf,
    AnyOf,
    NoneOf,
    Has,
    Holds,
    Wears,
    LiesHere,
    OnGround,
    NpcHere,
    InArea,
    InPlace,
    Hour,
    StatIs,
    Flag,
    CounterIs,
    InSet,
    Same,
    IsType,
    Hostile,
    InCombat,
    ExitLocked,
    Quest,
    Engaged,
    Noted,
    Predicate,
    CanCraft,
    CommonEnemy,
    Some,
    PhantomsAre,
    FitsLevel,
    IsA,
    Modified,
    IsPhantom,
)


# ============================================================================ effects
@dataclass(frozen=True)
class Consume:
    """Take ``count`` of an object from what the agent carries (a precondition should make sure it does)."""

    consume: str
    count: int = 1


@dataclass(frozen=True)
class Produce:
    """Give the agent ``count`` of an object (to its hands, or the ground when they are full), never past
    ``cap`` carried and lying here together."""

    produce: str
    cap: int
    count: int = 1


@dataclass(frozen=True)
class Transform:
    """Turn one carried object into another, one for one."""

    transform: str
    into: str


@dataclass(frozen=True)
class Place:
    """Put ``count`` of an object on the ground of an area (default: here), never past ``cap`` lying there."""

    place: str
    cap: int
    count: int = 1
    area: str = "$here"


@dataclass(frozen=True)
class Remove:
    """Take up to ``count`` of an object off the ground of an area (default: here).

    ``count`` is a number or a reference to one (``$event.amount``, an amount slot); how many it took is
    ``$removed`` / ``{removed}``."""

    remove: str
    count: int | str = 1
    area: str = "$here"


@dataclass(frozen=True)
class MoveAgent:
    """Move the agent to an area (it arrives as if it had walked in: the arrival counts as entering)."""

    move_agent: str


@dataclass(frozen=True)
class MoveNpc:
    """Move an NPC to an area."""

    move_npc: str
    to: str


@dataclass(frozen=True)
class ChangeStat:
    """Add to one of the agent's numbers (health stays within 0..max_hp), or an NPC's when ``npc`` is given."""

    change: AgentStat | NpcStat
    by: int
    npc: str | None = None


@dataclass(frozen=True)
class Coins:
    """Give (positive) or take (negative, at most what it carries) coins of the game's currency."""

    coins: int


@dataclass(frozen=True)
class SpawnNpc:
    """Put a new NPC of a type in an area (default: here); at most ``max_alive`` from this effect live at once.

    The NPC it made is ``$spawned`` / ``{spawned}`` for the effects after it ("rises as {spawned}"; empty
    when it made none)."""

    spawn_npc: str
    max_alive: int
    area: str = "$here"


@dataclass(frozen=True)
class RemoveNpc:
    """Take an NPC out of the world (it leaves; it is not defeated)."""

    remove_npc: str


@dataclass(frozen=True)
class OpenExit:
    """Unlock the way between the area and a neighbouring one (both directions)."""

    open_exit: str


@dataclass(frozen=True)
class LockExit:
    """Lock the way between the area and a neighbouring one; ``key`` (an object type) opens it again."""

    lock_exit: str
    key: str | None = None


@dataclass(frozen=True)
class Salvage:
    """Break an object into its recipe's ingredients, each amount divided by ``share`` (rounded down to whole units),
    laid on the ground of an area (default: here); what it made is the ``{salvaged}`` of a template
    ("1 iron_scrap, 1 deal_plank", empty when nothing). It makes nothing for an object with no recipe and
    never more than the recipe took; take the object itself with ``remove`` or ``consume``."""

    salvage: str
    share: int = 2
    area: str = "$here"


@dataclass(frozen=True)
class Winded:
    """Leave the agent winded (true): its stamina drops to the floor, as after a flurry of blows."""

    winded: bool


@dataclass(frozen=True)
class Strike:
    """Deal ``damage`` to an NPC through combat (a verb's only): it engages the agent and, at no health
    left, is defeated and pays its rewards, as a blow would; ``how`` begins the line ("{tool} crushes")."""

    strike: str
    damage: int
    how: str = "I hit"


@dataclass(frozen=True)
class Tally:
    """Add ``by`` to the count of ``item`` in a tally variable.

    ``by`` is a number or a reference to one (``$removed``), ``item`` a template or a reference
    (``$event.object``); nothing is counted for a count of 0 or less."""

    tally: str
    item: str
    by: int | str = 1


@dataclass(frozen=True)
class SetFlag:
    """Set (or clear) a flag variable."""

    set_flag: str
    value: bool = True
    of: str | None = None


@dataclass(frozen=True)
class AddCounter:
    """Add to a counter variable (it stays within 0 and its declared max); ``value`` a number or a reference to
    a count (``$removed``, a phantom pile's ``$count``, an amount slot), read as a whole number."""

    add: str
    value: int | str = 1
    of: str | None = None


@dataclass(frozen=True)
class SetCounter:
    """Set a counter variable (within 0 and its declared max)."""

    set: str
    value: int
    of: str | None = None


@dataclass(frozen=True)
class Remember:
    """Add a value (a template) to a set variable (nothing happens once the set holds its max)."""

    remember: str
    value: str
    of: str | None = None


@dataclass(frozen=True)
class After:
    """Run effects ``after`` steps later, about the same things (no ``after`` inside: no chains).

    ``unwatched``: the countdown starts again each step someone stands in the area, so the effects run once
    nobody has been there for ``after`` steps in a row (what is left alone decays; what is tended keeps)."""

    after: int
    do: tuple[dict[str, Any], ...]
    unwatched: bool = False


#: An event's datum: a template, a list of templates, or a literal number or truth value.
EventValue = bool | int | str | tuple[str, ...]


@dataclass(frozen=True)
class Emit:
    """Record an event (rewards, quest conditions and the oracle read events); ``data`` values are templates,
    lists of templates (``["{first}", "{second}"]``), literal numbers and truth values, or a ``$reference``,
    which keeps its value's type (``"$removed"``, ``"$event.amount"``: a number stays a number)."""

    emit: str
    data: dict[str, EventValue] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Say:
    """Tell the agent a line (in a step rule without an agent: everyone in the area)."""

    say: str


@dataclass(frozen=True)
class Tell:
    """Tell everyone in an area (default: here) a line."""

    tell: str
    area: str = "$here"


@dataclass(frozen=True)
class Phantom:
    """Lay one phantom of an object type (a literal, or ``$each`` of a ``pick`` over types) on the ground of an
    area (default: here): it lies there and lists as the real thing does, but it is the rule's, which keeps it
    as its ``phantoms`` say (:class:`Phantoms`: a rule with a ``phantom`` effect declares them). A phantom of a
    type that is named, worn, fixed in place or money is never made; nor one where that type lies already (a
    pile is wholly phantom or wholly real)."""

    phantom: str
    area: str = "$here"


# ---------------------------------------------------------------------------- lines built from what is there
ForEachKind = Literal["npc", "object", "held", "phantom", "value"]


@dataclass(frozen=True)
class ForEach:
    """Run ``do`` once for each NPC (``"npc"``, as they stand) or each thing lying on the ground (``"object"``,
    as it lies) of an area (default: here), or each thing in the agent's hands (``"held"``, in the hands' order,
    a stack once; only where an agent is bound, and no ``area``: the glaze cracked off all I hold), narrowed by
    ``types``, with ``$each`` / ``{each}`` bound to it; at most 50 (no ``for_each`` inside one). ``"phantom"``:
    each phantom pile the rules keep in the area, in the order they were laid, ``$each`` its type and
    ``$count`` how many lie in it; ``"value"``: each value of the set variable ``var`` (the agent's, the
    world's, or the area's), in the order they came, and for a lasting set those not yet forgotten, with
    ``$left`` / ``{left}`` the steps until each is (0 for a set that does not last)."""

    for_each: ForEachKind
    do: tuple[dict[str, Any], ...]
    area: str = "$here"
    types: tuple[str, ...] = ()
    #: ``"value"``: the set variable whose values are visited (its key: the agent, ``area``, or global)
    var: str = ""


FirstKind = Literal["carried", "held", "npc", "object"]


@dataclass(frozen=True)
class First:
    """Run ``do`` for the first thing (``$each`` / ``{each}``) of a kind, narrowed by ``types``, for which
    ``check`` holds (no check: the first one), or ``else`` when none does: a thing the agent carries
    (``"carried"``: its hands, then the containers it holds, the engine's order), holds (``"held"``), an NPC
    standing (``"npc"``) or a thing lying (``"object"``) in an area (default: here). Lazaret's dark: the first
    light I carry with fuel left burns a turn of it. At most 50 are asked; no ``first``, ``for_each`` or
    ``some`` over things inside one (as for a ``for_each``)."""

    first: FirstKind
    do: tuple[dict[str, Any], ...] = ()
    otherwise: tuple[dict[str, Any], ...] = ()
    check: dict[str, Any] | None = None
    area: str = "$here"
    types: tuple[str, ...] = ()


PickKind = Literal["npc", "area", "type"]


@dataclass(frozen=True)
class Pick:
    """Run ``do`` for one NPC of an area (default: here) drawn at random from the episode's RNG, ``$each`` /
    ``{each}`` bound to it: one of those narrowed by ``types``, ``hostile`` (true: hostile kinds only, false:
    peaceful only) and ``idle`` (true: none fighting anyone). With none to pick nothing is drawn; else, with
    a ``chance`` (a number in [0, 1] or ``"$param.<name>"``), the RNG's next number first decides whether any
    is picked at all (below the chance: one is), then a second draws which. Lazaret's dark: a lurker falls
    on me (``{"pick": "npc", "hostile": true, "idle": true, "chance": "$param.lurk_chance", ...}``).

    ``"area"``: one of the world's areas (not the tutorial's; in the world's order), ``unwatched`` (true:
    where no agent stands), ``$here`` and ``$each`` both the area picked (``area`` and ``types`` none).
    ``"type"``: one of the object types ``types`` names (a list or ``"$param.<name>"``), in that order.
    ``check``, when given, must hold for a candidate (asked with ``$each`` bound to it, and for an area with
    ``$here`` too). Mirror Salt's mirages: every few steps, with a chance, an unwatched area under the open
    sky is picked, then a type that lies nowhere there yet, and a ``phantom`` of it is laid. One ``pick``
    may hold another of another kind (a type inside an area), no deeper."""

    pick: PickKind
    do: tuple[dict[str, Any], ...]
    chance: float | str | None = None
    hostile: bool | None = None
    idle: bool = False
    area: str = "$here"
    types: tuple[str, ...] = ()
    unwatched: bool = False
    check: dict[str, Any] | None = None


@dataclass(frozen=True)
class NpcStrikes:
    """An NPC (a reference: ``$each``, ``$npc``) standing beside the agent strikes it out of turn: the damage
    is its attack times ``times`` (a number or ``"$param.<name>"``) times the world's ``enemy_attack``
    modifier, rounded, less the agent's defense, at least 1; the agent's health drops by it (nothing else
    happens here: the engine's combat rules see a fallen agent as ever) and the two are now fighting. Then
    ``then`` runs with ``$damage`` / ``{damage}`` bound to the damage dealt (its line: "{each} strikes at me
    for {damage} damage!"). Nothing happens when the NPC is gone, stands elsewhere, or the agent is in the
    tutorial; only where an agent is bound."""

    npc_strikes: str
    times: float | str = 1.0
    then: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Dispel:
    """Take back the phantoms a step rule of this file laid in an area (default: here), at once: light that
    shows them for what they are. ``do`` runs once for each pile taken, in the order they were laid, with
    ``$each`` / ``{each}`` its object type and ``$removed`` / ``{removed}`` how many lay there; ``else`` runs
    when there were none. After it, ``$removed`` is how many it took in all (Mirror Salt's ``refract``)."""

    dispel: str
    do: tuple[dict[str, Any], ...] = ()
    otherwise: tuple[dict[str, Any], ...] = ()
    area: str = "$here"


@dataclass(frozen=True)
class Note:
    """Add a part (a template) to this firing's line: ``{notes}`` joins the parts with "; ", ``{notes.comma}``
    with ", " (a list of names: "glass_knife_0, salt_pick"), ``{notes.space}`` with " " (sentences),
    ``{notes.and}`` with " and "; at most 50 in all. With ``list``, the part goes to that named list of the
    firing instead, read as ``{notes.<list>}`` (``.comma``, ``.space``, ``.and``): a phrase of its own
    inside the line ("the quartz_sand and the rock_salt")."""

    note: str
    list: str = ""


# ---------------------------------------------------------------------------- moving toward the living
@dataclass(frozen=True)
class MoveToward:
    """An NPC takes one step along a shortest open way (no locked exit; never into an ``avoid`` area) toward
    the nearest area at most ``range`` ways off where an agent stands (not in the tutorial); ties go to the
    first found, exits in the world's order. It stays when it is fighting, stands beside an agent already,
    or has no one in reach. When ``blocked`` holds for the way it would take it stays and ``stopped`` runs;
    after a step ``moved`` runs. Both see ``$here`` (where it stood) and ``$next`` (where it heads); it moves
    silently, so ``moved`` says what is seen ("{npc} shambles in from {here}", told in ``$next``)."""

    move_toward: str
    range: int
    avoid: tuple[str, ...] = ()
    blocked: dict[str, Any] | None = None
    stopped: tuple[dict[str, Any], ...] = ()
    moved: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class If:
    """Effects that run only while a condition holds (``else``: otherwise)."""

    if_: dict[str, Any]
    then: tuple[dict[str, Any], ...] = ()
    otherwise: tuple[dict[str, Any], ...] = ()


EFFECTS: tuple[type, ...] = (
    Consume,
    Produce,
    Transform,
    Place,
    Remove,
    MoveAgent,
    MoveNpc,
    ChangeStat,
    Coins,
    SpawnNpc,
    RemoveNpc,
    Salvage,
    Winded,
    Strike,
    OpenExit,
    LockExit,
    SetFlag,
    AddCounter,
    SetCounter,
    Remember,
    Tally,
    After,
    Emit,
    Say,
    Tell,
    MoveToward,
    ForEach,
    First,
    Pick,
    NpcStrikes,
    Note,
    If,
    Phantom,
    Dispel,
)
#: JSON keys that are Python keywords, spelled differently in the dataclasses.
JSON_KEYS = {"if": "if_", "else": "otherwise"}


def tag(cls: type) -> str:
    """The JSON key that tells this kind apart (its first field, in JSON spelling)."""
    name = dataclasses.fields(cls)[0].name
    return next((k for k, v in JSON_KEYS.items() if v == name), name)


# ============================================================================ file level
@dataclass(frozen=True)
class Var:
    """A variable the rules keep: a flag, a counter (0..max) or a set of at most ``max`` values, one per
    ``scope`` key (the whole world, each agent, each area, each object, each exit, each agent's held thing).

    Per ``object`` (a lamp's fuel, a corpse's age: one value per individually named thing) and per ``exit``
    (a barricade's strength: one value per way between two areas, the same from either side) a condition
    or effect says whose value it means with ``of``: a reference to the object, or the area on the other
    side of the way from ``$here``. A value back at its default is dropped, so the tables hold only what
    differs (at most :data:`~odyssey_env.rulelang.runtime.MAX_KEYS` keys each).

    A ``tally`` counts named things (what the salt swallowed in an area: ``{"rock_salt": 2}``): at most
    ``max`` names per scope key, in the order they came (a new name past that is not counted); the
    ``tally`` effect adds to one name, ``{tally.<var>}`` reads "2 rock_salt, 1 glass_knife".

    A set that ``lasts`` N steps forgets each value N steps after it was last remembered (a death-note that
    rings for a while: remembering it again makes it ring longer); a forgotten value makes room.

    Per ``held`` thing (the glaze on what an agent holds) is one value per agent and thing in its hands, named
    by ``of`` as per object (``$object`` in a ``held`` scope): a stack (two glass knives in hand) is one thing
    by its type, so a per-object variable would share it between agents, where this keys it
    ``"<agent>/<handle>"``. It is read and written for the rule's agent only."""

    name: str
    kind: VarKind
    scope: VarScope = "agent"
    max: int = 1
    initial: int = 0
    lasts: int | None = None


@dataclass(frozen=True)
class Slot:
    """A verb's argument: its name and where its values come from.

    Object domains (``held`` in hand, ``carried`` in hand or bag, ``worn``, ``ground`` here, ``near``: any
    of those) take ``types`` / ``categories`` to narrow them; ``type`` is an object *type* of its ``types`` /
    ``categories`` whether or not one is at hand (a recipe's ingredient: pair it with ``has`` so that the
    refusals tell "not a herb" from "I carry none"), listed in the order ``types`` gives; ``npc`` takes
    ``types`` and ``hostile``; ``exit`` (a neighbouring area) takes ``locked``; ``area`` is here or a
    neighbouring area; ``amount`` is a whole number up to ``max``; ``text`` is free text and lists as
    ``example``; ``any`` joins the domains ``of`` names. ``refuse`` is said when the value given is not in
    the domain. An ``implicit`` slot is not
    written in the command: it takes the first value of its domain that its own preconditions admit (the
    first the domain's narrowing keeps when none does; nothing when the domain is empty), so that "burn
    corpses" burns with the first carried light holding enough fuel, and its effects spend that one.
    """

    name: str
    domain: Domain
    types: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    hostile: bool | None = None
    locked: bool | None = None
    max: int = 1
    example: str = ""
    refuse: str = ""
    implicit: bool = False
    #: An ``any`` slot's domains, joined in this order, each value once (this area, a neighbour, someone here,
    #: something I see or carry: ``["area", "npc", "near"]``); a verb tells them apart with ``is_a``.
    of: tuple[UnionDomain, ...] = ()


@dataclass(frozen=True)
class Require:
    """A precondition: ``check`` must hold, else the command fails saying ``refuse`` (a template).

    ``params_of`` (a hook's only): the name of a step rule of the same file whose ``params``, as this game sets
    them (``world.json``'s ``game.params.<rule>``), ``"$param.<name>"`` in ``check`` reads: one set of dark areas
    declared once, for the rule that burns the lights and the hook that refuses the way on into the dark."""

    check: dict[str, Any]
    refuse: str
    params_of: str = ""


@dataclass(frozen=True)
class FactSpec:
    """A checkable statement about the rule for World-Knowledge QA: the right answer and wrong ones."""

    topic: str
    question: str
    answer: str
    distractors: tuple[str, ...]


@dataclass(frozen=True)
class VerbSpec:
    """A verb: ``<verb> <slot> <slot>``; its preconditions in order, its effects, and the event it records
    (``event``, default the verb with underscores; its data are the slots' values and the area), unless
    ``records_event`` is false: then only its ``emit`` effects say what happened (each with its own data)."""

    verb: str
    description: str
    slots: tuple[Slot, ...] = ()
    requires: tuple[Require, ...] = ()
    effects: tuple[dict[str, Any], ...] = ()
    event: str = ""
    facts: tuple[FactSpec, ...] = ()
    records_event: bool = True
    #: The verb's parameters with their defaults, as a step rule's (``game.params.<verb>`` sets them):
    #: ``"$param.<name>"`` in a slot's or an ``is_type``'s ``types``, ``{param.<name>}`` in its texts.
    params: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Trigger:
    """When a step rule runs; every field given must hold (an empty trigger: every step).

    ``every`` N steps (at ``offset``); during the ``hours`` ``[from, to)``; when an agent ``enter``-s one of
    these areas (empty list: any); on an ``event`` (a kind, or a list of kinds) whose data hold ``match``;
    when ``becomes`` turns true for a scope item (it held not the step before); with ``chance`` drawn from
    the episode's RNG.
    """

    every: int | str | None = None
    offset: int = 0
    hours: tuple[int, int] | None = None
    enter: tuple[str, ...] | None = None
    event: str | tuple[str, ...] | None = None
    match: dict[str, str | int | bool] = dataclasses.field(default_factory=dict)
    becomes: dict[str, Any] | None = None
    chance: float | None = None


@dataclass(frozen=True)
class StepSpec:
    """A step rule: for each item of its ``scope`` (agents, areas, NPCs or objects lying about, narrowed by
    ``types`` and ``areas``), when its ``trigger`` fires and ``when`` holds, its effects run. ``after`` /
    ``before`` place it among the engine's step rules (docs/engine.md).

    Scope ``recipe`` is each agent paired with each craftable object type (``types`` narrows them), bound as
    ``$recipe``: "tell me when a recipe becomes craftable here" is a ``becomes`` of ``can_craft``, fired once
    per agent, area and recipe. Scope ``held`` is each agent paired with each thing in its hands (in the
    hands' order; ``types`` narrows them), bound as ``$object``: what the hands do to what they hold (salt
    glazing a blade held under the sun), with a ``becomes`` fired once per agent and held thing.
    Scope ``instance`` is each individually named thing of the rule's ``types`` (which it needs) wherever it
    is: lying on a floor, in hands, in a bag, worn, in a container lying about (in the order they were made),
    bound as ``$object``; ``$here`` is the area where it lies, or where whoever carries it stands (the area of
    the container it is in). It counts what happens to a thing whether or not it is carried (a corpse's age
    since it was made: a per-object counter the rule adds to each step, ``on_ground`` telling whether it
    lies on a floor now); a thing in the tutorial (or carried there) is left out, as the other scopes leave
    the tutorial alone, and so is one nothing holds. A ``becomes`` fires once per thing, wherever it went.
    ``tutorial`` (agent, recipe and held scopes only) lets the rule reach agents still
    in the tutorial, which every other rule leaves alone: a rule that teaches belongs there too.
    ``modify`` (scope ``npc``, no trigger: it is a state, asked every step) holds a stat of each NPC for which
    ``when`` holds, and gives it back when it stops holding (:class:`Modify`). ``wield`` (scope ``held``)
    computes each agent's attack from what it holds, after the rule's effects (:class:`Wield`).
    ``at_start`` effects run once for each scope item when the episode begins, before the first step (not for
    an event or enter trigger, and whatever the trigger and ``when``): what the world holds from the start has
    been there a step already when the first step comes (Lazaret's own dead were laid out before it).
    ``let_go`` (scope ``held``) runs, for each agent before its held things, once for each thing that left its
    hands while a per-held variable kept a value on it (bound as ``$object``), and then forgets those values:
    a per-held value lives while the thing is held, and the rule may say what its end does ("the glaze flakes
    off"). ``params`` names the rule's parameters with their defaults (a number, a flag, a text, a list of
    texts, or a *table*: an object of named rows, each an object of numbers, flags and texts, as Lazaret's
    ``lights`` ``{"storm_lantern": {"fuel": "lamp_oil", "capacity": 40, "per_unit": 20}}``); ``world.json``'s
    ``game.params.<rule>`` sets them per game as for a ``rules.py`` rule, and ``"$param.<name>"`` reads one
    where the file allows it (an area of ``in_area``; the ``types`` of a ``first``, ``some`` or ``pick``: a
    list of texts, or a table's row names; the ``chance`` of a ``pick``, the ``times`` of an ``npc_strikes``):
    so a rule file that names none of a game's content can be shared by games whose areas differ (Mirror
    Salt's sheltered areas). ``veil`` hides what an agent sees while its test holds (:class:`Veil`).
    """

    name: str
    description: str
    after: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    scope: Scope = "agent"
    types: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    trigger: Trigger = dataclasses.field(default_factory=Trigger)
    when: dict[str, Any] | None = None
    effects: tuple[dict[str, Any], ...] = ()
    facts: tuple[FactSpec, ...] = ()
    tutorial: bool = False
    modify: Modify | None = None
    at_start: tuple[dict[str, Any], ...] = ()
    wield: Wield | None = None
    let_go: tuple[dict[str, Any], ...] = ()
    params: dict[str, Any] = dataclasses.field(default_factory=dict)
    veil: Veil | None = None
    phantoms: Phantoms | None = None


@dataclass(frozen=True)
class Phantoms:
    """The phantom objects a step rule lays (its ``phantom`` effects) and how the engine keeps them: each step,
    before the rule's trigger is asked, a phantom picked up (into a hand or a bag) vanishes from the grasp
    (``vanish`` is said to the agent; the find is not counted: no quest, recipe or first find sees it), a
    real thing of the type landing on a phantom pile makes the phantoms thin away (``thin``, told in the
    area), and one laid ``lasts`` steps ago (a number or ``"$param.<name>"``) fades (``fade``). Texts see
    ``{object}`` (the type) and ``{here}``. The events ``<event>_formed``, ``<event>_vanished`` and
    ``<event>_faded`` say so (data ``object``, ``area``, and ``amount`` but for formed). Planners that read
    the true state are told where phantoms lie (``StepRule.phantoms``), so they are never fooled; the rule's
    piles are at most 50."""

    lasts: int | str
    vanish: str
    fade: str
    thin: str
    event: str = "phantom"


@dataclass(frozen=True)
class Veil:
    """A step rule's hold on what an agent sees: while ``when`` holds for an agent (asked as that agent,
    ``$here`` where it stands, whenever its observation is written), the observation lists no objects and no
    one nearby, saying ``say`` instead ("I see no objects near me (it is pitch dark)"). Lazaret's dark: a
    dark area where no one here carries a burning light. Its ``when`` is asked for every observation: keep it
    to what is cheap (an ``in_area`` first)."""

    when: dict[str, Any]
    say: str


@dataclass(frozen=True)
class Modify:
    """Hold an NPC's ``stat`` at ``times`` what it was (rounded, at least 1) while the rule's ``when`` holds.

    For a step rule of scope ``npc``. Once ``when`` stops holding (the NPC left, the condition passed) the
    stat is given back as it was; a change it underwent meanwhile is lost with it."""

    stat: NpcStat
    times: float


@dataclass(frozen=True)
class Wield:
    """The agent's attack, computed from what it holds: its base attack plus the best of the things in its
    hands, each at its object type's attack less ``less`` for each unit of the per-held ``counter`` on it, and
    never below ``floor`` of that attack (rounded up): a salt glaze that blunts a blade, never past half.

    For a step rule of scope ``held``, after its effects, for every agent in its scope (empty hands: the base
    attack). It replaces what ``attack_update`` set, so the rule runs after it; with the counter at 0 it
    computes the same attack, which is why it needs no memory of its own to give anything back."""

    counter: str
    less: int = 1
    floor: float = 0.0


@dataclass(frozen=True)
class PredicateSpec:
    """A named condition the quest may use (``{"type": "predicate", "name": ..., "args": {...}}``);
    its ``params`` are bound as ``$<param>``."""

    name: str
    check: dict[str, Any]
    params: tuple[str, ...] = ()


# ============================================================================ hooks on the engine's verbs
#: The engine's verbs a hook may attach to, and the name and kind its argument is bound as (``$to``).
HOOKS: dict[str, tuple[str, str]] = {"enter": ("to", "area")}


@dataclass(frozen=True)
class HookSpec:
    """A hook on one of the engine's verbs (:data:`HOOKS`): the verb keeps its pattern, listing and refusals,
    and gains more. Once the verb's own refusals about its argument would pass (``enter``: a neighbouring
    area, no fight here), each of ``requires`` must hold, else the command fails saying its ``refuse``; the
    listing drops the commands they refuse. When the verb succeeded, ``then`` runs in the context the
    command began in (``$here`` is where the agent stood). ``description`` replaces the verb's; ``facts`` add
    to its own. The argument is bound as :data:`HOOKS` names it (``enter``: ``$to``, ``{to}``)."""

    verb: str
    description: str = ""
    requires: tuple[Require, ...] = ()
    then: tuple[dict[str, Any], ...] = ()
    facts: tuple[FactSpec, ...] = ()


@dataclass(frozen=True)
class RulesSpec:
    """Everything in ``rules.json``."""

    format: int = FORMAT
    vars: tuple[Var, ...] = ()
    verbs: tuple[VerbSpec, ...] = ()
    step_rules: tuple[StepSpec, ...] = ()
    predicates: tuple[PredicateSpec, ...] = ()
    hooks: tuple[HookSpec, ...] = ()


def json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) of ``rules.json``: the file level from the dataclasses, each condition
    and effect slot as the union of its kinds (as :func:`odyssey_env.schema.json_schema` cannot know)."""
    out = schema.json_schema(RulesSpec)
    defs = out["$defs"]
    for group, kinds in (("Condition", CONDITIONS), ("Effect", EFFECTS)):
        alternatives = []
        for cls in kinds:
            sub = schema.json_schema(cls)
            body = sub["$defs"][cls.__name__]
            body["properties"] = {_json_key(k): v for k, v in body["properties"].items()}
            body["required"] = [_json_key(k) for k in body.get("required", ())]
            defs[cls.__name__] = body
            alternatives.append({"$ref": f"#/$defs/{cls.__name__}"})
        defs[group] = {"anyOf": alternatives}
    ref = {"Condition": {"$ref": "#/$defs/Condition"}, "Effect": {"$ref": "#/$defs/Effect"}}
    _point(defs, ref)
    return out


def _json_key(name: str) -> str:
    return next((k for k, v in JSON_KEYS.items() if v == name), name)


#: Fields that hold a condition / a list of effects (the dataclasses type them as plain JSON).
CONDITION_FIELDS = {("Require", "check"), ("Trigger", "becomes"), ("StepSpec", "when"), ("PredicateSpec", "check")}
CONDITION_FIELDS |= {("If", "if"), ("MoveToward", "blocked"), ("Some", "check"), ("First", "check")}
CONDITION_FIELDS |= {("Veil", "when")}
CONDITION_LIST_FIELDS = {("AllOf", "all_of"), ("AnyOf", "any_of"), ("NoneOf", "none_of")}
EFFECT_LIST_FIELDS = {("VerbSpec", "effects"), ("StepSpec", "effects"), ("After", "do"), ("If", "then")}
EFFECT_LIST_FIELDS |= {("If", "else"), ("HookSpec", "then"), ("MoveToward", "stopped"), ("MoveToward", "moved")}
EFFECT_LIST_FIELDS |= {("ForEach", "do"), ("StepSpec", "at_start"), ("First", "do"), ("First", "else")}
EFFECT_LIST_FIELDS |= {("Pick", "do"), ("NpcStrikes", "then"), ("Dispel", "do"), ("Dispel", "else")}
CONDITION_FIELDS |= {("Pick", "check")}


def _point(defs: dict[str, Any], ref: dict[str, Any]) -> None:
    for name, body in defs.items():
        props = body.get("properties", {})
        for field in props:
            if (name, field) in CONDITION_FIELDS:
                props[field] = {"anyOf": [ref["Condition"], {"type": "null"}]}
            elif (name, field) in CONDITION_LIST_FIELDS:
                props[field] = {"type": "array", "items": ref["Condition"]}
            elif (name, field) in EFFECT_LIST_FIELDS:
                props[field] = {"type": "array", "items": ref["Effect"]}
