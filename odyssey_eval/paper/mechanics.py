"""Which of odyssey's own verbs and dynamics play each imported game's mechanics.

The reference gives every game a full copy of its engine, with the game's own action rules
(``action_rules.py``) and step rules (``step_rules/general.py``) added by its generator. Here those are
recognised by class name (read with :mod:`ast`, never imported) and bound to odyssey's implementations,
written from what each reference rule does (``docs/dynamics.md`` describes ours); a rule odyssey has no
implementation for is recorded as a difference of that game, so nothing is silently dropped.
"""

from __future__ import annotations

import ast
from typing import Any

from odyssey_env.steprules.spawning import QUIET_ENEMIES, QUIET_FOOD
from odyssey_eval.paper.literals import parse
from odyssey_eval.paper.release import Release
from odyssey_eval.paper.world import Entities

__all__ = ["ACTIONS", "STEP_RULES", "bind_mechanics"]

#: The reference's base verbs: odyssey's base verbs play them (docs/fidelity.md lists the differences).
BASE_ACTIONS = {
    "WaitRule", "DefendRule", "PickUpRule", "DropRule", "EnterRule", "AttackRule", "StoreRule", "DiscardRule",
    "TakeOutRule", "TalkToRule", "InspectRule", "EquipRule", "UnequipRule", "CraftRule", "WriteRule", "BuyRule",
    "SellRule",
}  # fmt: skip
#: Reference action rule -> odyssey's optional verb that plays it.
ACTIONS = {
    "LockpickRule": "lockpick",
    "EatRule": "eat",
    "ThrowRule": "throw",
    "DisassembleRule": "disassemble",
    "PickpocketRule": "pickpocket",
}
#: The reference's base step rules: odyssey's core step rules play them.
BASE_STEPS = {
    "AgentAttackUpdateStepRule", "CombatRhythmStepRule", "ActiveAttackStepRule", "NewCraftableFeedbackStepRule",
    "DeathAndRespawnStepRule", "SideQuestStepRule", "WorldExpansionStepRule", "MainQuestStepRule",
    "TutorialRoomStepRule",
}  # fmt: skip
#: Reference step rule -> odyssey's optional step rule that plays it.
STEP_RULES = {
    "WanderingPatrolsStepRule": "wandering_patrols",
    "DayCycleStepRule": "danger_hours",
    "ContinuousCraftingMomentumStepRule": "crafting_momentum",
    "ForgottenCachesStepRule": "forgotten_caches",
    "SoundscapePressureStepRule": "noise",
    "RumorMillStepRule": "rumor_notes",
    "ShiftingPathsStepRule": "shifting_paths",
    "CarrionScavengersStepRule": "carrion_scavengers",
}
#: Reference respawn rules -> the settings of odyssey's one respawn rule (always on) that play them.
RESPAWN_STYLES: dict[str, dict[str, object]] = {
    "EnemyRespawnStepRule": QUIET_ENEMIES,
    "FoodRespawnStepRule": QUIET_FOOD,
}


def _classes(release: Release, path: str, base: str) -> list[tuple[str, str]]:
    """(class name, its ``verb`` or ``name``) of the top-level classes deriving from ``base``."""
    if not release.has(path):
        return []
    out = []
    for node in parse(release.text(path), path).body:
        if not isinstance(node, ast.ClassDef):
            continue
        if not any(isinstance(b, ast.Name) and b.id == base for b in node.bases):
            continue
        label = ""
        for stmt in node.body:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id in ("verb", "name")
                and isinstance(stmt.value, ast.Constant)
            ):
                label = label if stmt.targets[0].id == "name" and label else str(stmt.value.value)
        out.append((node.name, label))
    return out


def bind_mechanics(
    release: Release, paths: dict[str, str], ent: Entities, world: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """``game.verbs``, ``game.step_rules`` and ``game.params`` for one game, and the rules left unbound."""
    notes: list[dict[str, str]] = []
    verbs: list[str] = []
    for cls, label in _classes(release, paths["actions"], "BaseActionRule"):
        if cls in ACTIONS:
            verbs.append(ACTIONS[cls])
        elif cls not in BASE_ACTIONS:
            notes.append(
                {
                    "where": f"verbs.{label or cls}",
                    "difference": f"the reference's {cls} has no odyssey implementation yet: the verb is absent",
                }
            )
    steps: list[str] = []
    respawn: dict[str, object] = {}
    for cls, label in _classes(release, paths["general"], "BaseStepRule"):
        if cls in STEP_RULES:
            steps.append(STEP_RULES[cls])
        elif cls in RESPAWN_STYLES:
            respawn.update(RESPAWN_STYLES[cls])
        elif cls not in BASE_STEPS:
            notes.append(
                {
                    "where": f"step_rules.{label or cls}",
                    "difference": f"the reference's {cls} has no odyssey implementation yet: the dynamic is absent",
                }
            )
    out: dict[str, Any] = {}
    if verbs:
        out["verbs"] = list(dict.fromkeys(verbs))
    if steps:
        out["step_rules"] = list(dict.fromkeys(steps))
    params: dict[str, dict[str, Any]] = {}
    if respawn:
        params["respawn"] = dict(respawn)
    if "lockpick" in verbs:
        # the reference's LockpickRule works with obj_lockpick (20%) or obj_tension_wrench (10%) in hand and
        # uses the tool up whether it succeeds or not
        objects = {o["name"]: o for o in world["objects"]}
        tools = [ent.objects[i] for i in ("obj_lockpick", "obj_tension_wrench") if i in ent.objects]
        for name in tools:
            uses = objects[name].setdefault("uses", [])
            if "lockpick" not in uses:
                uses.append("lockpick")
        params["lockpick"] = {"chance": 0.2, "break_chance": 1.0}
        notes.append(
            {
                "where": "verbs.lockpick",
                "difference": "one success chance (0.2) for every lockpicking tool; the reference gives the tension "
                "wrench 0.1",
            }
        )
    if "rumor_notes" in steps:
        writable = next(
            (o["name"] for o in world["objects"] if o["category"] == "writable" and not o.get("quest")), None
        )
        if writable is None:
            out["step_rules"].remove("rumor_notes")
            notes.append(
                {"where": "step_rules.rumor_notes", "difference": "no writable for rumor notes: the dynamic is absent"}
            )
        else:
            params["rumor_notes"] = {"note": writable}
    if params:
        out["params"] = params
    return out, notes
