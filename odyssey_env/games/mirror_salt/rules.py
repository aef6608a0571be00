"""Mirror Salt: what a salt-glass desert under a mirror sky does that the data cannot say.

Two verbs:

* ``listen <target>``: glass keeps sound, and what is really there has a voice. Listening to this area
  tells which things lying here are mirages, what the salt swallowed here and which death-notes the
  glass still rings with; to a neighbouring area, who moves there; to a creature, what it will do
  next; to an object, whether it is real.
* ``refract <glass_object>``: bend the light of the mirror sky through a clear glass object I carry.
  The honest light breaks every mirage in the area and cracks the salt glaze off what I hold; the
  quest's last task is to bend it through the Oath Lens atop the zenith spire.

Five step rules (one here):

* ``salt_glaze`` (in ``rules.json``): under the open sky, salt crusts the things I hold in my hands, layer
  by layer, and each layer takes attack from a weapon. Shade flakes it off, and so does stowing the thing.
  Its layers are the per-held counter ``glaze`` (:func:`glaze_layers`), which ``refract`` clears.
* ``forge_alert`` (in ``rules.json``, as data): standing by a station with everything a recipe of that
  station needs, I am told once what I could make here.
* ``salt_sink`` (in ``rules.json``): what I drop on the salt and leave unattended sinks after a while and
  is gone (named things, keys and quest objects are spared, so the quest always stays solvable); the
  salt's memory of what it swallowed is the area tally ``sunk`` (:func:`sunk_in`).
* ``resonance_imprint`` and ``imprint_falter`` (in ``rules.json``): where an enemy falls, the glass keeps its
  death-note for a while (the area's lasting set ``ringing``: :func:`imprints_in`), and its kin in that area
  falter: they strike softer (:func:`unnerved`).
* ``salt_mirage``: phantom objects shimmer onto the open salt where nobody watches. They look like
  the real thing, vanish when picked up, and fade after a while; ``listen`` and ``refract`` expose
  them. The rule reports them through :meth:`StepRule.phantoms`, so planners that read the true state
  (the oracle) are never fooled.

*Open sky* is every real area except those the ``salt_glaze`` parameters name ``sheltered`` (the
tutorial's rooms are indoors; the data rule declares the parameter, ``world.json`` sets it). Every rule of
this file keeps its memory in ``state.rule_data[<its name>]``, those of ``rules.json`` in
``state.rule_data["rulelang"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.rulelang.runtime import KEY
from odyssey_env.rules import ActionRule, Fact, StepRule, action_rule, predicate, step_rule
from odyssey_env.steprules.living import is_world_area, occupied, pick, tell
from odyssey_env.verbs.combat import stance
from odyssey_env.verbs.common import carried_handles, ground
from odyssey_env.world import add, carried_count, known_object, npc_here, remove, take_carried, type_of

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent, Area
    from odyssey_env.turn import Turn

GLAZE = "salt_glaze"
GLAZE_LAYERS = "glaze"  # salt_glaze's per-held counters (rules.json): layers, and steps in the sun toward the next
GLAZE_SUN = "glaze_sun"
MIRAGE = "salt_mirage"
LISTEN = "listen"
REFRACT = "refract"

_STANCE_SOUNDS = {
    "attack": "it is gathering itself to strike",
    "defend": "it is drawing into its guard",
    "wait": "its breath is ragged: it will pause",
}


# ---------------------------------------------------------------------------- shared helpers
def open_sky(engine: Engine, area: Area) -> bool:
    """Whether ``area`` lies under the open sky: a real area not named sheltered by ``salt_glaze``."""
    rule = engine.rules.step_rule(GLAZE)
    return is_world_area(area) and (rule is None or area.name not in rule.settings.sheltered)


def mirage_piles(engine: Engine, area: str) -> dict[str, list[int]]:
    """Mirages lying in ``area``: object type -> ``[count, step it fades]`` (empty when there are none)."""
    piles: dict[str, list[int]] = engine.state.rule_data.get(MIRAGE, {}).get("piles", {}).get(area, {})
    return piles


def sunk_in(engine: Engine, area: str) -> dict[str, int]:
    """What the salt swallowed in ``area``: object -> units (``salt_sink``'s tally ``sunk``, in rules.json)."""
    tally: dict[str, int] = engine.state.rule_data.get(KEY, {}).get("vars", {}).get("sunk", {}).get(area, {})
    return tally


def imprints_in(engine: Engine, area: str) -> dict[str, int]:
    """Death-notes still ringing in ``area``: NPC type -> the step it fades (``resonance_imprint``'s lasting
    set ``ringing``, in rules.json; one fading this very step still rings until the step rules run)."""
    held = engine.state.rule_data.get(KEY, {}).get("vars", {}).get("ringing", {}).get(area, {})
    step = engine.state.step
    return {kind: until for kind, until in held.items() if until >= step}


def unnerved(engine: Engine, handle: str) -> bool:
    """Whether an NPC falters at a death-note now (``imprint_falter`` holds its attack, in rules.json)."""
    return handle in engine.state.rule_data.get(KEY, {}).get("modified", {}).get("imprint_falter", {})


def glaze_layers(engine: Engine, agent_id: str, handle: str) -> int:
    """Layers of salt glaze on a thing in an agent's hands (``salt_glaze``'s per-held counter ``glaze``, in
    rules.json, keyed ``"<agent>/<handle>"``)."""
    layers = _vars(engine).get(GLAZE_LAYERS, {}).get(f"{agent_id}/{handle}", 0)
    return layers if isinstance(layers, int) else 0


def clear_glaze(engine: Engine, agent_id: str) -> list[str]:
    """Crack the glaze off everything an agent holds (``refract``): each glazed thing is left bare with a fresh
    count of the sun begun (its per-held values dropped, as the rule drops a 0); the things, as glazed."""
    tables, prefix = _vars(engine), f"{agent_id}/"
    glazed = [k for k in tables.get(GLAZE_LAYERS, {}) if k.startswith(prefix)]
    for k in glazed:
        for var in (GLAZE_LAYERS, GLAZE_SUN):
            tables.get(var, {}).pop(k, None)
    return [k[len(prefix) :] for k in glazed]


def _vars(engine: Engine) -> dict[str, dict[str, object]]:
    """The rule file's variables (``rule_data["rulelang"]["vars"]``), empty before any was written."""
    tables: dict[str, dict[str, object]] = engine.state.rule_data.get(KEY, {}).get("vars", {})
    return tables


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


# ---------------------------------------------------------------------------- verbs
@action_rule
class Listen(ActionRule):
    verb = "listen"
    params = (("target", "object"),)
    depends_on = ("place", "exits", "npcs", "hands", "worn", "containers", "ground")
    description = (
        "Listen to this area or a neighbouring one, a creature here, or something I see or carry: "
        "what is really there has a voice."
    )

    def apply(self, turn: Turn, target: str) -> None:
        agent, area, state = turn.agent, turn.area, turn.state
        if target == agent.area:
            return self._here(turn)
        if target in area.exits:
            return self._yonder(turn, target)
        npc = npc_here(state, area, target)
        if npc is not None:
            return self._creature(turn, target)
        if target in carried_handles(turn) or target in agent.equipment.values() or target in area.objects:
            return self._object(turn, target)
        turn.fail(
            f"Cannot listen to {target}: it is not this area, a neighbouring one, someone here, "
            "or something I see or carry."
        )

    def _here(self, turn: Turn) -> None:
        engine, area = turn.engine, turn.area
        parts = [f"I kneel and listen to {area.name}."]
        fakes = mirage_piles(engine, area.name)
        if fakes:
            names = " and ".join(f"the {kind}" for kind in fakes)
            parts.append(
                f"Among what lies here, {names} make{'s' if len(fakes) == 1 else ''} no sound at all: "
                f"{'a mirage' if len(fakes) == 1 else 'mirages'}, not really there."
            )
        elif area.objects:
            parts.append("Everything lying here rings true.")
        sunk = sunk_in(engine, area.name)
        if sunk:
            held = ", ".join(f"{n} {h}" for h, n in sunk.items())
            parts.append(f"Under the crust the salt still hums with what it swallowed: {held}.")
        for kind, until in imprints_in(engine, area.name).items():
            parts.append(
                f"The glass here still rings with the death-note of a {kind}: its kind falters here "
                f"for {_plural(until - turn.state.step, 'more step')}."
            )
        if len(parts) == 1:
            parts.append("Only the wind over the salt.")
        heard = turn.state.rule_data.setdefault(self.name, {}).setdefault(turn.agent.id, [])
        if area.name not in heard:
            heard.append(area.name)
        turn.say(" ".join(parts))
        turn.emit("area_listened", area=area.name, remote=False, mirages=sum(n for n, _ in fakes.values()))

    def _yonder(self, turn: Turn, name: str) -> None:
        state = turn.state
        there = state.areas[name]
        kinds: dict[str, int] = {}
        for handle in there.npcs:
            t = state.npcs[handle].type
            kinds[t] = kinds.get(t, 0) + 1
        if kinds:
            moving = ", ".join(f"{n} {t}" for t, n in kinds.items())
            text = f"I press an ear to the salt toward {name} and hear {moving} there."
        else:
            text = f"I press an ear to the salt toward {name} and hear no one moving there."
        turn.say(text)
        turn.emit("area_listened", area=name, remote=True, heard=kinds)

    def _creature(self, turn: Turn, handle: str) -> None:
        engine, state = turn.engine, turn.state
        npc = state.npcs[handle]
        t = turn.game.npcs[npc.type]
        if t.hostile:
            move = stance(engine, npc)
            text = f"I listen to {handle}: {_STANCE_SOUNDS[move]}."
            if unnerved(engine, handle):
                text += " It trembles at the death-note still ringing in the glass."
        else:
            move = None
            text = f"I listen to {handle}: {npc.coins} {turn.game.currency or 'coins'} clink in their purse."
        turn.say(text)
        turn.emit("npc_listened", npc=handle, type=npc.type, stance=move)

    def _object(self, turn: Turn, handle: str) -> None:
        engine, area = turn.engine, turn.area
        kind = type_of(turn.state, handle)
        fake = handle in area.objects and kind in mirage_piles(engine, area.name)
        if fake:
            text = f"The {handle} lying here makes no sound at all, and the salt under it bears no weight: a mirage."
        else:
            rule = engine.rules.actions.get(REFRACT)
            glass = rule is not None and kind in rule.settings.lenses
            text = (
                f"{handle} rings with a clear, high note."
                if glass
                else f"{handle} answers with the dull knock of something real."
            )
            layers = glaze_layers(engine, turn.agent.id, handle) if handle in turn.agent.hands else 0
            if layers:
                text += f" A crust of salt glaze crackles on it ({_plural(layers, 'layer')})."
        turn.say(text)
        turn.emit("object_listened", object=kind, handle=handle, mirage=fake)

    def candidates(self, turn: Turn) -> Iterator[str]:
        agent, area = turn.agent, turn.area
        yield f"listen {agent.area}"
        for name in area.exits:
            yield f"listen {name}"
        for handle in area.npcs:
            yield f"listen {handle}"
        seen = dict.fromkeys(carried_handles(turn))
        seen.update(dict.fromkeys(agent.equipment.values()))
        seen.update((handle, None) for handle, _ in ground(turn))
        for handle in seen:
            yield f"listen {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "mirages",
            "How can I tell a mirage from a real object lying on the salt?",
            "listen to it: a mirage makes no sound",
            ("inspect it: its description says so", "mirages glow at night", "there is no way to tell"),
        )
        yield Fact(
            "combat",
            "What does listening to an enemy tell me?",
            "what it will do next",
            ("how much health it has left", "where it came from", "nothing"),
        )


