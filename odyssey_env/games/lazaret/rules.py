"""Lazaret: the rules of a plague ward under quarantine (light and dark, the dead, the lockdown).

A replaced ``enter`` for the planner's hints the data cannot say yet, and the helpers it reads, configured from
``world.json`` (``game.params.lamp_fuel``), so the names of lamps and areas live in the game's data:

* **Light and dark.** Some areas are dark. A carried light (an individually named lamp, candle or
  torch) burns one turn of fuel for every step spent in the dark and gutters out when it is empty.
  Without a burning light in the dark I see nothing (the observation says so), things that lurk there
  fall on me (all of this is rules.json's step rule ``lamp_fuel`` now: ``first``, ``some`` over agents and
  what they carry, ``pick``, ``npc_strikes``, its ``veil``, the lights a table parameter; the paper's
  Quarantine plays it too, the import writing it into its rules.json), and I cannot find the way on into
  another dark area (stepping back into the light is always possible): rules.json's hook on ``enter``, whose
  requirement reads ``lamp_fuel``'s ``dark_areas`` and ``lights`` (``params_of``); :class:`QuarantineEnter`
  here only hints a planner the fuel to carry into the dark (:func:`light_need` over :class:`LightSettings`).
* **The dead** are data now: corpses (individually named, so each keeps its own age) rise as risen husks
  when left unburned too long, after a warning (rules.json's step rule ``corpse_corruption``, of scope
  ``instance``: the per-object counter ``age`` and flag ``stirring``; ``burn corpses`` burns them).
* **The lockdown** is data now (rules.json's step rule ``quarantine_lockdown``: the per-object counter
  ``lain`` of each corpse's steps on a floor, the per-area flag ``lockdown``); rules.json's hook on ``enter``
  reads the flag to refuse a way out of an area under lockdown, and ``enter`` below (:func:`locked_down`) to
  hint "burn the dead here".

The rest is data, in the folder's ``rules.json`` (docs/game-format.md, "Rules as data"): ``refuel`` (it
fills a lamp's fuel, the per-object counter ``fuel`` this file reads and spends through :func:`fuel_of` /
:func:`set_fuel`), ``barricade`` (the per-exit counter ``barricade``: :func:`barricades`), the line when I
climb over one (a hook on ``enter``), the risen's hunt toward the living (the step rule ``risen_hunt``,
battering barricades down), ``eavesdrop`` (which reads the flag ``stirring`` and asks this file's
predicate ``area_locked_down``), ``burn corpses`` (the first carried light with 2 turns of fuel: an implicit slot),
``concoct`` and ``shove``. Optional Python versions of ``refuel`` and ``eavesdrop`` stay below for games that
import these rules on their own ids (``game.rules_from``); Lazaret plays rules.json's.

Every rule here keeps its episode memory in ``state.rule_data[<rule name>]``. The verbs answer
:meth:`~odyssey_env.rules.ActionRule.needs` so that the oracle, which cannot read this file, can
plan them; ``enter`` is replaced here (same verb) for its hints about the dark and the lockdown.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from odyssey_env.quests import hints
from odyssey_env.quests.spec import Condition
from odyssey_env.rulelang.runtime import KEY as RULELANG
from odyssey_env.rulelang.runtime import read_var, way_key, write_var
from odyssey_env.rules import ActionRule, Fact, action_rule, predicate
from odyssey_env.verbs.common import carried_handles
from odyssey_env.verbs.movement import Enter, in_combat
from odyssey_env.world import held_containers, nearest, take_carried, type_of, unlocked

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent, WorldState
    from odyssey_env.turn import Turn

LIGHT = "lamp_fuel"
CORRUPTION = "corpse_corruption"
LOCKDOWN = "quarantine_lockdown"


# ============================================================================ light
@dataclass(frozen=True)
class Light:
    """A kind of light: the fuel it burns, the turns it holds, and the turns one unit of fuel gives."""

    fuel: str
    capacity: int
    per_unit: int


def _light_params(engine: Engine) -> LightSettings:
    rule = engine.rules.step_rule(LIGHT)
    return _as_light_params(rule.settings) if rule is not None else LightSettings()


#: rules.json's ``lamp_fuel`` settings (the lights a table of plain rows) read as :class:`LightSettings`, once each:
#: id -> (the settings, kept alive so the id stays theirs; what they read as).
_READ: dict[int, tuple[Any, LightSettings]] = {}


def _as_light_params(settings: Any) -> LightSettings:
    """The light's settings as this file reads them: rules.json's rule's, whose ``lights`` are rows of a table."""
    known = _READ.get(id(settings))
    if known is not None and known[0] is settings:
        return known[1]
    read = LightSettings(
        dark_areas=tuple(settings.dark_areas),
        lights={name: _light(row) for name, row in settings.lights.items()},
        margin=settings.margin,
        lurk_chance=settings.lurk_chance,
        lurk_strength=settings.lurk_strength,
    )
    _READ[id(settings)] = (settings, read)
    return read


