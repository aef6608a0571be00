"""What the step path works out once and reuses (for speed) stays exact where it must follow a change.

* ``info`` keys decided once per game and ``info_keys`` (``env._info_plan``): another game, or other
  keys, get their own; the ``tutorial`` key still follows the agent's phase at every step;
* main-quest progress built from per-stage summaries: each step returns fresh dicts that follow the
  open stages;
* the probe turn of a listing (``ProbeTurn``) looks the area up once: a listing after a move lists
  the new area.
"""

from __future__ import annotations

from odyssey_env.engine import Engine
from odyssey_env.env import INFO_KEYS, OdysseyEnv
from odyssey_env.turn import ProbeTurn


def test_info_keys_follow_the_game_and_the_keys_asked():
    base, mark = OdysseyEnv("mossfall"), OdysseyEnv("tallowmere")
    _, base_info = base.reset(seed=0)
    _, mark_info = mark.reset(seed=0)
    assert "side_quests" in base_info and "side_quests" not in mark_info  # mark has no side quests
    assert "quest" in base_info and "quest" in mark_info
    lean = OdysseyEnv("mossfall", info_keys=["step", "side_quests"])
    _, info = lean.reset(seed=0)
    assert list(info) == ["step", "side_quests"]
    assert list(base.step("wait")[4]) == [k for k in INFO_KEYS if k != "tutorial"]


def test_the_tutorial_key_follows_the_agent_at_every_step():
    env = OdysseyEnv("mossfall")
    _, info = env.reset(seed=0, options={"tutorial": True})
    assert info["in_tutorial"] and "tutorial" in info
    for _ in range(400):  # the tutorial gives up after its step limit
        info = env.step("wait")[4]
        if not info["in_tutorial"]:
            break
    assert not info["in_tutorial"] and "tutorial" not in info


def test_quest_progress_is_fresh_and_follows_the_open_stages():
    env = OdysseyEnv("mossfall")
    _, first = env.reset(seed=0)
    first["quest"]["current"][0]["title"] = "changed by the caller"
    engine = env.engine
    again = env.step("wait")[4]["quest"]
    assert again["current"][0]["title"] != "changed by the caller"
    opened = engine.state.rule_data["main_quest"]["agents"]["player"]
    opened["done"].append(opened["open"][0])
    opened["open"] = ["smelt_iron"]
    now = env.step("wait")[4]["quest"]
    assert [s["id"] for s in now["current"]] == ["smelt_iron"] and now["completed"] == len(opened["done"])


def test_a_probe_turn_sees_the_area_of_its_listing(tiny_game):
    engine = Engine(tiny_game, 0, check_valid_actions=True)
    agent = engine.state.agents["player"]
    before = engine.valid_actions("player")
    assert ProbeTurn(engine, agent).area is engine.state.areas[agent.area]
    target = before["enter"][0].removeprefix("enter ")
    engine.step({"player": f"enter {target}"})
    assert agent.area == target
    assert ProbeTurn(engine, agent).area.name == target
    assert f"inspect {target}" in engine.valid_actions("player")["inspect"]


def test_the_default_info_is_the_table_of_info_fields():
    """``agent_info`` writes the always-present keys out for the default (every key after a step); what
    it gives must be what the table ``_INFO_FIELDS`` gives when asked for every key by name."""
    import random

    from odyssey_env import available_games
    from odyssey_env.face import agent_info

    for game in available_games():
        for tutorial in (False, True):
            env = OdysseyEnv(game)
            env.reset(seed=3, options={"tutorial": tutorial})
            engine, rng = env.engine, random.Random(3)
            for _ in range(60):
                listing = engine.valid_actions("player")
                command = rng.choice(listing[rng.choice(list(listing))]) if rng.random() < 0.9 else "fly"
                outcome = engine.step({"player": command})["player"]
                fast = agent_info(engine, "player", outcome)
                table = agent_info(engine, "player", outcome, keys=INFO_KEYS)
                assert fast == table and list(fast) == list(table), (game, command)