@action_rule
class Refract(ActionRule):
    verb = "refract"
    params = (("glass_object", "object"),)
    depends_on = ("hands", "worn", "containers")
    description = (
        "Bend the light of the mirror sky through clear glass I carry: it breaks the mirages here "
        "and cracks the salt glaze off what I hold."
    )

    @dataclass(frozen=True)
    class Params:
        lenses: tuple[str, ...] = ()  # object types clear enough to bend light through

    def apply(self, turn: Turn, handle: str) -> None:
        state, agent, area = turn.state, turn.agent, turn.area
        t = known_object(turn.game, state, handle)
        if t is None or carried_count(turn.game, state, agent, handle) < 1:
            return turn.fail(f"Cannot refract through {handle}: I do not carry it.")
        if t.name not in self.settings.lenses:
            return turn.fail(
                f"Cannot refract through {handle}: it is not clear glass, and light will not bend through it."
            )
        parts = [f"I hold {handle} up to the mirror sky and bend its light across {area.name}."]
        dispelled = 0
        piles = state.rule_data.get(MIRAGE, {}).get("piles", {})
        for kind, (n, _) in piles.pop(area.name, {}).items():
            remove(area.objects, kind, n)
            dispelled += n
            parts.append(
                f"The honest light passes straight through the {kind} lying here: "
                "it was a mirage, and it scatters into colour."
            )
            turn.emit("mirage_dispelled", object=kind, amount=n, area=area.name)
        cleared = clear_glaze(turn.engine, agent.id)
        if cleared:
            parts.append(f"The focused beam cracks the salt glaze off {', '.join(cleared)}.")
        if len(parts) == 1:
            parts.append("It spills into colour on the salt; nothing here is false.")
        bent = state.rule_data.setdefault(self.name, {}).setdefault(agent.id, [])
        if [t.name, area.name] not in bent:
            bent.append([t.name, area.name])
        turn.say(" ".join(parts))
        turn.emit(
            "light_refracted", object=t.name, handle=handle, area=area.name, dispelled=dispelled, cleared=len(cleared)
        )

    def candidates(self, turn: Turn) -> Iterator[str]:
        lenses, state = self.settings.lenses, turn.state
        for handle in carried_handles(turn):
            if type_of(state, handle) in lenses:
                yield f"refract {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "mirages",
            "What does bending light through clear glass do to the mirages around me?",
            "it breaks them all",
            ("it makes them real", "it doubles them", "nothing"),
        )
        yield Fact(
            "glaze",
            "How can salt glaze be cleared from what I hold, without leaving the sun?",
            "refract light through clear glass",
            ("drop it and pick it up", "attack with it", "sell it and buy it back"),
        )


