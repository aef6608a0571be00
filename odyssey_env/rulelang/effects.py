"""Effects of the rule language, compiled once into Python closures ``ctx -> None``.

An effect never raises on a state it did not expect: it does what it can and no more (consume takes at
most what is carried, a spawn stops at its ``max_alive``, a produce at its ``cap``, a move to an area that
is gone does nothing), so a rule file that passed its checks cannot crash a step. Health set to zero by a
rule is handled by the engine's ``death`` rule like any other; an NPC's health never drops below 1 here
(an NPC is defeated in combat, which pays its rewards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from odyssey_env.rulelang import phantoms
from odyssey_env.rulelang import spec as s
from odyssey_env.rulelang.expr import carried_things, compile_condition, lying, lying_in, var_reader
from odyssey_env.rulelang.runtime import (
    MAX_TIMERS,
    NO_NOTES,
    Ctx,
    add_to_tally,
    amount_of,
    binding,
    bindings_for_timer,
    carried_of,
    constant,
    data,
    getter,
    keyer,
    npc_kinds_in,
    npcs_in,
    read_var,
    rebind,
    template,
    type_getter,
    value_of,
    within,
    write_var,
)
from odyssey_env.steprules.living import is_world_area, move_npc, tell
from odyssey_env.verbs.combat import STAMINA_FLOOR, strike
from odyssey_env.verbs.common import acquire
from odyssey_env.world import add, carried_count, give, held_containers, make_objects, remove, take_carried, type_of
from odyssey_env.worldgen import spawn_npc

if TYPE_CHECKING:
    from odyssey_env.state import Agent, WorldState

Effect = Callable[[Ctx], object]  # what an effect returns is never read (a consume's count, an emit's None)


class Program:
    """The compiled effects of one rule file, and the delayed ones by id (timers name them)."""

    def __init__(self, vars: dict[str, s.Var]):
        self.vars = vars
        #: The wield of the step rule whose effects are compiled now (``{wield.<slot>}`` reads it), if any.
        self.wield: s.Wield | None = None
        #: the step rule's parameters as this game sets them, while its effects are compiled ({param.<name>})
        self.params: dict[str, Any] | None = None
        #: the step rule whose effects are compiled now, and its phantoms (a ``phantom`` effect lays its)
        self.rule = ""
        self.phantoms: s.Phantoms | None = None
        self.delayed: dict[str, list[Effect]] = {}
        #: Delayed effects whose countdown restarts while someone stands in their area: timer id -> delay.
        self.unwatched: dict[str, int] = {}

    def block(self, ops: tuple[Any, ...], path: str) -> Effect:
        parts = [self.effect(op, f"{path}[{i}]") for i, op in enumerate(ops)]
        if not parts:
            return lambda ctx: None
        if len(parts) == 1:
            return parts[0]
        if len(parts) == 2:  # the usual block: two calls, no loop over the parts
            first, second = parts

            def run2(ctx: Ctx) -> None:
                first(ctx)
                second(ctx)

            return run2
        if len(parts) == 3:
            one, two, three = parts

            def run3(ctx: Ctx) -> None:
                one(ctx)
                two(ctx)
                three(ctx)

            return run3

        def run(ctx: Ctx) -> None:
            for p in parts:
                p(ctx)

        return run

    def effect(self, op: Any, path: str) -> Effect:
        vars = self.vars
        fill = var_reader(vars, self.wield, self.params)
        if isinstance(op, s.Consume):
            ref, n = _taken(op.consume), op.count
            return lambda ctx: _consume(ctx, ref, n)
        if isinstance(op, s.Produce):
            kind_of, n, cap = type_getter(op.produce), op.count, op.cap
            return lambda ctx: _produce(ctx, kind_of(ctx), n, cap)
        if isinstance(op, s.Transform):
            src, dst = _taken(op.transform), type_getter(op.into)

            def transform(ctx: Ctx) -> None:
                if _consume(ctx, src, 1):
                    _produce(ctx, dst(ctx), 1, None)

            return transform
        if isinstance(op, s.Place):
            if op.area == "$here" and not op.place.startswith("$"):
                return _place_here(op.place, op.count, op.cap)
            kind_of, n, cap, area = type_getter(op.place), op.count, op.cap, getter(op.area)
            return lambda ctx: _place(ctx, kind_of(ctx), n, cap, area(ctx))
        if isinstance(op, s.Remove):
            kind_of, area = getter(op.remove), getter(op.area)
            if isinstance(op.count, str):
                count_of = _count_getter(op.count)
                return lambda ctx: _remove(ctx, kind_of(ctx), count_of(ctx), area(ctx))
            n = op.count
            return lambda ctx: _remove(ctx, kind_of(ctx), n, area(ctx))
        if isinstance(op, s.MoveAgent):
            to = getter(op.move_agent)
            return lambda ctx: _move_agent(ctx, to(ctx))
        if isinstance(op, s.MoveNpc):
            who, to = getter(op.move_npc), getter(op.to)
            return lambda ctx: _move_npc(ctx, who(ctx), to(ctx))
        if isinstance(op, s.ChangeStat):
            return _change(op.change, op.by, op.npc)
        if isinstance(op, s.Coins):
            n = op.coins
            return lambda ctx: _coins(ctx, n)
        if isinstance(op, s.SpawnNpc):
            npc_type, cap, area, spawner = op.spawn_npc, op.max_alive, getter(op.area), path
            return lambda ctx: _spawn(ctx, npc_type, cap, area(ctx), spawner)
        if isinstance(op, s.RemoveNpc):
            who = getter(op.remove_npc)
            return lambda ctx: _remove_npc(ctx, who(ctx))
        if isinstance(op, s.Salvage):
            kind_of, share, area = type_getter(op.salvage), op.share, getter(op.area)
            return lambda ctx: _salvage(ctx, kind_of(ctx), share, area(ctx))
        if isinstance(op, s.Winded):
            return _winded
        if isinstance(op, s.Strike):
            who, damage, how = getter(op.strike), op.damage, template(op.how, fill)
            return lambda ctx: _strike(ctx, who(ctx), damage, how)
        if isinstance(op, s.OpenExit | s.LockExit):
            other, locked = getter(getattr(op, s.tag(type(op)))), isinstance(op, s.LockExit)
            lock_key = op.key if isinstance(op, s.LockExit) else None
            return lambda ctx: _exit(ctx, other(ctx), locked, lock_key)
        if isinstance(op, s.SetFlag):
            var, flag, key_of = vars[op.set_flag], op.value, keyer(vars[op.set_flag].scope, op.of)
            dropped = _dropped(var, False)
            return lambda ctx: write_var(ctx.engine, var.name, key_of(ctx), flag, dropped)
        if isinstance(op, s.AddCounter | s.SetCounter):
            var, amount, adding = vars[getattr(op, s.tag(type(op)))], op.value, isinstance(op, s.AddCounter)
            key_of, dropped = keyer(var.scope, op.of), _dropped(var, var.initial)
            if isinstance(amount, str):  # add a count read from the firing ($removed, $count, a slot)
                units = _count_getter(amount)

                def count_by(ctx: Ctx) -> None:
                    key = key_of(ctx)
                    now = read_var(ctx.engine, var.name, key, var.initial)
                    write_var(ctx.engine, var.name, key, max(0, min(var.max, now + units(ctx))), dropped)

                return count_by

            def count(ctx: Ctx) -> None:
                key = key_of(ctx)
                now = read_var(ctx.engine, var.name, key, var.initial) if adding else 0
                write_var(ctx.engine, var.name, key, max(0, min(var.max, now + amount)), dropped)

            return count
        if isinstance(op, s.Remember):
            var, remembered, key_of = vars[op.remember], value_of(op.value, fill), keyer(vars[op.remember].scope, op.of)
            dropped = _dropped(var, [])

            def remember(ctx: Ctx) -> None:
                key = key_of(ctx)
                held = read_var(ctx.engine, var.name, key, None)
                item = remembered(ctx)
                if held is None:
                    write_var(ctx.engine, var.name, key, [item], dropped)
                elif item not in held and len(held) < var.max:
                    held.append(item)

            if var.lasts is not None:
                return _remember_for(var, remembered, key_of, var.lasts)
            return remember
        if isinstance(op, s.Tally):
            var, item = vars[op.tally], value_of(op.item, fill)
            units, tally_key = _count_getter(op.by), keyer(var.scope, None)
            return lambda ctx: add_to_tally(ctx.engine, var.name, tally_key(ctx), item(ctx), units(ctx), var.max)
        if isinstance(op, s.After):
            self.delayed[path] = [self.block(op.do, f"{path}.do")]
            delay, ident = op.after, path
            if op.unwatched:
                self.unwatched[ident] = delay

            def later(ctx: Ctx) -> None:
                timers = data(ctx.engine)["timers"]
                if len(timers) < MAX_TIMERS:
                    who = ctx.agent.id if ctx.agent is not None else None
                    timers.append([ctx.engine.state.step + delay, ident, who, ctx.here, bindings_for_timer(ctx)])

            return later
        if isinstance(op, s.Emit):
            kind = op.emit
            fields = [(k, _datum(v, fill)) for k, v in op.data.items()]
            return lambda ctx: ctx.engine.emit(
                kind, ctx.agent.id if ctx.agent is not None else None, **{k: f(ctx) for k, f in fields}
            )
        if isinstance(op, s.Say):
            text = template(op.say, fill)
            line = constant(op.say)
            if line is not None:  # the same line at every firing: nothing to fill

                def say_line(ctx: Ctx) -> None:
                    if ctx.agent is not None:
                        ctx.engine.say(ctx.agent.id, line)
                    else:
                        tell(ctx.engine, ctx.here, line)

                return say_line

            def say(ctx: Ctx) -> None:
                if ctx.agent is not None:
                    ctx.engine.say(ctx.agent.id, text(ctx))
                else:
                    tell(ctx.engine, ctx.here, text(ctx))

            return say
        if isinstance(op, s.Tell):
            text = template(op.tell, fill)
            if op.area == "$here" or not op.area.startswith("$"):
                return _tell_fixed(text, None if op.area == "$here" else op.area)
            where = getter(op.area)
            return lambda ctx: _tell_in(ctx, where(ctx), text)
        if isinstance(op, s.MoveToward):
            return _move_toward(self, op, path)
        if isinstance(op, s.ForEach):
            return _for_each(self, op, path)
        if isinstance(op, s.First):
            return _first(self, op, path)
        if isinstance(op, s.Pick):
            return _pick(self, op, path)
        if isinstance(op, s.NpcStrikes):
            return _npc_strikes(self, op, path)
        if isinstance(op, s.Phantom):
            return _phantom(self, op)
        if isinstance(op, s.Dispel):
            return _dispel(self, op, path)
        if isinstance(op, s.Note):
            text = template(op.note, fill)
            if op.list:
                listed = op.list

                def note_in(ctx: Ctx) -> None:
                    if ctx.notes is NO_NOTES:
                        ctx.notes = []
                    if len(ctx.notes) < MAX_NOTES:
                        ctx.notes.append((listed, text(ctx)))

                return note_in

            def note(ctx: Ctx) -> None:
                if ctx.notes is NO_NOTES:
                    ctx.notes = []
                if len(ctx.notes) < MAX_NOTES:
                    ctx.notes.append(text(ctx))

            return note
        if isinstance(op, s.If):
            test = compile_condition(op.if_, vars)
            then, otherwise = self.block(op.then, f"{path}.then"), self.block(op.otherwise, f"{path}.else")
            return lambda ctx: then(ctx) if test(ctx) else otherwise(ctx)
        raise TypeError(f"rulelang: no effect for {type(op).__name__}")  # pragma: no cover


def _remember_for(var: s.Var, remembered: Callable[[Ctx], Any], key_of: Any, lasts: int) -> Effect:
    """``remember`` in a set that lasts: the value is kept until ``lasts`` steps from now (again from now when
    it was there already); values whose time is up are forgotten first, making room."""

    def remember(ctx: Ctx) -> None:
        key = key_of(ctx)
        if key is None:
            return
        engine = ctx.engine
        step = engine.state.step
        table = data(engine)["vars"].setdefault(var.name, {})
        held = {v: until for v, until in table.get(key, {}).items() if until > step}
        item = remembered(ctx)
        if item in held or len(held) < var.max:
            held[item] = step + lasts
        table[key] = held

    return remember


def _count_getter(count: int | str) -> Callable[[Ctx], int]:
    """A count given as a number or as a reference to one (read as a whole number within bounds)."""
    if isinstance(count, str):
        read = getter(count)
        return lambda ctx: amount_of(read(ctx))
    return lambda ctx: count


def _tell_fixed(text: Callable[[Ctx], str], area: str | None) -> Effect:
    """``tell`` in ``$here`` (``area`` None) or in an area the file names: what :func:`tell` does, written out,
    with the line filled only once someone stands there to hear it (a template only reads: filling it for no
    one changes nothing, and most firings of an NPC's or an area's rule happen where no agent is)."""

    def tell_fixed(ctx: Ctx) -> None:
        engine = ctx.engine
        where = ctx.here if area is None else area
        line = None
        for agent in engine.state.agents.values():
            if agent.area == where:
                if line is None:
                    line = text(ctx)
                engine.say(agent.id, line)

    return tell_fixed


def _tell_in(ctx: Ctx, area: Any, text: Callable[[Ctx], str]) -> None:
    if isinstance(area, str) and area in ctx.engine.state.areas:
        tell(ctx.engine, area, text(ctx))


# ---------------------------------------------------------------------------- lines built from what is there
#: Things one for_each visits, and parts one firing's notes keep (past these, the rest is left out).
MAX_EACH = 50
MAX_NOTES = 50


def _for_each(self: Program, op: s.ForEach, path: str) -> Effect:
    where, kinds, npcs, held = getter(op.area), frozenset(op.types), op.for_each == "npc", op.for_each == "held"
    run = self.block(op.do, f"{path}.do")
    if op.for_each == "value":
        return _for_each_value(self.vars[op.var], where, run)
    ghosts = op.for_each == "phantom"

    def for_each(ctx: Ctx) -> None:
        state = ctx.engine.state
        name = where(ctx)
        area = state.areas.get(name) if isinstance(name, str) else None
        if area is None:
            return
        if held:
            if ctx.agent is None:
                return
            found = [h for h in ctx.agent.hands if not kinds or type_of(state, h) in kinds]
        elif ghosts:  # each phantom pile kept there, of every rule, in the order they were laid, and its count
            piles = [
                (k, pile[0])
                for p in phantoms.all_piles_read(ctx.engine).values()
                for k, pile in p.get(name, {}).items()
            ]
            if ctx.notes is NO_NOTES:
                ctx.notes = []
            sub = Ctx(ctx.engine, ctx.agent, ctx.here, {**ctx.b, "each": "", "count": 0}, ctx.turn)
            for kind, n in piles[:MAX_EACH]:
                if not kinds or kind in kinds:
                    rebind(sub, ctx.here, "each", kind).notes = ctx.notes
                    sub.b["count"] = n
                    run(sub)
            return
        elif npcs:
            found = [h for h in area.npcs if not kinds or state.npcs[h].type in kinds]
        else:
            found = [h for h in area.objects if not kinds or type_of(state, h) in kinds]
        if ctx.notes is NO_NOTES:
            ctx.notes = []  # made here, so that every item's notes land in the one line
        sub = Ctx(ctx.engine, ctx.agent, ctx.here, {**ctx.b, "each": ""}, ctx.turn)
        for handle in found[:MAX_EACH]:
            rebind(sub, ctx.here, "each", handle).notes = ctx.notes  # one line for the whole firing
            run(sub)

    return for_each


def _for_each_value(var: s.Var, where: Callable[[Ctx], Any], run: Effect) -> Effect:
    """``for_each: "value"``: each value a set holds now (a lasting set's, those not yet forgotten, with
    ``$left`` / ``{left}`` the steps until it is; 0 for a set that does not last), in the order they came."""
    name, scope, lasts = var.name, var.scope, var.lasts is not None

    def for_each_value(ctx: Ctx) -> None:
        key: Any
        if scope == "global":
            key = "*"
        elif scope == "agent":
            key = ctx.agent.id if ctx.agent is not None else None
        else:
            key = where(ctx)
        held = data(ctx.engine)["vars"].get(name, {}).get(key) if isinstance(key, str) else None
        if not held:
            return
        step = ctx.engine.state.step
        items = [(v, until - step) for v, until in held.items() if until > step] if lasts else [(v, 0) for v in held]
        if ctx.notes is NO_NOTES:
            ctx.notes = []  # made here, so that every value's notes land in the one line
        sub = Ctx(ctx.engine, ctx.agent, ctx.here, {**ctx.b, "each": "", "left": 0}, ctx.turn)
        for value, left in items[:MAX_EACH]:
            rebind(sub, ctx.here, "each", value).notes = ctx.notes
            sub.b["left"] = left
            run(sub)

    return for_each_value


def _first(self: Program, op: s.First, path: str) -> Effect:
    """``first``: ``do`` for the first thing of the kind whose check holds, else ``else`` (checks.py: the
    kinds ``carried`` / ``held`` only where an agent is bound, with no area)."""
    where, kinds, kind = getter(op.area), frozenset(op.types), op.first
    check = compile_condition(op.check, self.vars) if op.check is not None else None
    run, otherwise = self.block(op.do, f"{path}.do"), self.block(op.otherwise, f"{path}.else")

    def first(ctx: Ctx) -> None:
        state = ctx.engine.state
        if kind == "carried" or kind == "held":
            agent = ctx.agent
            if agent is None:
                return
            if kind == "held":
                found = [h for h in agent.hands if not kinds or type_of(state, h) in kinds]
            else:
                found = carried_things(ctx.engine, agent, kinds)
        else:
            name = where(ctx)
            area = state.areas.get(name) if isinstance(name, str) else None
            if area is None:
                return
            if kind == "npc":
                found = [h for h in area.npcs if not kinds or state.npcs[h].type in kinds]
            else:
                found = [h for h in area.objects if not kinds or type_of(state, h) in kinds]
        if found:
            sub = Ctx(ctx.engine, ctx.agent, ctx.here, {**ctx.b, "each": ""}, ctx.turn)
            for handle in found[:MAX_EACH]:
                sub.b["each"] = handle
                if check is None or check(sub):
                    if ctx.notes is NO_NOTES:
                        ctx.notes = []
                    sub.notes = ctx.notes  # the firing's one line
                    run(sub)
                    return
        otherwise(ctx)

    return first


def _pick(self: Program, op: s.Pick, path: str) -> Effect:
    """``pick``: one NPC of the area, area of the world or object type drawn from the episode's RNG (checks.py
    put the chance's number and the types here); with none to pick nothing is drawn."""
    where, kinds, hostile, idle = getter(op.area), frozenset(op.types), op.hostile, op.idle
    chance = op.chance if isinstance(op.chance, float | int) else None
    run = self.block(op.do, f"{path}.do")
    check = compile_condition(op.check, self.vars) if op.check is not None else None
    kind, unwatched, listed = op.pick, op.unwatched, list(op.types)

    def candidates(ctx: Ctx) -> tuple[list[str], Ctx | None]:
        state = ctx.engine.state
        sub = within(ctx, "each", None) if check is not None else None
        if kind == "area":
            watched = {a.area for a in state.agents.values()} if unwatched else set()
            found = []
            for area in state.areas.values():
                if not is_world_area(area) or area.name in watched:
                    continue
                if sub is not None:
                    sub.here = sub.b["each"] = area.name
                    if not check(sub):  # type: ignore[misc]  # set with sub
                        continue
                found.append(area.name)
            return found, sub
        if kind == "type":
            if sub is None:
                return listed, sub
            found = []
            for name in listed:
                sub.b["each"] = name
                if check(sub):  # type: ignore[misc]  # set with sub
                    found.append(name)
            return found, sub
        name = where(ctx)
        there = state.areas.get(name) if isinstance(name, str) else None
        if there is None:
            return [], sub
        npc_types = ctx.engine.game.npcs
        found = []
        for h in there.npcs:
            npc = state.npcs[h]
            if kinds and npc.type not in kinds:
                continue
            if hostile is not None and npc_types[npc.type].hostile != hostile:
                continue
            if idle and npc.engaged is not None:
                continue
            if sub is not None:
                sub.b["each"] = h
                if not check(sub):  # type: ignore[misc]  # set with sub
                    continue
            found.append(h)
        return found, sub

    def pick(ctx: Ctx) -> None:
        engine = ctx.engine
        found, _ = candidates(ctx)
        if not found or (chance is not None and engine.rng.random() >= chance):
            return  # none to pick draws nothing: the RNG moves only when something could be picked
        value = found[engine.rng.randrange(len(found))]
        sub = within(ctx, "each", value)
        if kind == "area":
            sub.here = value
        run(sub)

    return pick


