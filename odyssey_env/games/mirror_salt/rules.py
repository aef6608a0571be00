"""Mirror Salt: what a salt-glass desert under a mirror sky does that the data cannot say.

Two verbs:

* ``listen <target>``: glass keeps sound, and what is really there has a voice. Listening to this area
  tells which things lying here are mirages, what the salt swallowed here and which death-notes the
  glass still rings with; to a neighbouring area, who moves there; to a creature, what it will do
  next; to an object, whether it is real.
* ``refract <glass_object>``: bend the light of the mirror sky through a clear glass object I carry.
  The honest light breaks every mirage in the area and cracks the salt glaze off what I hold; the
  quest's last task is to bend it through the Oath Lens atop the zenith spire.

Seven step rules (all in ``rules.json``):

* ``salt_glaze`` (in ``rules.json``): under the open sky, salt crusts the things I hold in my hands, layer
  by layer, and each layer takes attack from a weapon. Shade flakes it off, and so does stowing the thing.
  Its layers are the per-held counter ``glaze`` (:func:`glaze_layers`), which ``refract``'s light cracks off
  (rules.json's step rule ``glaze_cracked``, on the ``light_refracted`` event: a ``for_each`` over what I hold).
* ``glaze_cracked`` (in ``rules.json``): light bent through clear glass (``refract``) cracks the glaze off
  everything in my hands, said in a line of its own right after ``refract``'s.
* ``forge_alert`` (in ``rules.json``, as data): standing by a station with everything a recipe of that
  station needs, I am told once what I could make here.
* ``salt_sink`` (in ``rules.json``): what I drop on the salt and leave unattended sinks after a while and
  is gone (named things, keys and quest objects are spared, so the quest always stays solvable); the
  salt's memory of what it swallowed is the area tally ``sunk`` (:func:`sunk_in`).
* ``resonance_imprint`` and ``imprint_falter`` (in ``rules.json``): where an enemy falls, the glass keeps its
  death-note for a while (the area's lasting set ``ringing``: :func:`imprints_in`), and its kin in that area
  falter: they strike softer (:func:`unnerved`).
* ``salt_mirage`` (in ``rules.json``): phantom objects shimmer onto the open salt where nobody watches.
  They look like the real thing, vanish when picked up, and fade after a while (the language's
  ``phantoms``: :mod:`odyssey_env.rulelang.phantoms` keeps them and reports them through
  :meth:`StepRule.phantoms`, so planners that read the true state, the oracle, are never fooled);
  ``listen`` names them (:func:`mirage_piles`) and ``refract`` breaks them (``phantoms.dispel``).

*Open sky* is every real area except those the ``salt_glaze`` parameters name ``sheltered`` (the
tutorial's rooms are indoors; the data rule declares the parameter, ``world.json`` sets it). Every rule of
this file keeps its memory in ``state.rule_data[<its name>]``, those of ``rules.json`` in
``state.rule_data["rulelang"]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from odyssey_env.rulelang import phantoms
from odyssey_env.rulelang.runtime import KEY
from odyssey_env.rules import ActionRule, Fact, action_rule, predicate
from odyssey_env.steprules.living import is_world_area
from odyssey_env.verbs.combat import stance
from odyssey_env.verbs.common import carried_handles, ground
from odyssey_env.world import npc_here, type_of

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
    """Mirages lying in ``area``: object type -> ``[count, step it fades]`` (empty when there are none); the
    phantoms of rules.json's step rule ``salt_mirage``."""
    return phantoms.piles_of(engine, MIRAGE).get(area, {})


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


def glazed(engine: Engine, agent: Agent) -> list[str]:
    """The things in an agent's hands with salt glaze on them, in the hands' order: what ``refract``'s light
    cracks it off (rules.json's step rule ``glaze_cracked``, on the ``light_refracted`` event, clears them)."""
    return [h for h in agent.hands if glaze_layers(engine, agent.id, h) > 0]


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


# ---------------------------------------------------------------------------- quest predicates
@predicate("listened_in")
def listened_in(engine: Engine, agent: Agent, area: str) -> bool:
    """The agent has listened to ``area`` while standing in it."""
    return area in engine.state.rule_data.get(LISTEN, {}).get(agent.id, ())


# ---------------------------------------------------------------------------- step rules