def _light(row: Mapping[str, Any]) -> Light:
    """One row of the lights' table (rules.json's rule takes any rows: one missing a field holds 1 turn)."""
    return Light(
        str(row.get("fuel", "")), int(row.get("capacity", 1)), int(row.get("per_unit", row.get("capacity", 1)))
    )


#: rules.json's per-object counter of each light's fuel (``refuel`` fills it; the dark and the pyre spend it).
FUEL = "fuel"


def fuel_of(state: WorldState, handle: str) -> int:
    """Turns of light left in a lamp (lamps start empty)."""
    fuel: int = state.rule_data.get(RULELANG, {}).get("vars", {}).get(FUEL, {}).get(handle, 0)
    return fuel


def set_fuel(engine: Engine, handle: str, turns: int) -> None:
    """Set a lamp's turns of light, where the rule language keeps them (an empty lamp keeps no entry)."""
    write_var(engine, FUEL, handle, max(0, turns), 0)


def carried_lights(engine: Engine, agent: Agent) -> list[str]:
    """Handles of the lights an agent carries: in its hands, then in its containers (the engine's order)."""
    lights = _light_params(engine).lights
    if not lights:
        return []
    state, game = engine.state, engine.game
    out = [h for h in agent.hands if type_of(state, h) in lights]
    for c in held_containers(game, state, agent):
        out += [h for h in state.instances[c].contents if type_of(state, h) in lights]
    return out


def burning_light(engine: Engine, agent: Agent, least: int = 1) -> str | None:
    """The first light the agent carries with at least ``least`` turns of fuel."""
    state = engine.state
    return next((h for h in carried_lights(engine, agent) if fuel_of(state, h) >= least), None)


def is_dark(engine: Engine, area: str) -> bool:
    return area in _light_params(engine).dark_areas


def sees(engine: Engine, agent: Agent) -> bool:
    """Whether the agent can see where it stands: a lit area, or a burning light carried by anyone there."""
    if not is_dark(engine, agent.area):
        return True
    return any(
        other.area == agent.area and burning_light(engine, other) is not None for other in engine.state.agents.values()
    )


def light_need(engine: Engine, agent: Agent, least: int) -> Condition | None:
    """The next thing to make hold for a carried light with ``least`` turns of fuel, or None if I have one.

    A light I carry that can take more fuel and whose fuel I carry: refuel it; a light without its fuel:
    get the fuel; no light at all: get any kind of light.
    """
    state, lights = engine.state, _light_params(engine).lights
    carried = carried_lights(engine, agent)
    if any(fuel_of(state, h) >= least for h in carried):
        return None
    owned = carried_handles_of(engine, agent)
    usable = [h for h in carried if lights[type_of(state, h)].capacity >= least]
    for h in usable:
        spec = lights[type_of(state, h)]
        if owned.get(spec.fuel, 0) and fuel_of(state, h) < spec.capacity:
            return hints.did("light_refueled", handle=h)
    if usable:
        return hints.has(lights[type_of(state, usable[0])].fuel)
    kinds = tuple(t for t, spec in lights.items() if spec.capacity >= least)
    return hints.any_has(*kinds) if kinds else None