def _phantom(self: Program, op: s.Phantom) -> Effect:
    """``phantom``: one of the rule's phantoms (checks.py: only in a rule that declares them)."""
    assert self.phantoms is not None, "checks.py refuses a phantom outside a rule with phantoms"
    kind_of, where, rule = type_getter(op.phantom), getter(op.area), self.rule
    lasts, event = int(self.phantoms.lasts), self.phantoms.event

    def phantom(ctx: Ctx) -> None:
        objects = ctx.engine.game.objects
        phantoms.lay(ctx, rule, kind_of(ctx), where(ctx), lasts, event, lambda k: phantoms.takes_shape(objects.get(k)))

    return phantom


def _dispel(self: Program, op: s.Dispel, path: str) -> Effect:
    """``dispel``: a rule's phantoms in an area taken back at once (:func:`phantoms.dispel`); ``do`` for each
    pile, ``$each`` its type and ``$removed`` its count, else ``else``; then ``$removed`` is the whole count."""
    where, rule = getter(op.area), op.dispel
    run, otherwise = self.block(op.do, f"{path}.do"), self.block(op.otherwise, f"{path}.else")

    def dispel(ctx: Ctx) -> None:
        engine = ctx.engine
        name = where(ctx)
        area = engine.state.areas.get(name) if isinstance(name, str) else None
        gone = phantoms.dispel(engine, rule, area.name) if area is not None else []
        if not gone:
            ctx.removed = 0
            otherwise(ctx)
            return
        if ctx.notes is NO_NOTES:
            ctx.notes = []  # made here, so that every pile's notes land in the firing's one line
        sub = Ctx(engine, ctx.agent, ctx.here, {**ctx.b, "each": ""}, ctx.turn)
        for kind, n in gone:
            rebind(sub, ctx.here, "each", kind).notes = ctx.notes
            sub.removed = n
            run(sub)
        ctx.removed = sum(n for _, n in gone)

    return dispel


