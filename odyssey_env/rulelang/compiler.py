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
  turned into a quest condition the oracle can bring about (carry this, stand there; a flag or counter
  another verb raises: that verb's event);
* ``produces``: the object types its own ``transform`` / ``produce`` effects name (a planner's way to get one);
* facts: the declared ones.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from odyssey_env.quests import hints
from odyssey_env.quests.tutorial import PLACE as TUTORIAL_PLACE
from odyssey_env.rulelang import domains, phantoms
from odyssey_env.rulelang import spec as s
from odyssey_env.rulelang.checks import Checked
from odyssey_env.rulelang.effects import Program
from odyssey_env.rulelang.expr import (
    compile_condition,
    craftable,
    hint,
    mentions,
    pair_test,
    reads,
    value_filter,
    var_reader,
    vars_read,
)
from odyssey_env.rulelang.runtime import KEY, NO_NOTES, Ctx, data, rebind, template
from odyssey_env.rules import DEPENDENCIES, ActionRule, Fact, StepRule, action_rule, predicate, step_rule
from odyssey_env.steprules.living import is_world_area, occupied
from odyssey_env.verbs.movement import in_combat
from odyssey_env.world import held_containers, nearest, type_of, unlocked

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
    raisers = _raisers(checked)
    for i, (vspec, checks, effects) in enumerate(checked.verbs):
        program.params = dict(vspec.params)  # this game's values (checks.py put them there): {param.<name>}
        run = program.block(effects, f"verbs[{i}].effects")
        program.params = None
        cls = _verb(vspec, checks, run, effects, vars, tables, raisers)
        members[f"verb_{i}"] = cls
    for i, (sspec, becomes, when, effects) in enumerate(checked.steps):
        program.wield = sspec.wield  # {wield.<slot>} in this rule's effects reads it
        program.params = dict(sspec.params)  # this game's values (checks.py put them there): {param.<name>}
        program.rule, program.phantoms = sspec.name, sspec.phantoms
        run = program.block(effects, f"step_rules[{i}].effects")
        start = checked.starts.get(i)
        at_start = program.block(start, f"step_rules[{i}].at_start") if start else None
        gone = checked.let_gos.get(i)
        let_go = program.block(gone, f"step_rules[{i}].let_go") if gone else None
        program.wield = program.params = program.phantoms = None
        keeper = _keeper(sspec, vars) if sspec.phantoms is not None else None
        members[f"step_{i}"] = _step(sspec, becomes, when, run, vars, at_start, let_go, keeper, effects)
    for i, (pspec, check) in enumerate(checked.predicates):
        members[f"predicate_{i}"] = _predicate(pspec, check, vars)
    for i, (hspec, checks, then) in enumerate(checked.hooks):
        members[f"hook_{i}"] = _hook(hspec, checks, program.block(then, f"hooks[{i}].then"), bool(then), vars)
    if program.delayed:
        members["timers"] = _timers(program)
    for name, value in members.items():
        value.__module__ = module.__name__
        setattr(module, name, value)
    return module


# ---------------------------------------------------------------------------- verbs
def _raisers(checked: Checked) -> dict[str, str]:
    """Variable -> the event of the first verb whose own effects (not a branch's, not a delay's) raise it:
    set a flag, add to a counter or set it above 0. A precondition on that variable that fails is then
    planned as that verb's event ("bank the fire first"), which no state condition could say."""
    out: dict[str, str] = {}
    for vspec, _checks, effects in checked.verbs:
        if vspec.records_event:
            event = vspec.event or vspec.verb.replace(" ", "_")
        else:  # its first emit outside a branch is what every success records
            emits = [op.emit for op in effects if isinstance(op, s.Emit)]
            if not emits:
                continue
            event = emits[0]
        for op in effects:
            if isinstance(op, s.SetFlag) and op.value:
                out.setdefault(op.set_flag, event)
            elif isinstance(op, s.AddCounter | s.SetCounter) and isinstance(op.value, int) and op.value > 0:
                out.setdefault(op.add if isinstance(op, s.AddCounter) else op.set, event)
    return out


def _raised(check: Any, raisers: dict[str, str], own: str) -> Condition | None:
    """The event that would make a failed flag or counter precondition hold (another verb's), if any."""
    var = check.flag if isinstance(check, s.Flag) else check.counter if isinstance(check, s.CounterIs) else None
    event = (
        raisers.get(var) if var is not None and (not isinstance(check, s.CounterIs) or check.below is None) else None
    )
    return hints.did(event) if event is not None and event != own else None


def _verb(
    vspec: s.VerbSpec,
    checks: tuple[Any, ...],
    run: Any,
    effects: tuple[Any, ...],
    vars: dict[str, s.Var],
    tables: Any,
    raisers: dict[str, str] | None = None,
) -> type[ActionRule]:
    fill = var_reader(vars, None, dict(vspec.params))
    slots = vspec.slots
    names = tuple(slot.name for slot in slots)
    value_fns = tuple(domains.values(slot, tables) for slot in slots)
    member_fns = tuple(domains.member(slot, tables, fn) for slot, fn in zip(slots, value_fns, strict=True))
    tests = tuple(compile_condition(c, vars) for c in checks)
    refusals = tuple(template(r.refuse, fill) for r in vspec.requires)
    slot_refusals = tuple(
        template(slot.refuse, fill) if slot.refuse else _default_refusal(vspec.verb, slot) for slot in slots
    )
    amount_at = next((i for i, slot in enumerate(slots) if slot.domain == "amount"), None)
    event = vspec.event or vspec.verb.replace(" ", "_")
    slot_reads: set[str] = set()
    for slot in slots:
        slot_reads |= domains.reads(slot)
    deps: set[str] | None = slot_reads
    for c in checks:
        r = reads(c)
        deps = None if r is None or deps is None else deps | r
    watched = tuple(sorted(set().union(*map(vars_read, checks)))) if deps is not None and "vars" in deps else ()
    declared_facts = tuple(Fact(f.topic, f.question, f.answer, f.distractors) for f in vspec.facts)
    records = vspec.records_event
    emitted = tuple(dict.fromkeys((*((event,) if records else ()), *_emitted(effects))))
    made = tuple(dict.fromkeys(_produced(effects)))
    pinned = tuple(_pinned_emits(effects, {}, set(names)))
    told = {k for _, literals, _ in pinned for k in literals}  # event data an emit of this verb sets to a literal
    by_slot = dict(_slot_data(effects, set(names)))  # event data an emit fills from a slot (or its type)
    local = any(slot.domain in ("ground", "npc", "near") or {"ground", "npc", "near"} & set(slot.of) for slot in slots)
    local = local or any(_local(c) for c in checks)
    here_keys = tuple(dict.fromkeys(_here_data(effects)))  # event data an emit fills with {here}
    verb_name = vspec.verb

    def bind(turn: Turn, args: Iterable[Any]) -> Ctx:
        return Ctx(turn.engine, turn.agent, turn.agent.area, dict(zip(names, args, strict=True)), turn)

    # In the listing (every step for a verb that reads the rules' memory) the slots start unbound and each
    # combination tried is a tuple of one value per slot, made here from one list per slot: their lengths
    # need no check, and a strict zip (keyword arguments: no fast call) costs about twice a plain one.
    def unbound(turn: Turn) -> Ctx:
        return Ctx(turn.engine, turn.agent, turn.agent.area, dict.fromkeys(names), turn)

    # preconditions that name no slot are asked once per listing, before any slot value is tried; those that
    # name one slot filter that slot's values before the product is formed (a check holds or fails whatever
    # the other slots are); the rest are asked of each combination: a comparison of two slots' values as
    # such, anything else through a context
    named = [tuple(n for n in names if mentions(c, (n,))) for c in checks]
    fixed = tuple(t for t, m in zip(tests, named, strict=True) if not m)
    fixed_checks = tuple((t, c) for t, c, m in zip(tests, checks, named, strict=True) if not m)
    pairs = tuple(p for c, m in zip(checks, named, strict=True) if len(m) > 1 and (p := pair_test(c, names)))
    varying = tuple(
        t for t, c, m in zip(tests, checks, named, strict=True) if len(m) > 1 and pair_test(c, names) is None
    )

    def admissible(ctx: Ctx, combo: tuple[Any, ...]) -> bool:
        return all(p(combo) for p in pairs) and all(test(ctx) for test in varying)

    # each slot's one-slot checks: as a filter over all its values where the kind allows, else one by one
    filters: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []
    # slots whose values and filters are the same but for the slot's name (a pair of herbs) share one list
    same_as: list[int | None] = []
    keys: list[Any] = []
    for n, slot in zip(names, slots, strict=True):
        batch, single = [], []
        shapes = []
        plain = frozenset(
            t for t in slot.types if slot.domain == "type" and not tables.objects[t].instanced
        )  # a type slot's values that are not individually named: counted as the type
        for test, check, m in zip(tests, checks, named, strict=True):
            if m == (n,):
                f = value_filter(check, n, plain)
                if f is not None:
                    batch.append(f)
                    shapes.append(dataclasses.replace(check, **{s.tag(type(check)): "$"}))
                else:
                    single.append(test)
        filters.append((tuple(batch), tuple(single)))
        key = None if single else (dataclasses.replace(slot, name="", refuse=""), tuple(shapes))
        same_as.append(keys.index(key) if key is not None and key in keys else None)
        keys.append(key)

    blank = [None] * len(names)
    # the object types a slot's own is_type check asks for (a slot that lists every carried thing and refuses
    # "not a light source" apart from "I do not carry it"): what to get when it has no value at all
    slot_kinds = tuple(
        next((c.types for c, m in zip(checks, named, strict=True) if m == (n,) and _is_type_of(c, n)), ())
        for n in names
    )
    # a command: the verb, then each value (a text in double quotes), formatted in one call (a listing writes
    # many; a verb is plain lower-case words, so it holds no brace)
    explicit = tuple(i for i, slot in enumerate(slots) if not slot.implicit)
    implicit = tuple(i for i, slot in enumerate(slots) if slot.implicit)
    formatted = " ".join([verb_name, *(_FORMAT[slots[i].domain == "text"] for i in explicit)]).format
    if implicit:

        def command_of(*combo: Any) -> str:
            return formatted(*(combo[i] for i in explicit))

    else:
        command_of = formatted
    # else the listing needs none (an amount's search fills one for each combination it tries)
    with_ctx = bool(fixed or varying or amount_at is not None or any(single for _, single in filters))

    per_slot = tuple(zip(names, value_fns, filters, same_as, strict=True))  # zipped once, read every listing

    def narrowed(turn: Turn, ctx: Any) -> list[list[Any]]:
        lists: list[list[Any]] = []
        for name, fn, (batch, single), twin in per_slot:
            if twin is not None:
                lists.append(lists[twin])
                continue
            values = fn(turn)
            for f in batch:
                if values:
                    values = f(turn, values)
            if single and values:
                kept = []
                for v in values:
                    ctx.b = {name: v}
                    for test in single:
                        if not test(ctx):
                            break
                    else:
                        kept.append(v)
                values = kept
            if not values:
                return []  # no command: the product is empty
            lists.append(values[:1] if slots[len(lists)].implicit else values)  # an implicit slot: its pick
        return lists

    def slot_lists(turn: Turn) -> tuple[Any, list[list[Any]]] | None:
        """The listing's context and each slot's values that its own checks keep (None: no command)."""
        ctx = unbound(turn) if with_ctx else None
        for test in fixed:
            assert ctx is not None, "with_ctx holds wherever a test reads the context"
            if not test(ctx):
                return None
        lists = narrowed(turn, ctx)
        if not lists and names:
            return None
        return ctx, lists

    # every combination of the kept values is a command (no amount, no check of two slots): listed directly
    direct = amount_at is None and not varying and not pairs and not implicit

    def listed(turn: Turn) -> Iterator[str]:
        found = slot_lists(turn)
        if found is None:
            return
        lists = found[1]
        if len(lists) == 1:
            yield from map(formatted, lists[0])
        else:
            for combo in itertools.product(*lists):
                yield formatted(*combo)

    def combos(turn: Turn) -> Iterator[tuple[Any, ...]]:
        """The slot values of every command the verb accepts now (an amount: its smallest and largest)."""
        slotted = slot_lists(turn)
        if slotted is None:
            return
        ctx, lists = slotted
        if amount_at is None:
            if not varying:  # no context to fill for each combination
                if not pairs:
                    yield from itertools.product(*lists)
                    return
                for combo in itertools.product(*lists):
                    if all(p(combo) for p in pairs):
                        yield combo
                return
            assert ctx is not None, "with_ctx holds wherever a test reads the context"
            for combo in itertools.product(*lists):
                ctx.b = dict(zip(names, combo))  # noqa: B905 (one value per slot: see unbound)
                if admissible(ctx, combo):
                    yield combo
            return
        others = [values for i, values in enumerate(lists) if i != amount_at]
        amounts = lists[amount_at]
        assert ctx is not None, "with_ctx holds wherever a test reads the context"
        for rest in itertools.product(*others):
            found = []
            for order in (amounts, amounts[::-1]):
                for n in order:
                    combo = (*rest[:amount_at], n, *rest[amount_at:])
                    ctx.b = dict(zip(names, combo))  # noqa: B905 (one value per slot: see unbound)
                    if admissible(ctx, combo):
                        found.append(combo)
                        break
            yield from dict.fromkeys(found)

    def wanted_by(match: Mapping[str, Any]) -> Callable[[Engine, tuple[Any, ...]], bool]:
        """Whether a combo's command would record an event with ``match``'s data: its slots' values, and
        the data an emit fills from a slot (``"{npc_name}"``, ``"{npc_name.type}"``)."""
        tests = []
        for key, want in match.items():
            if key in names:
                tests.append((names.index(key), False, want))
            elif key in by_slot:
                tests.append((names.index(by_slot[key][0]), by_slot[key][1], want))

        def fits(engine: Engine, combo: tuple[Any, ...]) -> bool:
            state = engine.state
            for i, typed, want in tests:
                value = combo[i]
                if typed:
                    npc = state.npcs.get(value)
                    value = npc.type if npc is not None else type_of(state, value)
                if value != want:
                    return False
            return True

        return fits

    class Verb(ActionRule):
        verb = verb_name
        params = tuple((slot.name, domains.PARAM_KIND[slot.domain]) for slot in slots if not slot.implicit)
        Params = _params_class(verb_name.replace(" ", "_"), vspec.params)  # game.params.<verb>: rule.settings
        description = vspec.description
        emits = emitted
        produces = made
        depends_on = tuple(d for d in DEPENDENCIES if d in deps) if deps is not None else None
        reads_vars = watched

        def apply(self, turn: Turn, *args: Any) -> None:
            if implicit:
                given = iter(args)
                args = tuple(picked(turn, i) if slot.implicit else next(given) for i, slot in enumerate(slots))
            ctx = bind(turn, args)
            for slot, has, value, refuse in zip(slots, member_fns, args, slot_refusals, strict=True):
                if slot.implicit:
                    continue  # picked, not given: its preconditions say what is missing
                if slot.domain == "amount":
                    if value > slot.max:
                        return turn.fail(refuse(ctx))
                elif slot.domain != "text" and not has(turn, value):
                    return turn.fail(refuse(ctx))
            for test, refuse in zip(tests, refusals, strict=True):
                if not test(ctx):
                    return turn.fail(refuse(ctx))
            run(ctx)
            if records:
                turn.emit(event, area=ctx.here, **ctx.b)

        def candidates(self, turn: Turn) -> Iterator[str]:
            if direct:
                return listed(turn)
            return (command_of(*combo) for combo in combos(turn))

        def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
            from odyssey_env.turn import Turn

            turn = Turn(engine, agent, probe=True)
            wanted_data = {k: v for k, v in match.items() if k in told and k not in names}
            if wanted_data:  # an event with these data: the slot values its emit's guard pins
                pins = next((p for _, literals, p in pinned if _fits(literals, wanted_data)), None)
                if pins is None:
                    return None  # no emit of this verb says that
                match = {**pins, **match}
            for key, (slot_name, typed) in by_slot.items():  # an emit records this slot's value as ``key``
                if key in match and not typed and slot_name not in match:
                    match = {**match, slot_name: match[key]}
            values: list[Any] = []
            for slot, fn, one_slot, kinds in zip(slots, value_fns, filters, slot_kinds, strict=True):
                wanted = match.get(slot.name)
                if wanted is not None and slot.domain in ("held", "carried", "worn") and wanted not in fn(turn):
                    if wanted in engine.game.objects:
                        return hints.has(wanted)
                    if wanted in engine.state.instances:
                        return None  # that very thing, somewhere I cannot tell
                    wanted = None  # gone from the world: any value will do
                if wanted is not None and slot.domain in ("exit", "area") and wanted not in fn(turn):
                    # a way from somewhere else: first what no slot changes ("carry 2 deal_plank"), then go
                    # where the way starts
                    probe = bind(turn, blank)
                    for test, check in fixed_checks:
                        if not test(probe):
                            found = hint(check, probe, vars)
                            if found is not None:
                                return found
                    return elsewhere(engine, agent, match)
                if wanted is not None:
                    values.append(wanted)
                    continue
                options = fn(turn)
                if not options:
                    if slot.domain in ("held", "carried", "worn", "near") and (slot.types or kinds):
                        return hints.any_has(*(slot.types or kinds))
                    return elsewhere(engine, agent, match) if local else None
                # an ingredient (a type slot) is the first of its kinds, so that the hint names it; any other
                # slot, the first value its own checks admit (the way to barricade, not the area I stand in)
                values.append(options[0] if slot.domain == "type" else admitted(turn, slot.name, options, one_slot))
            ctx = bind(turn, values)
            deferred = False  # a check about what is here failed: another area may meet it, once the rest holds
            for test, check in zip(tests, checks, strict=True):
                if not test(ctx):
                    found = hint(check, ctx, vars) or _raised(check, raisers or {}, event)
                    if found is None and local and _local(check):
                        deferred = True  # "not here": first what the rest needs, wherever I am
                        continue
                    return found if found is not None or not local else elsewhere(engine, agent, match)
            state = engine.state
            for k in here_keys:  # the event wanted records another area: stand there
                where = match.get(k)
                if isinstance(where, str) and where != agent.area and where in state.areas:
                    return hints.in_area(where)
            return elsewhere(engine, agent, match) if deferred else None

        def facts(self, game: Any) -> Iterable[Fact]:
            return declared_facts

    def picked(turn: Turn, i: int) -> Any:
        """An implicit slot's value: the first its checks admit, else the first its filters keep (None: none)."""
        options = value_fns[i](turn)
        return admitted(turn, names[i], options, filters[i]) if options else None

    def admitted(turn: Turn, name: str, options: list[Any], one_slot: tuple[tuple[Any, ...], tuple[Any, ...]]) -> Any:
        """The first of a slot's values that its one-slot checks admit (the first value when none is)."""
        batch, single = one_slot
        kept = options
        for f in batch:
            if kept:
                kept = f(turn, kept)
        if single and kept:
            probe = bind(turn, blank)
            for v in kept:
                probe.b = {name: v}
                if all(test(probe) for test in single):
                    return v
        return kept[0] if kept else options[0]  # the closest: one the filters kept, so a hint names its lack

    def elsewhere(engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        """For a verb about what is here (the ground, the NPCs): the nearest area, along open ways, where
        a command of it that would record ``match`` is accepted, as "stand there" (None: none is)."""
        from odyssey_env.turn import Turn

        fits = wanted_by(match)
        start = agent.area

        def accepts(area: str) -> bool:
            agent.area = area  # a probe: nothing changes, and the agent is put back below
            try:
                return any(fits(engine, combo) for combo in combos(Turn(engine, agent, probe=True)))
            finally:
                agent.area = start

        if accepts(start):
            return None
        where = nearest(engine.state, start, accepts, unlocked)
        return hints.in_area(where) if where is not None else None

    Verb.__name__ = Verb.__qualname__ = "Verb_" + verb_name.replace(" ", "_")
    return action_rule(Verb)


def _default_refusal(verb: str, slot: s.Slot) -> Any:
    what = {
        "held": "something I hold",
        "carried": "something I carry",
        "worn": "something I wear",
        "ground": "something lying here",
        "near": "something I carry, wear or see here",
        "type": "a kind of thing this takes",
        "npc": "someone here",
        "exit": "a neighbouring area",
        "area": "this area or a neighbouring one",
        "amount": f"an amount up to {slot.max}",
    }.get(slot.domain, "allowed")
    if slot.types:
        what += f" ({', '.join(slot.types)})"
    name = slot.name
    return lambda ctx: f"Cannot {verb} {ctx.b.get(name)}: it is not {what}."


_FORMAT = {False: "{}", True: '"{}"'}


def _emitted(effects: Iterable[Any]) -> Iterator[str]:
    for op in effects:
        if isinstance(op, s.Emit):
            yield op.emit
        elif isinstance(op, s.If):
            yield from _emitted((*op.then, *op.otherwise))
        elif isinstance(op, s.After):
            yield from _emitted(op.do)
        elif isinstance(op, s.Dispel):  # once for each pile it takes back, or else
            yield from _emitted((*op.do, *op.otherwise))


def _produced(effects: Iterable[Any]) -> Iterator[str]:
    """Object types every command of a verb that succeeds gives the agent by name: its own ``transform``
    (into) and ``produce`` effects, not a branch's (which of Lazaret's remedies ``concoct`` makes depends on
    the herbs: a planner that wants one must not take the verb for a source of each) nor a delay's."""
    for op in effects:
        if isinstance(op, s.Transform) and not op.into.startswith("$"):
            yield op.into
        elif isinstance(op, s.Produce) and not op.produce.startswith("$"):
            yield op.produce


def _pinned_emits(
    effects: Iterable[Any], pins: dict[str, str], slots: set[str]
) -> Iterator[tuple[str, dict[str, Any], dict[str, str]]]:
    """Each ``emit`` of a verb with its literal data and the slot values the ``if`` guarding it pins
    (``same`` of a slot and a literal; ``all_of`` pins all, ``any_of`` its first alternative): what the
    oracle asks of the slots when a quest wants that event (``"remedy": "fever_draught"``)."""
    for op in effects:
        if isinstance(op, s.Emit):
            literals = {k: list(v) if isinstance(v, tuple) else v for k, v in op.data.items() if _literal(v)}
            yield op.emit, literals, dict(pins)
        elif isinstance(op, s.If):
            yield from _pinned_emits(op.then, {**pins, **_pins(op.if_, slots)}, slots)
            yield from _pinned_emits(op.otherwise, pins, slots)


def _literal(value: s.EventValue) -> bool:
    """Whether an event datum is the same whatever the firing (no ``{...}`` to fill in it; as the event
    records it: a list for a list)."""
    items = value if isinstance(value, tuple) else (value,)
    return not any(isinstance(v, str) and "{" in v for v in items)


def _pins(cond: Any, slots: set[str]) -> dict[str, str]:
    if isinstance(cond, s.Same):
        a, b = cond.same
        for ref, lit in ((a, b), (b, a)):
            if ref.startswith("$") and ref[1:] in slots and "{" not in lit and not lit.startswith("$"):
                return {ref[1:]: lit}
        return {}
    if isinstance(cond, s.AllOf):
        out: dict[str, str] = {}
        for c in cond.all_of:
            out.update(_pins(c, slots))
        return out
    if isinstance(cond, s.AnyOf):
        return _pins(cond.any_of[0], slots)
    return {}


def _slot_data(effects: Iterable[Any], slots: set[str]) -> Iterator[tuple[str, tuple[str, bool]]]:
    """Event data an emit of the verb fills from one slot: key -> (slot, whether it is the slot's type)."""
    for op in effects:
        if isinstance(op, s.Emit):
            for k, v in op.data.items():
                if isinstance(v, str) and v.startswith("{") and v.endswith("}") and v.count("{") == 1:
                    name = v[1:-1]
                    typed = name.endswith(".type")
                    base = name[:-5] if typed else name
                    if base in slots:
                        yield k, (base, typed)
        elif isinstance(op, s.If):
            yield from _slot_data((*op.then, *op.otherwise), slots)


def _is_type_of(cond: Any, name: str) -> bool:
    return isinstance(cond, s.IsType) and cond.is_type == f"${name}" and bool(cond.types)


def _here_data(effects: Iterable[Any]) -> Iterator[str]:
    """Event data an emit of the verb fills with exactly ``{here}``: the area the agent stood in."""
    for op in effects:
        if isinstance(op, s.Emit):
            yield from (k for k, v in op.data.items() if v == "{here}")
        elif isinstance(op, s.If):
            yield from _here_data((*op.then, *op.otherwise))


def _local(cond: Any) -> bool:
    """Whether a condition reads what is in the area (so that another area may meet it)."""
    if isinstance(cond, s.AllOf | s.AnyOf | s.NoneOf):
        return any(_local(c) for c in getattr(cond, s.tag(type(cond))))
    return isinstance(cond, s.LiesHere | s.OnGround | s.NpcHere | s.Hostile | s.CanCraft)


def _fits(literals: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(k in literals and literals[k] == v for k, v in wanted.items())


# ---------------------------------------------------------------------------- step rules
def _step(
    sspec: s.StepSpec,
    becomes: Any,
    when: Any,
    run: Any,
    vars: dict[str, s.Var],
    at_start: Any = None,
    let_go: Any = None,
    keeper: Callable[[Engine], None] | None = None,
    ops: tuple[Any, ...] | None = None,
) -> type[StepRule]:
    t = sspec.trigger
    assert not isinstance(t.every, str), "checks.py reads a $param.<name> every"
    every, offset, hours, chance = t.every, t.offset, t.hours, t.chance
    event_kinds = frozenset(("area_entered",) if t.enter is not None else _kinds(t.event))
    enter = frozenset(t.enter or ())
    match = dict(t.match)
    # a held rule whose when is a stat of the held thing's type asks it once per type, in the scope's loop
    type_gate = when if sspec.scope == "held" and isinstance(when, s.StatIs) and when.of == "$object" else None
    test_when = compile_condition(when, vars) if when is not None and type_gate is None else None
    test_becomes = compile_condition(becomes, vars) if becomes is not None else None
    areas = frozenset(sspec.areas)
    kinds = frozenset(sspec.types)
    scope = sspec.scope
    tutorial = sspec.tutorial
    modify = sspec.modify
    wield = sspec.wield
    # a modify whose when is "its kind is in this area's set" need not ask it where the set holds nothing
    gate = when.in_set if isinstance(when, s.InSet) and vars[when.in_set].scope == "area" else None
    # a recipe rule that fires on can_craft of its recipe need not ask it of a recipe whose stations are not
    # here (its becomes, or its when when it has no becomes: skipping an item is then the same as a false test)
    first = becomes if becomes is not None else when
    crafting = isinstance(first, s.CanCraft) and first.can_craft == "$recipe"
    # ...nor of one the agent cannot craft, all asked at once, when no effect can change what it carries
    sifting = crafting and ops is not None and _keeps_holdings(ops)
    name = sspec.name
    declared_facts = tuple(Fact(f.topic, f.question, f.answer, f.distractors) for f in sspec.facts)

    def items(engine: Engine, gate: bool = True) -> Iterator[Ctx]:
        """The contexts this step: one per agent, area, NPC or object in scope (or per matching event); ``gate``
        False (``at_start``, which asks no when) lets a held rule's type gate admit every thing."""
        state = engine.state
        if event_kinds:
            if event_kinds.isdisjoint(engine.kinds):
                return
            for ev in list(engine.events):
                if ev.kind not in event_kinds or ev.agent is None:
                    continue
                agent = state.agents.get(ev.agent)
                if agent is None or (agent.in_tutorial and not tutorial):
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
        # one context for the loop, rebound per item (runtime.rebind): the rule is done with one before the next
        if scope == "agent":
            for agent in list(state.agents.values()):
                if (tutorial or not agent.in_tutorial) and (not areas or agent.area in areas):
                    yield Ctx(engine, agent, agent.area, {})  # few agents; their bindings differ (the agent)
        elif scope == "recipe":
            yield from recipe_items(engine)
        elif scope == "held":
            yield from held_items(engine, gate)
        elif scope == "instance":
            yield from instance_items(engine)
        elif scope == "world":
            yield Ctx(engine, None, "", {})  # once a step, about no one and nowhere in particular
        elif scope == "area":
            ctx = Ctx(engine, None, "", {})
            for area in list(state.areas.values()):
                if is_world_area(area) and (not areas or area.name in areas):
                    rebind(ctx, area.name, "", None).b.clear()  # an area binds nothing but $here
                    yield ctx
        elif scope == "npc":
            ctx = Ctx(engine, None, "", {"npc": ""})
            for npc in list(state.npcs.values()):
                fits = (not kinds or npc.type in kinds) and (not areas or npc.area in areas)
                if fits and npc.handle in state.npcs and is_world_area(state.areas[npc.area]):
                    yield rebind(ctx, npc.area, "npc", npc.handle)
        else:
            ctx = Ctx(engine, None, "", {"object": ""})
            for area in list(state.areas.values()):
                if not is_world_area(area) or (areas and area.name not in areas):
                    continue
                for handle in list(area.objects):
                    kind = type_of(state, handle)
                    if not kinds or kind in kinds:
                        yield rebind(ctx, area.name, "object", handle)

    recipes_of: list[Any] = [None, [], None]  # (game, its recipes in scope, their _Stations): recipe_items

    def recipe_items(engine: Engine) -> Iterator[Ctx]:
        """Scope ``recipe``: each agent with each craftable object type (``types``: those), in file order."""
        game, state = engine.game, engine.state
        if recipes_of[0] is not game:  # the game's recipes in scope, with their stations: worked out once per game
            chosen = [t for t in game.recipes if not kinds or t.name in kinds]
            recipes_of[:] = [game, [t.name for t in chosen], _Stations(chosen)]
        recipes, stations = recipes_of[1], recipes_of[2]
        for agent in list(state.agents.values()):
            if (tutorial or not agent.in_tutorial) and (not areas or agent.area in areas):
                if sifting:  # its stations asked with the rest
                    mine = craftable(engine, agent, recipes)
                else:
                    mine = stations.here(state.areas[agent.area].objects) if crafting else recipes
                # one context per agent, rebound per recipe: the rule reads it before the next is asked for
                ctx = Ctx(engine, agent, agent.area, {"recipe": ""})
                for kind in mine:
                    ctx.b["recipe"] = kind
                    ctx.here, ctx.removed, ctx.notes = agent.area, 0, NO_NOTES
                    yield ctx

    def instance_items(engine: Engine) -> Iterator[Ctx]:
        """Scope ``instance``: each named thing of the rule's types wherever it is, in the order they were made,
        ``$here`` where it lies or where its carrier stands; one in the tutorial, or that nothing holds, is left
        out. One taken meanwhile (an earlier thing's effects) is skipped."""
        state = engine.state
        ctx = Ctx(engine, None, "", {"object": ""})  # rebound per thing (runtime.rebind)
        for handle in [h for h, inst in state.instances.items() if inst.type in kinds]:
            if handle not in state.instances:
                continue
            here = whereabouts(engine, handle)
            if here is not None:
                yield rebind(ctx, here, "object", handle)

    held_vars = tuple(v.name for v in vars.values() if v.scope == "held")

    def let_go_of(engine: Engine, agent: Any) -> None:
        """``let_go``: for each thing that left the agent's hands while a per-held variable kept a value on it
        (in the order the variables are declared, then the order the values came), its effects run with it
        bound as ``$object``; then its per-held values are forgotten, each of them."""
        tables = data(engine)["vars"]
        prefix, hands = f"{agent.id}/", agent.hands
        gone: dict[str, None] = {}
        for var in held_vars:
            for k in tables.get(var, ()):
                if k.startswith(prefix) and k[len(prefix) :] not in hands:
                    gone[k] = None
        for k in gone:
            run_let_go(Ctx(engine, agent, agent.area, {"object": k[len(prefix) :]}))
            for var in held_vars:
                tables.get(var, {}).pop(k, None)

    run_let_go = let_go
    gated: dict[str, bool] = {}  # object type -> whether the type gate admits it (types are the game's: fixed)

    def admits(engine: Engine, kind: str) -> bool:
        ok = gated.get(kind)
        if ok is None:
            assert type_gate is not None, "asked only with a type gate"
            t = engine.game.objects.get(kind)
            value = getattr(t, type_gate.stat, 0) if t is not None else 0
            lo, hi = type_gate.at_least, type_gate.below
            ok = gated[kind] = (lo is None or value >= lo) and (hi is None or value < hi)
        return ok

    def held_items(engine: Engine, gate: bool = True) -> Iterator[Ctx]:
        """Scope ``held``: each agent with each thing in its hands (``types``: of those types), in the hands'
        order; the hands are copied first, so an effect that drops or stows one does not skip the next. A rule
        with ``let_go`` first lets go, for each agent, of what left its hands (:func:`let_go_of`)."""
        state = engine.state
        tables = state.rule_data[KEY]["vars"] if run_let_go is not None and KEY in state.rule_data else None
        letting = tables is not None and any(tables.get(v) for v in held_vars)
        for agent in list(state.agents.values()):
            if (agent.in_tutorial and not tutorial) or (areas and agent.area not in areas):
                continue
            if letting:
                let_go_of(engine, agent)
            if not agent.hands:
                continue
            ctx = None  # one context per agent, rebound per thing: the rule is done with one before the next
            for handle in list(agent.hands):
                if handle not in agent.hands:
                    continue
                if kinds or (gate and type_gate is not None):
                    kind = type_of(state, handle)
                    if (kinds and kind not in kinds) or (gate and type_gate is not None and not admits(engine, kind)):
                        continue
                if ctx is None:
                    ctx = Ctx(engine, agent, agent.area, {"object": handle})
                else:
                    ctx.b["object"], ctx.here, ctx.removed, ctx.notes = handle, agent.area, 0, NO_NOTES
                yield ctx

    def wield_attack(engine: Engine) -> None:
        """``wield``: each agent in scope strikes with its base attack plus the best thing in its hands, each
        blunted by its per-held counter (:class:`~odyssey_env.rulelang.spec.Wield`)."""
        assert wield is not None, "called only for a wield rule"
        state, objects = engine.state, engine.game.objects
        table = data(engine)["vars"].get(wield.counter, {}) if KEY in state.rule_data else {}
        less, floor = wield.less, wield.floor
        for agent in state.agents.values():
            if (agent.in_tutorial and not tutorial) or (areas and agent.area not in areas):
                continue
            best = 0
            for handle in agent.hands:
                attack = objects[type_of(state, handle)].attack
                if attack <= 0:
                    continue
                units = table.get(f"{agent.id}/{handle}", 0) if table else 0
                best = max(best, attack - less * units, math.ceil(attack * floor))
            agent.attack = agent.base_attack + best

    def key(ctx: Ctx) -> str:
        if scope == "held":  # per agent and held thing: one agent's blade is not another's
            return f"{ctx.agent.id if ctx.agent is not None else ''}/{ctx.b['object']}"
        if scope == "instance":  # per named thing, wherever it is carried: it stays the one thing
            return str(ctx.b["object"])
        if "recipe" in ctx.b:  # per agent, area and recipe: a recipe becomes craftable anew in another area
            return f"{ctx.agent.id if ctx.agent is not None else ''}/{ctx.here}/{ctx.b['recipe']}"
        if ctx.agent is not None:
            return ctx.agent.id
        return ctx.b.get("npc") or (f"{ctx.here}/{ctx.b['object']}" if "object" in ctx.b else ctx.here)

    def hold(engine: Engine) -> None:
        """A ``modify`` rule: each NPC for which ``when`` holds has its stat held to ``times`` what it was (and
        the effects run); each held before for which it no longer holds (or gone from the scope) gets it back.
        The stats as they were live in ``rule_data["rulelang"]["modified"][rule][handle]``."""
        assert modify is not None and test_when is not None, "checks.py: a modify has a when and is npc-scoped"
        state, stat, times = engine.state, modify.stat, modify.times
        held = data(engine).setdefault("modified", {}).setdefault(name, {})
        gated = data(engine)["vars"].get(gate, {}) if gate is not None else None
        covered = set()
        ctx = Ctx(engine, None, "", {"npc": ""})  # one context, rebound per NPC (each is done with before the next)
        areas_now = state.areas
        for npc in list(state.npcs.values()):
            if (kinds and npc.type not in kinds) or (areas and npc.area not in areas):
                continue
            if gated is not None and not gated.get(npc.area):
                continue  # the set its when asks holds nothing there: the when is false
            if npc.handle not in state.npcs or not is_world_area(areas_now[npc.area]):
                continue  # gone meanwhile (an effect of this rule took it), or in the tutorial
            handle = npc.handle
            ctx.here, ctx.removed, ctx.b["npc"] = npc.area, 0, handle
            if not test_when(ctx):
                continue
            covered.add(handle)
            if handle not in held:
                held[handle] = getattr(npc, stat)
                setattr(npc, stat, max(1, round(held[handle] * times)))
            run(ctx)
        for handle in [h for h in held if h not in covered]:
            was = held.pop(handle)
            gone = state.npcs.get(handle)
            if gone is not None:
                setattr(gone, stat, was)

    # A rule over agents, NPCs or areas with no becomes, modify, wield or event trigger (most of them) runs one
    # loop written for its scope: no generator between the scope and the tests, and where none of its effects
    # writes what a firing keeps (``received``, ``notes``...), its one context is rebound by its binding alone.
    plain = not event_kinds and modify is None and wield is None and test_becomes is None and keeper is None
    dirty = ops is None or not _clean(ops)  # ops: the checked effects (run is their compiled block)
    # which of ``when`` and ``chance`` the rule has, so that each loop below asks only what it must
    bare = test_when is None and chance is None
    when_only = test_when is not None and chance is None
    chance_only = test_when is None and chance is not None

    def over_agents(self: StepRule, engine: Engine) -> None:
        state = engine.state
        if every is not None and state.step % every != offset:
            return
        if hours is not None and not _hours(state.minute, hours):
            return
        agents = list(state.agents.values())
        if when_only and not dirty:  # one context, its agent and place rebound: no effect writes the rest
            assert test_when is not None, "when_only: a when"
            ctx = None
            for agent in agents:
                if (tutorial or not agent.in_tutorial) and (not areas or agent.area in areas):
                    if ctx is None:
                        ctx = Ctx(engine, agent, agent.area, {})
                    else:
                        ctx.agent, ctx.here = agent, agent.area
                    if test_when(ctx):
                        run(ctx)
            return
        draw = engine.rng.random if chance is not None else None  # the episode's RNG: the same draws, in order
        p = chance if chance is not None else 0.0
        for agent in agents:
            if (tutorial or not agent.in_tutorial) and (not areas or agent.area in areas):
                ctx = Ctx(engine, agent, agent.area, {})
                if test_when is not None and not test_when(ctx):
                    continue
                if draw is not None and draw() >= p:
                    continue
                run(ctx)

    def over_npcs(self: StepRule, engine: Engine) -> None:
        state = engine.state
        if every is not None and state.step % every != offset:
            return
        if hours is not None and not _hours(state.minute, hours):
            return
        npcs, world = state.npcs, state.areas
        if not npcs:
            return
        ctx = Ctx(engine, None, "", {"npc": ""})
        b = ctx.b
        if chance_only and not dirty:  # the usual shape (a chance per NPC): no when to ask before the draw
            assert chance is not None, "chance_only: a chance"
            roll, p = engine.rng.random, chance
            for npc in list(npcs.values()):
                if (kinds and npc.type not in kinds) or (areas and npc.area not in areas):
                    continue
                handle = npc.handle
                if handle not in npcs or world[npc.area].place == TUTORIAL_PLACE or roll() >= p:
                    continue
                ctx.here = npc.area
                b["npc"] = handle
                run(ctx)
            return
        draw = engine.rng.random if chance is not None else None
        p = chance if chance is not None else 0.0
        for npc in list(npcs.values()):
            if (kinds and npc.type not in kinds) or (areas and npc.area not in areas):
                continue
            handle = npc.handle
            if handle not in npcs or world[npc.area].place == TUTORIAL_PLACE:
                continue
            if dirty:
                ctx.removed, ctx.notes, ctx.received, ctx.salvaged, ctx.spawned = 0, NO_NOTES, "", "", ""
            ctx.here = npc.area
            b["npc"] = handle
            if test_when is not None and not test_when(ctx):
                continue
            if draw is not None and draw() >= p:
                continue
            run(ctx)

    def over_areas(self: StepRule, engine: Engine) -> None:
        state = engine.state
        if every is not None and state.step % every != offset:
            return
        if hours is not None and not _hours(state.minute, hours):
            return
        ctx = Ctx(engine, None, "", {})
        if bare and not dirty:  # no when, no chance: each area in the world fires
            for area in list(state.areas.values()):
                if area.place != TUTORIAL_PLACE and (not areas or area.name in areas):
                    ctx.here = area.name
                    run(ctx)
            return
        draw = engine.rng.random if chance is not None else None
        p = chance if chance is not None else 0.0
        for area in list(state.areas.values()):
            if area.place == TUTORIAL_PLACE or (areas and area.name not in areas):
                continue
            if dirty:
                ctx.removed, ctx.notes, ctx.received, ctx.salvaged, ctx.spawned = 0, NO_NOTES, "", "", ""
            ctx.here = area.name  # an area binds nothing but $here (no effect writes a binding)
            if test_when is not None and not test_when(ctx):
                continue
            if draw is not None and draw() >= p:
                continue
            run(ctx)

    class Step(StepRule):
        description = sspec.description
        after = sspec.after
        before = sspec.before
        Params = _params_class(name, sspec.params)

        def apply(self, engine: Engine) -> None:
            state = engine.state
            if keeper is not None:  # the rule's phantoms, kept each step before its trigger is asked
                keeper(engine)
            if modify is not None:
                return hold(engine)
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
            if wield is not None:
                wield_attack(engine)

        def start(self, engine: Engine) -> None:
            """``at_start``: once for each scope item, before the first step (checks.py: no event trigger)."""
            if at_start is not None:
                for ctx in items(engine, gate=False):
                    at_start(ctx)

        def facts(self, game: Any) -> Iterable[Fact]:
            return declared_facts

    if plain and scope in ("agent", "npc", "area"):
        Step.apply = {"agent": over_agents, "npc": over_npcs, "area": over_areas}[scope]  # type: ignore[method-assign]
    if keeper is not None:

        def phantoms_of(self: StepRule, engine: Engine) -> Iterable[tuple[str, str, int]]:
            return phantoms.reported(engine, name)

        Step.phantoms = phantoms_of  # type: ignore[method-assign]
    if sspec.veil is not None:  # only then: every observation asks each rule that has a veil (rules.veils)
        Step.veil = _veil(sspec.veil, vars, sspec.params)  # type: ignore[method-assign,assignment]
    Step.name = name
    Step.__name__ = Step.__qualname__ = "Step_" + name
    return step_rule(Step)


def _keeper(sspec: s.StepSpec, vars: dict[str, s.Var]) -> Callable[[Engine], None]:
    """What keeps a rule's phantoms each step (:func:`odyssey_env.rulelang.phantoms.keep`), its texts made."""
    ph = sspec.phantoms
    assert ph is not None
    fill = var_reader(vars, None, dict(sspec.params))
    vanish, fade, thin = (template(text, fill) for text in (ph.vanish, ph.fade, ph.thin))
    name, event = sspec.name, ph.event

    def keep(engine: Engine) -> None:
        phantoms.keep(engine, name, event, vanish, fade, thin)

    return keep


def _veil(
    veil: s.Veil, vars: dict[str, s.Var], params: Mapping[str, Any]
) -> Callable[[StepRule, Engine, Any], str | None]:
    """A step rule's ``veil`` as :meth:`StepRule.veil`: its test asked as the agent, where it stands."""
    test = compile_condition(veil.when, vars)
    text = template(veil.say, var_reader(vars, None, dict(params)))
    # asked for every observation: a test that begins with in_area answers most agents (in the light) by a set
    first = veil.when.all_of[0] if isinstance(veil.when, s.AllOf) and veil.when.all_of else veil.when
    gate = frozenset(first.in_area) if isinstance(first, s.InArea) and first.of is None else None

    def veil_of(self: StepRule, engine: Engine, agent: Any) -> str | None:
        if gate is not None and agent.area not in gate:
            return None
        ctx = Ctx(engine, agent, agent.area, {})
        return text(ctx) if test(ctx) else None

    return veil_of


def whereabouts(engine: Engine, handle: str) -> str | None:
    """The area where a named thing lies on the ground, or where the agent carrying it (in hand, worn, in a bag)
    stands, or where the container it is in lies; None in the tutorial, or where nothing holds it. The ground
    is asked first, one lookup per area (where a corpse mostly is), then each agent, then containers lying about."""
    state = engine.state
    for area in state.areas.values():
        if handle in area.objects:
            return area.name if is_world_area(area) else None
    instances = state.instances
    for agent in state.agents.values():
        if handle in agent.hands or handle in agent.equipment.values():
            return None if agent.in_tutorial else agent.area
        for c in held_containers(engine.game, state, agent):
            if handle in instances[c].contents:
                return None if agent.in_tutorial else agent.area
    for area in state.areas.values():
        for h in area.objects:
            inst = instances.get(h)
            if inst is not None and handle in inst.contents:
                return area.name if is_world_area(area) else None
    return None


def _params_class(name: str, params: Mapping[str, Any]) -> type | None:
    """A step rule's ``params`` as a frozen ``Params`` dataclass, as a ``rules.py`` rule declares them, so that
    ``world.json``'s ``game.params.<rule>`` sets them the same way (and ``rule.settings`` reads them); the
    checker has already put this game's values where the rule reads ``$param.<name>``. None: no params."""
    if not params:
        return None
    fields: list[tuple[str, Any, Any]] = []
    for key, default in params.items():
        if isinstance(default, list | tuple):
            fields.append((key, tuple[str, ...], dataclasses.field(default=tuple(default))))
        elif isinstance(default, dict):  # a table: a fresh copy of its rows for each Params made
            made = dataclasses.field(default_factory=_rows_of({k: dict(v) for k, v in default.items()}))
            fields.append((key, dict[str, dict[str, Any]], made))
        else:
            fields.append((key, type(default), dataclasses.field(default=default)))
    return dataclasses.make_dataclass(f"Params_{name}", fields, frozen=True)


def _rows_of(rows: dict[str, dict[str, Any]]) -> Callable[[], dict[str, dict[str, Any]]]:
    """A table parameter's default: a fresh copy of its rows each time (no Params shares another's)."""
    return lambda: {k: dict(v) for k, v in rows.items()}


class _Stations:
    """Which recipes' stations all lie in an area: asked of every recipe each step by a recipe rule, so the
    answer is kept per combination of the few distinct station sets that are there (file order kept)."""

    def __init__(self, recipes: Iterable[Any]):
        self.recipes = [(t.name, t.recipe.stations) for t in recipes if t.recipe is not None]
        self.sets = tuple(dict.fromkeys(needed for _, needed in self.recipes))
        self.known: dict[int, list[str]] = {}

    def here(self, lying: Mapping[str, int]) -> list[str]:
        mask = 0
        for bit, needed in enumerate(self.sets):
            if all(st in lying for st in needed):
                mask |= 1 << bit
        out = self.known.get(mask)
        if out is None:
            present = {needed for bit, needed in enumerate(self.sets) if mask >> bit & 1}
            out = self.known[mask] = [kind for kind, needed in self.recipes if needed in present]
        return out


#: Effects that write nothing of the firing's context (``received``, ``salvaged``, ``spawned``, ``removed``,
#: ``notes``, ``here``): ``if`` is one too when its branches are (a ``move_toward`` runs its own inside one).
_CLEAN = (
    s.ChangeStat,
    s.Say,
    s.Tell,
    s.Place,
    s.SetFlag,
    s.AddCounter,
    s.SetCounter,
    s.Remember,
    s.Tally,
    s.Emit,
    s.After,
    s.MoveNpc,
    s.RemoveNpc,
    s.OpenExit,
    s.LockExit,
    s.Winded,
    s.Strike,
    s.MoveToward,
)


#: Effects that change nothing anyone carries or what lies anywhere (a recipe rule that runs only these may
#: ask which recipes the agent can craft all at once, before the first fires).
_NOT_HOLDINGS = (s.Say, s.Tell, s.SetFlag, s.AddCounter, s.SetCounter, s.Remember, s.Tally, s.Emit)


def _keeps_holdings(effects: Iterable[Any]) -> bool:
    """Whether no effect of a block (at any depth of its ``if``-s) changes holdings (:data:`_NOT_HOLDINGS`)."""
    for op in effects:
        if isinstance(op, s.If):
            if not (_keeps_holdings(op.then) and _keeps_holdings(op.otherwise)):
                return False
        elif not isinstance(op, _NOT_HOLDINGS):
            return False
    return True


def _clean(effects: Iterable[Any]) -> bool:
    """Whether no effect of a block (at any depth of its ``if``-s) writes the firing's context, so that a loop
    may hand the next item the same context with only its binding changed (:func:`~runtime.rebind` otherwise)."""
    for op in effects:
        if isinstance(op, s.If):
            if not (_clean(op.then) and _clean(op.otherwise)):
                return False
        elif not isinstance(op, _CLEAN):
            return False
    return True


def _kinds(event: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """The event kinds a trigger names (one, a list, or none)."""
    if event is None:
        return ()
    return (event,) if isinstance(event, str) else event


def _hours(minute: int, window: tuple[int, int]) -> bool:
    hour = (minute // 60) % 24
    lo, hi = window
    return lo <= hour < hi if lo < hi else hour >= lo or hour < hi


def _timers(program: Program) -> type[StepRule]:
    delayed = program.delayed
    unwatched = program.unwatched

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
            if unwatched:  # someone stands there: the countdown of what decays unless tended starts again
                watched = occupied(state)
                for t in timers:
                    delay = unwatched.get(t[1])
                    if delay is not None and t[3] in watched:
                        t[0] = state.step + delay
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


# ---------------------------------------------------------------------------- hooks on the engine's verbs
class Hook:
    """A compiled hook: :class:`~odyssey_env.rules.RuleBook` hands it the class the verb has so far (the
    engine's, or a ``rules.py``'s), and :meth:`over` returns that class with the hook's refusals and effects."""

    __odyssey_rule__ = "hook"

    def __init__(self, verb: str, over: Callable[[type[ActionRule]], type[ActionRule]]):
        self.verb = verb
        self.over = over


def _enter_applies(turn: Turn, to: str) -> bool:
    """Whether ``enter``'s own refusals about its argument pass: a neighbouring area, and no fight here."""
    return to != turn.agent.area and to in turn.area.exits and in_combat(turn) is None


#: For each hookable verb: when its hook's requires are asked (its own refusals would pass).
_APPLIES: dict[str, Callable[[Any, str], bool]] = {"enter": _enter_applies}


def _hook(hspec: s.HookSpec, checks: tuple[Any, ...], run: Any, has_then: bool, vars: dict[str, s.Var]) -> Hook:
    fill = var_reader(vars)
    verb = hspec.verb
    arg, _ = s.HOOKS[verb]
    applies = _APPLIES[verb]
    tests = tuple(compile_condition(c, vars) for c in checks)
    refusals = tuple(template(r.refuse, fill) for r in hspec.requires)
    declared_facts = tuple(Fact(f.topic, f.question, f.answer, f.distractors) for f in hspec.facts)
    deps: set[str] | None = set()
    for c in checks:
        r = reads(c)
        deps = None if r is None or deps is None else deps | r
    watched = set().union(*map(vars_read, checks)) if deps is not None and "vars" in deps else set()
    prefix = len(verb) + 1
    #: checks that never name the argument give every command the hook applies to the same verdict (asked once
    #: a listing); those that do are asked per command, in one context rebound to each command's argument
    per_command = tuple(mentions(c, (arg,)) for c in checks)
    shared_tests = tuple(t for t, own in zip(tests, per_command, strict=True) if not own)
    own_tests = tuple(t for t, own in zip(tests, per_command, strict=True) if own)

    def refusal(turn: Turn, value: str) -> tuple[Ctx | None, str | None]:
        """The context of the command (None when the hook stays out of it) and its refusal, if any."""
        if not applies(turn, value):
            return None, None
        ctx = Ctx(turn.engine, turn.agent, turn.agent.area, {arg: value}, turn)
        for test, refuse in zip(tests, refusals, strict=True):
            if not test(ctx):
                return ctx, refuse(ctx)
        return ctx, None

    def over(base: type[ActionRule]) -> type[ActionRule]:
        base_deps = base.__dict__.get("depends_on")  # only the class's own declaration counts (listing.py)
        merged = (
            None if deps is None or base_deps is None else tuple(d for d in DEPENDENCIES if d in deps or d in base_deps)
        )

        class Hooked(base):  # type: ignore[misc,valid-type]  # a class the rule book hands over at load
            description = hspec.description or base.description
            depends_on = merged
            reads_vars = tuple(sorted(watched | set(base.__dict__.get("reads_vars", ())))) if merged else ()
            reads_data = base.__dict__.get("reads_data", ()) if merged else ()

            def apply(self, turn: Turn, value: str) -> None:
                ctx, refused = refusal(turn, value)
                if refused is not None:
                    return turn.fail(refused)
                base.apply(self, turn, value)  # by name, as QuarantineEnter did (tools/mutation.py swaps code)
                if has_then and ctx is not None and turn.ok:
                    run(ctx)

            def candidates(self, turn: Turn) -> Iterator[str]:
                if not tests:
                    yield from base.candidates(self, turn)
                    return
                shared: bool | None = None  # the verdict of the checks that never name the argument, once asked
                ctx: Ctx | None = None  # one context, rebound to each command's argument (what is listed only)
                for command in base.candidates(self, turn):
                    value = command[prefix:]
                    if not applies(turn, value):
                        yield command
                        continue
                    if ctx is None:
                        ctx = Ctx(turn.engine, turn.agent, turn.agent.area, {arg: value}, turn)
                    else:
                        rebind(ctx, turn.agent.area, arg, value)
                    if shared is None:
                        shared = all(test(ctx) for test in shared_tests)
                    if not shared:
                        continue  # refused, as is every command the hook applies to
                    if all(test(ctx) for test in own_tests):
                        yield command

            def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
                from odyssey_env.turn import Turn

                value = match.get("area")
                if tests and isinstance(value, str):
                    ctx = Ctx(
                        engine, agent, match.get("from", agent.area), {arg: value}, Turn(engine, agent, probe=True)
                    )
                    for test, check in zip(tests, checks, strict=True):
                        if not test(ctx):
                            found = hint(check, ctx, vars)
                            if found is not None:
                                return found
                return base.needs(self, engine, agent, match)

            def facts(self, game: Any) -> Iterable[Fact]:
                yield from base.facts(self, game)
                yield from declared_facts

        Hooked.__name__ = Hooked.__qualname__ = f"Hooked_{base.__name__}"
        return Hooked

    return Hook(verb, over)
