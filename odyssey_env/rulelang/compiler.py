"""Turning a checked rule file into the engine's own rule objects.

Each declared verb becomes an :class:`~odyssey_env.rules.ActionRule` subclass and each step rule a
:class:`~odyssey_env.rules.StepRule` subclass, collected in a module the :class:`~odyssey_env.rules.RuleBook`
reads like a game's ``rules.py`` (a rule with an engine rule's verb or name replaces it). Everything the
engine asks of a rule is derived from the declarations, never written twice:

* valid actions: the product of the slots' domains, kept where every precondition holds (and for an
  amount only the smallest and largest that do), which is exactly what ``apply`` accepts;
* ``depends_on``: what the domains and the preconditions read (None, "list afresh", when one reads a
  variable or the quest's state);
* ``emits`` and ``needs``: the verb's event and its ``emit`` effects; the first unmet precondition or slot
  turned into a quest condition the oracle can bring about (carry this, stand there);
* facts: the declared ones.
"""

from __future__ import annotations

import itertools
import types
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from odyssey_env.quests import hints
from odyssey_env.rulelang import domains
from odyssey_env.rulelang import spec as s
from odyssey_env.rulelang.checks import Checked
from odyssey_env.rulelang.effects import Program
from odyssey_env.rulelang.expr import compile_condition, hint, mentions, reads, var_reader
from odyssey_env.rulelang.runtime import Ctx, data, template
from odyssey_env.rules import DEPENDENCIES, ActionRule, Fact, StepRule, action_rule, predicate, step_rule
from odyssey_env.steprules.living import is_world_area

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.quests.spec import Condition
    from odyssey_env.state import Agent
    from odyssey_env.turn import Turn

TIMERS = "rule_timers"
_counter = itertools.count()


class _Tables:
    """The world's name tables the domains need while compiling (the Game is not built yet)."""

    def __init__(self, world_spec: Any):
        self.objects = {o.name: o for o in world_spec.objects}
        self.npcs = {n.name: n for n in world_spec.npcs}


def compile_rules(checked: Checked, world_spec: Any, file: str = "rules.json") -> types.ModuleType:
    """A module holding the compiled rules of a checked rule file, for :class:`~odyssey_env.rules.RuleBook`."""
    module = types.ModuleType(f"odyssey_rulelang_{next(_counter)}")
    module.__file__ = file
    vars = {v.name: v for v in checked.spec.vars}
    program = Program(vars)
    tables = _Tables(world_spec)
    members: dict[str, Any] = {}
    for i, (vspec, checks, effects) in enumerate(checked.verbs):
        cls = _verb(vspec, checks, program.block(effects, f"verbs[{i}].effects"), effects, vars, tables)
        members[f"verb_{i}"] = cls
    for i, (sspec, becomes, when, effects) in enumerate(checked.steps):
        members[f"step_{i}"] = _step(sspec, becomes, when, program.block(effects, f"step_rules[{i}].effects"), vars)
    for i, (pspec, check) in enumerate(checked.predicates):
        members[f"predicate_{i}"] = _predicate(pspec, check, vars)
    if program.delayed:
        members["timers"] = _timers(program)
    for name, value in members.items():
        value.__module__ = module.__name__
        setattr(module, name, value)
    return module