def _npc_strikes(self: Program, op: s.NpcStrikes, path: str) -> Effect:
    """``npc_strikes``: the NPC's blow on the agent, out of turn; ``then`` sees ``$damage``."""
    who, times = getter(op.npc_strikes), float(op.times) if not isinstance(op.times, str) else 1.0
    then = self.block(op.then, f"{path}.then")

    def npc_strikes(ctx: Ctx) -> None:
        agent, state = ctx.agent, ctx.engine.state
        handle = who(ctx)
        npc = state.npcs.get(handle) if isinstance(handle, str) else None
        if agent is None or npc is None or npc.area != agent.area or agent.in_tutorial:
            return
        damage = max(1, round(npc.attack * times * state.modifiers.get("enemy_attack", 1.0)) - agent.defense)
        agent.hp -= damage
        npc.engaged = agent.id
        agent.combat = npc.handle
        then(within(ctx, "damage", damage))

    return npc_strikes


# ---------------------------------------------------------------------------- moving toward the living
def _move_toward(self: Program, op: s.MoveToward, path: str) -> Effect:
    who, reach, avoid = getter(op.move_toward), op.range, frozenset(op.avoid)
    blocked = compile_condition(op.blocked, self.vars) if op.blocked is not None else None
    stopped, moved = self.block(op.stopped, f"{path}.stopped"), self.block(op.moved, f"{path}.moved")

    def move_toward(ctx: Ctx) -> None:
        state = ctx.engine.state
        handle = who(ctx)
        npc = state.npcs.get(handle) if isinstance(handle, str) else None
        if npc is None or npc.engaged is not None:
            return
        prey = {a.area for a in state.agents.values() if not a.in_tutorial}
        if npc.area in prey:
            return
        nxt = first_step(state, npc.area, prey, reach, avoid)
        if nxt is None:
            return
        came = npc.area
        sub = Ctx(ctx.engine, ctx.agent, came, {**ctx.b, "next": nxt}, ctx.turn)
        if blocked is not None and blocked(sub):
            stopped(sub)
            return
        state.areas[came].npcs.remove(npc.handle)
        npc.area = nxt
        state.areas[nxt].npcs.append(npc.handle)
        moved(sub)

    return move_toward