def carried_handles_of(engine: Engine, agent: Agent) -> dict[str, int]:
    """Units per handle in the agent's hands and containers (read-only)."""
    state = engine.state
    out = dict(agent.hands)
    for c in held_containers(engine.game, state, agent):
        for h, n in state.instances[c].contents.items():
            out[h] = out.get(h, 0) + n
    return out


@dataclass(frozen=True)
class LightSettings:
    """rules.json's ``lamp_fuel`` parameters as this file reads them (``world.json``'s ``game.params.lamp_fuel``
    sets them, Lazaret's and the paper's Quarantine's alike): the dark areas, each light's fuel, capacity and
    turns a unit gives, the planner's margin, and the lurk's chance and strength (the rule's, not read here)."""

    dark_areas: tuple[str, ...] = ()
    lights: dict[str, Light] = field(default_factory=dict)
    margin: int = 8  # turns of fuel a planner should carry into the dark (a plan hint, not a rule)
    lurk_chance: float = 0.35
    lurk_strength: float = 1.0

    def __post_init__(self) -> None:
        for name, light in self.lights.items():
            if light.capacity < 1 or light.per_unit < 1:
                raise ValueError(f"lights.{name}: capacity and per_unit must be at least 1")
        if self.margin < 1:
            raise ValueError("margin must be at least 1")


def _light_params_of(game: Game) -> LightSettings:
    rule = game.rules.step_rule(LIGHT)
    return _as_light_params(rule.settings) if rule is not None else LightSettings()


@predicate("carries_light")
def carries_light(engine: Engine, agent: Agent, fuel: int = 1) -> bool:
    """The agent carries a light with at least ``fuel`` turns of fuel in it."""
    return burning_light(engine, agent, fuel) is not None


# ============================================================================ the dead
#: The corpses of rules.json's ``corpse_corruption`` (a step rule of scope ``instance``: each corpse's per-object
#: counter ``age`` counts its steps since it was made, carried or not; it stirs, the per-object flag
#: ``stirring``, and rises once it lies on a floor that old).
CORPSE = "plague_corpse"
#: rules.json's per-object flag of a corpse that has stirred (it rises soon): what ``eavesdrop`` hears.
STIRRING = "stirring"


def corpses_in(engine: Engine, area: str) -> list[str]:
    """Handles of the corpses lying on the ground of ``area`` (none in a game without ``corpse_corruption``)."""
    if engine.rules.step_rule(CORRUPTION) is None:
        return []
    state = engine.state
    return [h for h in state.areas[area].objects if type_of(state, h) == CORPSE]


def stirring(engine: Engine, corpse: str) -> bool:
    """Whether a corpse has been seen to stir (rules.json's per-object flag, kept by the rule language)."""
    return bool(read_var(engine, STIRRING, corpse, False))


#: rules.json's per-area flag of the lockdown (its step rule ``quarantine_lockdown`` sets and clears it).
LOCKDOWN_FLAG = "lockdown"


def locked_down(engine: Engine, area: str) -> bool:
    """Whether an area is under lockdown (rules.json's per-area flag, kept by the rule language)."""
    return bool(read_var(engine, LOCKDOWN_FLAG, area, False))


# ============================================================================ moving
#: The per-exit counter of rules.json's ``barricade`` verb: blows of the risen the barricade on a way still takes.
BARRICADE = "barricade"


def barricades(state: WorldState) -> dict[str, int]:
    """Way key -> strength left of each barricade (rules.json's per-exit variable, kept by the rule language)."""
    ways: dict[str, int] = state.rule_data.get(RULELANG, {}).get("vars", {}).get(BARRICADE, {})
    return ways


def barricaded(state: WorldState, a: str, b: str) -> bool:
    return barricades(state).get(way_key(a, b), 0) > 0


