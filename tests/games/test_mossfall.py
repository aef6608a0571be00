"""Mossfall, the practice game: its sizes, and its short tutorial played from a command list."""

from __future__ import annotations

from odyssey_env import load_game
from odyssey_env.env import OdysseyEnv


def test_mossfall_sizes():
    s = load_game("mossfall").summary()
    assert (s["places"], s["areas"], s["stages"], s["verbs"]) == (2, 6, 9, 17)
    assert s["object_types"] >= 50 and s["merchant_types"] >= 1 and s["enemy_types"] >= 2
    assert s["side_quests"] and s["tutorial_steps"] == 9


def test_mossfall_tutorial_passes_with_its_own_instructions():
    env = OdysseyEnv("mossfall", tutorial=True)
    env.reset(seed=0)
    state = env.engine.state

    def handle(prefix: str) -> str:
        agent = state.agents["player"]
        return next(h for h in [*agent.hands, *state.areas[agent.area].objects] if h.startswith(prefix))

    script = [
        lambda: f"pick up {handle('small_pouch_')}",
        lambda: f"equip {handle('small_pouch_')}",
        "pick up coin",
        "talk to drill_trader",
        "buy 1 wax drill_trader",
        "pick up key_blank",
        "craft 1 gate_key",
        "attack straw_dummy",
        "drop coin",
        "pick up charcoal_stick",
        lambda: f"pick up {handle('birch_bark_')}",
        lambda: f'write "hello" {handle("birch_bark_")}',
        "drop charcoal_stick",
        "pick up gate_key",
        "enter barn_door",
    ]
    completed = []
    for command in script:
        obs, reward, _, _, info = env.step(command() if callable(command) else command)
        assert not info["action_failed"] and not info["invalid_action"], obs
        assert reward == 0
        completed += [e for e in info["events"] if e["kind"] == "tutorial_completed"]
    assert completed == [{"kind": "tutorial_completed", "completed": True, "steps": len(script)}]
    assert not info["in_tutorial"] and info["area"] == "hearth_square"
    assert "drill_barn" not in state.areas and state.agents["player"].hands == {}
