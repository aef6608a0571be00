"""The tutorial: isolated rooms, gated steps, no rewards, removed when done."""

from __future__ import annotations

import copy

from odyssey_env.quests.tutorial import progress

from .conftest import QUEST, act

TUTORIAL = {
    "rooms": [
        {"name": "drill_hall", "description": "A bare hall."},
        {"name": "drill_gate", "description": "A gate room."},
    ],
    "links": [{"a": "drill_hall", "b": "drill_gate"}],
    "intro": "Welcome to the drill hall.",
    "outro": "Off you go.",
    "max_steps": 30,
    "steps": [
        {
            "id": "take_stick",
            "say": "Pick up the stick.",
            "place": {"stick": 1},
            "done": {"type": "has_item_count", "object": "stick"},
        },
        {
            "id": "craft",
            "say": "Craft a doll.",
            "place": {"hay": 1, "bench": 1},
            "done": {"type": "object_crafted", "object": "doll"},
        },
        {"id": "spar", "say": "Defeat the rat.", "npcs": ["rat"], "done": {"type": "npc_defeated", "npc": "rat"}},
        {"id": "leave", "say": "Walk to the gate.", "done": {"type": "area_entered", "area": "drill_gate"}},
    ],
}


def quest_with_tutorial(**changes):
    quest = copy.deepcopy(QUEST)
    quest["tutorial"] = {**copy.deepcopy(TUTORIAL), **changes}
    return quest


def play_tutorial(engine):
    outs = []
    for command in ("pick up stick", "pick up hay", "craft 1 doll"):
        outs.append(engine.step({"player": command})["player"])
    while any(n.type == "rat" for n in engine.state.npcs.values()):
        rat = next(h for h, n in engine.state.npcs.items() if n.type == "rat")
        outs.append(engine.step({"player": f"attack {rat}"})["player"])
    outs.append(engine.step({"player": "enter drill_gate"})["player"])
    return outs


def test_tutorial_starts_isolated_and_ends_at_the_spawn_with_nothing(make_engine):
    engine = make_engine(quest_with_tutorial(), tutorial=True)
    agent = engine.state.agents["player"]
    assert agent.area == "drill_hall" and agent.in_tutorial
    assert "Welcome to the drill hall." in engine.state.feedback["player"]
    assert "[Tutorial 1/4] Pick up the stick." in engine.state.feedback["player"]
    outs = play_tutorial(engine)
    assert not agent.in_tutorial and agent.area == "yard"
    assert agent.hands == {} and agent.equipment == {}
    assert "drill_hall" not in engine.state.areas and "drill_gate" not in engine.state.areas
    assert not any(n.origin == "tutorial" for n in engine.state.npcs.values())
    assert all(o.reward.to_dict() == dict.fromkeys(o.reward.to_dict(), 0) for o in outs)
    assert agent.visited == {"yard": 0} and agent.crafted == {} and agent.defeated == {}
    finished = [e for e in outs[-1].events if e.kind == "tutorial_completed"]
    assert finished and finished[0].data["completed"] is True
    assert progress(engine, "player")["finished"]


def test_main_quest_begins_after_the_tutorial(make_engine):
    engine = make_engine(quest_with_tutorial(), tutorial=True)
    act(engine, "talk to sage")  # the sage is in the world, not in the tutorial
    assert engine.state.rule_data["main_quest"]["agents"]["player"]["done"] == []
    play_tutorial(engine)
    assert "=== MAIN QUEST: Tiny Quest ===" in "\n".join(engine.state.feedback["player"])
    out, _ = act(engine, "talk to sage")
    assert out.reward.quest == 1


def test_steps_are_gated_in_order(make_engine):
    engine = make_engine(quest_with_tutorial(), tutorial=True)
    act(engine, "enter drill_gate", "enter drill_hall")  # the last step, too early
    assert progress(engine, "player")["step"] == 0


def test_tutorial_ends_by_itself_after_max_steps(make_engine):
    engine = make_engine(quest_with_tutorial(max_steps=5), tutorial=True)
    for _ in range(5):
        out = engine.step({"player": "wait"})["player"]
    assert not engine.state.agents["player"].in_tutorial
    assert [e.data["completed"] for e in out.events if e.kind == "tutorial_completed"] == [False]


def test_tutorial_off_starts_in_the_world(make_engine):
    engine = make_engine(quest_with_tutorial(), tutorial=False)
    assert engine.state.agents["player"].area == "yard"
    assert "drill_hall" not in engine.state.areas