# ---------------------------------------------------------------------------- verbs
def _verb(
    vspec: s.VerbSpec, checks: tuple[Any, ...], run: Any, effects: tuple[Any, ...], vars: dict[str, s.Var], tables: Any
) -> type[ActionRule]:
    fill = var_reader(vars)
    slots = vspec.slots
    names = tuple(slot.name for slot in slots)
    value_fns = tuple(domains.values(slot, tables) for slot in slots)
    tests = tuple(compile_condition(c, vars) for c in checks)
    refusals = tuple(template(r.refuse, fill) for r in vspec.requires)
    slot_refusals = tuple(
        template(slot.refuse, fill) if slot.refuse else _default_refusal(vspec.verb, slot) for slot in slots
    )
    amount_at = next((i for i, slot in enumerate(slots) if slot.domain == "amount"), None)
    event = vspec.event or vspec.verb.replace(" ", "_")
    slot_reads: set[str] = set()
    for slot in slots:
        slot_reads |= domains.READS[slot.domain]
    deps: set[str] | None = slot_reads
    for c in checks:
        r = reads(c)
        deps = None if r is None or deps is None else deps | r
    declared_facts = tuple(Fact(f.topic, f.question, f.answer, f.distractors) for f in vspec.facts)
    emitted = tuple(dict.fromkeys((event, *_emitted(effects))))
    verb_name = vspec.verb

    def bind(turn: Turn, args: Iterable[Any]) -> Ctx:
        return Ctx(turn.engine, turn.agent, turn.agent.area, dict(zip(names, args, strict=True)), turn)

    # preconditions that name no slot are asked once per listing, before any slot value is tried
    fixed = tuple(t for t, c in zip(tests, checks, strict=True) if not mentions(c, names))
    varying = tuple(t for t, c in zip(tests, checks, strict=True) if mentions(c, names))

    def admissible(ctx: Ctx) -> bool:
        return all(test(ctx) for test in varying)

    class Verb(ActionRule):
        verb = verb_name
        params = tuple((slot.name, domains.PARAM_KIND[slot.domain]) for slot in slots)
        description = vspec.description
        emits = emitted
        depends_on = tuple(d for d in DEPENDENCIES if d in deps) if deps is not None else None

        def apply(self, turn: Turn, *args: Any) -> None:
            ctx = bind(turn, args)
            for slot, fn, value, refuse in zip(slots, value_fns, args, slot_refusals, strict=True):
                if slot.domain == "amount":
                    if value > slot.max:
                        return turn.fail(refuse(ctx))
                elif slot.domain != "text" and value not in fn(turn):
                    return turn.fail(refuse(ctx))
            for test, refuse in zip(tests, refusals, strict=True):
                if not test(ctx):
                    return turn.fail(refuse(ctx))
            run(ctx)
            turn.emit(event, area=ctx.here, **ctx.b)

        def candidates(self, turn: Turn) -> Iterator[str]:
            ctx = bind(turn, [None] * len(names))
            for test in fixed:
                if not test(ctx):
                    return
            lists = [fn(turn) for fn in value_fns]
            if amount_at is None:
                for combo in itertools.product(*lists):
                    ctx.b = dict(zip(names, combo, strict=True))
                    if admissible(ctx):
                        yield _command(verb_name, slots, combo)
                return
            others = [values for i, values in enumerate(lists) if i != amount_at]
            amounts = lists[amount_at]
            for rest in itertools.product(*others):
                found = []
                for order in (amounts, amounts[::-1]):
                    for n in order:
                        combo = (*rest[:amount_at], n, *rest[amount_at:])
                        ctx.b = dict(zip(names, combo, strict=True))
                        if admissible(ctx):
                            found.append(combo)
                            break
                for combo in dict.fromkeys(found):
                    yield _command(verb_name, slots, combo)

        def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
            from odyssey_env.turn import Turn

            turn = Turn(engine, agent, probe=True)
            values: list[Any] = []
            for slot, fn in zip(slots, value_fns, strict=True):
                if slot.name in match:
                    wanted = match[slot.name]
                    if slot.domain in ("held", "carried", "worn") and wanted not in fn(turn):
                        return hints.has(wanted) if wanted in engine.game.objects else None
                    values.append(wanted)
                    continue
                options = fn(turn)
                if not options:
                    if slot.domain in ("held", "carried", "worn", "near") and slot.types:
                        return hints.any_has(*slot.types)
                    return None
                values.append(options[0])
            ctx = bind(turn, values)
            for test, check in zip(tests, checks, strict=True):
                if not test(ctx):
                    return hint(check, ctx, vars)
            return None

        def facts(self, game: Any) -> Iterable[Fact]:
            return declared_facts

    Verb.__name__ = Verb.__qualname__ = "Verb_" + verb_name.replace(" ", "_")
    return action_rule(Verb)


def _default_refusal(verb: str, slot: s.Slot) -> Any:
    what = {
        "held": "something I hold",
        "carried": "something I carry",
        "worn": "something I wear",
        "ground": "something lying here",
        "near": "something I carry, wear or see here",
        "npc": "someone here",
        "exit": "a neighbouring area",
        "area": "this area or a neighbouring one",
        "amount": f"an amount up to {slot.max}",
    }.get(slot.domain, "allowed")
    if slot.types:
        what += f" ({', '.join(slot.types)})"
    name = slot.name
    return lambda ctx: f"Cannot {verb} {ctx.b.get(name)}: it is not {what}."


def _command(verb: str, slots: tuple[s.Slot, ...], combo: tuple[Any, ...]) -> str:
    return " ".join([verb, *(domains.render(slot, v) for slot, v in zip(slots, combo, strict=True))])


def _emitted(effects: Iterable[Any]) -> Iterator[str]:
    for op in effects:
        if isinstance(op, s.Emit):
            yield op.emit
        elif isinstance(op, s.If):
            yield from _emitted((*op.then, *op.otherwise))
        elif isinstance(op, s.After):
            yield from _emitted(op.do)