@action_rule
class QuarantineEnter(Enter):
    """``enter``'s hints to a planner for the dark and a lockdown (the refusals are ``rules.json``'s hook).

    Both refusals are ``rules.json``'s hook on ``enter``: no one leaves an area under lockdown, and no one finds
    the way from a dark area on into another without a burning light (its requirement reads ``lamp_fuel``'s
    ``dark_areas`` and ``lights`` through ``params_of``). What stays here is what a hook cannot say: the
    planner's hints, which the hook falls back on, since a hook's ``requires`` only hints what a check of
    carrying or standing somewhere can say: "burn the dead here" for a lockdown, and a fuel budget for the dark
    (refuel this light, get its fuel, get any light: :func:`light_need`, with ``lamp_fuel``'s ``margin``).

    The base verb is called by name rather than through ``super()``: ``tools/mutation.py`` swaps a
    function's code, which it cannot do for a mutant that drops the only ``super()`` (its closure changes).
    """

    description = (
        "Walk to a neighboring area; a locked way needs its key in my hand, and the dark beyond the dark "
        "a burning light."
    )  # Lazaret's rules.json hook states its own, with the lockdown

    def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        src, dst = match.get("from", agent.area), match.get("area")
        if locked_down(engine, src):
            return hints.did("corpses_burned", area=src)
        if dst is not None and is_dark(engine, dst):
            return light_need(engine, agent, _light_params(engine).margin)
        return None

    def facts(self, game: Game) -> Iterable[Fact]:
        yield from Enter.facts(self, game)
        if _light_params_of(game).dark_areas:
            yield Fact(
                "light",
                "Can I walk from one dark area into another without a burning light?",
                "no",
                ("yes", "only by day", "only with a key"),
            )


# ============================================================================ for other games' ids
# rules.json names Lazaret's own objects and the rule language has no parameters yet, so a game that imports
# Lazaret's rules (game.rules_from: the paper's Quarantine) binds these parameterised versions of two of its
# verbs instead; they are optional, so Lazaret itself plays rules.json's (tests/paper covers them).
@action_rule
class Refuel(ActionRule):
    verb = "refuel"
    params = (("light_source", "object"),)
    description = "Fill a light I carry with its fuel (from what I carry): each unit gives some turns of light."
    emits = ("light_refueled",)
    optional = True  # Lazaret plays rules.json's; a game importing these rules (game.rules_from) binds this one
    # candidates read my lights and their fuel (hands, held bags, the pack: carried_lights, carried_handles) and
    # each light's turns of fuel (the rule language's per-object counter); the lights' kinds are fixed data
    depends_on = ("hands", "worn", "containers", "vars")
    reads_vars = (FUEL,)

    def _refusal(self, turn: Turn, handle: str) -> tuple[str, Light] | str:
        state = turn.state
        lights = _light_params(turn.engine).lights
        spec = lights.get(type_of(state, handle))
        if spec is None:
            return f"Cannot refuel {handle}: it is not a light source."
        if handle not in carried_handles(turn):
            return f"Cannot refuel {handle}: I do not carry it."
        if fuel_of(state, handle) >= spec.capacity:
            return f"Cannot refuel {handle}: it is full already."
        if not carried_handles(turn).get(spec.fuel, 0):
            return f"Cannot refuel {handle}: I carry no {spec.fuel}."
        return handle, spec

    def apply(self, turn: Turn, handle: str) -> None:
        checked = self._refusal(turn, handle)
        if isinstance(checked, str):
            return turn.fail(checked)
        spec = checked[1]
        state = turn.state
        take_carried(turn.game, state, turn.agent, spec.fuel, 1)
        now = min(spec.capacity, fuel_of(state, handle) + spec.per_unit)
        set_fuel(turn.engine, handle, now)
        turn.say(f"I fill {handle} with {spec.fuel}: it holds {now} turns of light now.")
        turn.emit("light_refueled", object=type_of(state, handle), handle=handle, fuel=now)

    def candidates(self, turn: Turn) -> Iterator[str]:
        for handle in carried_lights(turn.engine, turn.agent):
            if not isinstance(self._refusal(turn, handle), str):
                yield f"refuel {handle}"

    def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        lights = _light_params(engine).lights
        handle = match.get("handle")
        if handle is not None and handle in engine.state.instances:
            spec = lights.get(type_of(engine.state, handle))
            if spec is not None and not carried_handles_of(engine, agent).get(spec.fuel, 0):
                return hints.has(spec.fuel)
            return None
        carried = carried_lights(engine, agent)
        if not carried:
            return hints.any_has(*lights) if lights else None
        return hints.has(lights[type_of(engine.state, carried[0])].fuel)

    def facts(self, game: Game) -> Iterable[Fact]:
        lights = _light_params_of(game).lights
        if lights:
            name, light = next(iter(lights.items()))
            yield Fact(
                "light",
                f"What does refuelling a {name} take?",
                f"{light.fuel} that I carry",
                ("nothing: it refills itself", "a visit to a merchant", "water"),
            )


