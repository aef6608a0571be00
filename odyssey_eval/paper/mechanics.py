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
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from odyssey_env.game import GAMES_DIR
from odyssey_env.limits import MAX_LEVEL
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
    "DayCycleStepRule": "day_cycle",
    "ContinuousCraftingMomentumStepRule": "crafting_momentum",
    "ForgottenCachesStepRule": "forgotten_caches",
    "SoundscapePressureStepRule": "noise",
    "RumorMillStepRule": "rumor_notes",
    "ShiftingPathsStepRule": "shifting_paths",
    "CarrionScavengersStepRule": "carrion_scavengers",
}
#: Reference respawn rules -> the settings of odyssey's respawn rule that play them. A game with neither
#: has no respawn at all (the reference's base game brings nothing back), one with only one of them has the
#: other half off.
RESPAWN_STYLES: dict[str, dict[str, object]] = {
    "EnemyRespawnStepRule": QUIET_ENEMIES,  # the games of WAVES_KEPT; the others play the reference's waves
    "FoodRespawnStepRule": QUIET_FOOD,
}
#: Games whose enemy respawn and patrols stay odyssey's quiet refill and spawn-safe patrols instead of the
#: reference's waves and patrols (``_waves``, ``_patrols``), and why (docs/fidelity.md).
WAVES_KEPT = {
    "remnant": (
        "with the reference's waves and patrols odyssey's oracle solved 2 of seeds 0-4 (20, 23, 24, 23, 24 of 24 "
        "stages) against 3 (23, 24, 24, 23, 24): kept until the oracle copes with enemies that come back and walk "
        "into the hall"
    ),
}
#: The reference's day periods (``DayCycleStepRule._get_period``) -> odyssey's ``day_cycle`` periods, and its
#: step modifiers -> the parameter of that period they set.
DAY_PERIODS = {
    "dangerous_night": "midnight",
    "late_night": "small_hours",
    "peaceful_midday": "noon",
    "afternoon_calm": "afternoon",
}
DAY_MODIFIERS = {
    ("midnight", "ambush_prob_additive"): "midnight_ambush",
    ("noon", "ambush_prob_override"): "noon_ambush",
    **{(period, "enemy_damage_multiplier"): f"{period}_attack" for period in DAY_PERIODS.values()},
}


def _day_cycle_params(release: Release, path: str) -> dict[str, float]:
    """The numbers of the reference's ``DayCycleStepRule._set_step_modifiers`` (``if period == "...":`` then
    ``env._step_modifiers["..."] = <number>``), as ``day_cycle`` parameters, read through ``ast``; a
    modifier odyssey's rule has no parameter for is an error here, so that a release that changes the rule
    is not imported as if it had not."""
    out: dict[str, float] = {}
    for node in parse(release.text(path), path).body:
        if not (isinstance(node, ast.ClassDef) and node.name == "DayCycleStepRule"):
            continue
        for fn in node.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "_set_step_modifiers"):
                continue
            for branch in ast.walk(fn):
                if not isinstance(branch, ast.If):
                    continue
                test = branch.test
                if not (
                    isinstance(test, ast.Compare)
                    and isinstance(test.ops[0], ast.Eq)
                    and isinstance(test.comparators[0], ast.Constant)
                ):
                    continue
                period = DAY_PERIODS.get(str(test.comparators[0].value))
                for stmt in branch.body:
                    if not (
                        isinstance(stmt, ast.Assign)
                        and isinstance(stmt.targets[0], ast.Subscript)
                        and isinstance(stmt.targets[0].slice, ast.Constant)
                        and isinstance(stmt.value, ast.Constant)
                        and isinstance(stmt.value.value, int | float)
                    ):
                        continue
                    key = (period or "", str(stmt.targets[0].slice.value))
                    if key not in DAY_MODIFIERS:
                        raise ValueError(f"{path}: DayCycleStepRule sets {key[1]} in {key[0] or 'a period'}: unknown")
                    out[DAY_MODIFIERS[key]] = float(stmt.value.value)
    return out