def first_step(state: WorldState, start: str, goals: set[str], reach: int, avoid: frozenset[str]) -> str | None:
    """The first area on a shortest open way from ``start`` to one of ``goals`` at most ``reach`` ways off,
    breadth first with exits in the world's order (so ties go the same way every run); None if none is."""
    before: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    for _ in range(reach):
        nxt_frontier = []
        for here in frontier:
            for nxt, way in state.areas[here].exits.items():
                if nxt in seen or way.locked or nxt in avoid:
                    continue
                seen.add(nxt)
                before[nxt] = here
                if nxt in goals:
                    while before[nxt] != start:
                        nxt = before[nxt]
                    return nxt
                nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return None


def _dropped(var: s.Var, default: Any) -> Any:
    """The value a write drops from the table instead of keeping: per object, exit and held thing only (their
    tables would otherwise fill with a key per thing ever touched); None keeps every value."""
    return default if var.scope in ("object", "exit", "held") else None


def _datum(value: s.EventValue, fill: Callable[[str], Callable[[Ctx], Any]]) -> Callable[[Ctx], Any]:
    """An event datum's filler: a template, a list of templates, or a literal number or truth value."""
    if isinstance(value, str):
        if value.startswith("{var.") and value.endswith("}") and value.count("{") == 1:
            return fill(value[5:-1])  # exactly one counter: recorded as its number, not its text
        if value.startswith("{") and value.endswith(".npcs}") and value.count("{") == 1:
            return npcs_in(value[1:-6])  # exactly an area's NPCs: recorded as the list of their handles
        if value.startswith("{") and value.endswith(".npc_kinds}") and value.count("{") == 1:
            return npc_kinds_in(value[1:-11])  # exactly an area's NPCs by kind: recorded as the count by kind
        return getter(value) if value.startswith("$") else template(value, fill)
    if isinstance(value, tuple):
        parts = [template(v, fill) for v in value]
        return lambda ctx: [p(ctx) for p in parts]
    return lambda ctx: value