@action_rule
class Eavesdrop(ActionRule):
    verb = "eavesdrop"
    params = (("area_name", "area"),)
    description = "Listen at the way to a neighboring area (even a locked one): who moves there, and what they say."
    emits = ("eavesdropped",)
    optional = True  # Lazaret plays rules.json's; a game importing these rules (game.rules_from) binds this one
    depends_on = ("exits", "combat")

    def _refusal(self, turn: Turn, target: str) -> str | None:
        if target == turn.agent.area:
            return f"Cannot eavesdrop on {target}: I am in it."
        if target not in turn.area.exits:
            return f"Cannot eavesdrop on {target}: it is not a neighboring area."
        foe = in_combat(turn)
        if foe is not None:
            return f"Cannot listen at a door while fighting {foe}."
        return None

    def apply(self, turn: Turn, target: str) -> None:
        refusal = self._refusal(turn, target)
        if refusal is not None:
            return turn.fail(refusal)
        engine, state = turn.engine, turn.state
        there = state.areas[target]
        heard = []
        for handle in there.npcs:
            npc = state.npcs[handle]
            t = turn.game.npcs[npc.type]
            if t.hostile:
                heard.append(f"{handle} {'fighting' if npc.engaged else 'moving about'}")
            elif t.dialogue:
                line = t.dialogue[state.step % len(t.dialogue)]
                heard.append(f'{handle} saying "{line}"')
            else:
                heard.append(f"{handle} breathing")
        dead = corpses_in(engine, target)
        if dead:
            stirs = any(stirring(engine, h) for h in dead)
            heard.append(f"the creak of {len(dead)} dead laid out" + (", one of them stirring" if stirs else ""))
        if locked_down(engine, target):
            heard.append("the wardens' bar across the door: it is under lockdown")
        if barricaded(state, turn.agent.area, target):
            heard.append("my barricade creaking")
        turn.say(
            f"I listen at the way to {target}. "
            + (f"I hear {'; '.join(heard)}." if heard else "Silence: nothing moves there.")
        )
        turn.emit("eavesdropped", area=target, npcs=list(there.npcs), dead=len(dead))

    def candidates(self, turn: Turn) -> Iterator[str]:
        if in_combat(turn) is not None:
            return
        for target in turn.area.exits:
            yield f"eavesdrop {target}"

    def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        target = match.get("area")
        state = engine.state
        if target is None or target not in state.areas or target in state.areas[agent.area].exits:
            return None
        door = nearest(state, agent.area, lambda a: target in state.areas[a].exits and a != target, unlocked)
        return hints.in_area(door) if door is not None else None

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "senses", "Can I eavesdrop through a locked door?", "yes", ("no", "only with its key", "only at night")
        )


@predicate("area_locked_down")
def area_locked_down(engine: Engine, agent: Agent, area: str = "") -> bool:
    """An area is under quarantine lockdown: what rules.json's ``eavesdrop`` hears at its door."""
    return locked_down(engine, area)