#: What turns a half of the respawn rule off, for a game that has only the other reference rule.
RESPAWN_OFF: dict[str, dict[str, object]] = {
    "EnemyRespawnStepRule": {"enemy_chance": 0.0},
    "FoodRespawnStepRule": {"food_chance": 0.0},
}
#: odyssey's core world dynamics the reference's base game does not have: its ambushes and blows do not
#: follow the hour, and nothing appears at midnight. They stay off in every imported game (a game whose
#: reference has a day cycle binds its own rule for it, above).
NOT_IN_REFERENCE = ("day_night", "night_spawn")
#: Reference rules that bring enemies back by other means than respawning, which the import does not bind yet
#: (open gaps, docs/fidelity.md): a game that has one keeps odyssey's respawn of enemies in their stead, so
#: that its world is not emptied for good by the first fights.
RETURNING_ENEMIES = ("TerritoryReclamationStepRule", "CorpseCorruptionStepRule")


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
_NO_CORPSES = (
    "odyssey's Lazaret rule `{rule}` plays it with corpses as objects (named, laid out, dropped by the fallen); "
    "Quarantine has no corpse object, the reference keeps its corpses as a record of the NPCs defeated in an "
    "area, and the import adds no object types of its own"
)
_RULE_FILE = (
    "odyssey's Lazaret plays it in its rules.json (the rule language), which names Lazaret's objects; the rule "
    "language has no parameters yet to play it on another game's ids"
)
#: Game-specific reference rules odyssey has an implementation of but leaves unbound, and why.
UNBOUND: dict[str, str] = {
    "BurnCorpsesRule": _NO_CORPSES.format(rule="burn corpses"),
    "CorpseCorruptionStepRule": _NO_CORPSES.format(rule="corpse_corruption"),
    "QuarantineLockdownStepRule": _NO_CORPSES.format(rule="quarantine_lockdown"),
    "BarricadeRule": _RULE_FILE,
    "ShoveRule": (
        "odyssey's Lazaret plays a shove in its rules.json (furniture toppled onto an enemy for damage through its "
        "guard), written against Lazaret's furniture; the reference's stuns the enemy for one round, and the rule "
        "language has no stun (a skipped enemy turn) to write it with"
    ),
    "CorruptionDecayStepRule": (
        "odyssey's Rust Throne rule `corrosion` plays it (what lies on the ground rusts into scrap iron after 40 "
        "steps; the reference's destroys it after 16, where war machines fell), but bound to Robot Kingdom it "
        "rusted the chapter-3 ingredients the oracle gathers in batches and leaves lying, and seed 0 was no longer "
        "solved: left off until the oracle guards what it sets down"
    ),
    "TerritoryReclamationStepRule": (
        "odyssey's Rust Throne rule `reclamation` plays it (enemies return to areas left unvisited), but bound to "
        "Robot Kingdom it kept the oracle from finishing the quest within 500 steps on seeds 0-4 (with the "
        "reference's numbers, dormancy 8 and a tick every 3 steps, 13 to 25 of 40 stages; with odyssey's, seed 2 "
        "ran out of steps): left off until the oracle plans around returning enemies"
    ),
}


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


#: Reference rules played by a ``rules.json`` the import writes in odyssey's rule language (:func:`rule_file`).
WRITTEN = {"ConcocRule"}


def _literal_in(release: Release, path: str, cls: str, method: str, name: str) -> Any:
    """The literal assigned to ``name`` inside method ``method`` of class ``cls`` (a table kept in code), or None."""
    for node in parse(release.text(path), path).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == method:
                    for stmt in ast.walk(fn):
                        if (
                            isinstance(stmt, ast.Assign)
                            and len(stmt.targets) == 1
                            and isinstance(stmt.targets[0], ast.Name)
                            and stmt.targets[0].id == name
                        ):
                            try:
                                return ast.literal_eval(stmt.value)
                            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                                return None
    return None


def _literal_in_init(release: Release, path: str, cls: str, attr: str) -> Any:
    """The literal that class ``cls`` sets as ``self.<attr>`` in its ``__init__`` (a rule's tuning), or None."""
    if not release.has(path):
        return None
    for node in parse(release.text(path), path).body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "__init__":
                    for stmt in ast.walk(fn):
                        if (
                            isinstance(stmt, ast.Assign)
                            and len(stmt.targets) == 1
                            and isinstance(stmt.targets[0], ast.Attribute)
                            and isinstance(stmt.targets[0].value, ast.Name)
                            and stmt.targets[0].value.id == "self"
                            and stmt.targets[0].attr == attr
                        ):
                            try:
                                return ast.literal_eval(stmt.value)
                            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                                return None
    return None


def _waves(release: Release, path: str) -> dict[str, object]:
    """``respawn`` settings playing the reference's ``EnemyRespawnStepRule``: its waves' interval and the most
    areas one fills (``self._default_interval``, ``self._max_areas_per_wave``: Mark 35-50, Remnant 25-45, 3)."""
    interval = _literal_in_init(release, path, "EnemyRespawnStepRule", "_default_interval")
    most = _literal_in_init(release, path, "EnemyRespawnStepRule", "_max_areas_per_wave")
    if not (
        isinstance(interval, tuple | list)
        and len(interval) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in interval)
        and 0 < interval[0] <= interval[1]
        and isinstance(most, int)
        and most > 0
    ):
        raise ValueError(f"{path}: EnemyRespawnStepRule's interval or areas per wave are not literals: unknown")
    return {"waves": [interval[0], interval[1]], "wave_areas": most}


