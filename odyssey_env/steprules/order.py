"""The run order of the engine's own step rules, declared in this one place.

Every step, after the players' commands, the step rules run one after another; each reads what the
ones before it left. The engine's rules (here, in ``odyssey_env/quests`` and the optional library of
world dynamics) run in the order below, whichever of them a game has. A game's own rules, generated
rules and tests' rules do not appear here: they place themselves relative to these names with
``after = (...)`` / ``before = (...)`` (see :class:`odyssey_env.rules.StepRule` and docs/engine.md).
A game's rule that replaces an engine rule by name takes that rule's place.
"""

from __future__ import annotations

ENGINE_STEP_ORDER: tuple[str, ...] = (
    # first: attack and defense follow what the commands just put in hand or on; every blow below reads them
    "attack_update",
    # the hour sets enemy attack and ambush odds, before anything fights or ambushes
    "day_night",
    # or the day in periods, in its place (optional: the paper's Remnant and Mark)
    "day_cycle",
    # multiplies the modifiers day_night has just set (optional)
    "danger_hours",
    # engaged enemies take their stance and strike, with this step's attack and hour
    "combat_rhythm",
    # after the fights already going on: an enemy that ambushes starts its rhythm next step
    "ambush",
    # new enemies appear only once this step's fighting is settled
    "night_spawn",
    # then the slow return of food and enemies, counted after the night's spawns
    "respawn",
    # the optional library of world dynamics (docs/dynamics.md), after the core world processes:
    # what this step's crafting refunds ...
    "crafting_momentum",
    # ... noise from this step's blows, crafts and lockpicks, which may draw an enemy in ...
    "noise",
    # ... scavengers eat loot left by enemies that fell this step or before ...
    "carrion_scavengers",
    # ... enemies and merchants wander (after noise has drawn its scouts) ...
    "wandering_patrols",
    # ... unvisited areas may gain a cache, merchants leave notes ...
    "forgotten_caches",
    "rumor_notes",
    # ... and paths close after the noise and wandering of the step
    "shifting_paths",
    # quests read the world once its processes have run: the tutorial, then the main quest, then side quests
    "tutorial",
    "main_quest",
    "side_quests",
    # after the quests (a stage completed by the killing blow counts), whoever is at zero health falls
    "death",
    # hints read what was acquired this step, including what quests paid
    "craft_hints",
    # experience counts every achievement of the step (exploring, crafting, trading, quests)
    "experience",
    # last: new places appear only after everything else has seen the world as it was
    "expansion",
)
