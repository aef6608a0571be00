"""Load-time checks of a rule file: every condition and effect read by its tag, every name resolved.

A rule file is untrusted data (a person's or a model's), so nothing in it may surprise the engine mid-run:
an unknown kind, a field of the wrong type, a name that is no object, NPC, area, variable, slot or step
rule, a reference to something the rule is not about (``$npc`` in a verb), a template naming an unknown
value, a number past its bound, or a rule that could grow the world without bound is a
:class:`~odyssey_env.schema.Problem` naming the file and the field. The checks also turn each condition
and effect into its dataclass (:mod:`odyssey_env.rulelang.spec`), with its children parsed the same way,
so the compiler never looks at raw JSON.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from odyssey_env import schema
from odyssey_env.content import WorldSpec
from odyssey_env.limits import LIMITS, MAX_NAME, MAX_STAT
from odyssey_env.rewards import _EVENT_COMPONENT
from odyssey_env.rulelang import spec as s
from odyssey_env.rulelang.phantoms import takes_shape
from odyssey_env.schema import Problem

#: Bounds of the language (docs/game-format.md, "Rules as data"), far above what a game needs.
MAX_EFFECTS = 32  # effects in one list
MAX_DEPTH = 6  # conditions and ifs nested in each other
MAX_SLOTS = 3
MAX_AMOUNT_SLOT = 1_000
MAX_DELAY = 10_000  # steps an ``after`` may wait
MAX_ALIVE = 50  # NPCs one spawn effect may keep alive
MAX_CAP = 1_000  # units a produce or place may bring about
MAX_SET = 1_000  # values one set variable may hold
MAX_PERIOD = 100_000
MAX_RULES = 200  # verbs, step rules, variables, predicates each
MAX_RANGE = 20  # ways a move_toward looks ahead
MAX_PHANTOMS = 50  # phantom piles one rule keeps
MAX_LEVEL = 100  # levels a fits_level may reach above or below an area's

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_VERB = re.compile(r"^[a-z]+( [a-z]+)?$")
_TEMPLATE = re.compile(r"\{([^{}]*)\}")
_OBJECT_DOMAINS = ("held", "carried", "worn", "ground", "near", "type")
_KIND_OF_DOMAIN = {
    **dict.fromkeys(_OBJECT_DOMAINS, "object"),
    "npc": "npc",
    "exit": "area",
    "area": "area",
    "amount": "amount",
    "text": "text",
    "any": "any",  # a thing, a creature or an area: the verb asks which with is_a
}
#: Events the engine alone emits: rewards and metrics count them, so a rule file may not fake them.
#: Names a template or reference gives its own meaning, so no slot may take them.
_TAKEN = (
    *("here", "step", "npc", "object", "event", "var", "area", "received", "salvaged"),
    *("recipe", "stations", "removed", "tally", "spawned"),
)
RESERVED_EVENTS = frozenset(_EVENT_COMPONENT) | {
    "invalid_action",
    "object_acquired",
    "quest_completed",
    "side_quest_offered",
    "tutorial_completed",
    "tutorial_step_completed",
    "world_expanded",
}
_BY_TAG = {s.tag(cls): cls for cls in (*s.CONDITIONS, *s.EFFECTS)}
CONDITION_TAGS = {s.tag(cls): cls for cls in s.CONDITIONS}
EFFECT_TAGS = {s.tag(cls): cls for cls in s.EFFECTS}


@dataclass
class Where:
    """What a condition or effect may refer to where it stands."""

    bindings: dict[str, str]  # name (without $) -> object | npc | area | amount | text | any
    agent: bool  # an agent is bound (verbs, agent-scoped step rules, predicates)
    event: bool = False
    in_after: bool = False
    step: bool = False  # in a step rule (produce and place need a cap anywhere; spawn too)
    in_each: bool = False  # inside a for_each (none inside another)
    #: The step rule's parameters as this game sets them (its defaults under world.json's game.params)
    params: dict[str, Any] = field(default_factory=dict)
    wield: bool = False  # in a step rule with a wield: {wield.<slot>} reads what it takes from a held thing
    in_agents: bool = False  # inside a some over agents: one some over what that agent carries may follow
    phantoms: bool = False  # in a step rule that declares phantoms: a phantom effect may lay them
    in_pick: str = ""  # inside a pick of this kind: one pick of another kind may follow


@dataclass
class World:
    objects: dict[str, Any]
    npcs: dict[str, Any]
    areas: set[str]
    places: set[str]
    vars: dict[str, s.Var] = field(default_factory=dict)


class Checker:
    """Reads one rule file's conditions and effects, collecting problems under ``file``."""

    def __init__(self, file: str, world: World):
        self.file = file
        self.world = world
        self.problems: list[Problem] = []
        #: Quest-vocabulary conditions, checked once the game is assembled (they need its rule book).
        self.quest_conditions: list[tuple[Any, str]] = []
        #: The file's step rules that declare phantoms (what a ``dispel`` may take back).
        self.phantom_rules: tuple[str, ...] = ()
        #: The file's step rules with a ``modify`` (what a ``modified`` condition may ask of).
        self.modify_rules: tuple[str, ...] = ()
        #: The named note lists the rule being checked writes (what ``{notes.<list>}`` may read).
        self.note_lists: set[str] = set()

    def bad(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.file, path, message))

    # ------------------------------------------------------------------ reading one node
    def node(self, raw: Any, path: str, table: dict[str, type], what: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            self.bad(path, f"{what}s nested deeper than {MAX_DEPTH} levels")
            return None
        if not isinstance(raw, dict):
            self.bad(path, f"expected a {what} (an object with one of the keys {', '.join(table)}), got {raw!r:.60}")
            return None
        tags = [k for k in raw if k in table]
        if len(tags) != 1:
            if tags:
                self.bad(path, f"a {what} has exactly one of the keys {', '.join(table)}; got {', '.join(tags)}")
            else:
                other = "condition" if table is EFFECT_TAGS else "effect"
                misplaced = [k for k in raw if k in _BY_TAG]
                hint = f" ({misplaced[0]!r} is a {other}, not a {what})" if misplaced else ""
                close = schema._closest(str(next(iter(raw), "")), table) if raw else None
                hint = hint or (f" (did you mean {close!r}?)" if close else "")
                self.bad(path, f"unknown {what}{hint}; a {what} is one of: {', '.join(table)}")
            return None
        key = tags[0]
        cls = table[key]
        data = {s.JSON_KEYS.get(k, k): v for k, v in raw.items()}
        try:
            op: object = schema.load(cls, data, file=self.file, limits=LIMITS)
        except schema.FormatError as exc:
            for p in exc.problems:
                sub = p.path.replace("if_", "if").replace("otherwise", "else")
                self.bad(f"{path}.{sub}" if sub else path, p.message)
            return None
        return op

    def condition(self, raw: Any, path: str, where: Where, depth: int = 0) -> Any:
        op = self.node(raw, path, CONDITION_TAGS, "condition", depth)
        if op is None:
            return None
        p = f"{path}.{s.tag(type(op))}"
        if isinstance(op, s.Some):
            return self.some(op, path, where, depth)
        if isinstance(op, s.AllOf | s.AnyOf | s.NoneOf):
            items = getattr(op, s.tag(type(op)))
            if not items:
                self.bad(p, "needs at least one condition")
            parsed = tuple(self.condition(c, f"{p}[{i}]", where, depth + 1) for i, c in enumerate(items))
            # the spec types the items as the file's raw data; the checked tree holds the parsed conditions
            return dataclasses.replace(op, **{s.tag(type(op)): parsed})  # type: ignore[arg-type]
        if isinstance(op, s.Has | s.LiesHere):
            if not (isinstance(op, s.LiesHere) and op.lies_here == "*"):
                self.ref(op.has if isinstance(op, s.Has) else op.lies_here, "object", p, where)
            self.count(op.count, f"{path}.count")
        elif isinstance(op, s.Holds | s.Wears | s.OnGround):
            self.ref(getattr(op, s.tag(type(op))), "object", p, where)
        elif isinstance(op, s.NpcHere):
            if op.npc_here != "*":
                self.ref(op.npc_here, "npc_type", p, where)
        elif isinstance(op, s.InArea):
            areas: list[str] = []
            for i, a in enumerate(op.in_area):
                if a.startswith("$param."):  # the rule's parameter, as this game sets it: read now, once
                    areas += self.area_param(a[len("$param.") :], f"{p}[{i}]", where)
                else:
                    self.ref(a, "area", f"{p}[{i}]", where)
                    areas.append(a)
            if op.of is not None:
                self.ref(op.of, "area", f"{path}.of", where)
            return dataclasses.replace(op, in_area=tuple(areas))
        elif isinstance(op, s.InPlace):
            for i, name in enumerate(op.in_place):
                if name not in self.world.places:
                    self.bad(f"{p}[{i}]", f"unknown place {name!r}")
        elif isinstance(op, s.Hour):
            self.hours(op.hour, p)
        elif isinstance(op, s.StatIs | s.CounterIs):
            if op.at_least is None and op.below is None:
                self.bad(p, "give at_least, below or both")
            if isinstance(op, s.CounterIs):
                self.var(op.counter, "counter", p, where, op.of, f"{path}.of")
            elif op.of is not None:
                if op.stat not in ("attack", "defense"):
                    self.bad(p, f"an object type has an attack and a defense, not {op.stat!r}")
                if op.of.startswith("$"):
                    self.ref(op.of, "object", f"{path}.of", where)
                else:
                    self.bad(f"{path}.of", "name the object by reference ($object, $<slot>): a type's stat is fixed")
                return op  # the object's, not the agent's
            elif op.stat == "coins" and not where.agent:
                self.bad(p, "no agent here to count the coins of")
            if isinstance(op, s.StatIs) and not where.agent:
                self.bad(p, "a stat is the agent's, and this rule is not about an agent")
        elif isinstance(op, s.Flag):
            self.var(op.flag, "flag", p, where, op.of, f"{path}.of")
        elif isinstance(op, s.InSet):
            self.var(op.in_set, "set", p, where, op.of, f"{path}.of")
            self.value(op.value, f"{path}.value", where)
        elif isinstance(op, s.Same):
            for i, v in enumerate(op.same):
                self.value(v, f"{p}[{i}]", where)
        elif isinstance(op, s.IsType):
            self.ref(op.is_type, "object", p, where)
            if not op.types and not op.categories:
                self.bad(p, "give types, categories or both")
            for i, name in enumerate(op.types):
                if not name.startswith("$param."):
                    self.ref(name, "object", f"{path}.types[{i}]", where)
            from odyssey_env.quests.conditions import CATEGORIES

            for i, name in enumerate(op.categories):
                if name not in CATEGORIES:
                    self.bad(f"{path}.categories[{i}]", f"unknown category {name!r}")
            if any(name.startswith("$param.") for name in op.types):  # this game's values, read now, once
                types = self.types_param(op.types, path, where)
                for name in types:
                    if name not in self.world.objects:
                        self.bad(f"{path}.types", f"a parameter names unknown object {name!r} (default or game.params)")
                return dataclasses.replace(op, types=types)
        elif isinstance(op, s.Hostile):
            self.ref(op.is_hostile, "npc", p, where)
        elif isinstance(op, s.InCombat):
            self.needs_agent(p, where)
        elif isinstance(op, s.ExitLocked):
            self.ref(op.exit_locked, "area", p, where)
        elif isinstance(op, s.Engaged):
            self.ref(op.engaged, "npc", p, where)
        elif isinstance(op, s.Predicate):
            self.needs_agent(p, where)
            self.name(op.predicate, p)
            for k, v in op.args.items():
                self.name(k, f"{path}.args.{k}")
                self.value(v, f"{path}.args.{k}", where)
            from odyssey_env.quests.spec import Condition

            self.quest_conditions.append((Condition(type="predicate", name=op.predicate), p[: -len(".predicate")]))
        elif isinstance(op, s.Quest):
            self.needs_agent(p, where)
            try:
                from odyssey_env.quests.spec import Condition

                cond = schema.load(Condition, op.quest, file=self.file, limits=LIMITS)
            except schema.FormatError as exc:
                for prob in exc.problems:
                    self.bad(f"{p}.{prob.path}" if prob.path else p, prob.message)
                return None
            self.quest_conditions.append((cond, p))
            return dataclasses.replace(op, quest=cond)  # type: ignore[arg-type]  # parsed, as for all_of above
        elif isinstance(op, s.CanCraft):
            self.recipe_ref(op.can_craft, p, where)
        elif isinstance(op, s.PhantomsAre):
            if op.phantoms != "*":
                self.ref(op.phantoms, "area", p, where)
            if op.at_least is None and op.below is None:
                self.bad(p, "give at_least, below or both")
            low, high = (
                None if v is None else self.number_param(v, f"{path}.{fld}", where, 0, MAX_PHANTOMS + 1)
                for fld, v in (("at_least", op.at_least), ("below", op.below))
            )
            return dataclasses.replace(
                op, at_least=None if low is None else int(low), below=None if high is None else int(high)
            )
        elif isinstance(op, s.IsA):
            self.ref(op.is_a, "any", p, where)
        elif isinstance(op, s.Modified):
            self.ref(op.modified, "npc", p, where)
            if op.by not in self.modify_rules:
                known = ", ".join(self.modify_rules) or "none in this file"
                self.bad(f"{path}.by", f"{op.by!r} is no step rule of this file with a modify ({known})")
        elif isinstance(op, s.IsPhantom):
            self.ref(op.is_phantom, "object", p, where)
        elif isinstance(op, s.Noted):
            if op.list:
                self.name(op.list, f"{path}.list")
        elif isinstance(op, s.FitsLevel):
            self.ref(op.fits_level, "object", p, where)
            if not -MAX_LEVEL <= op.above <= MAX_LEVEL:
                self.bad(f"{path}.above", f"must lie between {-MAX_LEVEL} and {MAX_LEVEL}")
        elif isinstance(op, s.CommonEnemy):
            if op.common_enemy.startswith("$"):
                self.ref(op.common_enemy, "npc_type", p, where)
            elif "{" in op.common_enemy:
                self.template(op.common_enemy, p, where)
            else:
                self.ref(op.common_enemy, "npc_type", p, where)
        if isinstance(op, s.Has | s.Holds | s.Wears | s.CanCraft) or (isinstance(op, s.StatIs) and op.of is None):
            self.needs_agent(p, where)
        return op

    def area_param(self, name: str, path: str, where: Where) -> list[str]:
        """The areas a step rule's parameter names (``"$param.<name>"``), each a known area."""
        if name not in where.params:
            known = ", ".join(where.params) or "none"
            self.bad(path, f"'$param.{name}': the rule declares no such parameter (its params: {known})")
            return []
        value = where.params[name]
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
            self.bad(path, f"'$param.{name}' is not an area or a list of areas")
            return []
        for v in values:
            if v not in self.world.areas:
                close = schema._closest(v, self.world.areas)
                hint = f" (did you mean {close!r}?)" if close else ""
                self.bad(path, f"'$param.{name}' names unknown area {v!r}{hint} (its default or game.params)")
        return [v for v in values if v in self.world.areas]

    # ------------------------------------------------------------------ recipes (Mirror Salt's forge_alert)
    def recipe_ref(self, value: str, path: str, where: Where) -> None:
        """An object type with a recipe: a literal one, or a reference to an object (``$recipe``)."""
        self.ref(value, "object", path, where)
        t = self.world.objects.get(value)
        if not value.startswith("$") and t is not None and t.recipe is None:
            self.bad(path, f"{value!r} has no recipe: nothing crafts it")

    def effects(self, raws: Iterable[Any], path: str, where: Where, depth: int = 0) -> tuple[Any, ...]:
        raws = list(raws)
        if len(raws) > MAX_EFFECTS:
            self.bad(path, f"has {len(raws)} effects; at most {MAX_EFFECTS} are allowed in one list")
            return ()
        return tuple(self.effect(raw, f"{path}[{i}]", where, depth) for i, raw in enumerate(raws))

    def effect(self, raw: Any, path: str, where: Where, depth: int) -> Any:
        op = self.node(raw, path, EFFECT_TAGS, "effect", depth)
        if op is None:
            return None
        key = s.tag(type(op))
        p = f"{path}.{key}"
        agent_only = (s.Consume, s.Produce, s.Transform, s.MoveAgent, s.Coins, s.Winded, s.Strike)
        if isinstance(op, agent_only) or (isinstance(op, s.ChangeStat) and op.npc is None):
            self.needs_agent(p, where)
        if isinstance(op, s.Consume | s.Remove):
            self.ref(getattr(op, key), "object", p, where)
            self.amount(op.count, f"{path}.count", where)
            if isinstance(op, s.Remove):
                self.ref(op.area, "area", f"{path}.area", where)
        elif isinstance(op, s.Produce | s.Place):
            self.ref(getattr(op, key), "object", p, where)
            self.count(op.count, f"{path}.count")
            if not 1 <= op.cap <= MAX_CAP:
                self.bad(f"{path}.cap", f"must lie between 1 and {MAX_CAP} (the most this effect may bring about)")
            if isinstance(op, s.Place):
                self.ref(op.area, "area", f"{path}.area", where)
        elif isinstance(op, s.Transform):
            self.ref(op.transform, "object", p, where)
            self.ref(op.into, "object", f"{path}.into", where)
        elif isinstance(op, s.MoveAgent):
            self.ref(op.move_agent, "area", p, where)
        elif isinstance(op, s.MoveNpc):
            self.ref(op.move_npc, "npc", p, where)
            self.ref(op.to, "area", f"{path}.to", where)
        elif isinstance(op, s.ChangeStat):
            npc_stats, agent_stats = ("hp", "attack", "defense"), ("hp", "max_hp", "attack", "xp")
            if op.npc is not None:
                self.ref(op.npc, "npc", f"{path}.npc", where)
                if op.change not in npc_stats:
                    self.bad(p, f"an NPC's {op.change} cannot change; an NPC has {', '.join(npc_stats)}")
            elif op.change not in agent_stats:
                self.bad(p, f"the agent's {op.change} cannot change (it follows worn armor); use {agent_stats}")
            if abs(op.by) > MAX_STAT:
                self.bad(f"{path}.by", f"must be at most {MAX_STAT} in size")
        elif isinstance(op, s.Coins):
            if abs(op.coins) > MAX_STAT:
                self.bad(p, f"must be at most {MAX_STAT} in size")
        elif isinstance(op, s.SpawnNpc):
            self.ref(op.spawn_npc, "npc_type", p, where)
            self.ref(op.area, "area", f"{path}.area", where)
            if not 1 <= op.max_alive <= MAX_ALIVE:
                self.bad(f"{path}.max_alive", f"must lie between 1 and {MAX_ALIVE}")
        elif isinstance(op, s.RemoveNpc):
            self.ref(op.remove_npc, "npc", p, where)
        elif isinstance(op, s.Salvage):
            self.ref(op.salvage, "object", p, where)
            self.ref(op.area, "area", f"{path}.area", where)
            if not 1 <= op.share <= MAX_CAP:
                self.bad(f"{path}.share", f"must lie between 1 and {MAX_CAP} (each ingredient is divided by it)")
        elif isinstance(op, s.Winded):
            if not op.winded:
                self.bad(p, "winded takes true (an effect that does nothing is a mistake)")
        elif isinstance(op, s.Strike):
            if where.step or where.in_after:
                self.bad(p, "a strike is a verb's, now (the blow is the agent's command); elsewhere change hp")
            self.ref(op.strike, "npc", p, where)
            if not 1 <= op.damage <= MAX_STAT:
                self.bad(f"{path}.damage", f"must lie between 1 and {MAX_STAT}")
            self.template(op.how, f"{path}.how", where)
        elif isinstance(op, s.OpenExit | s.LockExit):
            self.ref(getattr(op, key), "area", p, where)
            if isinstance(op, s.LockExit) and op.key is not None:
                self.ref(op.key, "object", f"{path}.key", where)
        elif isinstance(op, s.SetFlag):
            self.var(op.set_flag, "flag", p, where, op.of, f"{path}.of")
        elif isinstance(op, s.AddCounter | s.SetCounter):
            self.var(getattr(op, key), "counter", p, where, op.of, f"{path}.of")
            if isinstance(op.value, str):
                if isinstance(op, s.SetCounter):
                    self.bad(f"{path}.value", "a set takes a number; add takes a reference to a count")
                else:
                    self.amount(op.value, f"{path}.value", where)
            elif abs(op.value) > MAX_STAT:
                self.bad(f"{path}.value", f"must be at most {MAX_STAT} in size")
        elif isinstance(op, s.Remember):
            self.var(op.remember, "set", p, where, op.of, f"{path}.of")
            self.value(op.value, f"{path}.value", where)
        elif isinstance(op, s.Tally):
            self.var(op.tally, "tally", p, where)
            self.value(op.item, f"{path}.item", where)
            self.amount(op.by, f"{path}.by", where)
        elif isinstance(op, s.After):
            if where.in_after:
                self.bad(p, "an after inside an after could chain without end; schedule both from the rule")
            if not 1 <= op.after <= MAX_DELAY:
                self.bad(p, f"must lie between 1 and {MAX_DELAY} steps")
            later = dataclasses.replace(where, in_after=True)
            return dataclasses.replace(op, do=self.effects(op.do, f"{path}.do", later, depth + 1))
        elif isinstance(op, s.Emit):
            self.name(op.emit, p)
            self.own_event(op.emit, p)
            for k, v in op.data.items():
                self.name(k, f"{path}.data.{k}")
                if isinstance(v, str):
                    self.value(v, f"{path}.data.{k}", where)
                elif isinstance(v, tuple):
                    for i, item in enumerate(v):
                        self.template(item, f"{path}.data.{k}[{i}]", where)
        elif isinstance(op, s.Say | s.Tell):
            self.template(getattr(op, key), p, where)
            if isinstance(op, s.Tell):
                self.ref(op.area, "area", f"{path}.area", where)
        elif isinstance(op, s.MoveToward):
            return self.move_toward(op, path, where, depth)
        elif isinstance(op, s.ForEach):
            return self.for_each(op, path, where, depth)
        elif isinstance(op, s.First):
            return self.first(op, path, where, depth)
        elif isinstance(op, s.Pick):
            return self.pick(op, path, where, depth)
        elif isinstance(op, s.NpcStrikes):
            return self.npc_strikes(op, path, where, depth)
        elif isinstance(op, s.Note):
            self.template(op.note, p, where)
            if op.list:
                self.name(op.list, f"{path}.list")
                if op.list in _NOTE_JOINS:
                    self.bad(f"{path}.list", f"{op.list!r} names how {{notes}} are joined; name the list otherwise")
        elif isinstance(op, s.Dispel):
            return self.dispel(op, path, where, depth)
        elif isinstance(op, s.Phantom):
            if not where.phantoms:
                self.bad(p, "a phantom is kept by its rule: declare the step rule's phantoms (lasts and texts)")
            self.ref(op.phantom, "object", p, where)
            self.ref(op.area, "area", f"{path}.area", where)
            if not op.phantom.startswith("$"):
                t = self.world.objects.get(op.phantom)
                if t is not None and not takes_shape(t):
                    self.bad(p, f"{op.phantom!r} is named, worn, fixed or money: no phantom takes its shape")
        elif isinstance(op, s.If):
            cond = self.condition(op.if_, f"{path}.if", where, depth + 1)
            then = self.effects(op.then, f"{path}.then", where, depth + 1)
            otherwise = self.effects(op.otherwise, f"{path}.else", where, depth + 1)
            return dataclasses.replace(op, if_=cond, then=then, otherwise=otherwise)
        return op

    # ------------------------------------------------------------------ lines built from what is there
    def for_each(self, op: s.ForEach, path: str, where: Where, depth: int) -> Any:
        """An area by reference or name, known types of the kind, ``do`` checked with ``$each`` bound (no
        ``for_each`` inside: the work stays linear in what lies there)."""
        kind = op.for_each
        if op.var and kind != "value":
            self.bad(f"{path}.var", "var names the set variable of a for_each over values")
        if kind == "held":
            if not where.agent:
                self.bad(f"{path}.for_each", "held things are an agent's: this rule is not about an agent")
            if op.area != "$here":
                self.bad(f"{path}.area", "held things are in the agent's hands, not in an area: give no area")
            kind = "object"  # each is bound to a thing, as for what lies about
        elif kind == "phantom":
            if "count" in where.bindings:
                self.bad(f"{path}.for_each", "a slot named 'count' hides how many lie in a pile; rename it")
            inner = self._each("object", op.area, op.types, "for_each", "a for_each inside a for_each", path, where)
            inner = dataclasses.replace(inner, bindings={**inner.bindings, "count": "amount"})
            return dataclasses.replace(op, do=self.effects(op.do, f"{path}.do", inner, depth + 1))
        elif kind == "value":
            if op.types:
                self.bad(f"{path}.types", "a set's values have no type: give no types")
            var = self.world.vars.get(op.var)
            self.var(op.var, "set", f"{path}.var", where)
            if var is not None and var.scope not in ("global", "agent", "area"):
                self.bad(
                    f"{path}.var", f"{op.var!r} is kept per {var.scope}: visit a set kept globally, per agent or area"
                )
            if var is not None and var.scope != "area" and op.area != "$here":
                self.bad(f"{path}.area", f"{op.var!r} is not kept per area: give no area")
            if "left" in where.bindings:
                self.bad(f"{path}.for_each", "a slot named 'left' hides the steps a lasting value has left; rename it")
            inner = self._each("text", op.area, (), "for_each", "a for_each inside a for_each", path, where)
            inner = dataclasses.replace(inner, bindings={**inner.bindings, "left": "amount"})
            return dataclasses.replace(op, do=self.effects(op.do, f"{path}.do", inner, depth + 1))
        inner = self._each(kind, op.area, op.types, "for_each", "a for_each inside a for_each", path, where)
        return dataclasses.replace(op, do=self.effects(op.do, f"{path}.do", inner, depth + 1))

    def some(self, op: s.Some, path: str, where: Where, depth: int) -> Any:
        """Like a ``for_each``: an area by reference or name, known types of the kind, ``check`` read with
        ``$each`` bound (no ``some`` or ``for_each`` inside: a test stays linear in what lies there)."""
        types = self.types_param(op.types, path, where)
        if op.some == "agent":
            if types:
                self.bad(f"{path}.types", "an agent has no type: give no types")
            # the check is asked as each agent standing there: one carried thing of theirs may be asked in it
            inner = self._each("agent", op.area, (), "some", "a some inside a some or a for_each", path, where)
            inner = dataclasses.replace(inner, agent=True, in_agents=True)
        elif op.some == "carried":
            if not where.agent:
                self.bad(f"{path}.some", "carried things are an agent's: this rule is not about an agent")
            if op.area != "$here":
                self.bad(f"{path}.area", "carried things are the agent's, not an area's: give no area")
            outer = where
            if where.in_each and where.in_agents:  # what one agent of a some over agents carries
                outer = dataclasses.replace(
                    where, in_each=False, bindings={k: v for k, v in where.bindings.items() if k != "each"}
                )
            inner = self._each("object", op.area, types, "some", "a some inside a some or a for_each", path, outer)
            inner = dataclasses.replace(inner, in_agents=False)
        else:
            inner = self._each(op.some, op.area, types, "some", "a some inside a some or a for_each", path, where)
        check = self.condition(op.check, f"{path}.check", inner, depth + 1)
        return dataclasses.replace(op, check=check, types=types)

    def param_template(self, name: str, path: str, where: Where) -> None:
        """``{param.<name>}`` of a parameter the rule declares, or ``{param.<table>.<binding>.<field>}``: a
        table parameter, a thing or NPC bound here, a field its rows have."""
        key, _, rest = name.partition(".")
        if key not in where.params:
            known = ", ".join(where.params) or "none"
            self.bad(path, f"{{param.{name}}}: the rule declares no parameter {key!r} (its params: {known})")
            return
        value = where.params[key]
        if not rest:
            if isinstance(value, dict):
                self.bad(path, f"{{param.{name}}} is a table: read a row's field, {{param.{key}.<binding>.<field>}}")
            return
        binding, _, field = rest.partition(".")
        if not isinstance(value, dict):
            self.bad(path, f"{{param.{name}}}: {key!r} is not a table (only a table's rows have fields)")
        elif where.bindings.get(binding) not in ("object", "npc", "any") or not field:
            known = ", ".join(
                f"{{param.{key}.{b}.<field>}}" for b, k in where.bindings.items() if k in ("object", "npc")
            )
            self.bad(path, f"{{param.{name}}}: name a thing or NPC bound here and a field ({known or 'none bound'})")
        elif value and not any(field in row for row in value.values()):
            fields = sorted({f for row in value.values() for f in row})
            self.bad(path, f"{{param.{name}}}: the rows of {key!r} have no field {field!r} ({', '.join(fields)})")

    def types_param(self, types: tuple[str, ...], path: str, where: Where) -> tuple[str, ...]:
        """``types`` with each ``"$param.<name>"`` replaced by what this game sets it to (a list of texts, or
        a table's row names), read once at load."""
        out: list[str] = []
        for i, name in enumerate(types):
            if not name.startswith("$param."):
                out.append(name)
                continue
            key = name[len("$param.") :]
            value = where.params.get(key)
            if key not in where.params:
                known = ", ".join(where.params) or "none"
                self.bad(f"{path}.types[{i}]", f"'$param.{key}': the rule declares no such parameter ({known})")
            elif isinstance(value, dict) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
                out += list(value)
            elif isinstance(value, str):
                out.append(value)
            else:
                self.bad(f"{path}.types[{i}]", f"'$param.{key}' is not a list of names or a table")
        return tuple(out)

    def number_param(self, value: float | str | None, path: str, where: Where, low: float, high: float) -> Any:
        """A number given literally or as ``"$param.<name>"`` (read now, once), within ``[low, high]``."""
        if value is None:
            return None
        if isinstance(value, str):
            key = value[len("$param.") :] if value.startswith("$param.") else None
            if key is None or key not in where.params:
                known = ", ".join(where.params) or "none"
                self.bad(
                    path, f"{value!r}: give a number or '$param.<name>' of a parameter the rule declares ({known})"
                )
                return None
            value = where.params[key]
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.bad(path, f"'$param.{key}' is not a number")
                return None
        if not low <= value <= high:
            self.bad(path, f"must lie between {low:g} and {high:g} (got {value!r})")
            return None
        return float(value)

    def first(self, op: s.First, path: str, where: Where, depth: int) -> Any:
        """The first thing of a kind for which a check holds: ``check``, ``do`` and ``else`` read as a for_each's
        (``$each`` bound; ``else`` runs when there is none, so it sees no ``$each``)."""
        kind = op.first
        types = self.types_param(op.types, path, where)
        if kind in ("carried", "held"):
            if not where.agent:
                self.bad(f"{path}.first", f"{kind} things are an agent's: this rule is not about an agent")
            if op.area != "$here":
                self.bad(f"{path}.area", f"{kind} things are the agent's, not an area's: give no area")
        inner = self._each(
            "npc" if kind == "npc" else "object",
            op.area,
            types,
            "first",
            "a first inside a first, some or for_each",
            path,
            where,
        )
        check = self.condition(op.check, f"{path}.check", inner, depth + 1) if op.check is not None else None
        do = self.effects(op.do, f"{path}.do", inner, depth + 1)
        otherwise = self.effects(op.otherwise, f"{path}.else", where, depth + 1)
        if not op.do and not op.otherwise:
            self.bad(path, "give do, else or both (a first that does nothing is a mistake)")
        return dataclasses.replace(op, check=check, do=do, otherwise=otherwise, types=types)

    def pick(self, op: s.Pick, path: str, where: Where, depth: int) -> Any:
        """One NPC, area or object type drawn at random: its chance a probability (or a parameter that is one),
        ``check`` and ``do`` read with ``$each`` bound to it."""
        types = self.types_param(op.types, path, where)
        chance = self.number_param(op.chance, f"{path}.chance", where, 0.0, 1.0)
        p = f"{path}.pick"
        if op.pick != "npc" and (op.hostile is not None or op.idle):
            self.bad(p, "hostile and idle narrow a pick of NPCs")
        if op.pick != "area" and op.unwatched:
            self.bad(f"{path}.unwatched", "unwatched narrows a pick of areas")
        if op.pick == "type" and not op.types:
            self.bad(f"{path}.types", "a pick of object types draws one of its types: name at least one")
        if op.pick != "npc" and op.area != "$here":
            self.bad(f"{path}.area", f"a pick of {op.pick}s draws from the world, not from an area")
        if op.pick == "area" and types:
            self.bad(f"{path}.types", "types narrow a pick of NPCs or object types, not of areas")
        outer = where
        if where.in_pick:  # one pick of another kind inside a pick (a type in an area), no deeper
            if where.in_pick in (op.pick, "two"):
                self.bad(p, "a pick inside a pick draws one of another kind, one deep (a type inside an area)")
                return op
            bindings = {k: v for k, v in where.bindings.items() if k != "each"}  # the inner $each is its own
            outer = dataclasses.replace(where, in_each=False, bindings=bindings)
        kind = {"npc": "npc", "area": "area", "type": "object"}[op.pick]
        inner = self._each(kind, op.area, types, "pick", "a pick inside a first, some or for_each", path, outer)
        inner = dataclasses.replace(inner, in_pick="two" if where.in_pick else op.pick)
        check = self.condition(op.check, f"{path}.check", inner, depth + 1) if op.check is not None else None
        do = self.effects(op.do, f"{path}.do", inner, depth + 1)
        return dataclasses.replace(op, do=do, types=types, chance=chance, check=check)

    def dispel(self, op: s.Dispel, path: str, where: Where, depth: int) -> Any:
        """A step rule of this file that keeps phantoms, an area by reference or name; ``do`` read with ``$each``
        bound to the type of each pile taken (no for_each, some or dispel inside: one pass over the piles),
        ``else`` as the dispel itself is."""
        if op.dispel not in self.phantom_rules:
            known = ", ".join(self.phantom_rules) or "none in this file"
            self.bad(f"{path}.dispel", f"{op.dispel!r} is no step rule of this file that declares phantoms ({known})")
        inner = self._each("object", op.area, (), "dispel", "a dispel inside a first, some or for_each", path, where)
        do = self.effects(op.do, f"{path}.do", inner, depth + 1)
        otherwise = self.effects(op.otherwise, f"{path}.else", where, depth + 1)
        return dataclasses.replace(op, do=do, otherwise=otherwise)

    def npc_strikes(self, op: s.NpcStrikes, path: str, where: Where, depth: int) -> Any:
        """An NPC by reference strikes the bound agent; ``then`` sees ``$damage`` (an amount)."""
        self.needs_agent(f"{path}.npc_strikes", where)
        self.ref(op.npc_strikes, "npc", f"{path}.npc_strikes", where)
        times = self.number_param(op.times, f"{path}.times", where, 0.0, 10.0)
        if "damage" in where.bindings:
            self.bad(f"{path}.npc_strikes", "a slot named 'damage' hides the damage dealt; rename it")
        inner = dataclasses.replace(where, bindings={**where.bindings, "damage": "amount"})
        then = self.effects(op.then, f"{path}.then", inner, depth + 1)
        return dataclasses.replace(op, times=times if times is not None else 1.0, then=then)

    def _each(
        self, kind: str, area: str, types: tuple[str, ...], word: str, nested: str, path: str, where: Where
    ) -> Where:
        """What ``for_each`` and ``some`` check alike; the context their body is read in (``$each`` bound)."""
        p = f"{path}.{word}"
        if where.in_each:
            self.bad(p, f"{nested} could multiply without end; use one")
        if "each" in where.bindings:
            self.bad(p, f"a slot named 'each' hides what a {word} is about; rename it")
        self.ref(area, "area", f"{path}.area", where)
        table = self.world.npcs if kind == "npc" else self.world.objects
        for i, name in enumerate(types):
            if name.startswith("$param."):
                continue  # a parameter that names nothing (types_param said so)
            if name not in table:
                self.bad(f"{path}.types[{i}]", f"unknown {'NPC type' if kind == 'npc' else 'object'} {name!r}")
        return dataclasses.replace(where, bindings={**where.bindings, "each": kind}, in_each=True)

    # ------------------------------------------------------------------ moving toward the living
    def move_toward(self, op: s.MoveToward, path: str, where: Where, depth: int) -> Any:
        """The NPC by reference, a bounded reach, known areas to avoid; ``blocked`` / ``stopped`` / ``moved``
        checked with ``$next`` bound (an area), parsed like an ``if``'s."""
        self.ref(op.move_toward, "npc", f"{path}.move_toward", where)
        if not 1 <= op.range <= MAX_RANGE:
            self.bad(f"{path}.range", f"must lie between 1 and {MAX_RANGE} (ways an NPC looks ahead)")
        for i, a in enumerate(op.avoid):
            if a not in self.world.areas:
                self.bad(f"{path}.avoid[{i}]", f"unknown area {a!r}")
        if "next" in where.bindings:
            self.bad(f"{path}.move_toward", "a slot named 'next' hides the area a move_toward heads for; rename it")
        inner = dataclasses.replace(where, bindings={**where.bindings, "next": "area"})
        blocked = self.condition(op.blocked, f"{path}.blocked", inner, depth + 1) if op.blocked is not None else None
        if op.stopped and op.blocked is None:
            self.bad(f"{path}.stopped", "runs when blocked holds: give blocked")
        stopped = self.effects(op.stopped, f"{path}.stopped", inner, depth + 1)
        moved = self.effects(op.moved, f"{path}.moved", inner, depth + 1)
        return dataclasses.replace(op, blocked=blocked, stopped=stopped, moved=moved)

    # ------------------------------------------------------------------ names, references, templates
    def name(self, value: str, path: str) -> None:
        if not (_NAME.match(value) and len(value) <= MAX_NAME):
            self.bad(path, f"{value!r:.70} is not a name (lower-case letters, digits, underscores; at most {MAX_NAME})")

    def own_event(self, kind: str, path: str) -> None:
        if kind in RESERVED_EVENTS:
            self.bad(path, f"{kind!r} is the engine's own event (rewards count it); name the rule's event otherwise")

    def count(self, n: int, path: str) -> None:
        if not 1 <= n <= MAX_CAP:
            self.bad(path, f"must lie between 1 and {MAX_CAP}")

    # ------------------------------------------------------------------ counts read from the rule's context
    def amount(self, n: int | str, path: str, where: Where) -> None:
        """A count: a number (1..MAX_CAP) or a reference to one (``$event.amount``, ``$removed``, an amount
        slot); a reference's value is clamped to 0..MAX_CAP when it is read."""
        if isinstance(n, str):
            if not n.startswith("$"):
                self.bad(path, f"expected a number or a $reference to one, got {n!r:.60}")
            else:
                self.ref(n, "amount", path, where)
        else:
            self.count(n, path)

    def hours(self, pair: tuple[int, ...], path: str) -> None:
        if len(pair) != 2 or not all(0 <= h <= 24 for h in pair) or pair[0] == pair[1]:
            self.bad(path, f"expected [from, to], two different hours from 0 to 24, got {list(pair)}")

    def needs_agent(self, path: str, where: Where) -> None:
        if not where.agent:
            self.bad(path, "this rule is not about an agent (its scope is areas, NPCs or objects)")

    def var(self, name: str, kind: str, path: str, where: Where, of: str | None = None, of_path: str = "") -> None:
        var = self.world.vars.get(name)
        if var is None:
            known = ", ".join(self.world.vars) or "none"
            self.bad(path, f"unknown variable {name!r}; declare it in vars (declared: {known})")
        elif var.kind != kind:
            self.bad(path, f"{name!r} is a {var.kind}, not a {kind}")
        elif var.scope == "agent" and not where.agent:
            self.bad(path, f"{name!r} is kept per agent, and this rule is not about an agent")
        else:
            self.of(var, of, of_path or path, where)

    # ------------------------------------------------------------------ per-object and per-exit variables
    def of(self, var: s.Var, of: str | None, path: str, where: Where) -> None:
        """``of`` says whose value of a per-object / per-exit variable is meant, and only there."""
        if var.scope not in ("object", "exit", "held"):
            if of is not None:
                self.bad(
                    path,
                    f"{var.name!r} is kept per {var.scope}: "
                    "'of' is for per-object and per-exit variables, and per-held ones",
                )
            return
        if var.scope == "held" and not where.agent:
            self.bad(path, f"{var.name!r} is kept per agent and held thing, and this rule is not about an agent")
            return
        what = "area" if var.scope == "exit" else "object"
        if of is None:
            hint = "$<object slot>, $object" if what == "object" else "the area on the other side: $<slot>, a name"
            self.bad(path, f"{var.name!r} is kept per {var.scope}: say whose with of ({hint})")
        elif what == "object" and not of.startswith("$"):
            self.bad(
                path, f"{of!r}: a per-object variable is about one named thing: give a reference ($<slot>, $object)"
            )
        else:
            self.ref(of, what, path, where)

    def ref(self, value: str, kind: str, path: str, where: Where) -> None:
        """A literal name of ``kind`` (object, npc_type, area) or a ``$reference`` bound here."""
        if value.startswith("$"):
            name = value[1:]
            if name.startswith("event."):
                if not where.event:
                    self.bad(path, f"{value!r}: this rule has no triggering event")
                return
            if name.endswith(".stance") and where.bindings.get(name[:-7]) in ("npc", "any"):
                return  # an enemy's next stance (None for a peaceful one): an event datum keeps it so
            bound = {"here": "area", "removed": "amount", "spawned": "npc"}.get(name) or where.bindings.get(name)
            if bound is None:
                known = ", ".join(f"${b}" for b in ("here", *where.bindings))
                self.bad(path, f"{value!r} names nothing this rule is about (it may use {known})")
            elif kind not in ("any", bound + "_type") and bound not in ("any", kind):
                self.bad(path, f"{value!r} is a {bound}, not a {kind.replace('_', ' ')}")
            return
        w = self.world
        table = {"object": w.objects, "npc_type": w.npcs, "area": w.areas}.get(kind)
        if kind == "npc":
            self.bad(path, f"{value!r}: name an NPC by reference ($npc or an npc slot), not by handle")
        elif table is not None and value not in table:
            what = {"npc_type": "NPC type"}.get(kind, kind)
            close = schema._closest(value, table)
            hint = f" (did you mean {close!r}?)" if close else ""
            self.bad(path, f"unknown {what} {value!r}{hint}")

    def value(self, text: str, path: str, where: Where) -> None:
        """A value given as a ``$reference`` or a template."""
        if text.startswith("$"):
            self.ref(text, "any", path, where)
        else:
            self.template(text, path, where)

    def template(self, text: str, path: str, where: Where) -> None:
        for name in _TEMPLATE.findall(text):
            if name in ("here", "step", "stations", "removed", "spawned") or name in where.bindings:
                continue
            if name in ("received", "salvaged") and not where.step:
                continue  # a verb's: where its last produce put things, what its last salvage made
            if name.endswith(".type") and where.bindings.get(name[:-5]) in ("object", "npc", "any"):
                continue
            if name.startswith("param."):
                self.param_template(name[len("param.") :], path, where)
                continue
            if name.startswith("wield."):
                if not where.wield:
                    self.bad(path, f"{{{name}}} reads the rule's wield, and this rule has none")
                elif where.bindings.get(name[6:]) != "object":
                    self.bad(path, f"{{{name}}}: name a held thing the rule is about ({{wield.object}})")
                continue
            if name.endswith(".says") and where.bindings.get(name[:-5]) in ("npc", "any"):
                continue  # the line the NPC's kind says this step (empty when it has none)
            base, _, attr = name.rpartition(".")
            if attr in ("stance", "coins") and where.bindings.get(base) in ("npc", "any"):
                continue  # an enemy's next stance (empty for a peaceful one), the coins an NPC carries
            if attr == "npc_kinds" and (base == "here" or where.bindings.get(base) in ("area", "any")):
                continue  # the NPCs in an area by kind: "2 glass_stalker, 1 salt_trader"
            if name == "currency":
                continue  # the game's money ("coins" when it has none)
            if name.endswith(".npcs") and (name == "here.npcs" or where.bindings.get(name[:-5]) in ("area", "any")):
                continue  # the NPCs in an area: "a, b" in a text, a list as an event datum of its own
            if name == "notes" or (name.startswith("notes.") and _notes_template(name, self.note_lists)):
                continue  # the parts this firing's notes took (or a named list's), joined with "; ", ", "...
            if name.startswith("event.") and where.event:
                continue
            if name.startswith("tally."):
                self.var(name[6:], "tally", path, where)
                continue
            if name.startswith("var."):
                base, _, of = name[4:].partition(".")
                var = self.world.vars.get(base)
                if var is None or var.kind != "counter":
                    self.bad(path, f"{{{name}}}: no counter variable {base!r} is declared")
                elif var.scope == "agent" and not where.agent:
                    self.bad(path, f"{{{name}}} is kept per agent, and this rule is not about an agent")
                elif var.scope in ("object", "exit", "held") and not of:
                    self.bad(path, f"{{{name}}}: {base!r} is kept per {var.scope}: write {{var.{base}.<slot>}}")
                elif of:
                    self.of(var, f"${of}", path, where)
                continue
            if name == "agent.foe" and where.agent:
                continue  # the enemy fighting the agent (empty when none)
            if name.startswith("carried.") and where.agent:
                self.ref(name[8:], "object", path, where)  # units of an object type the agent carries
                continue
            known = ", ".join(f"{{{b}}}" for b in ("here", "step", *where.bindings))
            extra = ", {agent.foe}, {carried.<object>}" if where.agent else ""
            self.bad(path, f"{{{name}}} names nothing this rule knows (it may use {known}, {{var.<counter>}}{extra})")


#: How ``{notes}`` may be joined (``{notes.<join>}``), which a named list may not be called.
_NOTE_JOINS = ("comma", "space", "and")


def _notes_template(name: str, lists: set[str]) -> bool:
    """``{notes.<join>}``, ``{notes.<list>}`` or ``{notes.<list>.<join>}`` of a list the rule's notes write."""
    parts = name.split(".")[1:]
    if len(parts) == 1:
        return parts[0] in _NOTE_JOINS or parts[0] in lists
    return len(parts) == 2 and parts[0] in lists and parts[1] in _NOTE_JOINS


def _note_lists(raws: Any) -> set[str]:
    """The named lists the raw effects (and those nested in them) note into: read before they are checked."""
    out: set[str] = set()
    if isinstance(raws, dict):
        if "note" in raws and isinstance(raws.get("list"), str):
            out.add(raws["list"])
        for v in raws.values():
            out |= _note_lists(v)
    elif isinstance(raws, list | tuple):
        for v in raws:
            out |= _note_lists(v)
    return out


# ============================================================================ the whole file
@dataclass
class Checked:
    """A rule file after its checks: the spec, each rule's parsed conditions and effects, what to check later."""

    spec: s.RulesSpec
    verbs: list[tuple[s.VerbSpec, tuple[Any, ...], tuple[Any, ...]]]  # (spec, requires' checks, effects)
    steps: list[tuple[s.StepSpec, Any, Any, tuple[Any, ...]]]  # (spec, becomes, when, effects)
    predicates: list[tuple[s.PredicateSpec, Any]]
    quest_conditions: list[tuple[Any, str]]
    hooks: list[tuple[s.HookSpec, tuple[Any, ...], tuple[Any, ...]]] = field(default_factory=list)
    #: Step rule index -> its checked ``at_start`` effects (only the rules that have some).
    starts: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    #: Step rule index -> its checked ``let_go`` effects (held rules that have some).
    let_gos: dict[int, tuple[Any, ...]] = field(default_factory=dict)


def check_rules(raw: Any, world_spec: WorldSpec, file: str = "rules.json", known_steps: Iterable[str] = ()) -> Checked:
    """Read and check a rule file against its world; raise :class:`~odyssey_env.schema.FormatError` listing
    every problem (file and field), or return the checked file."""
    rules = schema.load(s.RulesSpec, raw, file=file, limits=LIMITS)
    objects = {o.name: o for o in world_spec.objects}
    world = World(
        objects=objects,
        npcs={n.name: n for n in world_spec.npcs},
        areas={a.name for p in world_spec.places for a in p.areas},
        places={p.name for p in world_spec.places},
    )
    c = Checker(file, world)
    if rules.format != s.FORMAT:
        c.bad("format", f"unsupported rule format {rules.format}; this engine reads format {s.FORMAT}")
    for group in ("vars", "verbs", "step_rules", "predicates", "hooks"):
        if len(getattr(rules, group)) > MAX_RULES:
            c.bad(group, f"at most {MAX_RULES} are allowed")
    for i, var in enumerate(rules.vars):
        p = f"vars[{i}]"
        c.name(var.name, f"{p}.name")
        if var.name in world.vars:
            c.bad(f"{p}.name", f"variable {var.name!r} is declared twice")
        limit = MAX_SET if var.kind in ("set", "tally") else MAX_STAT
        if var.kind == "flag" and var.max != 1:
            c.bad(f"{p}.max", "a flag has no max")
        elif not 1 <= var.max <= limit:
            c.bad(f"{p}.max", f"must lie between 1 and {limit}")
        if var.initial and (var.kind != "counter" or not 0 <= var.initial <= var.max):
            c.bad(f"{p}.initial", "only a counter has an initial value, between 0 and its max")
        if var.kind == "tally" and var.scope in ("object", "exit", "held"):
            c.bad(f"{p}.scope", "a tally is kept globally, per agent or per area")
        if var.lasts is not None:
            if var.kind != "set":
                c.bad(f"{p}.lasts", "only a set's values last a while (a flag or a counter stays as set)")
            elif var.scope in ("object", "exit", "held"):
                c.bad(f"{p}.lasts", "a lasting set is kept globally, per agent or per area")
            elif not 1 <= var.lasts <= MAX_DELAY:
                c.bad(f"{p}.lasts", f"must lie between 1 and {MAX_DELAY} steps")
        world.vars[var.name] = var

    c.phantom_rules = tuple(r.name for r in rules.step_rules if r.phantoms is not None)
    c.modify_rules = tuple(r.name for r in rules.step_rules if r.modify is not None)
    verbs = []
    seen_verbs: set[str] = set()
    for i, verb in enumerate(rules.verbs):
        p = f"verbs[{i}]"
        params = _rule_params(c, verb.verb, verb.params, world_spec, p)
        if verb.params or any(t.startswith("$param.") for slot in verb.slots for t in slot.types):
            resolved = Where(bindings={}, agent=True, params=params)  # this game's values, read now, once
            verb = dataclasses.replace(
                verb,
                params=params,
                slots=tuple(
                    dataclasses.replace(slot, types=c.types_param(slot.types, f"{p}.slots[{j}]", resolved))
                    for j, slot in enumerate(verb.slots)
                ),
            )
        if not _VERB.match(verb.verb) or len(verb.verb) > MAX_NAME:
            c.bad(f"{p}.verb", f"{verb.verb!r:.70} is not a verb (one or two lower-case words)")
        if verb.verb == "wait":
            c.bad(f"{p}.verb", "'wait' is the engine's own: an invalid command passes as a wait")
        if verb.verb in seen_verbs:
            c.bad(f"{p}.verb", f"verb {verb.verb!r} is declared twice")
        seen_verbs.add(verb.verb)
        if verb.event:
            c.name(verb.event, f"{p}.event")
        c.own_event(verb.event or verb.verb.replace(" ", "_"), f"{p}.event")
        if not verb.records_event:
            if verb.event:
                c.bad(f"{p}.event", "names the verb's own event, and records_event false drops it")
            if not any(_emits(verb.effects)):
                c.bad(f"{p}.records_event", "false leaves the verb recording nothing: add an emit effect")
        if len(verb.slots) > MAX_SLOTS:
            c.bad(f"{p}.slots", f"a verb takes at most {MAX_SLOTS} slots")
        bindings: dict[str, str] = {}
        for j, slot in enumerate(verb.slots):
            sp = f"{p}.slots[{j}]"
            c.name(slot.name, f"{sp}.name")
            if slot.name in bindings or slot.name in _TAKEN:
                c.bad(f"{sp}.name", f"slot name {slot.name!r} is taken")
            kind = _KIND_OF_DOMAIN[slot.domain]
            bindings[slot.name] = kind
            _check_slot(c, slot, kind, sp)
        where = Where(bindings=bindings, agent=True, params=params)
        c.note_lists = _note_lists(verb.effects)
        checks = []
        for j, req in enumerate(verb.requires):
            checks.append(c.condition(req.check, f"{p}.requires[{j}].check", where))
            c.template(req.refuse, f"{p}.requires[{j}].refuse", where)
        for j, slot in enumerate(verb.slots):
            if slot.refuse:
                c.template(slot.refuse, f"{p}.slots[{j}].refuse", where)
        effects = c.effects(verb.effects, f"{p}.effects", where)
        _check_facts(c, verb.facts, f"{p}.facts")
        verbs.append((verb, tuple(checks), effects))

    steps = []
    starts: dict[int, tuple[Any, ...]] = {}
    let_gos: dict[int, tuple[Any, ...]] = {}
    names = set(known_steps) | {r.name for r in rules.step_rules}
    seen_steps: set[str] = set()
    for i, rule in enumerate(rules.step_rules):
        p = f"step_rules[{i}]"
        c.name(rule.name, f"{p}.name")
        if rule.name in seen_steps:
            c.bad(f"{p}.name", f"step rule {rule.name!r} is declared twice")
        seen_steps.add(rule.name)
        if not (rule.after or rule.before):
            c.bad(p, "say when it runs: after and/or before name the step rules it follows or precedes")
        for fld in ("after", "before"):
            for j, other in enumerate(getattr(rule, fld)):
                if other not in names:
                    close = schema._closest(other, names)
                    hint = f" (did you mean {close!r}?)" if close else ""
                    c.bad(f"{p}.{fld}[{j}]", f"unknown step rule {other!r}{hint}")
        object_scope = rule.scope in ("object", "recipe", "held", "instance")
        kind_table = world.npcs if rule.scope == "npc" else objects if object_scope else None
        if rule.types and kind_table is None:
            c.bad(f"{p}.types", f"types narrow an npc or object scope, not {rule.scope!r}")
        for j, kind in enumerate(rule.types):
            if kind_table is not None and kind not in kind_table:
                c.bad(f"{p}.types[{j}]", f"unknown {'NPC type' if rule.scope == 'npc' else 'object'} {kind!r}")
            elif rule.scope == "recipe" and objects[kind].recipe is None:
                c.bad(f"{p}.types[{j}]", f"{kind!r} has no recipe: a recipe scope names craftable objects")
            elif rule.scope == "instance" and not objects[kind].instanced:
                c.bad(f"{p}.types[{j}]", f"{kind!r} is not individually named: an instance scope names such things")
        if rule.scope == "instance" and not rule.types:
            c.bad(f"{p}.types", "an instance scope visits the named things of its types: name at least one")
        if rule.modify is not None:
            mp = f"{p}.modify"
            if rule.scope != "npc":
                c.bad(mp, "modify holds an NPC's stat: the rule's scope must be 'npc'")
            if rule.when is None:
                c.bad(mp, "say while when it holds: a modify needs a when")
            if t_given(rule.trigger):
                c.bad(mp, "a modify is a state asked every step: give it no trigger")
            if not 0 < rule.modify.times <= 10:
                c.bad(f"{mp}.times", "must lie above 0 and at most 10")
            if rule.modify.stat not in ("attack", "defense"):
                c.bad(f"{mp}.stat", "a modify holds an NPC's attack or defense (its health is the fight's)")
        if rule.wield is not None:
            wp = f"{p}.wield"
            if rule.scope != "held":
                c.bad(wp, "wield computes an agent's attack from what it holds: the rule's scope must be 'held'")
            if rule.modify is not None:
                c.bad(wp, "give a modify or a wield, not both")
            counter = world.vars.get(rule.wield.counter)
            if counter is None or counter.kind != "counter" or counter.scope != "held":
                c.bad(f"{wp}.counter", f"{rule.wield.counter!r}: name a counter variable declared with scope 'held'")
            if not 0 <= rule.wield.less <= MAX_STAT:
                c.bad(f"{wp}.less", f"must lie between 0 and {MAX_STAT}")
            if not 0 <= rule.wield.floor <= 1:
                c.bad(f"{wp}.floor", "a share of the attack: between 0 and 1")
        if rule.tutorial and rule.scope not in ("agent", "recipe", "held"):
            c.bad(f"{p}.tutorial", "only a rule about agents (scope agent, recipe or held) may reach into the tutorial")
        for j, a in enumerate(rule.areas):
            if a not in world.areas:
                c.bad(f"{p}.areas[{j}]", f"unknown area {a!r}")
        t = rule.trigger
        tp = f"{p}.trigger"
        params = _rule_params(c, rule.name, rule.params, world_spec, p)
        if isinstance(t.every, str):  # "$param.<name>": this game's value, read now, once
            n = c.number_param(t.every, f"{tp}.every", Where(bindings={}, agent=False, params=params), 1, MAX_PERIOD)
            t = dataclasses.replace(t, every=int(n) if n is not None and n == int(n) else None)
            if n is not None and n != int(n):
                c.bad(f"{tp}.every", "a whole number of steps")
            rule = dataclasses.replace(rule, trigger=t)
        every = t.every if isinstance(t.every, int) else None  # a $param one was resolved above
        if every is not None and not 1 <= every <= MAX_PERIOD:
            c.bad(f"{tp}.every", f"must lie between 1 and {MAX_PERIOD}")
        if t.offset and (every is None or not 0 <= t.offset < every):
            c.bad(f"{tp}.offset", "needs every, and lies in 0..every-1")
        if t.hours is not None:
            c.hours(t.hours, f"{tp}.hours")
        if t.chance is not None and not 0 <= t.chance <= 1:
            c.bad(f"{tp}.chance", "must be a probability between 0 and 1")
        if (t.event is not None or t.enter is not None) and rule.scope != "agent":
            c.bad(tp, "event and enter triggers run for the agent the event is about: scope must be 'agent'")
        if t.event is not None and t.enter is not None:
            c.bad(tp, "give an event or enter, not both")
        if t.match and t.event is None:
            c.bad(f"{tp}.match", "match narrows an event trigger")
        for j, kind in enumerate((t.event,) if isinstance(t.event, str) else t.event or ()):
            c.name(kind, f"{tp}.event" if isinstance(t.event, str) else f"{tp}.event[{j}]")
        if t.event is not None and not t.event:
            c.bad(f"{tp}.event", "name at least one event kind")
        for j, a in enumerate(t.enter or ()):
            if a not in world.areas:
                c.bad(f"{tp}.enter[{j}]", f"unknown area {a!r}")
        bindings = {
            "agent": {},
            "area": {},
            "npc": {"npc": "npc"},
            "object": {"object": "object"},
            "held": {"object": "object"},
            "instance": {"object": "object"},
            "world": {},
        }.get(rule.scope, {"recipe": "object"})
        about_agents = rule.scope in ("agent", "recipe", "held")
        if rule.phantoms is not None:
            rule = _check_phantoms(c, rule, f"{p}.phantoms", params)
        where = Where(
            bindings=dict(bindings),
            agent=about_agents,
            event=t.event is not None,
            step=True,
            params=params,
            wield=rule.wield is not None,
            phantoms=rule.phantoms is not None,
        )
        c.note_lists = _note_lists((rule.effects, rule.at_start, rule.let_go))
        becomes = c.condition(t.becomes, f"{tp}.becomes", where) if t.becomes is not None else None
        when = c.condition(rule.when, f"{p}.when", where) if rule.when is not None else None
        effects = c.effects(rule.effects, f"{p}.effects", where)
        if rule.at_start:
            if t.event is not None or t.enter is not None or rule.modify is not None:
                c.bad(f"{p}.at_start", "runs for the scope's items at the start: not with an event, enter or modify")
            starts[i] = c.effects(rule.at_start, f"{p}.at_start", where)
        if rule.let_go:
            if rule.scope != "held":
                c.bad(f"{p}.let_go", "runs for what left an agent's hands: the rule's scope must be 'held'")
            elif not any(v.scope == "held" for v in world.vars.values()):
                c.bad(f"{p}.let_go", "no variable is kept per held thing: there is nothing to let go of")
            let_gos[i] = c.effects(rule.let_go, f"{p}.let_go", where)
        if rule.veil is not None:  # asked as each agent, where it stands, whatever the rule's scope
            seen_as = Where(bindings={}, agent=True, step=True, params=params)
            veil_when = c.condition(rule.veil.when, f"{p}.veil.when", seen_as)
            c.template(rule.veil.say, f"{p}.veil.say", seen_as)
            if not rule.veil.say.strip():
                c.bad(f"{p}.veil.say", "say why the agent sees nothing (it is pitch dark)")
            rule = dataclasses.replace(rule, veil=dataclasses.replace(rule.veil, when=veil_when))
        _check_facts(c, rule.facts, f"{p}.facts")
        rule = dataclasses.replace(rule, params=params)  # this game's values, which {param.<name>} reads
        steps.append((rule, becomes, when, effects))

    predicates = []
    for i, pred in enumerate(rules.predicates):
        p = f"predicates[{i}]"
        c.name(pred.name, f"{p}.name")
        for j, param in enumerate(pred.params):
            c.name(param, f"{p}.params[{j}]")
        where = Where(bindings=dict.fromkeys(pred.params, "any"), agent=True)
        predicates.append((pred, c.condition(pred.check, f"{p}.check", where)))
    hooks = _check_hooks(c, rules.hooks, seen_verbs, {rule.name: dict(rule.params) for rule, *_ in steps})
    if c.problems:
        raise schema.FormatError(c.problems)
    return Checked(rules, verbs, steps, predicates, c.quest_conditions, hooks, starts, let_gos)


#: What a step rule's parameter may be: its default's JSON kind (a list is of texts).
_PARAM_KINDS: tuple[type, ...] = (bool, int, float, str, list)


def _param_kind(value: Any) -> type | None:
    if isinstance(value, list | tuple):
        return list if all(isinstance(v, str) for v in value) and len(value) <= MAX_SET else None
    if isinstance(value, dict):  # a table: named rows, each an object of numbers, flags and texts
        rows = value.values()
        ok = len(value) <= MAX_SET and all(isinstance(k, str) for k in value)
        scalar = (bool, int, float, str)
        ok = ok and all(isinstance(r, dict) and all(type(v) in scalar for v in r.values()) for r in rows)
        return dict if ok else None
    return next((k for k in _PARAM_KINDS if type(value) is k), None)


def _table_problem(value: dict[str, Any], default: dict[str, Any]) -> str | None:
    """Why a table given in world.json does not fit its default's rows (each row the fields of the default's
    first row, each of that field's kind); None when it fits (an empty default takes any rows)."""
    if not default:
        return None
    shape = next(iter(default.values()))
    for name, row in value.items():
        if set(row) != set(shape):
            return f"row {name!r} has the fields {sorted(row)}; the default's rows have {sorted(shape)}"
        for k, v in row.items():
            want = shape[k]
            if type(v) is not type(want) and not (isinstance(want, float) and type(v) is int):
                return f"row {name!r}: {k!r} must be of the kind of the default's ({want!r})"
    return None


def _rule_params(c: Checker, rule_name: str, declared: dict[str, Any], world_spec: WorldSpec, p: str) -> dict[str, Any]:
    """A step rule's or a verb's parameters as this game sets them: its ``params`` defaults, each overridden by
    ``world.json``'s ``game.params.<rule>`` (a value of the default's kind; an unknown name is refused there)."""
    out: dict[str, Any] = {}
    for name, default in declared.items():
        c.name(name, f"{p}.params.{name}")
        if _param_kind(default) is None:
            c.bad(
                f"{p}.params.{name}",
                f"a number, true / false, a text, a list of at most {MAX_SET} texts or a table (named rows, "
                "each an object of numbers, flags and texts)",
            )
            continue
        if isinstance(default, dict):
            for row in default.values():
                for k in row:
                    c.name(k, f"{p}.params.{name}.{next(n for n, r in default.items() if r is row)}.{k}")
            shapes = {frozenset(r) for r in default.values()}
            if len(shapes) > 1:
                c.bad(f"{p}.params.{name}", "a table's rows have the same fields")
        out[name] = list(default) if isinstance(default, list | tuple) else default
    given = world_spec.game.params.get(rule_name)
    if not declared or given is None:
        return out
    for name, value in given.items():
        where = f"game.params.{rule_name}.{name}"
        if name not in out:
            known = ", ".join(out)
            message = f"rules.json's {rule_name!r} has no parameter {name!r} ({known})"
            c.problems.append(Problem("world.json", where, message))
        elif _param_kind(value) is not _param_kind(out[name]) and not (
            isinstance(out[name], float) and _param_kind(value) is int
        ):
            c.problems.append(Problem("world.json", where, f"must be of the kind of its default ({out[name]!r})"))
        elif isinstance(value, dict) and (why := _table_problem(value, out[name])) is not None:
            c.problems.append(Problem("world.json", where, why))
        else:
            out[name] = list(value) if isinstance(value, list | tuple) else value
    return out


def _check_hooks(
    c: Checker,
    hooks: tuple[s.HookSpec, ...],
    own_verbs: set[str],
    step_params: dict[str, dict[str, Any]] | None = None,
) -> list[tuple[s.HookSpec, tuple[Any, ...], tuple[Any, ...]]]:
    """Hooks attach to the engine's verbs of :data:`~odyssey_env.rulelang.spec.HOOKS`, once each, never to a
    verb the file itself declares (that verb says all it does already). A requirement's ``params_of`` names a
    step rule of the file (``step_params``: each one's parameters as this game sets them) whose ``$param.<name>``
    its check reads, read now, once, as in that rule."""
    step_params = step_params or {}
    out = []
    seen: set[str] = set()
    for i, hook in enumerate(hooks):
        p = f"hooks[{i}]"
        bound = s.HOOKS.get(hook.verb)
        if bound is None:
            c.bad(f"{p}.verb", f"a hook attaches to one of the engine's verbs: {', '.join(s.HOOKS)}; got {hook.verb!r}")
            continue
        if hook.verb in seen:
            c.bad(f"{p}.verb", f"verb {hook.verb!r} is hooked twice: put both in one hook")
        if hook.verb in own_verbs:
            c.bad(f"{p}.verb", f"verb {hook.verb!r} is declared in verbs too: say it there")
        seen.add(hook.verb)
        if not hook.requires and not hook.then:
            c.bad(p, "a hook adds requires, then effects or both (an empty hook is a mistake)")
        where = Where(bindings={bound[0]: bound[1]}, agent=True)
        checks = []
        for j, req in enumerate(hook.requires):
            asked = where
            if req.params_of:
                params = step_params.get(req.params_of)
                if params is None:
                    known = ", ".join(step_params) or "none"
                    c.bad(f"{p}.requires[{j}].params_of", f"no step rule {req.params_of!r} in this file ({known})")
                elif not params:
                    c.bad(f"{p}.requires[{j}].params_of", f"step rule {req.params_of!r} declares no params")
                else:
                    asked = dataclasses.replace(where, params=params)
            checks.append(c.condition(req.check, f"{p}.requires[{j}].check", asked))
            c.template(req.refuse, f"{p}.requires[{j}].refuse", where)
        then = c.effects(hook.then, f"{p}.then", where)
        _check_facts(c, hook.facts, f"{p}.facts")
        out.append((hook, tuple(checks), then))
    return out


def _check_phantoms(c: Checker, rule: s.StepSpec, p: str, params: dict[str, Any]) -> s.StepSpec:
    """A rule's ``phantoms``: how long they last (a number or its parameter, read now), their texts (about
    ``{object}`` and ``{here}``), the event kinds' stem; returned with the number in place."""
    ph = rule.phantoms
    assert ph is not None
    lasts = c.number_param(ph.lasts, f"{p}.lasts", Where(bindings={}, agent=False, params=params), 1, MAX_DELAY)
    seen = Where(bindings={"object": "object"}, agent=False, step=True)
    for fld in ("vanish", "fade", "thin"):
        text = getattr(ph, fld)
        c.template(text, f"{p}.{fld}", seen)
        if not text.strip():
            c.bad(f"{p}.{fld}", "say what the agent sees")
    c.name(ph.event, f"{p}.event")
    for suffix in ("formed", "vanished", "faded"):
        c.own_event(f"{ph.event}_{suffix}", f"{p}.event")
    if rule.scope != "world":
        c.bad(p, "phantoms are the world's, kept once a step: the rule's scope must be 'world'")
    whole = int(lasts) if lasts is not None and lasts == int(lasts) else 1
    return dataclasses.replace(rule, phantoms=dataclasses.replace(ph, lasts=whole))


def t_given(trigger: s.Trigger) -> bool:
    """Whether a trigger says anything (an empty one fires every step)."""
    return trigger != s.Trigger()


def _emits(raws: Any) -> Iterable[bool]:
    """Whether each raw effect (or one nested in it) is an emit: read before the effects are checked."""
    for raw in raws if isinstance(raws, list | tuple) else ():
        if isinstance(raw, dict):
            yield "emit" in raw or any(any(_emits(raw.get(k))) for k in ("then", "else", "do"))


def _check_slot(c: Checker, slot: s.Slot, kind: str, path: str) -> None:
    w = c.world
    if slot.domain == "any":
        if not slot.of:
            c.bad(f"{path}.of", "an any slot joins domains: name at least one (area, npc, near...)")
        elif len(set(slot.of)) != len(slot.of):
            c.bad(f"{path}.of", "names a domain twice")
        if slot.types or slot.categories or slot.hostile is not None or slot.locked is not None:
            c.bad(f"{path}.domain", "an any slot is not narrowed: ask what its value is with is_a")
    elif slot.of:
        c.bad(f"{path}.of", "of lists the domains of an any slot")
    if slot.types:
        table = w.npcs if slot.domain == "npc" else w.objects if kind == "object" else None
        if table is None:
            c.bad(f"{path}.types", f"types narrow an object or npc slot, not a {slot.domain} slot")
        else:
            for i, t in enumerate(slot.types):
                if t not in table:
                    c.bad(f"{path}.types[{i}]", f"unknown {'NPC type' if slot.domain == 'npc' else 'object'} {t!r}")
    if slot.categories and kind != "object":
        c.bad(f"{path}.categories", "categories narrow an object slot")
    from odyssey_env.quests.conditions import CATEGORIES

    for i, cat in enumerate(slot.categories):
        if cat not in CATEGORIES:
            c.bad(f"{path}.categories[{i}]", f"unknown category {cat!r}")
    if slot.domain == "type" and not slot.types and not slot.categories:
        c.bad(f"{path}.domain", "a type slot names its object types (types) or categories: it lists every one")
    if slot.hostile is not None and slot.domain != "npc":
        c.bad(f"{path}.hostile", "hostile narrows an npc slot")
    if slot.locked is not None and slot.domain != "exit":
        c.bad(f"{path}.locked", "locked narrows an exit slot")
    if slot.domain == "amount":
        if not 1 <= slot.max <= MAX_AMOUNT_SLOT:
            c.bad(f"{path}.max", f"must lie between 1 and {MAX_AMOUNT_SLOT}")
    elif slot.max != 1:
        c.bad(f"{path}.max", "max bounds an amount slot")
    if slot.implicit and slot.domain not in ("held", "carried", "worn", "ground", "near", "npc"):
        c.bad(
            f"{path}.implicit",
            "an implicit slot picks a thing or an NPC at hand (held, carried, worn, ground, near, npc)",
        )
    if slot.implicit and slot.refuse:
        c.bad(f"{path}.refuse", "an implicit slot is never given, so never refused: say it in a precondition")
    if slot.domain == "text":
        if not slot.example or '"' in slot.example or len(slot.example) > 60:
            c.bad(f"{path}.example", "a text slot lists one example text (1-60 characters, no double quote)")
    elif slot.example:
        c.bad(f"{path}.example", "example belongs to a text slot")


def _check_facts(c: Checker, facts: tuple[s.FactSpec, ...], path: str) -> None:
    for i, f in enumerate(facts):
        if not f.distractors or f.answer in f.distractors:
            c.bad(f"{path}[{i}].distractors", "give wrong answers, none equal to the answer")


def check_rule_quests(game: Any, checked: Checked, file: str = "rules.json") -> list[Problem]:
    """The quest-vocabulary conditions a rule file uses, checked once the game is assembled (they may name
    the game's predicates)."""
    from odyssey_env.quests.conditions import check_condition

    out: list[Problem] = []
    for cond, path in checked.quest_conditions:
        out += check_condition(game, cond, file, path)
    return out