def _patrols(release: Release, path: str) -> dict[str, object]:
    """``wandering_patrols`` settings playing the reference's ``WanderingPatrolsStepRule``: each free wanderer
    tries every step with ``self._move_prob`` (0.0625), into any open neighbour, the spawn too, at any level,
    while it holds fewer non-unique NPCs than its level."""
    chance = _literal_in_init(release, path, "WanderingPatrolsStepRule", "_move_prob")
    if not (isinstance(chance, float | int) and not isinstance(chance, bool) and 0 <= chance <= 1):
        raise ValueError(f"{path}: WanderingPatrolsStepRule's move chance is not a literal: unknown")
    return {
        "period": 1,
        "chance": float(chance),
        "avoid_spawn": False,
        "max_level_drop": MAX_LEVEL,
        "room_by_level": True,
    }


#: Shipped games whose ``rules.json`` names none of their own content, so that a game bound to them
#: (``game.rules_from``) takes it whole as its own ``rules.json``: the dynamics they moved from code to data.
SHARED_RULE_FILES = ("mirror_salt",)
#: Step rules of a shipped game's ``rules.json`` that name none of its content but through their ``params``, so
#: that a game bound to that game (``game.rules_from``) takes each one it plays, with the variables it keeps,
#: into the ``rules.json`` the import writes (the rest of that file names the shipped game's own things):
#: Lazaret's light and dark, which the paper's Quarantine sets to its own lights and dark areas.
TAKEN_STEP_RULES: dict[str, tuple[str, ...]] = {"lazaret": ("lamp_fuel",)}


def _shipped_rule_file(game: str) -> dict[str, Any] | None:
    path = GAMES_DIR / game / "rules.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def rule_file(
    release: Release, paths: dict[str, str], ent: Entities, world: dict[str, Any] | None = None
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """A ``rules.json`` (odyssey's rule language: data, no code) for the game, and its notes: the shared rule
    file of the shipped game it is bound to (:data:`SHARED_RULE_FILES`), or one written for the reference verbs
    :data:`WRITTEN` names. Quarantine's ``concoct``: two herbs carried, used up, restore the health the
    reference's table gives the pair (read from the table literal in its ``_potency``)."""
    for game in (world or {}).get("game", {}).get("rules_from", ()):
        if game in SHARED_RULE_FILES:
            shared = _shipped_rule_file(game)
            if shared is not None:
                names = [r["name"] for r in shared.get("step_rules", [])] + [v["verb"] for v in shared.get("verbs", [])]
                note = f"the rules odyssey's {game} keeps as data ({', '.join(names)}): its rules.json, taken whole"
                return shared, [{"where": "rules.json", "difference": note}]
    rules, notes = _concoct_file(release, paths, ent)
    taken, taken_notes = _taken_step_rules(world or {})
    if taken:
        rules = rules or {"format": 1}
        rules["vars"] = [*rules.get("vars", ()), *taken["vars"]]
        rules["step_rules"] = [*rules.get("step_rules", ()), *taken["step_rules"]]
        if taken.get("hooks"):
            rules["hooks"] = [*rules.get("hooks", ()), *taken["hooks"]]
    return rules, notes + taken_notes


def _taken_step_rules(world: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The step rules of :data:`TAKEN_STEP_RULES` this game plays (it is bound to their game and sets their
    ``params``), as they stand in the shipped ``rules.json``, with the variables they name: a counter's bound
    grown to the game's own largest value where a table row gives one (a light's ``capacity``), and the facts'
    names of the shipped game's first table row replaced by this game's (the facts are plain texts)."""
    game = world.get("game", {})
    params = game.get("params", {})
    out: dict[str, Any] = {"vars": [], "step_rules": []}
    notes: list[dict[str, str]] = []
    for shipped_game in game.get("rules_from", ()):
        wanted = [r for r in TAKEN_STEP_RULES.get(shipped_game, ()) if r in params]
        shipped = _shipped_rule_file(shipped_game) if wanted else None
        if shipped is None:
            continue
        shipped_params = _shipped_params(shipped_game)
        declared = {v["name"]: v for v in shipped.get("vars", ())}
        for rule in shipped.get("step_rules", ()):
            if rule["name"] not in wanted:
                continue
            rule = json.loads(json.dumps(rule))  # a copy: the facts are edited below
            text = json.dumps(rule)
            mine, theirs = params[rule["name"]], shipped_params.get(rule["name"], {})
            for name, table in mine.items():
                given = theirs.get(name)
                if isinstance(table, dict) and table and isinstance(given, dict) and given:
                    their_row, their_fields = next(iter(given.items()))
                    my_row, my_fields = next(iter(table.items()))
                    swaps = [(their_row, my_row)] + [
                        (str(their_fields[f]), str(my_fields[f]))
                        for f in their_fields
                        if isinstance(their_fields[f], str) and isinstance(my_fields.get(f), str)
                    ]
                    for fact in rule.get("facts", ()):
                        for key in ("question", "answer"):
                            for old, new in swaps:
                                fact[key] = fact[key].replace(old, new)
            for name, var in declared.items():
                if f'"{name}"' in text and name not in {v["name"] for v in out["vars"]}:
                    var = dict(var)
                    most = [
                        v
                        for table in mine.values()
                        if isinstance(table, dict)
                        for row in table.values()
                        if isinstance(row, dict)
                        for k, v in row.items()
                        if k == "capacity" and isinstance(v, int)
                    ]
                    if most:
                        var["max"] = max(most)
                    out["vars"].append(var)
            out["step_rules"].append(rule)
            notes.append(
                {
                    "where": f"rules.json.step_rules.{rule['name']}",
                    "difference": f"odyssey's {shipped_game} rule {rule['name']!r} as its rules.json states it, with "
                    "this game's parameters (game.params)",
                }
            )
        taken_names = {r["name"] for r in out["step_rules"]}
        for hook in shipped.get("hooks", ()):
            # a hook's requirements that read a taken rule's params (params_of) go with it: the dark's refusal
            requires = [r for r in hook.get("requires", ()) if r.get("params_of") in taken_names]
            if requires:
                out.setdefault("hooks", []).append({"verb": hook["verb"], "requires": json.loads(json.dumps(requires))})
                notes.append(
                    {
                        "where": f"rules.json.hooks.{hook['verb']}",
                        "difference": f"odyssey's {shipped_game} hook on {hook['verb']!r}: its requirements that "
                        f"read {', '.join(sorted({r['params_of'] for r in requires}))}'s parameters",
                    }
                )
    return (out if out["step_rules"] else {}), notes


def _shipped_params(game: str) -> dict[str, Any]:
    """``game.params`` of a shipped game's ``world.json`` (what its own rules are set to)."""
    path = GAMES_DIR / game / "world.json"
    if not path.is_file():
        return {}
    params: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")).get("game", {}).get("params", {})
    return params