# ---------------------------------------------------------------------------- objects
def _carried_handle(ctx: Ctx, ref: str | Callable[[Ctx], Any]) -> str | None:
    """The handle a consume takes: a slot's own handle, else the type (stackable) or its first carried instance
    (``ref``: the reference as written, or its :func:`getter`, made once at load time)."""
    agent = ctx.agent
    engine = ctx.engine
    value = (getter(ref)(ctx) if ref.startswith("$") else ref) if isinstance(ref, str) else ref(ctx)
    if not isinstance(value, str) or agent is None:
        return None
    game, state = engine.game, engine.state
    if value in state.instances or value not in game.objects or not game.objects[value].instanced:
        return value
    for h in agent.hands:
        if type_of(state, h) == value:
            return h
    for c in held_containers(game, state, agent):
        for h in state.instances[c].contents:
            if type_of(state, h) == value:
                return h
    return None


def _consume(ctx: Ctx, ref: str | Callable[[Ctx], Any], n: int) -> int:
    handle = _carried_handle(ctx, ref)
    if handle is None or ctx.agent is None:
        return 0
    engine = ctx.engine
    game, state = engine.game, engine.state
    k = min(n, carried_count(game, state, ctx.agent, handle))
    if not k:
        return 0
    take_carried(game, state, ctx.agent, handle, k)
    if handle in state.instances and not carried_count(game, state, ctx.agent, handle):
        del state.instances[handle]  # a named thing used up is gone from the world (its handle is never reused)
    return k


