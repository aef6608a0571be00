"""Phantom objects (``rules.json``'s ``phantom`` effect and a step rule's ``phantoms``): things that lie on the
ground and list as real ones do, kept by the rule that laid them (Mirror Salt's mirages).

A rule's piles are ``data(engine)["phantoms"][<rule>][<area>][<type>] = [count, step it fades]``: a pile
is wholly phantom (a real one of the type landing on it makes the phantoms thin away), so what lies there
of the type is exactly its phantoms while the pile lasts. The engine keeps them once a step, at the rule's
place in the step order and before its trigger is asked (:func:`keep`): what was picked up vanishes from
the grasp (and is no find: the agent's first-acquired record is dropped, so no quest or recipe counts it),
an old one fades. :func:`reported` tells planners that read the true state where they lie.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from odyssey_env.rulelang.runtime import Ctx, data
from odyssey_env.steprules.living import is_world_area, tell
from odyssey_env.world import add, remove, take_carried

if TYPE_CHECKING:
    from odyssey_env.engine import Engine

MAX_PILES = 50  # phantom piles one rule keeps at once (checks.py: MAX_PHANTOMS)

Piles = dict[str, dict[str, list[int]]]
Text = Callable[[Ctx], str]


def takes_shape(t: Any) -> bool:
    """Whether a phantom may take an object type's shape: a thing one picks up, one of a stack (not named,
    not worn, not money), so that its vanishing takes nothing real with it."""
    return t is not None and bool(t.portable and not t.instanced and t.equip_slot is None and t.category != "currency")


def all_piles(engine: Engine) -> dict[str, Piles]:
    """Every rule's phantom piles: rule -> area -> object type -> ``[count, step it fades]``."""
    tables: dict[str, Piles] = data(engine).setdefault("phantoms", {})
    return tables


def all_piles_read(engine: Engine) -> dict[str, Piles]:
    """Every rule's phantom piles, read without making the table (empty when none was laid)."""
    tables: dict[str, Piles] = engine.state.rule_data.get("rulelang", {}).get("phantoms", {})
    return tables


def piles_of(engine: Engine, rule: str) -> Piles:
    """One rule's phantom piles (empty before it laid any)."""
    return all_piles(engine).get(rule, {})


def count(engine: Engine, area: str | None) -> int:
    """Phantom piles in ``area`` (None: everywhere), of every rule: what ``{"phantoms": ...}`` compares."""
    tables = engine.state.rule_data.get("rulelang", {}).get("phantoms")
    if not tables:
        return 0
    if area is None:
        return sum(len(kinds) for piles in tables.values() for kinds in piles.values())
    return sum(len(piles.get(area, ())) for piles in tables.values())


def reported(engine: Engine, rule: str) -> Iterator[tuple[str, str, int]]:
    """``(area, type, count)`` for each of a rule's phantom piles (``StepRule.phantoms``)."""
    for area, kinds in piles_of(engine, rule).items():
        for kind, (n, _) in kinds.items():
            yield area, kind, n


def lay(ctx: Ctx, rule: str, kind: Any, area_name: Any, lasts: int, event: str, allowed: Callable[[str], bool]) -> None:
    """The ``phantom`` effect: one phantom of ``kind`` in an area, fading ``lasts`` steps from now."""
    engine = ctx.engine
    state = engine.state
    area = state.areas.get(area_name) if isinstance(area_name, str) else None
    if area is None or not is_world_area(area) or not isinstance(kind, str) or not allowed(kind):
        return
    if kind in area.objects or count(engine, None) >= MAX_PILES:
        return  # a pile is wholly phantom or wholly real; the rule's piles are bounded
    add(area.objects, kind, 1)
    all_piles(engine).setdefault(rule, {}).setdefault(area.name, {})[kind] = [1, state.step + lasts]
    engine.emit(f"{event}_formed", None, object=kind, area=area.name)


def dispel(engine: Engine, rule: str, area: str) -> list[tuple[str, int]]:
    """Take a rule's phantoms in ``area`` off the ground at once (light that shows them for what they are):
    the ``(type, count)`` it took, in the order they were laid."""
    piles = piles_of(engine, rule)
    gone = piles.pop(area, {})
    lying = engine.state.areas[area].objects
    for kind, (n, _) in gone.items():
        remove(lying, kind, n)
    return [(kind, n) for kind, (n, _) in gone.items()]


def keep(engine: Engine, rule: str, event: str, vanish: Text, fade: Text, thin: Text) -> None:
    """Once a step: phantoms picked up vanish from the grasp; a real one landing on a pile thins it away; an
    old one fades."""
    piles = piles_of(engine, rule)
    if not piles:
        return
    if "object_acquired" in engine.kinds:
        _grasped(engine, piles, event, vanish)
    _settle(engine, piles, event, fade, thin)


def _said(text: Text, engine: Engine, here: str, kind: str) -> str:
    return text(Ctx(engine, None, here, {"object": kind}))


def _grasped(engine: Engine, piles: Piles, event: str, vanish: Text) -> None:
    """Phantoms picked up (into a hand or a bag) this step vanish from the agent's grasp."""
    state, game = engine.state, engine.game
    for ev in engine.events:
        if ev.kind != "object_acquired" or ev.data.get("how") not in ("picked", "stored") or ev.agent is None:
            continue
        agent = state.agents[ev.agent]
        kind = ev.data["object"]
        pile = piles.get(agent.area, {}).get(kind)
        if not pile or not pile[0]:
            continue
        k = min(ev.data["amount"], pile[0])  # phantoms go first; more came only if a real one was added
        take_carried(game, state, agent, kind, k)
        pile[0] -= k  # left at 0, the pile is settled below: what still lies there now is real
        if ev.data.get("first"):
            agent.acquired.pop(kind, None)  # a phantom is not a find: the first real one counts
        engine.say(agent.id, _said(vanish, engine, agent.area, kind))
        engine.emit(f"{event}_vanished", agent.id, object=kind, amount=k, area=agent.area)


def _settle(engine: Engine, piles: Piles, event: str, fade: Text, thin: Text) -> None:
    """Keep every pile exactly its phantoms: a real one landing on it breaks it; age fades it."""
    state = engine.state
    for name in list(piles):
        kinds = piles[name]
        area = state.areas.get(name)
        if area is None:
            del piles[name]
            continue
        for kind in list(kinds):
            n, until = kinds[kind]
            present = area.objects.get(kind, 0)
            if present > n:  # a real one arrived: the phantoms cannot share a pile with it
                if n:
                    remove(area.objects, kind, n)
                    tell(engine, name, _said(thin, engine, name, kind))
            elif present and state.step >= until:
                remove(area.objects, kind, present)
                tell(engine, name, _said(fade, engine, name, kind))
                engine.emit(f"{event}_faded", None, object=kind, amount=present, area=name)
            elif present:
                kinds[kind][0] = present  # (fewer than before only if taken some way no event told)
                continue
            del kinds[kind]
        if not kinds:
            del piles[name]