def _concoct_file(
    release: Release, paths: dict[str, str], ent: Entities
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    """Quarantine's ``concoct`` as a rules.json verb (None where the reference has no ConcocRule)."""
    if not release.has(paths["actions"]):
        return None, []
    classes = {cls for cls, _ in _classes(release, paths["actions"], "BaseActionRule")}
    if "ConcocRule" not in classes:
        return None, []
    herbs_ids = _constants(release, paths["actions"], "ConcocRule").get("HERB_IDS", ())
    table = _literal_in(release, paths["actions"], "ConcocRule", "_potency", "table")
    herbs = sorted(ent.objects[i] for i in herbs_ids if isinstance(i, str) and i in ent.objects)
    pairs = []
    if isinstance(table, dict):
        for pair, hp in table.items():
            known = isinstance(pair, tuple) and len(pair) == 2 and all(p in ent.objects for p in pair)
            if known and isinstance(hp, int) and hp > 0:
                pairs.append((ent.objects[pair[0]], ent.objects[pair[1]], hp))
    if not herbs or not pairs:
        note = "the reference's herbs or potency table were not found: the verb is absent"
        return None, [{"where": "verbs.concoct", "difference": note}]
    effects: list[dict[str, Any]] = []
    for a, b, hp in sorted(pairs):
        orders = [(a, b)] if a == b else [(a, b), (b, a)]
        matches = [{"all_of": [{"same": ["$first_herb", x]}, {"same": ["$second_herb", y]}]} for x, y in orders]
        effects.append(
            {
                "if": matches[0] if len(matches) == 1 else {"any_of": matches},
                "then": [
                    {"consume": "$first_herb"},
                    {"consume": "$second_herb"},
                    {"change": "hp", "by": hp},
                    {"say": f"I combine {{first_herb}} and {{second_herb}} into a remedy: up to {hp} health back."},
                    {"emit": "remedy_concocted", "data": {"herbs": ["{first_herb}", "{second_herb}"], "hp": hp}},
                ],
            }
        )
    slot = {"domain": "type", "types": herbs}
    rules = {
        "format": 1,
        "verbs": [
            {
                "verb": "concoct",
                "description": "Combine two herbs I carry into a remedy that restores health (the pair sets how much).",
                "records_event": False,
                "slots": [
                    {"name": "first_herb", **slot, "refuse": "Cannot concoct: {first_herb} is not a herb."},
                    {"name": "second_herb", **slot, "refuse": "Cannot concoct: {second_herb} is not a herb."},
                ],
                "requires": [
                    {"check": {"has": "$first_herb"}, "refuse": "Cannot concoct: I carry no {first_herb}."},
                    {"check": {"has": "$second_herb"}, "refuse": "Cannot concoct: I carry no {second_herb}."},
                    {
                        "check": {
                            "any_of": [
                                {"none_of": [{"same": ["$first_herb", "$second_herb"]}]},
                                {"has": "$first_herb", "count": 2},
                            ]
                        },
                        "refuse": "Cannot concoct: a remedy of {first_herb} alone takes two of it.",
                    },
                    {
                        "check": {"any_of": [m for e in effects for m in (e["if"].get("any_of") or [e["if"]])]},
                        "refuse": "Cannot concoct {first_herb} with {second_herb}: the pair makes no remedy.",
                    },
                ],
                "effects": effects,
            }
        ],
    }
    note = (
        "played by a rules.json the import writes in odyssey's rule language: the reference's herbs and potency "
        "table (both herbs carried and used up, health restored up to the maximum), as the reference's"
    )
    return rules, [{"where": "verbs.concoct", "difference": note}]


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
    this_game = str(world["game"]["name"])
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
        elif cls in UNBOUND:
            notes.append({"where": f"verbs.{label or cls}", "difference": f"open gap: {UNBOUND[cls]}"})
        elif cls in WRITTEN:
            continue  # rule_file writes it, and its note
        elif cls not in BASE_ACTIONS and not own(cls, label, paths["actions"], "verbs"):
            notes.append(
                {
                    "where": f"verbs.{label or cls}",
                    "difference": f"the reference's {cls} has no odyssey implementation yet: the verb is absent",
                }
            )
    respawn: dict[str, object] = {}
    respawns: set[str] = set()
    for cls, label in _classes(release, paths["general"], "BaseStepRule"):
        if cls in RETURNING_ENEMIES:
            respawns.add("EnemyRespawnStepRule")  # odyssey's default respawn of enemies stands in (above)
        if cls in STEP_RULES:
            steps.append(STEP_RULES[cls])
        elif cls in RESPAWN_STYLES:
            if cls == "EnemyRespawnStepRule" and this_game not in WAVES_KEPT:
                # the reference's enemy waves, with its own numbers (format 9: odyssey's quiet refill before)
                respawn.update(_waves(release, paths["general"]))
            else:
                respawn.update(RESPAWN_STYLES[cls])
            respawns.add(cls)
        elif cls in UNBOUND:
            notes.append({"where": f"step_rules.{label or cls}", "difference": f"open gap: {UNBOUND[cls]}"})
        elif cls not in BASE_STEPS and not own(cls, label, paths["general"], "step_rules"):
            notes.append(
                {
                    "where": f"step_rules.{label or cls}",
                    "difference": f"the reference's {cls} has no odyssey implementation yet: the dynamic is absent",
                }
            )
    params: dict[str, dict[str, Any]] = {}
    disable: list[str] = list(NOT_IN_REFERENCE)
    if respawns:
        for cls in RESPAWN_STYLES.keys() - respawns:
            respawn.update(RESPAWN_OFF[cls])
    else:
        disable.append("respawn")
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
        definition = release.json(paths["world"]) if release.has(paths["world"]) else {}
        in_code = _marked(game)
        shared = _shipped_rule_file(game) if game in SHARED_RULE_FILES else None
        # a shared rules.json's step rule that declares params takes them too (Mirror Salt's salt_glaze),
        in_code |= {r["name"]: ("step", False) for r in (shared or {}).get("step_rules", ()) if r.get("params")}
        # and so does a verb of it that declares params (Mirror Salt's listen and refract and their lenses)
        in_code |= {v["verb"]: ("action", False) for v in (shared or {}).get("verbs", ()) if v.get("params")}
        in_code |= {name: ("step", False) for name in TAKEN_STEP_RULES.get(game, ())}  # written into rules.json
        for name, values in PARAMS[game](ent, world, {r: consts[c] for r, c in rules.items()}, definition).items():
            # only the rules of its rules.py take game.params, and those of a shared rules.json that declare
            # params (the others are data)
            if (name in rules and name in in_code) or name in BASE_VERBS or name in core_step_rules():
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
        # the reference's LockpickRule tries obj_lockpick (20%) if one is in hand, else obj_tension_wrench
        # (10%); every try uses the tool up, and a failed one hurts with chance 0.25 (1 damage, at least 1
        # whatever the defense)
        objects = {o["name"]: o for o in world["objects"]}
        odds = {"obj_lockpick": 0.2, "obj_tension_wrench": 0.1}
        chances = {ent.objects[i]: odds[i] for i in odds if i in ent.objects}
        for name in chances:
            uses = objects[name].setdefault("uses", [])
            if "lockpick" not in uses:
                uses.append("lockpick")
        params["lockpick"] = {
            "chance": 0.2,
            "chances": chances,
            "break_chance": 1.0,
            "success_break_chance": 1.0,
            "hurt_chance": 0.25,
            "hurt": 1,
        }
    if "wandering_patrols" in steps and this_game not in WAVES_KEPT:
        params["wandering_patrols"] = _patrols(release, paths["general"])
    elif this_game in WAVES_KEPT:
        notes.append(
            {"where": "step_rules.EnemyRespawnStepRule", "difference": f"open gap: odyssey's quiet respawn and "
             f"spawn-safe patrols play it and WanderingPatrolsStepRule: {WAVES_KEPT[this_game]}"}
        )  # fmt: skip
    if "day_cycle" in steps:
        # the numbers of this game's own day (Mark's midnight ambushes are half Remnant's); the dawn coins
        # (1-3 per merchant area) and the evening bonus (0.25) are the rule's defaults, the same in both
        params["day_cycle"] = _day_cycle_params(release, paths["general"])
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
    ent: Entities, world: dict[str, Any], consts: dict[str, dict[str, Any]], definition: dict[str, Any]
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


# ---------------------------------------------------------------------------- Robot Kingdom: Rust Throne's scrap
_own(
    "rust_throne",
    {
        "SalvageRule": (
            "salvage",
            "the reference's recipes (units used up, with its tool in hand) raise my attack for good; its defense "
            "upgrades (fiend_plate, demon_core_shard: +2 defense) are not played, odyssey's defense is what I wear "
            "and carry (open gap)",
        ),
        "RallyRule": (
            "rally",
            "a friendly NPC (not a guide or merchant) joins me for the reference's price (BASE_COST + "
            "COST_PER_LEVEL x level) and strikes my foe every turn while we stand together; the reference's ally "
            "adds bonus damage to my next 3 attacks",
        ),
        "SiphonRule": (
            "siphon",
            "the same: a valued object held in hand, used up against a hostile machine I fight, heals me by its "
            "value and takes a third of it from the machine's attack (for good, not for the encounter only)",
        ),
        "JamRule": (
            "jam",
            "a held material, tool or weapon driven into a hostile machine's gears stops its strikes for 3 turns; "
            "the reference's removes one action from its pattern for good (an attack more likely with heavier, "
            "dearer objects)",
        ),
        "OverloadRule": (
            "overload",
            "an eligible component bursts at once, striking every hostile machine here for the reference's aura "
            "value less its defense; the reference's grants a lasting counter-damage aura on my armor (open gap)",
        ),
        "ScavengeRule": (
            "scavenge",
            "each area hides a fixed few of the materials that may appear there, found one per search until it is "
            "picked clean; the reference's finds random objects with a chance and count growing with the enemy "
            "types I defeated, once every 5 steps per area",
        ),
        "IntimidationStepRule": (
            "intimidation",
            "friendlies lose the reference's health per enemy each step (never below 1, recovering when safe); the "
            "reference's can kill them, and the strongest enemy then absorbs their strength",
        ),
        "UnitedPresenceStepRule": (
            "united_presence",
            "the reference's defense per other agent in the area (multi-agent play); its enemies' skipped turn is "
            "not played",
        ),
        "TacticalWarningStepRule": (
            "tactical_warnings",
            "a friendly in the area calls every engaged enemy's next stance each turn (the reference's 30% a turn)",
        ),
        "ForgeEchoMigrationStepRule": (
            "forge_migration",
            "every few steps a roaming merchant walks one area toward the nearest crafting station without one; "
            "the reference's walks toward where I crafted in the last 6 steps",
        ),
        "WarMachineCannibalizeStepRule": (
            "scrap_mending",
            "a wounded enemy eats one scrap_iron lying in its area a turn and mends 6; the reference's eats any "
            "object there (not stations, coins, bags, keys, notes), only in a fight, mending half its value (at "
            "least 2): eating what a player set down left the oracle unable to craft chapter 3's charge",
        ),
        "DevilForgedCorruptionStepRule": (
            "devil_drain",
            "the same: carrying more devil-forged objects than the reference's safe number burns its health per "
            "piece over it each step",
        ),
    },
)


def _robot_kingdom(
    ent: Entities, world: dict[str, Any], consts: dict[str, dict[str, Any]], definition: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Rust Throne's tables filled from Robot Kingdom's ids and the reference rules' constants."""

    def num(rule: str, key: str, default: int) -> int:
        value = consts.get(rule, {}).get(key, default)
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default

    def ids(rule: str, key: str) -> dict[str, Any]:
        value = consts.get(rule, {}).get(key, {})
        items = value.items() if isinstance(value, dict) else ((v, None) for v in value)
        return {ent.objects[i]: v for i, v in items if isinstance(i, str) and i in ent.objects}

    objects = [o for o in world["objects"] if not o.get("quest")]
    kinds = {o["name"]: o for o in world["objects"]}
    out: dict[str, dict[str, Any]] = {}
    tool = ent.objects.get(str(consts.get("salvage", {}).get("TOOL_ID", "")), "")
    upgrades = {
        name: [int(r[0]), int(r[2])]
        for name, r in ids("salvage", "SALVAGE_RECIPES").items()
        if isinstance(r, tuple | list) and len(r) >= 3 and r[1] == "attack"
    }
    out["salvage"] = {"upgrades": upgrades, "tool": tool}
    friendly = [
        n["name"] for n in world["npcs"] if n["kind"] == "friendly" and n.get("role") not in ("guide", "merchant")
    ]
    friendly = [n for n in friendly if n not in _immune_npcs(ent, consts.get("intimidation", {}))]
    out["rally"] = {
        "recruits": friendly,
        "wake": False,
        "cost": num("rally", "BASE_COST", 8),
        "cost_per_level": num("rally", "COST_PER_LEVEL", 4),
    }
    out["siphon"] = {"conduits": ["material", "weapon", "armor", "tool"]}
    out["jam"] = {
        "wedges": {
            o["name"]: 3
            for o in objects
            if o["category"] in ("material", "tool", "weapon")
            and o.get("value", 0) > 0
            and "unlock" not in o.get("uses", ())
        }
    }
    out["overload"] = {"components": {k: max(1, int(v)) for k, v in ids("overload", "ELIGIBLE_COMPONENTS").items()}}
    areas = {a["name"]: a.get("level", 1) for p in world["places"] for a in p["areas"]}
    finds: dict[str, list[str]] = {}
    for area, level in areas.items():
        here = [
            o["name"]
            for o in objects
            if o["category"] == "material"
            and "recipe" not in o
            and (area in o["areas"] if o.get("areas") else abs(o.get("level", 1) - level) <= 1)
        ]
        if here:
            finds[area] = sorted(here)[:4]
    out["scavenge"] = {"finds": finds}
    scrap = ent.objects.get("obj_scrap_iron")
    out["intimidation"] = {"loss": num("intimidation", "INTIMIDATION_DAMAGE_PER_ENEMY", 2)}
    out["united_presence"] = {"bonus": num("united_presence", "DEFENSE_BONUS_PER_ALLY", 3)}
    out["forge_migration"] = {
        "stations": sorted(o["name"] for o in objects if o["category"] == "station"),
        "period": max(1, num("forge_migration", "MIGRATION_TICK_INTERVAL", 20)),
    }
    if scrap is not None:
        # the reference's machines eat any object lying there; eating what a player set down (materials of a
        # recipe, quest objects) left the oracle unable to craft Robot Kingdom's chapter-3 charge on 2 seeds of 5
        out["scrap_mending"] = {"scrap": [scrap]}
    out["devil_drain"] = {
        "objects": sorted(ids("devil_drain", "DEVIL_FORGED_BASE_IDS")),
        "limit": num("devil_drain", "SAFE_THRESHOLD", 3),
        "drain": num("devil_drain", "HP_DRAIN_PER_EXCESS", 2),
    }
    del kinds
    return out


def _immune_npcs(ent: Entities, consts: dict[str, Any]) -> set[str]:
    """Names of the NPCs a reference rule leaves alone (its ``IMMUNE_NPC_BASE_IDS``)."""
    value = consts.get("IMMUNE_NPC_BASE_IDS", ())
    return {ent.npcs[i] for i in value if isinstance(i, str) and i in ent.npcs}


# ---------------------------------------------------------------------------- Saltglass: Mirror Salt's glass
_own(
    "mirror_salt",
    {
        "ListenRule": (
            "listen",
            "(Mirror Salt's rules.json) listening to this area (its mirages, what the salt swallowed, the "
            "death-notes the glass keeps), a "
            "neighbouring one (who moves there), a creature (its next stance) or an object (whether it is real), "
            "anywhere; the reference's gives one cryptic hint (a hidden object, a locked path, an enemy's rhythm) "
            "in an observatory area or while holding glass",
        ),
        "RefractRule": (
            "refract",
            "(Mirror Salt's rules.json) bending light through a glass object I carry (the reference's glass tokens "
            "in its name or description) "
            "breaks the mirages here and cracks the glaze off what I hold; the reference's reveals a locked path's "
            "key, concealed objects or an NPC's inventory, and refuses degraded glass",
        ),
        "SaltGlazeStepRule": (
            "salt_glaze",
            "(Mirror Salt's rules.json, its sheltered areas a parameter) under the open sky (the reference's open "
            "areas: the others are sheltered) salt glazes what I hold, "
            "layer by layer, taking attack from weapons; shade or stowing it flakes it off; the reference's glazes "
            "one item with 20% a step while I carry glass, until an observatory area or death",
        ),
        "ForgeAlertStepRule": (
            "forge_alert",
            "(Mirror Salt's rules.json) by a station with everything a recipe of it needs, I am told once what I "
            "could make (the "
            "reference's again after 8 steps without crafting there)",
        ),
        "CollectUnattendedStepRule": (
            "salt_sink",
            "(Mirror Salt's rules.json) what I drop sinks after 30 steps with nobody there, all of it; the "
            "reference's takes 35% of each stack after 20 to 35 idle steps, in open salt areas only, merchant areas "
            "exempt",
        ),
        "ResonanceImprintStepRule": (
            "resonance_imprint",
            "(Mirror Salt's rules.json, with imprint_falter) where an enemy falls the glass keeps its death-note and "
            "its kin there strike softer; the reference's "
            "observatories keep the last listen or refract hint for the next agent (a multi-agent trail)",
        ),
        "SaltMirageStepRule": (
            "salt_mirage",
            "phantom objects appear on the open salt with the reference's chance and mean lifetime, vanish when "
            "picked up, and are exposed by listen and refract",
        ),
    },
)


def _saltglass(
    ent: Entities, world: dict[str, Any], consts: dict[str, dict[str, Any]], definition: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Mirror Salt's parameters set from Saltglass's areas and objects and the reference rules' constants."""
    glaze = consts.get("salt_glaze", {})
    open_names = {str(a).lower() for a in glaze.get("OPEN_SALT_AREAS", ())}
    areas = [a["name"] for p in world["places"] for a in p["areas"]]
    # the reference tests its own (lower-case) area names; the import keeps them, so they are ours too
    sheltered = [a for a in areas if a not in open_names] if open_names else []
    tokens = tuple(str(t).lower() for t in consts.get("refract", {}).get("GLASS_NAME_TOKENS", ()))
    objects = [o for o in world["objects"] if not o.get("quest")]
    lenses = [
        o["name"]
        for o in world["objects"]
        if o["category"] not in ("station", "currency")
        and any(t in o["name"] or t in o["description"].lower() for t in tokens)
    ]
    mirage = consts.get("salt_mirage", {})
    chance = mirage.get("MIRAGE_CHANCE", 0.5)
    life = mirage.get("MIRAGE_LIFETIME", (60, 60))
    out: dict[str, dict[str, Any]] = {
        "refract": {"lenses": lenses},
        "listen": {"lenses": lenses},  # which things ring clear when listened to: the same glass
        "salt_glaze": {"sheltered": sheltered},
        "salt_mirage": {
            "sheltered": sheltered,
            "kinds": [o["name"] for o in objects if o["category"] == "material"],
            "chance": float(chance) if isinstance(chance, int | float) and 0 <= chance <= 1 else 0.5,
            "lifetime": max(1, round(sum(life) / len(life))) if isinstance(life, tuple | list) and life else 60,
        },
    }
    return out


# ---------------------------------------------------------------------------- Quarantine: Lazaret's light
_own(
    "lazaret",
    {
        "RefuelRule": (
            "refuel",
            "one unit of fuel fills a carried light to its capacity (the reference's max_fuel), in hand or pack; "
            "the reference's takes the light in hand only",
        ),
        "EavesdropRule": (
            "eavesdrop",
            "listening at the way to a neighbouring area tells who moves there, costing the turn; the reference's "
            "may also alert the enemies behind the door (15%), which odyssey's does not",
        ),
        "LightSourceDepletionStepRule": (
            "lamp_fuel",
            "a carried light burns one turn of fuel a step in a dark area; without one the dark hides what is there "
            "and lurking enemies strike (35% a step, at half strength as the reference's ambushes, which are 4 times "
            "likelier in the dark). Dark areas are fixed at import, a seeded draw at the reference's rate "
            "(each area but the spawn unlit with probability 0.25), where the reference draws them per run; lights "
            "start empty (the reference's start full) and burn only in the dark (the reference's every step)",
        ),
    },
)


def _quarantine(
    ent: Entities, world: dict[str, Any], consts: dict[str, dict[str, Any]], definition: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    """Lazaret's light, set from Quarantine's lights and fuel, and its dark areas drawn once."""
    areas = [a for p in world["places"] for a in p["areas"]]
    spawn = world.get("spawn")
    dark = [a["name"] for a in areas if a.get("dark")]
    if not dark:
        # the reference lights each area but the spawn with probability 0.75 per run (world.py); a fixed draw
        # at that rate, from the game's name, so that the import writes the same bytes every time
        rng = random.Random(f"agentodyssey dark areas {world['game']['name']}")
        dark = [a["name"] for a in areas if a["name"] != spawn and rng.random() >= 0.75]
    fuel = ent.objects.get("obj_lantern_fuel")
    capacity = {
        ent.objects[o["id"]]: o["max_fuel"]
        for o in (definition.get("entities") or {}).get("objects", [])
        if o.get("id") in ent.objects and isinstance(o.get("max_fuel"), int) and o["max_fuel"] > 0
    }
    lights = {}
    for obj in world["objects"]:
        if fuel is not None and "light" in obj.get("uses", ()):
            full = capacity.get(obj["name"], 30)
            lights[obj["name"]] = {"fuel": fuel, "capacity": full, "per_unit": full}
    # an ambush of the reference strikes for half the enemy's attack (ActiveAttackStepRule), in the dark too
    return {"lamp_fuel": {"dark_areas": dark, "lights": lights, "lurk_strength": 0.5}}


PARAMS: dict[str, Callable[..., dict[str, dict[str, Any]]]] = {
    "lazaret": _quarantine,
    "gavelmoor": _metropolis,
    "rust_throne": _robot_kingdom,
    "mirror_salt": _saltglass,
}