def _produce(ctx: Ctx, kind: str | None, n: int, cap: int | None) -> None:
    agent, engine = ctx.agent, ctx.engine
    if agent is None or kind is None or kind not in engine.game.objects:
        return
    if cap is not None:
        n = min(n, cap - carried_of(ctx, kind) - lying(ctx, kind))
    if n <= 0:
        return
    game, state = engine.game, engine.state
    for handle, k in make_objects(game, state, kind, n):
        ctx.received = give(game, state, agent, handle, k)
        if ctx.received == "in my hands" and ctx.turn is not None:
            acquire(ctx.turn, handle, k, how="received")


def _place(ctx: Ctx, kind: str | None, n: int, cap: int, area_name: Any) -> None:
    engine = ctx.engine
    area = engine.state.areas.get(area_name) if isinstance(area_name, str) else None
    if area is None or kind is None or kind not in engine.game.objects:
        return
    n = min(n, cap - lying_in(engine, area, kind))
    for handle, k in make_objects(engine.game, engine.state, kind, max(0, n)):
        add(area.objects, handle, k)


def _place_here(kind: str, n: int, cap: int) -> Effect:
    """``place`` of an object type written in the file, here: :func:`_place` with the type's kind looked up once
    per game (a stackable one is added as it is, as :func:`make_objects` would hand it over)."""
    known: list[Any] = [None, False]  # the game, and whether the type is instanced in it

    def place_here(ctx: Ctx) -> None:
        engine = ctx.engine
        area = engine.state.areas.get(ctx.here)
        if area is None:
            return
        game = engine.game
        if known[0] is not game:
            t = game.objects.get(kind)
            known[:] = [game, None if t is None else t.instanced]
        instanced = known[1]
        if instanced is None:
            return  # not an object of this game
        if not instanced:
            lying = area.objects
            had = lying.get(kind, 0)
            k = min(n, cap - had)
            if k > 0:
                lying[kind] = had + k  # what add does
            elif kind not in lying:
                lying[kind] = 0  # as add of nothing left it (the same state, key for key)
            return
        _place(ctx, kind, n, cap, ctx.here)

    return place_here


