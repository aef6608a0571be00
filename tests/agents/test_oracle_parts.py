"""The oracle's planner parts: the dispatch tables are complete, and the shared state keeps its promises.

The planner's behaviour is pinned down by tests/agents/test_oracle.py (every shipped game solved,
decisions deterministic, a resumed run identical); these check the seams between its parts.
"""

from __future__ import annotations

import pytest

from odyssey_agents.oracle.core import Focus, Memory, Stuck
from odyssey_agents.oracle.planner import CONDITIONS, Planner


def test_the_condition_table_covers_the_vocabulary() -> None:
    """``achieve`` dispatches through the table, so a type missing there is a goal the oracle gives up on."""
    from odyssey_env.quests.conditions import VOCABULARY

    missing = sorted(set(VOCABULARY) - set(CONDITIONS))
    assert not missing, f"the oracle's condition table lacks {missing}"
    for name, plan in CONDITIONS.items():
        assert plan.command is getattr(Planner, f"_c_{name}") and plan.cost is getattr(Planner, f"_e_{name}"), name


def test_memory_round_trips_through_json() -> None:
    """Tuple keys (and tuple choices) survive the checkpoint as they were."""
    import json

    memory = Memory()
    memory.banned[("have", "iron_ore", "smithy")] = 90
    memory.last_choice[("prep", "wolf_1")] = ("gear", 12, "spear", False)
    memory.calm_until, memory.reserved["coin"], memory.let_go["stone_2"] = 70, 5, 8
    memory.plan_progress["lit:{}"] = 2
    copy = Memory()
    copy.restore(json.loads(json.dumps(memory.to_json())))
    assert copy.to_json() == memory.to_json() and copy.calm_until == 70
    assert copy.banned == memory.banned and copy.last_choice == memory.last_choice


def test_focus_marks_are_undone_when_a_goal_fails() -> None:
    """A part that marks a type as needed and then gets stuck must not leave the mark for the next goal."""
    from odyssey_agents.oracle.view import View
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv("mossfall")
    env.reset(seed=0)
    memory = Memory()
    focus = Focus(memory)
    focus.begin(View(env.engine, "player"))
    with pytest.raises(Stuck), focus.need("plank", 2), focus.keeping("axe_1"), focus.sparing("yard", "brick"):
        assert focus.needed == {"plank": 2} and focus.keep == ["axe_1"] and focus.not_from == ("yard", "brick")
        raise Stuck("no way")
    assert focus.needed == {} and focus.keep == [] and focus.not_from is None
    assert memory.reserved == {"plank": env.engine.state.step}  # a recent need still keeps it from being sold


def test_every_part_plans_on_the_same_world() -> None:
    """Setting the planner's view (as a caller inspecting a situation does) moves every part to it."""
    from odyssey_agents.oracle.view import View
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv("mossfall")
    env.reset(seed=0)
    planner = Planner()
    planner.decide(env.engine, [])
    view = View(env.engine, "player")
    planner.view = view
    assert planner.focus.view is view
    assert all(part.view is view for part in (planner.navigation, planner.supply, planner.tactics, planner.events))
