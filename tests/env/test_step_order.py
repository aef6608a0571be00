"""The run order of step rules: the engine's declared once, the others placed by ``after`` / ``before``.

The order of every shipped game is pinned to the one it had when rules still carried integer priorities
(recorded before the change): the golden trajectories depend on it, and a new constraint that moved a
rule would otherwise show only as a changed trajectory far from its cause.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

from odyssey_env.game import GameError, load_game
from odyssey_env.rules import BASE_RULE_MODULES, RuleBook, RuleError, StepRule, _members, step_order, step_rule
from odyssey_env.steprules.order import ENGINE_STEP_ORDER

TINY = Path(__file__).parent / "data" / "tiny"

#: ``[r.name for r in load_game(game).rules.steps]`` as recorded with the priority-sorted rule book (lazaret's
#: ``risen_hunt`` since: it was the second half of ``corpse_corruption``'s step, moved to rules.json, so it runs
#: where that half ran).
PINNED: dict[str, list[str]] = {
    "mossfall": [
        "attack_update",
        "day_night",
        "combat_rhythm",
        "ambush",
        "night_spawn",
        "respawn",
        "tutorial",
        "main_quest",
        "side_quests",
        "death",
        "craft_hints",
        "experience",
        "expansion",
    ],
    "quiet_bell": [
        "attack_update",
        "day_night",
        "danger_hours",
        "combat_rhythm",
        "ambush",
        "night_spawn",
        "respawn",
        "crafting_momentum",
        "noise",
        "carrion_scavengers",
        "wandering_patrols",
        "forgotten_caches",
        "rumor_notes",
        "shifting_paths",
        "tutorial",
        "main_quest",
        "side_quests",
        "death",
        "craft_hints",
        "experience",  # no expansion: as the paper's Remnant, Quiet Bell's world keeps its size
    ],
    "tallowmere": [
        "attack_update",
        "day_night",
        "danger_hours",
        "combat_rhythm",
        "ambush",
        "night_spawn",
        "respawn",
        "crafting_momentum",
        "noise",
        "carrion_scavengers",
        "wandering_patrols",
        "forgotten_caches",
        "rumor_notes",
        "tutorial",
        "main_quest",
        "death",
        "craft_hints",
        "experience",
    ],
    "gavelmoor": [
        "contempt_of_court",
        "attack_update",
        "nightly_rewrite",
        "law_expiry",
        "objection_effects",
        "day_night",
        "binding_precedent",
        "legal_paradox",
        "combat_rhythm",
        "ambush",
        "trial_proceedings",
        "night_spawn",
        "respawn",
        "contraband_suspicion",
        "main_quest",
        "side_quests",
        "death",
        "craft_hints",
        "experience",
        "expansion",  # as the paper's Metropolis, whose default.json turns online expansion on
    ],
    "lazaret": [
        "attack_update",
        "day_night",
        "combat_rhythm",
        "ambush",
        "lamp_fuel",
        "night_spawn",
        "corpse_corruption",
        "risen_hunt",
        "quarantine_lockdown",
        "respawn",
        "tutorial",
        "main_quest",
        "side_quests",
        "death",
        "craft_hints",
        "experience",
        "expansion",
    ],
    "rust_throne": [
        "attack_update",
        "united_presence",
        "day_night",
        "combat_rhythm",
        "scrap_mending",
        "intimidation",
        "devil_drain",
        "ambush",
        "tactical_warnings",
        "night_spawn",
        "reclamation",
        "respawn",
        "corrosion",
        "forge_migration",
        "main_quest",
        "side_quests",
        "death",
        "craft_hints",
        "experience",
        "expansion",
    ],
    "mirror_salt": [
        "attack_update",
        "glaze_cracked",
        "salt_glaze",
        "salt_mirage",
        "day_night",
        "resonance_imprint",
        "imprint_falter",
        "combat_rhythm",
        "ambush",
        "night_spawn",
        "respawn",
        "salt_sink",
        "rule_timers",
        "tutorial",
        "main_quest",
        "side_quests",
        "death",
        "craft_hints",
        "forge_alert",
        "experience",
        "expansion",
    ],
    "tiny": [
        "attack_update",
        "day_night",
        "combat_rhythm",
        "ambush",
        "night_spawn",
        "respawn",
        "death",
        "craft_hints",
        "experience",
    ],
}


@pytest.mark.parametrize("game", sorted(PINNED))
def test_every_game_keeps_its_step_rule_order(game: str) -> None:
    rules = load_game(TINY if game == "tiny" else game).rules
    assert [r.name for r in rules.steps] == PINNED[game]


def _engine_step_rules() -> list[type[StepRule]]:
    return [
        value
        for module in BASE_RULE_MODULES
        for kind, value in _members(importlib.import_module(module))
        if kind == "step"
    ]


def test_the_engine_order_names_every_engine_step_rule_once() -> None:
    names = [cls.name for cls in _engine_step_rules()]
    assert sorted(ENGINE_STEP_ORDER) == sorted(names)
    assert len(set(ENGINE_STEP_ORDER)) == len(ENGINE_STEP_ORDER)


def test_engine_rules_are_placed_by_the_declared_order_alone() -> None:
    """Their ``after`` / ``before`` would be a second place to read the engine's order from."""
    assert [(c.name, c.after, c.before) for c in _engine_step_rules() if c.after or c.before] == []


def test_every_optional_rule_switched_on_runs_in_the_declared_order() -> None:
    book = RuleBook(step_rules=[c.name for c in _engine_step_rules() if c.optional])
    assert [r.name for r in book.steps] == list(ENGINE_STEP_ORDER)


