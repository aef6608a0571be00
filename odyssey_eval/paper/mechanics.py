"""Which of odyssey's own verbs and dynamics play each imported game's mechanics.

The reference gives every game a full copy of its engine, with the game's own action rules
(``action_rules.py``) and step rules (``step_rules/general.py``) added by its generator. Here those are
recognised by class name (read with :mod:`ast`, never imported) and bound to odyssey's implementations,
written from what each reference rule does (``docs/dynamics.md`` describes ours); a rule odyssey has no
implementation for is recorded as a difference of that game, so nothing is silently dropped.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from odyssey_env.rules import BASE_VERBS, core_step_rules
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


@dataclass(frozen=True)
class Own:
    """A game-specific reference rule and the odyssey rule that plays it: ``rule`` (a verb or step rule name)
    of the shipped game ``game``'s ``rules.py``, which re-authored it; ``differs`` says, for ``paper.json``,
    how odyssey's implementation differs from the reference's (read from what the reference's rule does)."""

    game: str
    rule: str
    differs: str


#: The reference's game-specific rules of Metropolis, Quarantine, Robot Kingdom and Saltglass -> odyssey's.
OWN: dict[str, Own] = {}


def _own(game: str, table: dict[str, tuple[str, str]]) -> None:
    for cls, (rule, differs) in table.items():
        OWN[cls] = Own(game, rule, differs)


def _constants(release: Release, path: str, cls: str) -> dict[str, Any]:
    """The literal upper-case class constants of reference class ``cls`` (``DURATION = 3``): the numbers and
    ids its rule works with, read as data through ``ast`` (a constant that is not a literal is left out)."""
    if not release.has(path):
        return {}
    out: dict[str, Any] = {}
    for node in parse(release.text(path), path).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for stmt in node.body:
                if (
                    isinstance(stmt, ast.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name)
                    and stmt.targets[0].id.isupper()
                ):
                    try:
                        out[stmt.targets[0].id] = ast.literal_eval(stmt.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        continue
    return out


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


def _marked(game: str) -> dict[str, tuple[str, bool]]:
    """Rule name (verb or step rule) -> (``"action"`` or ``"step"``, whether it is optional), for every rule
    of shipped game ``game``'s ``rules.py`` (shipped code, imported by name as the engine imports it)."""
    module = importlib.import_module(f"odyssey_env.games.{game}.rules")
    out: dict[str, tuple[str, bool]] = {}
    for value in vars(module).values():
        kind = getattr(value, "__odyssey_rule__", None)
        if kind in ("action", "step") and getattr(value, "__module__", None) == module.__name__:
            out[value.verb if kind == "action" else value.name] = (kind, bool(value.optional))
    return out


def bind_mechanics(
    release: Release, paths: dict[str, str], ent: Entities, world: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """``game.verbs``, ``game.step_rules``, ``game.rules_from``, ``game.disable`` and ``game.params`` for one
    game, and the differences: rules left unbound, and how each bound game-specific rule differs."""
    notes: list[dict[str, str]] = []
    verbs: list[str] = []
    steps: list[str] = []
    bound: dict[str, dict[str, str]] = {}  # shipped game -> odyssey rule -> the reference class it plays
    consts: dict[str, dict[str, Any]] = {}  # reference class -> its literal constants

    def own(cls: str, label: str, path: str, where: str) -> bool:
        rule = OWN.get(cls)
        if rule is None:
            return False
        bound.setdefault(rule.game, {})[rule.rule] = cls
        consts[cls] = _constants(release, path, cls)
        notes.append(
            {
                "where": f"{where}.{label or cls}",
                "difference": f"played by odyssey's {rule.game} rule {rule.rule!r}: {rule.differs}",
            }
        )
        return True

    for cls, label in _classes(release, paths["actions"], "BaseActionRule"):
        if cls in ACTIONS:
            verbs.append(ACTIONS[cls])
        elif cls not in BASE_ACTIONS and not own(cls, label, paths["actions"], "verbs"):
            notes.append(
                {
                    "where": f"verbs.{label or cls}",
                    "difference": f"the reference's {cls} has no odyssey implementation yet: the verb is absent",
                }
            )
    respawn: dict[str, object] = {}
    for cls, label in _classes(release, paths["general"], "BaseStepRule"):
        if cls in STEP_RULES:
            steps.append(STEP_RULES[cls])
        elif cls in RESPAWN_STYLES:
            respawn.update(RESPAWN_STYLES[cls])
        elif cls not in BASE_STEPS and not own(cls, label, paths["general"], "step_rules"):
            notes.append(
                {
                    "where": f"step_rules.{label or cls}",
                    "difference": f"the reference's {cls} has no odyssey implementation yet: the dynamic is absent",
                }
            )
    params: dict[str, dict[str, Any]] = {}
    disable: list[str] = []
    rules_from: list[str] = []
    for game in sorted(bound):
        rules_from.append(game)
        rules = bound[game]
        for name, (kind, optional) in _marked(game).items():
            if name in rules:
                if optional:
                    (verbs if kind == "action" else steps).append(name)
            elif not optional and name not in BASE_VERBS and name not in core_step_rules():
                disable.append(name)  # a rule of the shipped game the reference's game does not have
        for name, values in PARAMS[game](ent, world, {r: consts[c] for r, c in rules.items()}, notes).items():
            if name in rules or name in BASE_VERBS or name in core_step_rules():
                params[name] = values
    out: dict[str, Any] = {}
    if verbs:
        out["verbs"] = list(dict.fromkeys(verbs))
    if steps:
        out["step_rules"] = list(dict.fromkeys(steps))
    if rules_from:
        out["rules_from"] = rules_from
    if disable:
        out["disable"] = disable
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


# ---------------------------------------------------------------------------- Metropolis: Gavelmoor's law
_own(
    "gavelmoor",
    {
        "InvokeLawRule": (
            "invoke law",
            "a law is one of six fixed statute texts (peace, strife, amnesty, search, recess, session), posted on "
            "the ground for the reference's term (DURATION turns); the reference reads keywords of any text "
            "(passage, gravity, nullify: unlock the area's paths, reveal materials, pacify its enemies), burns a "
            "statute_shard and blanks the page",
        ),
        "FileObjectionRule": (
            "file objection",
            "an objection is against a law posted here, for a fee, struck down at a hearing two turns later; the "
            "reference's is against an NPC fighting me, sustained (the NPC pacified 5 turns) when a paper I carry "
            "holds a law its pattern breaks, else I lose a turn",
        ),
        "AppealVerdictRule": (
            "appeal verdict",
            "in the turn after a verdict (a fine or my death), once a day, free; a death appealed leaves me at full "
            "health (the reference's restoration); the reference's costs every coin I carry and banishes the NPC "
            "that felled me",
        ),
        "NightlyLawRewriteStepRule": (
            "nightly_rewrite",
            "at midnight each statute written anywhere turns into its twin; the reference's rewrites every paper "
            "every 30 steps into a random law of its pool and shifts paths, objects and combat patterns",
        ),
        "ObjectionEffectsStepRule": (
            "objection_effects",
            "strikes down the law objected to at its hearing; the reference's counts down pacified NPCs and "
            "skipped turns",
        ),
        "InvokeLawExpiryStepRule": (
            "law_expiry",
            "a law fades when its term ends or its notice is taken down (the reference's undoes its effect)",
        ),
        "LegalParadoxStepRule": (
            "legal_paradox",
            "three or more laws in an area with a statute and its twin freeze the area's enemies; the reference's "
            "also duplicates or removes objects and shuffles paths",
        ),
        "ContemptOfCourtStepRule": (
            "contempt_of_court",
            "idle turns (waiting, refused or invalid commands) outside a fight: a warning at the reference's "
            "warning threshold, then its per-turn fine, or its health penalty without coins; the reference also "
            "lowers maximum health after 7 idle turns",
        ),
        "BindingPrecedentStepRule": (
            "binding_precedent",
            "each kill of an enemy type weakens every enemy of that type by the reference's fraction (up to 3 "
            "times); the reference's weakens the type only in the area of the kill and strengthens it for good "
            "when it defeats me",
        ),
        "ContrabandSuspicionStepRule": (
            "contraband_suspicion",
            "over 14 things carried (odyssey's limit, not the reference's 8: with 8 and a seizure chance every "
            "step the watch took the chapter-3 materials faster than the oracle could carry them to the forge) "
            "the watch may seize a unit a step; the reference's bailiffs warn, converge over 5 turns, then "
            "confiscate up to half and sell it at double price",
        ),
        "TrialProceedingsStepRule": (
            "trial_proceedings",
            "a killing is tried: lawful if provoked or under strife, else a fine (appealable); the reference's "
            "spectral judge reads the area's papers for a justification and curses my attack or upgrades an item",
        ),
    },
)


def _metropolis(
    ent: Entities, world: dict[str, Any], consts: dict[str, dict[str, Any]], notes: list[dict[str, str]]
) -> dict[str, dict[str, Any]]:
    """Gavelmoor's parameters set from Metropolis's ids and the reference rules' own numbers."""

    def num(rule: str, key: str, default: float) -> Any:
        value = consts.get(rule, {}).get(key, default)
        return value if isinstance(value, int | float) and not isinstance(value, bool) else default

    containers = {o["name"] for o in world["objects"] if o["category"] == "container"}
    return {
        "invoke law": {"term": max(1, int(num("invoke law", "DURATION", 48)))},
        "appeal verdict": {"revive": 1.0},
        "nightly_rewrite": {"sealed": sorted(containers & {"notary_folio"})},
        "contempt_of_court": {
            "patience": max(1, int(num("contempt_of_court", "WARNING_THRESHOLD", 3))),
            "fine": int(num("contempt_of_court", "FINE_COINS_PER_TURN", 1)),
            "hp_penalty": int(num("contempt_of_court", "HP_REDUCTION_PER_TURN", 3)),
        },
        "binding_precedent": {"weaken": min(0.3, float(num("binding_precedent", "STAT_REDUCTION_FRACTION", 0.15)))},
        "legal_paradox": {"threshold": max(2, int(num("legal_paradox", "MIN_DOCUMENTS", 3)))},
    }


PARAMS: dict[str, Callable[..., dict[str, dict[str, Any]]]] = {"gavelmoor": _metropolis}