# ---------------------------------------------------------------------------- quest predicates
@predicate("listened_in")
def listened_in(engine: Engine, agent: Agent, area: str) -> bool:
    """The agent has listened to ``area`` while standing in it."""
    return area in engine.state.rule_data.get(LISTEN, {}).get(agent.id, ())


@predicate("light_bent")
def light_bent(engine: Engine, agent: Agent, object: str, area: str) -> bool:
    """The agent has refracted light through an ``object`` while standing in ``area``."""
    return [object, area] in engine.state.rule_data.get(REFRACT, {}).get(agent.id, ())


# ---------------------------------------------------------------------------- step rules
@step_rule
class SaltMirage(StepRule):
    name = MIRAGE
    # before anything counts what I carry: a mirage picked up is gone before quests look; after salt_glaze,
    # which rules.json's salt_glaze says itself (before salt_mirage), so that a game that takes this file
    # alone (game.rules_from, without the rules.json) places it too
    after = ("attack_update",)
    before = ("day_night",)
    description = (
        "Phantom objects shimmer onto the open salt where nobody watches; they vanish when picked up "
        "and fade after a while."
    )

    @dataclass(frozen=True)
    class Params:
        period: int = 8
        chance: float = 0.5
        max_alive: int = 4
        lifetime: int = 60
        kinds: tuple[str, ...] = ()  # object types a mirage may take the shape of

    def start(self, engine: Engine) -> None:
        game = engine.game
        bad = [
            k
            for k in self.settings.kinds
            if k not in game.objects
            or not game.objects[k].portable
            or game.objects[k].instanced
            or game.objects[k].equip_slot is not None
            or game.objects[k].category == "currency"
        ]
        if bad:
            raise ValueError(
                f"salt_mirage: kinds must be portable object types that are neither named, worn nor money: {bad}"
            )
        engine.state.rule_data[self.name] = {"piles": {}}

    def phantoms(self, engine: Engine) -> Iterable[tuple[str, str, int]]:
        for area, kinds in engine.state.rule_data.get(self.name, {}).get("piles", {}).items():
            for kind, (n, _) in kinds.items():
                yield area, kind, n

    def apply(self, engine: Engine) -> None:
        state = engine.state
        piles: dict[str, dict[str, list[int]]] = state.rule_data[self.name]["piles"]
        if piles:
            if "object_acquired" in engine.kinds:
                self._grasped(engine, piles)
            self._settle(engine, piles)
        if state.step % self.settings.period == 0 and self.settings.kinds:
            self._form(engine, piles)

    def _grasped(self, engine: Engine, piles: dict[str, dict[str, list[int]]]) -> None:
        """Mirages picked up (into a hand or a bag) this step vanish from the agent's grasp."""
        state, game = engine.state, engine.game
        for ev in engine.events:
            if ev.kind != "object_acquired" or ev.data.get("how") not in ("picked", "stored"):
                continue
            assert ev.agent is not None, "an object is acquired by an agent"
            agent = state.agents[ev.agent]
            kind = ev.data["object"]
            pile = piles.get(agent.area, {}).get(kind)
            if not pile or not pile[0]:
                continue
            k = min(ev.data["amount"], pile[0])  # phantoms go first; more came only if a real one was added
            take_carried(game, state, agent, kind, k)
            pile[0] -= k  # left at 0, the pile is settled below: what still lies there now is real
            if ev.data.get("first"):
                agent.acquired.pop(kind, None)  # a mirage is not a find: the first real one counts
            engine.say(agent.id, f"The {kind} I took thins to glare in my grasp and is gone: it was a mirage.")
            engine.emit("mirage_vanished", agent.id, object=kind, amount=k, area=agent.area)

    def _settle(self, engine: Engine, piles: dict[str, dict[str, list[int]]]) -> None:
        """Keep every mirage pile exactly its phantoms: a real one landing on it breaks it; age fades it."""
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
                        tell(engine, name, f"A real {kind} lands on the salt, and the mirage beside it thins away.")
                elif present and state.step >= until:
                    remove(area.objects, kind, present)
                    tell(engine, name, f"The {kind} lying here wavers in the heat and is gone: a mirage.")
                    engine.emit("mirage_faded", None, object=kind, amount=present, area=name)
                elif present:
                    kinds[kind][0] = present  # (fewer than before only if taken some way no event told)
                    continue
                del kinds[kind]
            if not kinds:
                del piles[name]

    def _form(self, engine: Engine, piles: dict[str, dict[str, list[int]]]) -> None:
        state, game, p = engine.state, engine.game, self.settings
        alive = sum(len(kinds) for kinds in piles.values())
        if alive >= p.max_alive or engine.rng.random() >= p.chance:
            return
        watched = occupied(state)
        areas = [a for a in state.areas.values() if a.name not in watched and open_sky(engine, a)]
        if not areas:
            return
        area = pick(engine, areas)
        kinds = [k for k in p.kinds if k not in area.objects and game.objects[k].level <= area.level + 1]
        if not kinds:
            return
        kind = pick(engine, kinds)
        add(area.objects, kind, 1)
        piles.setdefault(area.name, {})[kind] = [1, state.step + p.lifetime]
        engine.emit("mirage_formed", None, object=kind, area=area.name)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "mirages",
            "What happens when I pick up a mirage?",
            "it vanishes from my grasp",
            ("it becomes real", "it hurts me", "it follows me"),
        )
        yield Fact(
            "mirages",
            "Where do mirages appear?",
            "on the open salt, where nobody is watching",
            ("only in shade", "in my pack", "next to merchants"),
        )