def _rule(name: str, after: tuple[str, ...] = (), before: tuple[str, ...] = ()) -> type[StepRule]:
    cls = type(
        name.title(), (StepRule,), {"name": name, "after": after, "before": before, "apply": lambda self, engine: None}
    )
    return step_rule(cls)


def _engine(*names: str) -> list[type[StepRule]]:
    by_name = {c.name: c for c in _engine_step_rules()}
    return [by_name[n] for n in names]


def _order(rules: list[type[StepRule]], known: tuple[str, ...] = ()) -> list[str]:
    return [c.name for c in step_order(rules, known)]


def test_after_runs_a_rule_right_after_the_one_it_names() -> None:
    rules = [*_engine("attack_update", "combat_rhythm", "ambush", "death"), _rule("fog", after=("combat_rhythm",))]
    assert _order(rules) == ["attack_update", "combat_rhythm", "fog", "ambush", "death"]


def test_a_rule_with_only_before_runs_as_early_as_allowed() -> None:
    rules = [*_engine("attack_update", "ambush"), _rule("fog", before=("ambush",))]
    assert _order(rules) == ["fog", "attack_update", "ambush"]


def test_before_holds_back_a_rule_the_engine_order_would_run_first() -> None:
    rules = [
        *_engine("attack_update", "combat_rhythm"),
        _rule("fog", before=("combat_rhythm",)),
        _rule("mist", before=("fog",)),
    ]
    assert _order(rules) == ["mist", "fog", "attack_update", "combat_rhythm"]


def test_a_rule_that_does_not_say_when_it_runs_is_refused_not_placed_by_a_default() -> None:
    rules = [*_engine("attack_update", "death"), _rule("fog")]
    with pytest.raises(RuleError, match=r"step rule 'fog' does not say when it runs.*before = \('attack_update',\)"):
        step_order(rules)


def test_rules_ready_together_keep_load_order_and_chains_follow_their_heads() -> None:
    rules = [
        *_engine("attack_update", "ambush"),
        _rule("b", after=("attack_update",)),
        _rule("a", after=("attack_update",)),
        _rule("c", after=("a",)),
    ]
    assert _order(rules) == ["attack_update", "b", "a", "c", "ambush"]


def test_the_engine_order_wins_over_load_order() -> None:
    assert _order(_engine("experience", "death", "attack_update")) == ["attack_update", "death", "experience"]


def test_a_known_rule_absent_from_the_book_is_ignored() -> None:
    """``noise`` is an optional engine rule this book leaves off; ``bell`` is known from another module."""
    rules = [*_engine("attack_update", "ambush"), _rule("fog", after=("noise", "ambush"), before=("bell",))]
    assert _order(rules, known=("bell",)) == ["attack_update", "ambush", "fog"]


def test_an_unknown_name_is_an_error_naming_it() -> None:
    rules = [*_engine("attack_update"), _rule("fog", after=("ambsuh",))]
    with pytest.raises(RuleError, match=r"step rule 'fog' names unknown step rule\(s\) 'ambsuh'"):
        step_order(rules)


def test_a_cycle_is_an_error_naming_its_rules() -> None:
    rules = [
        *_engine("attack_update", "ambush"),
        _rule("fog", after=("mist",)),
        _rule("mist", after=("fog",)),
        _rule("late", after=("fog",)),
    ]
    with pytest.raises(RuleError, match=r"cycle by after/before: fog -> mist -> fog"):
        step_order(rules)


def test_a_rule_against_the_engine_order_is_a_cycle() -> None:
    rules = [*_engine("attack_update", "ambush"), _rule("fog", after=("ambush",), before=("attack_update",))]
    with pytest.raises(RuleError, match=r"ambush -> fog -> attack_update -> ambush"):
        step_order(rules)


def test_a_rule_after_itself_is_a_cycle() -> None:
    with pytest.raises(RuleError, match=r"fog -> fog"):
        step_order([_rule("fog", after=("fog",))])


def test_priority_is_refused_with_the_way_to_place_a_rule() -> None:
    cls = type("Old", (StepRule,), {"name": "old", "priority": 45, "apply": lambda self, engine: None})
    with pytest.raises(RuleError, match=r"step rule 'old': 'priority' is gone; place the rule with after"):
        step_rule(cls)


@pytest.mark.parametrize("value", ["ambush", ["ambush"], ("ambush", 3), ("",)])
def test_after_and_before_must_be_tuples_of_names(value: object) -> None:
    for field in ("after", "before"):
        cls = type("Odd", (StepRule,), {"name": "odd", field: value, "apply": lambda self, engine: None})
        with pytest.raises(RuleError, match=f"step rule 'odd': {field} must be a tuple of step rule names"):
            step_rule(cls)


def test_a_game_rules_py_with_priority_does_not_load(tmp_path: Path) -> None:
    folder = tmp_path / "old_game"
    shutil.copytree(TINY, folder)
    (folder / "rules.py").write_text(
        "from odyssey_env.rules import StepRule, step_rule\n\n\n@step_rule\nclass Bell(StepRule):\n"
        '    name = "bell"\n    priority = 99\n\n    def apply(self, engine):\n        pass\n'
    )
    with pytest.raises(GameError, match=r"'priority' is gone; place the rule with after"):
        load_game(folder, cache=False, trust=True)


def test_a_game_rule_replacing_an_engine_rule_takes_its_place() -> None:
    order = PINNED["gavelmoor"]
    assert order.index("death") == order.index("side_quests") + 1
