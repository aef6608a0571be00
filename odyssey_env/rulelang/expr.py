"""Conditions of the rule language, compiled once into Python closures.

Each checked condition (:mod:`odyssey_env.rulelang.spec`) becomes a function ``ctx -> bool``: no JSON is
looked at while playing, which keeps an interpreted rule about as fast as the same rule written in Python.
Besides the test, each condition says what it reads (:func:`reads`, the listing cache's ``depends_on``) and,
when false, what an agent could bring about to make it true (:func:`hint`, the oracle's ``needs``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from odyssey_env.quests import hints
from odyssey_env.rulelang import phantoms as _phantoms
from odyssey_env.rulelang import spec as s
from odyssey_env.rulelang.runtime import Ctx, carried_of, foe, getter, keyer, read_var, type_getter, value_of
from odyssey_env.verbs.common import carried_handles
from odyssey_env.weakcache import IdentityCache
from odyssey_env.world import held_containers, type_of

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.quests.spec import Condition
    from odyssey_env.state import Agent, Area

Test = Callable[[Ctx], bool]


def compile_condition(op: Any, vars: dict[str, s.Var]) -> Test:
    """The test of one checked condition."""
    if isinstance(op, s.AllOf):
        parts = [compile_condition(c, vars) for c in op.all_of]
        if len(parts) == 2:  # the usual pair: no generator to run (a rule asked of every area each step)
            a, b = parts
            return lambda ctx: a(ctx) and b(ctx)
        return lambda ctx: all(p(ctx) for p in parts)
    if isinstance(op, s.AnyOf):
        parts = [compile_condition(c, vars) for c in op.any_of]
        if len(parts) == 2:
            a, b = parts
            return lambda ctx: a(ctx) or b(ctx)
        return lambda ctx: any(p(ctx) for p in parts)
    if isinstance(op, s.NoneOf):
        if len(op.none_of) == 1 and isinstance(op.none_of[0], s.Holds) and not op.none_of[0].holds.startswith("$"):
            return _holds_kind(op.none_of[0].holds, negate=True)  # "holds no torch": one closure
        parts = [compile_condition(c, vars) for c in op.none_of]
        if len(parts) == 1:  # "not c", the usual case: no generator to run
            only = parts[0]
            return lambda ctx: not only(ctx)
        return lambda ctx: not any(p(ctx) for p in parts)
    if isinstance(op, s.Some):
        return _some(op, vars)
    if isinstance(op, s.PhantomsAre):
        where = None if op.phantoms == "*" else getter(op.phantoms)
        low = op.at_least if isinstance(op.at_least, int) else None
        high = op.below if isinstance(op.below, int) else None

        def phantoms_are(ctx: Ctx) -> bool:
            n = _phantoms.count(ctx.engine, None if where is None else where(ctx))
            return (low is None or n >= low) and (high is None or n < high)

        return phantoms_are
    if isinstance(op, s.FitsLevel):
        kind_of, above = type_getter(op.fits_level), op.above

        def fits_level(ctx: Ctx) -> bool:
            t = ctx.engine.game.objects.get(kind_of(ctx))
            area = ctx.engine.state.areas.get(ctx.here)
            return t is not None and area is not None and t.level <= area.level + above

        return fits_level
    if isinstance(op, s.Has):
        obj, n = type_getter(op.has), op.count
        return lambda ctx: carried_of(ctx, obj(ctx)) >= n
    if isinstance(op, s.Holds):
        if not op.holds.startswith("$"):
            return _holds_kind(op.holds)
        obj = type_getter(op.holds)
        return lambda ctx: _holds(ctx, obj(ctx))
    if isinstance(op, s.Wears):
        obj = type_getter(op.wears)
        return lambda ctx: _wears(ctx, obj(ctx))
    if isinstance(op, s.LiesHere):
        if op.lies_here == "*":  # anything at all lies here
            least = op.count
            return lambda ctx: (
                (a := ctx.engine.state.areas.get(ctx.here)) is not None
                and (sum(a.objects.values()) >= least if least > 1 else bool(a.objects))
            )
        obj, n = type_getter(op.lies_here), op.count
        if n == 1:  # "does one lie here": stop at the first (named things are looked through one by one)
            return lambda ctx: lies(ctx, obj(ctx))
        return lambda ctx: lying(ctx, obj(ctx)) >= n
    if isinstance(op, s.OnGround):
        thing = getter(op.on_ground)
        return lambda ctx: _on_ground(ctx, thing(ctx))
    if isinstance(op, s.NpcHere):
        kind, hostile = op.npc_here, op.hostile
        return lambda ctx: _npc_here(ctx, kind, hostile)
    if isinstance(op, s.InArea):
        areas = [getter(a) for a in op.in_area]
        if op.of is not None:  # another area than here (a hook's $to): where the agent would go
            where = getter(op.of)
            return lambda ctx: (w := where(ctx)) is not None and any(w == a(ctx) for a in areas)
        return lambda ctx: any(ctx.here == a(ctx) for a in areas)
    if isinstance(op, s.InPlace):
        places = frozenset(op.in_place)
        return lambda ctx: (a := ctx.engine.state.areas.get(ctx.here)) is not None and a.place in places
    if isinstance(op, s.Hour):
        lo, hi = op.hour
        return lambda ctx: _in_hours(ctx.engine.state.minute, lo, hi)
    if isinstance(op, s.StatIs):
        read = _stat(op.stat) if op.of is None else _object_stat(op.stat, op.of)
        return _between(read, op.at_least, op.below)
    if isinstance(op, s.CounterIs):
        var = vars[op.counter]
        return _between(_var(var, op.of), op.at_least, op.below)
    if isinstance(op, s.Flag):
        return _var(vars[op.flag], op.of)
    if isinstance(op, s.InSet):
        var, value = vars[op.in_set], value_of(op.value, var_reader(vars))
        read = _var(var, op.of)
        if var.lasts is not None:  # value -> the step it is forgotten at; an empty set asks for no value

            def lasting(ctx: Ctx) -> bool:
                held = read(ctx)
                return bool(held) and held.get(value(ctx), 0) > ctx.engine.state.step

            return lasting
        return lambda ctx: value(ctx) in read(ctx)
    if isinstance(op, s.Same):
        for ref, lit in (op.same, op.same[::-1]):  # a binding against a literal: one lookup (pair branches)
            name = ref[1:]
            plain = name not in ("here", "") and "." not in name
            if ref.startswith("$") and plain and not lit.startswith("$") and "{" not in lit:
                return lambda ctx: ctx.b.get(name) == lit
        a, b = (value_of(v, var_reader(vars)) for v in op.same)
        return lambda ctx: a(ctx) == b(ctx)
    if isinstance(op, s.IsType):
        return _is_type(getter(op.is_type), frozenset(op.types), frozenset(op.categories))
    if isinstance(op, s.Hostile):
        who, want = getter(op.is_hostile), op.value

        def is_hostile(ctx: Ctx) -> bool:
            handle = who(ctx)
            npc = ctx.engine.state.npcs.get(handle) if isinstance(handle, str) else None
            return npc is not None and ctx.engine.game.npcs[npc.type].hostile == want

        return is_hostile
    if isinstance(op, s.InCombat):
        want = op.in_combat
        return lambda ctx: (foe(ctx) is not None) == want
    if isinstance(op, s.ExitLocked):
        other = getter(op.exit_locked)
        return lambda ctx: _locked(ctx, other(ctx))
    if isinstance(op, s.Engaged):
        who = getter(op.engaged)

        def engaged(ctx: Ctx) -> bool:
            handle = who(ctx)
            npc = ctx.engine.state.npcs.get(handle) if isinstance(handle, str) else None
            return npc is not None and npc.engaged is not None

        return engaged
    if isinstance(op, s.Noted):
        want, listed = op.noted, op.list
        if listed:
            return lambda ctx: any(n.__class__ is tuple and n[0] == listed for n in ctx.notes) == want
        return lambda ctx: any(n.__class__ is str for n in ctx.notes) == want
    if isinstance(op, s.IsA):
        return _is_a(getter(op.is_a), op.kind)
    if isinstance(op, s.Modified):
        who, by = getter(op.modified), op.by

        def modified(ctx: Ctx) -> bool:
            held = ctx.engine.state.rule_data.get("rulelang", {}).get("modified", {}).get(by)
            return bool(held) and who(ctx) in held

        return modified
    if isinstance(op, s.IsPhantom):
        thing = getter(op.is_phantom)

        def is_phantom(ctx: Ctx) -> bool:
            handle = thing(ctx)
            area = ctx.engine.state.areas.get(ctx.here)
            if not isinstance(handle, str) or area is None or handle not in area.objects:
                return False
            kind = type_of(ctx.engine.state, handle)
            return any(kind in piles.get(ctx.here, ()) for piles in _phantoms.all_piles_read(ctx.engine).values())

        return is_phantom
    if isinstance(op, s.Predicate):
        name = op.predicate
        args = [(k, value_of(v, var_reader(vars))) for k, v in op.args.items()]

        def predicate(ctx: Ctx) -> bool:
            fn = ctx.engine.game.rules.predicates.get(name)
            if fn is None or ctx.agent is None:
                return False
            return bool(fn(ctx.engine, ctx.agent, **{k: read(ctx) for k, read in args}))

        return predicate
    if isinstance(op, s.Quest):
        from odyssey_env.quests.conditions import holds

        cond = cast("Condition", op.quest)  # checks.py put the parsed condition in place of the file's dict
        return lambda ctx: ctx.agent is not None and holds(ctx.engine, ctx.agent, cond)
    if isinstance(op, s.CommonEnemy):
        kind_of = value_of(op.common_enemy, var_reader(vars))
        return lambda ctx: common_enemy(ctx, kind_of(ctx))
    if isinstance(op, s.CanCraft):
        if op.can_craft == "$recipe":  # a recipe scope's binding is the type itself: no handle to look up
            return lambda ctx: can_craft(ctx, ctx.b["recipe"])
        kind_of = type_getter(op.can_craft)
        return lambda ctx: can_craft(ctx, kind_of(ctx))
    raise TypeError(f"rulelang: no test for {type(op).__name__}")  # pragma: no cover - checks cover every kind


# ---------------------------------------------------------------------------- readers shared with effects
def lying(ctx: Ctx, kind: str | None) -> int:
    area = ctx.engine.state.areas.get(ctx.here)
    if area is None or kind is None:
        return 0
    return lying_in(ctx.engine, area, kind)


def lies(ctx: Ctx, kind: str | None) -> bool:
    """Whether at least one of an object type (or the one named thing) lies on the ground here."""
    area = ctx.engine.state.areas.get(ctx.here)
    if area is None or kind is None:
        return False
    t = ctx.engine.game.objects.get(kind)
    if t is None or not t.instanced:
        return area.objects.get(kind, 0) >= 1
    instances = ctx.engine.state.instances
    for h in area.objects:
        inst = instances.get(h)
        if inst is not None and inst.type == kind:
            return True
    return False


def _on_ground(ctx: Ctx, thing: Any) -> bool:
    """``on_ground``: the named thing (or one of an object type) lies on the ground here."""
    area = ctx.engine.state.areas.get(ctx.here)
    return area is not None and isinstance(thing, str) and area.objects.get(thing, 0) >= 1


def lying_in(engine: Engine, area: Area, kind: str) -> int:
    """Units of an object type (or of one named thing) on the ground of ``area``."""
    t = engine.game.objects.get(kind)
    if t is None or not t.instanced:
        return area.objects.get(kind, 0)
    state = engine.state
    return sum(1 for h in area.objects if type_of(state, h) == kind)


# ------------------------------------------------------------------------ NPC kinds (Mirror Salt's resonance_imprint)
def common_enemy(ctx: Ctx, value: Any) -> bool:
    """Whether ``value`` (an NPC's handle or an NPC type) is of a kind of which there are many enemies."""
    if not isinstance(value, str):
        return False
    npc = ctx.engine.state.npcs.get(value)
    t = ctx.engine.game.npcs.get(npc.type if npc is not None else value)
    return t is not None and t.common_enemy


# ---------------------------------------------------------------------------- recipes (Mirror Salt's forge_alert)
def can_craft(ctx: Ctx, kind: str | None) -> bool:
    """Whether the agent carries every ingredient of ``kind``'s recipe and each of its stations lies here
    (what the engine's ``craft`` asks, but for the yield's room in the hands). Asked of every recipe each
    step by a ``recipe`` rule, so the stations, the usual miss, are looked at in a plain loop first."""
    engine = ctx.engine
    t = engine.game.objects.get(kind) if kind is not None else None
    recipe = t.recipe if t is not None else None
    if recipe is None or ctx.agent is None:
        return False
    area = engine.state.areas.get(ctx.here)
    if area is None:
        return False
    lying = area.objects
    for station in recipe.stations:
        if station not in lying:
            return False
    return all(carried_of(ctx, ingredient) >= n for ingredient, n in recipe.needs_once)


def craftable(engine: Engine, agent: Agent, kinds: Iterable[str]) -> list[str]:
    """Those of ``kinds`` that :func:`can_craft` allows the agent where it stands, with everything carried
    counted once (a ``recipe`` rule asks every recipe each step, and the agent seldom has it all), the
    counts those of :func:`~odyssey_env.rulelang.runtime.carried_of`: an instanced type's things, one each,
    another type's units, in the hands and in the containers held or worn."""
    state, game = engine.state, engine.game
    area = state.areas.get(agent.area)
    if area is None:
        return []
    known = _recipe_tables.entries.get(id(game))  # the cache read inline: asked at every step
    table, free = known[1] if known is not None else _recipe_tables(game)
    instances, objects = state.instances, game.objects
    units: dict[str, int] = {}  # per handle
    things: dict[str, int] = {}  # per type: handles of it
    hands = agent.hands
    holdings = [hands]
    for handle in hands:
        inst = instances.get(handle)
        if inst is not None and objects[inst.type].category == "container":
            holdings.append(inst.contents)
    pack = agent.equipment.get("pack")
    if pack is not None:
        holdings.append(instances[pack].contents)
    for holding in holdings:
        for handle, k in holding.items():
            units[handle] = units.get(handle, 0) + k
            inst = instances.get(handle)
            kind = handle if inst is None else inst.type
            things[kind] = things.get(kind, 0) + 1
    # only a recipe that takes something carried (or nothing at all) can be made: the few asked further
    used_in = game.used_in
    possible = set(free)
    for kind in things:
        possible.update(used_in.get(kind, ()))
    lying = area.objects
    out = []
    for kind in kinds:
        if kind not in possible:
            continue
        entry = table.get(kind)
        if entry is None:
            continue
        stations, needs = entry
        for station in stations:
            if station not in lying:
                break
        else:
            for ingredient, n, per_thing in needs:
                if (things if per_thing else units).get(ingredient, 0) < n:
                    break
            else:
                out.append(kind)
    return out


#: Per recipe: its stations, and each ingredient with its units and whether it counts things (an instanced type)
#: rather than units; with the recipes that take nothing.
_RecipeTable = tuple[dict[str, tuple[tuple[str, ...], tuple[tuple[str, int, bool], ...]]], tuple[str, ...]]


def _recipe_table(game: Any) -> _RecipeTable:
    """What :func:`craftable` reads of a game's recipes, made once per game."""
    objects = game.objects
    table = {}
    free = []
    for t in game.recipes:
        recipe = t.recipe
        if recipe is not None:
            needs = tuple((i, n, (o := objects.get(i)) is not None and o.instanced) for i, n in recipe.needs_once)
            table[t.name] = (recipe.stations, needs)
            if all(n <= 0 for _, n, _ in needs):
                free.append(t.name)
    return table, tuple(free)


_recipe_tables: IdentityCache[Any, _RecipeTable] = IdentityCache(_recipe_table)


def missing_ingredient(ctx: Ctx, kind: str | None) -> Condition | None:
    """The first ingredient of ``kind``'s recipe the agent lacks, as "carry this many" (None: it has all)."""
    t = ctx.engine.game.objects.get(kind) if kind is not None else None
    if t is None or t.recipe is None:
        return None
    for i, n in t.recipe.needs().items():
        if carried_of(ctx, i) < n:
            return hints.has(i, n)
    return None


def _holds(ctx: Ctx, kind: str | None) -> bool:
    agent = ctx.agent
    if agent is None:
        return False
    state = ctx.engine.state
    return any(h == kind or type_of(state, h) == kind for h in agent.hands)


def _holds_kind(kind: str, negate: bool = False) -> Test:
    """``holds`` of an object type (or a named thing) written in the file: :func:`_holds` in one loop;
    ``negate``: its ``none_of`` (no agent: true, as ``not holds`` is)."""
    found, missing = not negate, negate

    def holds_kind(ctx: Ctx) -> bool:
        agent = ctx.agent
        if agent is None:
            return missing
        instances = ctx.engine.state.instances
        for h in agent.hands:
            if h == kind:
                return found
            inst = instances.get(h)
            if inst is not None and inst.type == kind:
                return found
        return missing

    return holds_kind


def _wears(ctx: Ctx, kind: str | None) -> bool:
    agent = ctx.agent
    if agent is None:
        return False
    state = ctx.engine.state
    return any(h == kind or type_of(state, h) == kind for h in agent.equipment.values())


def _npc_here(ctx: Ctx, kind: str, hostile: bool | None) -> bool:
    engine = ctx.engine
    area = engine.state.areas.get(ctx.here)
    if area is None:
        return False
    npcs, types = engine.state.npcs, engine.game.npcs
    for h in area.npcs:
        t = npcs[h].type
        if (kind == "*" or t == kind) and (hostile is None or types[t].hostile == hostile):
            return True
    return False


def _is_type(read: Callable[[Ctx], Any], kinds: frozenset[str], cats: frozenset[str]) -> Test:
    def is_type(ctx: Ctx) -> bool:
        value = read(ctx)
        if not isinstance(value, str):
            return False
        engine = ctx.engine
        kind = type_of(engine.state, value)
        t = engine.game.objects.get(kind)
        return t is not None and (not kinds or kind in kinds) and (not cats or t.category in cats)

    return is_type


def _is_a(read: Callable[[Ctx], Any], kind: str) -> Test:
    """``is_a``: what a value names, as an ``any`` slot's listing and a command would find it."""

    def is_a(ctx: Ctx) -> bool:
        value = read(ctx)
        if not isinstance(value, str):
            return False
        state = ctx.engine.state
        area = state.areas.get(ctx.here)
        if area is None:
            return False
        if kind == "here":
            return value == ctx.here
        if kind == "exit":
            return value in area.exits
        if kind == "area":
            return value == ctx.here or value in area.exits
        if kind == "npc":
            return value in area.npcs and value in state.npcs
        agent = ctx.agent  # a thing I carry, wear or see lying here
        if value in area.objects:
            return True
        if agent is None:
            return False
        return value in agent.equipment.values() or value in carried_handles_of(ctx)

    return is_a


def carried_handles_of(ctx: Ctx) -> list[str]:
    """The handles the bound agent carries (hands, held bags, the pack), as a verb's listing reads them."""
    turn = ctx.turn
    if turn is not None:
        return list(carried_handles(turn))
    from odyssey_env.turn import Turn

    assert ctx.agent is not None
    return list(carried_handles(Turn(ctx.engine, ctx.agent, probe=True)))


def _in_hours(minute: int, lo: int, hi: int) -> bool:
    hour = (minute // 60) % 24
    return lo <= hour < hi if lo < hi else hour >= lo or hour < hi


def _locked(ctx: Ctx, other: Any) -> bool:
    area = ctx.engine.state.areas.get(ctx.here)
    way = area.exits.get(other) if area is not None and isinstance(other, str) else None
    return way is not None and way.locked


def _stat(name: str) -> Callable[[Ctx], int]:
    if name == "coins":

        def coins(ctx: Ctx) -> int:
            currency = ctx.engine.game.currency
            return carried_of(ctx, currency) if currency else 0

        return coins
    attr = {"attack": "attack", "defense": "defense"}.get(name, name)
    return lambda ctx: getattr(ctx.agent, attr) if ctx.agent is not None else 0


def _var(var: s.Var, of: str | None = None) -> Callable[[Ctx], Any]:
    name, key = var.name, keyer(var.scope, of)
    default: Any = {"flag": False, "counter": var.initial, "set": (), "tally": None}[var.kind]
    if var.lasts is not None:
        default = {}
    return lambda ctx: read_var(ctx.engine, name, key(ctx), default)


def var_reader(
    vars: dict[str, s.Var], wield: s.Wield | None = None, params: dict[str, Any] | None = None
) -> Callable[[str], Callable[[Ctx], Any]]:
    """Reads a template's ``{var.<name>}`` (``<name>.<binding>`` for a per-object or per-exit variable), in a
    rule with a ``wield`` its ``{wield.<slot>}`` (asked as ``"#wield.<slot>"``: :func:`wield_taken`), and in a
    step rule its ``{param.<name>}`` / ``{param.<table>.<binding>.<field>}`` (``"#param. ..."``:
    :func:`param_text`, over this game's values of the rule's ``params``)."""

    def reader(name: str) -> Callable[[Ctx], Any]:
        if name.startswith("#param."):
            assert params is not None, "checks.py: {param.<name>} only in a step rule with params"
            return param_text(params, name[len("#param.") :])
        if name.startswith("#wield."):
            assert wield is not None, "checks.py: {wield.<slot>} only in a rule with a wield"
            return wield_taken(wield, vars[wield.counter], "$" + name[len("#wield.") :])
        base, _, of = name.partition(".")
        return _var(vars[base], f"${of}" if of else None)

    return reader


def param_text(params: dict[str, Any], name: str) -> Callable[[Ctx], Any]:
    """``{param.<name>}``: a parameter's value as this game sets it (a list joined with ", "); and
    ``{param.<table>.<binding>.<field>}``: the ``field`` of the table's row named by the type of the thing or
    NPC the binding names (or by the binding's value itself), empty where no row is: "turns of
    {param.lights.each.fuel} left" says each light's own fuel."""
    key, _, rest = name.partition(".")
    value = params[key]
    if not rest:
        text = ", ".join(value) if isinstance(value, list | tuple) else value
        return lambda ctx: text
    binding, _, field = rest.partition(".")
    rows: dict[str, dict[str, Any]] = value

    def read(ctx: Ctx) -> Any:
        handle = ctx.b.get(binding)
        if not isinstance(handle, str):
            return ""
        state = ctx.engine.state
        npc = state.npcs.get(handle)
        row = rows.get(npc.type if npc is not None else type_of(state, handle)) or rows.get(handle)
        return row.get(field, "") if row is not None else ""

    return read


def wield_taken(wield: s.Wield, counter: s.Var, of: str) -> Callable[[Ctx], int]:
    """``{wield.<slot>}``: how much less the held thing ``of`` names strikes for under the rule's ``wield`` as its
    counter stands now ("it strikes for 2 less"): ``less`` per unit, never past its ``floor``; 0 for a thing of
    no attack. The same sum :func:`~odyssey_env.rulelang.compiler` 's wield makes, told to the player."""
    read, units = getter(of), _var(counter, of)
    less, floor = wield.less, wield.floor

    def taken(ctx: Ctx) -> int:
        handle = read(ctx)
        kind = type_of(ctx.engine.state, handle) if isinstance(handle, str) and handle else None
        t = ctx.engine.game.objects.get(kind) if kind is not None else None
        attack: int = t.attack if t is not None else 0
        if attack <= 0:
            return 0
        units_now: int = units(ctx)
        return attack - max(attack - less * units_now, math.ceil(attack * floor))

    return taken


def _object_stat(name: str, of: str) -> Callable[[Ctx], int]:
    """``stat`` with ``of``: the attack or defense of the object type ``of`` names (0 for nothing known)."""
    read = getter(of)

    def stat(ctx: Ctx) -> int:
        handle = read(ctx)
        kind = type_of(ctx.engine.state, handle) if isinstance(handle, str) and handle else None
        t = ctx.engine.game.objects.get(kind) if kind is not None else None
        return int(getattr(t, name)) if t is not None else 0

    return stat


def _between(read: Callable[[Ctx], int], lo: int | None, hi: int | None) -> Test:
    if lo is not None and hi is not None:
        return lambda ctx: lo <= read(ctx) < hi
    if lo is not None:
        return lambda ctx: read(ctx) >= lo
    return lambda ctx: read(ctx) < hi  # type: ignore[operator]


# ---------------------------------------------------------------------------- listing many values at once
def value_filter(
    op: Any, slot: str, plain: frozenset[str] = frozenset()
) -> Callable[[Any, list[Any]], list[Any]] | None:
    """For a condition about one slot's value alone (``has`` / ``lies_here`` / ``is_hostile`` of ``$slot``):
    a function keeping the values of a listing's candidates for which it holds, reading the world once for
    them all (what the condition's own test reads for each). ``plain``: values known to be object types that
    are not individually named (a ``type`` slot's), counted as they are. None for any other condition."""
    ref = f"${slot}"
    if isinstance(op, s.Has) and op.has == ref:
        least = op.count

        def carried_enough(turn: Any, values: list[Any]) -> list[Any]:
            carried = carried_handles(turn)
            state, objects = turn.state, turn.game.objects
            out = []
            for v in values:
                if v in plain:
                    if carried.get(v, 0) >= least:
                        out.append(v)
                    continue
                kind = type_of(state, v)
                t = objects.get(kind)
                if t is None:
                    continue
                n = sum(1 for h in carried if type_of(state, h) == kind) if t.instanced else carried.get(kind, 0)
                if n >= least:
                    out.append(v)
            return out

        return carried_enough
    if isinstance(op, s.LiesHere) and op.lies_here == ref:
        least = op.count

        def lying_enough(turn: Any, values: list[Any]) -> list[Any]:
            engine, area = turn.engine, turn.area
            state, here = engine.state, area.objects
            return [
                v
                for v in values
                if (here.get(v, 0) if v in plain else lying_in(engine, area, type_of(state, v))) >= least
            ]

        return lying_enough
    if isinstance(op, s.NoneOf) and len(op.none_of) == 1 and isinstance(op.none_of[0], s.Same):
        pair = op.none_of[0].same
        if set(pair) == {ref, "$here"}:  # "not the area I stand in": one pass

            def elsewhere(turn: Any, values: list[Any]) -> list[Any]:
                here = turn.agent.area
                return [v for v in values if v != here]

            return elsewhere
    if isinstance(op, s.IsType) and op.is_type == ref:  # "is it a light": one pass, before the other checks
        kinds, cats = frozenset(op.types), frozenset(op.categories)

        def of_kind(turn: Any, values: list[Any]) -> list[Any]:
            state, objects = turn.state, turn.game.objects
            out = []
            for v in values:
                kind = type_of(state, v) if isinstance(v, str) else None
                t = objects.get(kind) if kind is not None else None
                if t is not None and (not kinds or kind in kinds) and (not cats or t.category in cats):
                    out.append(v)
            return out

        return of_kind
    if isinstance(op, s.Hostile) and op.is_hostile == ref:
        want = op.value

        def of_hostility(turn: Any, values: list[Any]) -> list[Any]:
            npcs, kinds = turn.state.npcs, turn.game.npcs
            return [v for v in values if v in npcs and kinds[npcs[v].type].hostile == want]

        return of_hostility
    return None


def pair_test(op: Any, names: tuple[str, ...]) -> Callable[[tuple[Any, ...]], bool] | None:
    """For ``same`` of two slots (or ``none_of`` that one ``same``): the test of a combination of slot
    values as a tuple, with no context to fill (what the condition's own test decides). None otherwise."""
    negate = isinstance(op, s.NoneOf) and len(op.none_of) == 1
    inner = op.none_of[0] if negate else op
    if not isinstance(inner, s.Same):
        return None
    refs = [v[1:] for v in inner.same if v.startswith("$")]
    if len(refs) != 2 or not all(r in names for r in refs):
        return None
    i, j = names.index(refs[0]), names.index(refs[1])
    if negate:
        return lambda combo: combo[i] != combo[j]
    return lambda combo: combo[i] == combo[j]


# ---------------------------------------------------------------------------- what a condition reads
#: Things one ``some`` asks about (past these, the rest are not asked), as a ``for_each`` visits.
MAX_SOME = 50


def _some(op: s.Some, vars: dict[str, s.Var]) -> Test:
    """``some``: the check asked of each NPC or lying thing of the area (in the order they stand or lie)."""
    where, kinds, npcs = getter(op.area), frozenset(op.types), op.some == "npc"
    check = compile_condition(op.check, vars)
    if op.some == "agent":
        return _some_agent(where, check)
    if op.some == "carried":
        return _some_carried(kinds, check)

    def some(ctx: Ctx) -> bool:
        state = ctx.engine.state
        name = where(ctx)
        area = state.areas.get(name) if isinstance(name, str) else None
        if area is None:
            return False
        if npcs:
            found = [h for h in area.npcs if not kinds or state.npcs[h].type in kinds]
        else:
            found = [h for h in area.objects if not kinds or type_of(state, h) in kinds]
        if not found:
            return False
        sub = Ctx(ctx.engine, ctx.agent, ctx.here, dict(ctx.b), ctx.turn)  # rebound per item: asked one by one
        for handle in found[:MAX_SOME]:
            sub.b["each"] = handle
            if check(sub):
                return True
        return False

    return some


def _some_agent(where: Callable[[Ctx], Any], check: Test) -> Test:
    """``some`` over the agents standing in an area, each asked as itself (``has`` is its own)."""

    def some_agent(ctx: Ctx) -> bool:
        state = ctx.engine.state
        name = where(ctx)
        if not isinstance(name, str):
            return False
        for agent in state.agents.values():
            if agent.area == name and check(Ctx(ctx.engine, agent, name, {**ctx.b, "each": agent.id}, ctx.turn)):
                return True
        return False

    return some_agent


def _some_carried(kinds: frozenset[str], check: Test) -> Test:
    """``some`` over what the agent carries: its hands, then the containers it holds (the engine's order)."""

    def some_carried(ctx: Ctx) -> bool:
        agent = ctx.agent
        if agent is None:
            return False
        sub = Ctx(ctx.engine, agent, ctx.here, dict(ctx.b), ctx.turn)
        for handle in carried_things(ctx.engine, agent, kinds)[:MAX_SOME]:
            sub.b["each"] = handle
            if check(sub):
                return True
        return False

    return some_carried


def carried_things(engine: Any, agent: Any, kinds: frozenset[str]) -> list[str]:
    """Handles the agent carries, narrowed to ``kinds`` (none: all): in its hands, then in each container it
    holds (as :func:`odyssey_env.world.held_containers` lists them), a stack once."""
    state = engine.state
    out = [h for h in agent.hands if not kinds or type_of(state, h) in kinds]
    for c in held_containers(engine.game, state, agent):
        out += [h for h in state.instances[c].contents if not kinds or type_of(state, h) in kinds]
    return out


def reads(op: Any) -> set[str] | None:
    """The listing dependencies (:data:`odyssey_env.rules.DEPENDENCIES`) a condition reads, or None when it
    reads something no dependency covers (variables, the quest's state): such a verb is listed afresh."""
    if isinstance(op, s.AllOf | s.AnyOf | s.NoneOf):
        out: set[str] = set()
        for c in getattr(op, s.tag(type(op))):
            sub = reads(c)
            if sub is None:
                return None
            out |= sub
        return out
    if isinstance(op, s.Some):
        inner = reads(op.check)
        if op.some == "agent":
            return None  # other agents' hands: no dependency of mine covers them
        if op.some == "carried":
            return None if inner is None else inner | {"hands", "containers"}
        here = {"npcs", "place"} if op.some == "npc" else {"ground", "place"}
        return None if inner is None or op.area != "$here" else inner | here
    table: dict[type, set[str]] = {
        s.Has: {"hands", "containers"},
        s.Holds: {"hands"},
        s.Wears: {"worn"},
        s.LiesHere: {"ground", "place"},
        s.OnGround: {"ground", "place"},
        s.NpcHere: {"npcs", "place"},
        s.InArea: {"place"},
        s.InPlace: {"place"},
        s.Hour: {"time"},
        s.Same: set(),
        s.IsType: set(),
        s.Hostile: {"npcs"},  # an object's type never changes; what is carried is the slot domain's to read
        s.InCombat: {"combat", "npcs"},
        s.ExitLocked: {"exits", "place"},
        s.Engaged: {"combat", "npcs"},
        s.Noted: set(),  # a firing's own notes: nothing of the world
        s.CanCraft: {"hands", "containers", "worn", "ground", "place"},
        s.CommonEnemy: set(),  # a kind's traits are the game's: fixed  # ingredients anywhere on me; stations
        s.FitsLevel: {"place"},  # an object type's level is the game's; the area's is where I stand
    }
    if isinstance(op, s.StatIs):
        if op.of is not None:
            return set()  # an object type's stat never changes; what the reference names is its slot's to read
        return {"purse"} if op.stat == "coins" else {"body"}
    if isinstance(op, s.Flag | s.CounterIs):  # one plain value per key: a copy of the table fingerprints it
        return None if (op.of or "").startswith("$event") else {"vars", "place"}  # per area / exit: from here
    if isinstance(op, s.Same) and any(v.startswith("$event") or "{" in v for v in op.same):
        return None
    return table.get(type(op))


def vars_read(op: Any) -> set[str]:
    """The variables a condition's flag and counter tests read, at any depth (what a ``"vars"`` listing
    dependency fingerprints: see :func:`reads`)."""
    if isinstance(op, s.Flag):
        return {op.flag}
    if isinstance(op, s.CounterIs):
        return {op.counter}
    out: set[str] = set()
    if dataclasses.is_dataclass(op):
        for f in dataclasses.fields(op):
            value = getattr(op, f.name)
            for item in value if isinstance(value, tuple) else (value,):
                out |= vars_read(item)
    return out


# ---------------------------------------------------------------------------- what an agent could do about it
def hint(op: Any, ctx: Ctx, vars: dict[str, s.Var]) -> Condition | None:
    """A quest-vocabulary condition that would make a false ``op`` true and that a planner can bring
    about (carry this, stand there), or None when there is none to give."""
    if isinstance(op, s.AllOf):
        for c in op.all_of:
            if not compile_condition(c, vars)(ctx):
                return hint(c, ctx, vars)
        return None
    if isinstance(op, s.AnyOf):
        for c in op.any_of:
            h = hint(c, ctx, vars)
            if h is not None:
                return h
        return None
    if isinstance(op, s.Has | s.Holds | s.Wears):
        kind = type_getter(getattr(op, s.tag(type(op))))(ctx)
        if kind is None or kind not in ctx.engine.game.objects:
            return None
        return hints.has(kind, op.count if isinstance(op, s.Has) else 1)
    if isinstance(op, s.InArea):
        if op.of is not None:
            return None  # which area the command names is not the planner's to change by walking
        for a in op.in_area:
            area = getter(a)(ctx)
            if isinstance(area, str) and area in ctx.engine.state.areas:
                return hints.in_area(area)
        return None
    if isinstance(op, s.IsType) and op.types:  # a thing of the wrong kind: get one of the right kinds
        return hints.any_has(*op.types)
    if isinstance(op, s.CanCraft):
        return missing_ingredient(ctx, type_getter(op.can_craft)(ctx))
    if isinstance(op, s.Quest):
        from odyssey_env.quests.conditions import VOCABULARY

        cond = cast("Condition", op.quest)  # parsed by checks.py, as in compile_condition
        return cond if VOCABULARY[cond.type].family in ("state", "combinator") else None
    return None


def mentions(op: Any, names: Iterable[str]) -> bool:
    """Whether a condition refers to any of ``names`` (as ``$name`` or ``{name}``), at any depth."""
    wanted = tuple(names)
    if not wanted:
        return False

    def walk(value: Any) -> bool:
        if isinstance(value, str):
            return any(value.startswith(f"${n}") or f"{{{n}}}" in value for n in wanted)
        if isinstance(value, tuple | list):
            return any(walk(v) for v in value)
        if isinstance(value, dict):
            return any(walk(v) for v in value.values())
        if dataclasses.is_dataclass(value):
            return any(walk(getattr(value, f.name)) for f in dataclasses.fields(value))
        return False

    return walk(op)
