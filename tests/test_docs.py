"""The reference pages list everything the code has (they are written from it; this keeps them so)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from odyssey_env.quests.conditions import VOCABULARY
from odyssey_env.rules import BASE_RULE_MODULES, OPTIONAL_VERBS, RuleBook, _members
from odyssey_env.steprules.order import ENGINE_STEP_ORDER

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _all_rules() -> RuleBook:
    return RuleBook(verbs=OPTIONAL_VERBS, step_rules=_optional_step_names())


def _optional_step_names() -> list[str]:
    names = []
    for module in BASE_RULE_MODULES:
        for kind, value in _members(importlib.import_module(module)):
            if kind == "step" and value.optional:
                names.append(value.name)
    return names


def test_dynamics_page_lists_every_step_rule_and_verb():
    text = (DOCS / "dynamics.md").read_text()
    rules = _all_rules()
    missing = [r.name for r in rules.steps if f"`{r.name}`" not in text]
    missing += [v for v in rules.actions if f"`{rules.actions[v].usage()}`" not in text]
    assert not missing, f"docs/dynamics.md lacks {missing}; regenerate it"


def test_dynamics_page_lists_step_rules_in_their_run_order():
    rows = re.findall(r"^\| `([a-z_]+)` \| (\d+) \| (?:yes|no) \|", (DOCS / "dynamics.md").read_text(), re.M)
    assert rows == [(name, str(i)) for i, name in enumerate(ENGINE_STEP_ORDER, 1)]


def test_quests_page_lists_every_condition_type():
    text = (DOCS / "quests.md").read_text()
    missing = [name for name in VOCABULARY if f"`{name}`" not in text]
    assert not missing, f"docs/quests.md lacks condition types {missing}"


def test_building_blocks_table_names_what_its_modules_hold():
    """Every function the rule authors' table in docs/engine.md names exists in the module it names."""
    text = (DOCS / "engine.md").read_text()
    section = text.split("### Building blocks for rule authors", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| [^|]+ \| (.+) \| `(odyssey_env/[a-z_/]+)\.py` \|$", section, re.M)
    assert len(rows) >= 10
    for names, path in rows:
        module = importlib.import_module(path.replace("/", "."))
        for name in re.findall(r"`([A-Za-z_]+)[`(]", names):
            if name in {"passable", "respawn", "refill", "emptied_delay", "world_cap", "food_"}:
                continue  # a parameter or a rule's name, not something to import
            assert hasattr(module, name), f"docs/engine.md: {path}.py has no {name}"