# ---------------------------------------------------------------------------- step rules
def _step(sspec: s.StepSpec, becomes: Any, when: Any, run: Any, vars: dict[str, s.Var]) -> type[StepRule]:
    t = sspec.trigger
    every, offset, hours, chance = t.every, t.offset, t.hours, t.chance
    event_kind = "area_entered" if t.enter is not None else t.event
    enter = frozenset(t.enter or ())
    match = dict(t.match)
    test_when = compile_condition(when, vars) if when is not None else None
    test_becomes = compile_condition(becomes, vars) if becomes is not None else None
    areas = frozenset(sspec.areas)
    kinds = frozenset(sspec.types)
    scope = sspec.scope
    name = sspec.name
    declared_facts = tuple(Fact(f.topic, f.question, f.answer, f.distractors) for f in sspec.facts)

    def items(engine: Engine) -> Iterator[Ctx]:
        """The contexts this step: one per agent, area, NPC or object in scope (or per matching event)."""
        state = engine.state
        if event_kind is not None:
            if event_kind not in engine.kinds:
                return
            for ev in list(engine.events):
                if ev.kind != event_kind or ev.agent is None:
                    continue
                agent = state.agents.get(ev.agent)
                if agent is None or agent.in_tutorial:
                    continue
                if any(ev.data.get(k) != v for k, v in match.items()):
                    continue
                here = ev.data.get("area")
                here = here if isinstance(here, str) and here in state.areas else agent.area
                if enter and here not in enter:
                    continue
                if areas and here not in areas:
                    continue
                yield Ctx(engine, agent, here, {"event": ev.data})
            return
        if scope == "agent":
            for agent in list(state.agents.values()):
                if not agent.in_tutorial and (not areas or agent.area in areas):
                    yield Ctx(engine, agent, agent.area, {})
        elif scope == "area":
            for area in list(state.areas.values()):
                if is_world_area(area) and (not areas or area.name in areas):
                    yield Ctx(engine, None, area.name, {})
        elif scope == "npc":
            for npc in list(state.npcs.values()):
                fits = (not kinds or npc.type in kinds) and (not areas or npc.area in areas)
                if fits and npc.handle in state.npcs and is_world_area(state.areas[npc.area]):
                    yield Ctx(engine, None, npc.area, {"npc": npc.handle})
        else:
            from odyssey_env.world import type_of

            for area in list(state.areas.values()):
                if not is_world_area(area) or (areas and area.name not in areas):
                    continue
                for handle in list(area.objects):
                    kind = type_of(state, handle)
                    if not kinds or kind in kinds:
                        yield Ctx(engine, None, area.name, {"object": handle})

    def key(ctx: Ctx) -> str:
        if ctx.agent is not None:
            return ctx.agent.id
        return ctx.b.get("npc") or (f"{ctx.here}/{ctx.b['object']}" if "object" in ctx.b else ctx.here)

    class Step(StepRule):
        description = sspec.description
        after = sspec.after
        before = sspec.before

        def apply(self, engine: Engine) -> None:
            state = engine.state
            if every is not None and state.step % every != offset:
                return
            if hours is not None and not _hours(state.minute, hours):
                return
            was: list[str] = []  # read only with a becomes test
            now: list[str] = []
            if test_becomes is not None:
                was = data(engine)["was"].get(name, [])
            for ctx in items(engine):
                if test_becomes is not None:
                    if not test_becomes(ctx):
                        continue
                    k = key(ctx)
                    now.append(k)
                    if k in was:
                        continue
                if test_when is not None and not test_when(ctx):
                    continue
                if chance is not None and engine.rng.random() >= chance:
                    continue
                run(ctx)
            if test_becomes is not None:
                data(engine)["was"][name] = now

        def facts(self, game: Any) -> Iterable[Fact]:
            return declared_facts

    Step.name = name
    Step.__name__ = Step.__qualname__ = "Step_" + name
    return step_rule(Step)


def _hours(minute: int, window: tuple[int, int]) -> bool:
    hour = (minute // 60) % 24
    lo, hi = window
    return lo <= hour < hi if lo < hi else hour >= lo or hour < hi


def _timers(program: Program) -> type[StepRule]:
    delayed = program.delayed

    class Timers(StepRule):
        name = TIMERS
        description = "Delayed effects of the rule file run when their time comes."
        after = ("respawn",)  # the world's processes done, before the quests look
        before = ("tutorial",)

        def apply(self, engine: Engine) -> None:
            state = engine.state
            timers = data(engine)["timers"]
            if not timers:
                return
            due = [t for t in timers if t[0] <= state.step]
            if not due:
                return
            timers[:] = [t for t in timers if t[0] > state.step]
            for _, ident, who, here, bindings in due:
                block = delayed.get(ident)
                if block is None or here not in state.areas:
                    continue
                agent = state.agents.get(who) if who is not None else None
                if who is not None and agent is None:
                    continue  # the agent left the episode: what was to happen to it does not
                block[0](Ctx(engine, agent, here, dict(bindings)))

    return step_rule(Timers)


# ---------------------------------------------------------------------------- predicates
def _predicate(pspec: s.PredicateSpec, check: Any, vars: dict[str, s.Var]) -> Any:
    test = compile_condition(check, vars)
    params = pspec.params

    def fn(engine: Engine, agent: Agent, **args: Any) -> bool:
        if set(args) != set(params):
            return False
        return bool(test(Ctx(engine, agent, agent.area, dict(args))))

    fn.__name__ = fn.__qualname__ = f"predicate_{pspec.name}"
    return predicate(pspec.name)(fn)