def _remove(ctx: Ctx, kind: Any, n: int, area_name: Any) -> None:
    state = ctx.engine.state
    area = state.areas.get(area_name) if isinstance(area_name, str) else None
    ctx.removed = 0
    if area is None or not isinstance(kind, str) or n <= 0:
        return
    if kind in area.objects:
        k = min(n, area.objects[kind])
        remove(area.objects, kind, k)
        if kind in state.instances and kind not in area.objects:
            del state.instances[kind]
        ctx.removed = k
        return
    taken = [h for h in area.objects if type_of(state, h) == kind][:n]
    for h in taken:
        remove(area.objects, h)
        state.instances.pop(h, None)
    ctx.removed = len(taken)


def _salvage(ctx: Ctx, kind: str | None, share: int, area_name: Any) -> None:
    engine = ctx.engine
    game, state = engine.game, engine.state
    area = state.areas.get(area_name) if isinstance(area_name, str) else None
    t = game.objects.get(kind) if kind is not None else None
    made = []
    if area is not None and t is not None and t.recipe is not None:
        for ingredient, amount in t.recipe.ingredients.items():
            n = int(amount // share)  # whole units only (a fraction of a unit gives nothing)
            if n:
                for piece, k in make_objects(game, state, ingredient, n):
                    add(area.objects, piece, k)
                made.append(f"{n} {ingredient}")
    ctx.salvaged = ", ".join(made)


# ---------------------------------------------------------------------------- combat
def _winded(ctx: Ctx) -> None:
    if ctx.agent is not None:
        ctx.agent.stamina = STAMINA_FLOOR


def _strike(ctx: Ctx, handle: Any, damage: int, how: Callable[[Ctx], str]) -> None:
    npc = ctx.engine.state.npcs.get(handle) if isinstance(handle, str) else None
    if npc is None or ctx.turn is None or npc.area != ctx.turn.agent.area:
        return  # gone, or out of reach: the blow falls on nothing
    strike(ctx.turn, npc, damage, how(ctx))


# ---------------------------------------------------------------------------- moving
def _move_agent(ctx: Ctx, to: Any) -> None:
    agent, engine = ctx.agent, ctx.engine
    state = engine.state
    area = state.areas.get(to) if isinstance(to, str) else None
    if agent is None or area is None or area.name == agent.area or not is_world_area(area) or agent.in_tutorial:
        return
    for npc in state.npcs.values():
        if npc.engaged == agent.id:
            npc.engaged = None
            npc.stance_index = 0
    agent.combat = None
    agent.area = area.name
    ctx.here = area.name
    engine.emit("area_entered", agent.id, area=area.name, first=engine.first(agent, "visited", area.name))


def _move_npc(ctx: Ctx, handle: Any, to: Any) -> None:
    state = ctx.engine.state
    npc = state.npcs.get(handle) if isinstance(handle, str) else None
    area = state.areas.get(to) if isinstance(to, str) else None
    if npc is None or area is None or npc.area == area.name or npc.engaged is not None or not is_world_area(area):
        return
    if not is_world_area(state.areas[npc.area]):
        return
    move_npc(ctx.engine, npc, area.name)


# ---------------------------------------------------------------------------- numbers
def _taken(ref: str) -> str | Callable[[Ctx], Any]:
    """What a consume names, for :func:`_carried_handle`: a reference's getter (made here, once), else the text."""
    return getter(ref) if ref.startswith("$") else ref


def _change(stat: str, by: int, npc: str | None) -> Effect:
    """``change``, made for its stat and whose (the agent's, or the NPC a reference names): what
    :func:`_agent_stat` / :func:`_npc_stat` do, with the stat chosen at load time."""
    if npc is None:
        if stat == "hp":

            def agent_hp(ctx: Ctx) -> None:
                agent = ctx.agent
                if agent is not None:
                    agent.hp = min(agent.max_hp, agent.hp + by)

            return agent_hp
        return lambda ctx: _agent_stat(ctx.agent, stat, by)
    name = binding(npc)
    if stat == "hp" and name is not None:  # the usual: a bound NPC's health, within 1..max_hp

        def npc_hp(ctx: Ctx) -> None:
            handle = ctx.b.get(name)
            found = ctx.engine.state.npcs.get(handle) if isinstance(handle, str) else None
            if found is not None:
                found.hp = max(1, min(found.max_hp, found.hp + by))

        return npc_hp
    who = getter(npc)
    return lambda ctx: _npc_stat(ctx, who(ctx), stat, by)


def _agent_stat(agent: Agent | None, stat: str, by: int) -> None:
    if agent is None:
        return
    if stat == "hp":
        agent.hp = min(agent.max_hp, agent.hp + by)
    elif stat == "max_hp":
        agent.max_hp = max(1, agent.max_hp + by)
        agent.hp = min(agent.hp, agent.max_hp)
    elif stat == "attack":
        agent.base_attack = max(0, agent.base_attack + by)
    elif stat == "xp":
        agent.xp = max(0, agent.xp + by)


def _npc_stat(ctx: Ctx, handle: Any, stat: str, by: int) -> None:
    npc = ctx.engine.state.npcs.get(handle) if isinstance(handle, str) else None
    if npc is None:
        return
    if stat == "hp":
        npc.hp = max(1, min(npc.max_hp, npc.hp + by))
    elif stat == "attack":
        npc.attack = max(0, npc.attack + by)
    elif stat == "defense":
        npc.defense = max(0, npc.defense + by)


def _coins(ctx: Ctx, n: int) -> None:
    currency = ctx.engine.game.currency
    if currency is None or ctx.agent is None:
        return
    if n > 0:
        _produce(ctx, currency, n, None)
    else:
        _consume(ctx, currency, -n)


# ---------------------------------------------------------------------------- NPCs and ways
def _spawn(ctx: Ctx, kind: str, cap: int, area_name: Any, key: str) -> None:
    engine = ctx.engine
    state, game = engine.state, engine.game
    area = state.areas.get(area_name) if isinstance(area_name, str) else None
    ctx.spawned = ""
    if area is None or not is_world_area(area):
        return
    t = game.npcs[kind]
    if t.unique and kind in state.npcs:
        return
    spawned = data(engine)["spawned"]
    alive = [h for h in spawned.get(key, ()) if h in state.npcs]
    if len(alive) >= cap:
        spawned[key] = alive
        return
    npc = spawn_npc(game, state, t, area.name, origin="spawn")
    spawned[key] = [*alive, npc.handle]
    ctx.spawned = npc.handle


def _remove_npc(ctx: Ctx, handle: Any) -> None:
    state = ctx.engine.state
    npc = state.npcs.get(handle) if isinstance(handle, str) else None
    if npc is None or npc.origin in ("quest", "tutorial"):
        return  # the story's and the lesson's NPCs are not the rules' to take
    fighting = state.agents.get(npc.engaged) if npc.engaged is not None else None
    if fighting is not None and fighting.combat == npc.handle:
        fighting.combat = None
    state.areas[npc.area].npcs.remove(npc.handle)
    del state.npcs[npc.handle]


def _exit(ctx: Ctx, other: Any, locked: bool, key: str | None) -> None:
    areas = ctx.engine.state.areas
    here = areas.get(ctx.here)
    there = areas.get(other) if isinstance(other, str) else None
    if here is None or there is None or other not in here.exits or ctx.here not in there.exits:
        return
    for way in (here.exits[other], there.exits[ctx.here]):
        way.locked = locked
        if locked and key is not None:
            way.key = key
