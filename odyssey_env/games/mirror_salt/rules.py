"""Mirror Salt: helpers that read what its rules keep. Every rule of the game is data now, in its ``rules.json``.

Two verbs (both in ``rules.json``):

* ``listen <target>``: glass keeps sound, and what is really there has a voice. Listening to this area
  tells which things lying here are mirages, what the salt swallowed here and which death-notes the
  glass still rings with; to a neighbouring area, who moves there; to a creature, what it will do
  next; to an object, whether it is real. Where it was heard is the set ``heard`` (predicate
  ``listened_in``).
* ``refract <glass_object>``: bend the light of the mirror sky through a clear glass object I carry.
  The honest light breaks every mirage in the area (``dispel``) and cracks the salt glaze off what I hold
  (``glaze_cracked``); the quest's last task is to bend it through the Oath Lens atop the zenith spire.
  Where light was bent is the set ``bent`` (predicate ``light_bent``).

Seven step rules (all in ``rules.json``):

* ``salt_glaze``: under the open sky, salt crusts the things I hold in my hands, layer by layer, and each
  layer takes attack from a weapon. Shade flakes it off, and so does stowing the thing. Its layers are the
  per-held counter ``glaze`` (:func:`glaze_layers`), which ``refract``'s light cracks off.
* ``glaze_cracked``: light bent through clear glass (``refract``) cracks the glaze off everything in my
  hands, said in a line of its own right after ``refract``'s.
* ``forge_alert``: standing by a station with everything a recipe of that station needs, I am told once
  what I could make here.
* ``salt_sink``: what I drop on the salt and leave unattended sinks after a while and is gone (named
  things, keys and quest objects are spared, so the quest always stays solvable); the salt's memory of
  what it swallowed is the area tally ``sunk`` (:func:`sunk_in`).
* ``resonance_imprint`` and ``imprint_falter``: where an enemy falls, the glass keeps its death-note for a
  while (the area's lasting set ``ringing``: :func:`imprints_in`), and its kin in that area falter: they
  strike softer (:func:`unnerved`).
* ``salt_mirage``: phantom objects shimmer onto the open salt where nobody watches. They look like the
  real thing, vanish when picked up, and fade after a while (the language's ``phantoms``:
  :mod:`odyssey_env.rulelang.phantoms` keeps them and reports them through :meth:`StepRule.phantoms`, so
  planners that read the true state, the oracle, are never fooled); ``listen`` names them
  (:func:`mirage_piles`) and ``refract`` breaks them.

*Open sky* is every real area except those the ``salt_glaze`` parameters name ``sheltered`` (the
tutorial's rooms are indoors; the data rule declares the parameter, ``world.json`` sets it). The rules keep
their memory in ``state.rule_data["rulelang"]``; this file keeps none, and a game that takes its code by
``game.rules_from`` gets these helpers alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from odyssey_env.rulelang import phantoms
from odyssey_env.rulelang.runtime import KEY
from odyssey_env.steprules.living import is_world_area

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.state import Agent, Area

GLAZE = "salt_glaze"
GLAZE_LAYERS = "glaze"  # salt_glaze's per-held counters (rules.json): layers, and steps in the sun toward the next
GLAZE_SUN = "glaze_sun"
MIRAGE = "salt_mirage"
LISTEN = "listen"
REFRACT = "refract"


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
