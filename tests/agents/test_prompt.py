"""The ReAct prompt of paper A5.1, built from the game's verbs."""

from __future__ import annotations

import pytest

from odyssey_agents.prompting.prompt import ACT_KEYS, PromptBuilder


def test_system_prompt_lists_every_verb_of_the_game_and_the_strict_format(base_verbs):
    system = PromptBuilder(base_verbs).system
    assert system.startswith("You are the player in a text adventure game.")
    for verb in base_verbs:
        assert f"\n- {verb}\n" in system + "\n"
    assert "store <amount> <object_name> <container_name>" in system
    assert '"reasoning": "A few sentences explaining why you choose the action."' in system
    assert '"action": "<action>"' in system
    assert "The JSON must be the ONLY content in your reply" in system
    assert "The action must exactly match one option from the action space." in system


def test_verbs_appear_sorted_and_only_the_games_own():
    system = PromptBuilder(["wait", "attack <npc_name>", "lockpick <area_name>"]).system
    block = system.split("Action space:\n", 1)[1].split("\nOutput format", 1)[0]
    assert block.splitlines() == ["- attack <npc_name>", "- lockpick <area_name>", "- wait"]
    assert "craft" not in system


def test_user_prompt_puts_memory_before_the_observation_and_ends_with_the_question():
    pb = PromptBuilder(["wait"])
    messages = pb.act([("My memories", "[Step 0] ..."), ("Empty", "")], "Current Location: hall")
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[1]["content"]
    assert user.index("My memories:\n[Step 0]") < user.index("My Current Observation:\nCurrent Location: hall")
    assert "Empty:" not in user  # empty sections are left out
    assert user.endswith("What should I do next? Return only the JSON object.")


def test_extra_reply_keys_need_a_description():
    with pytest.raises(ValueError, match="no description"):
        PromptBuilder(["wait"], ("reasoning", "memory", "action"))
    pb = PromptBuilder(["wait"], ("reasoning", "memory", "action"), {"memory": "My new state."})
    assert '"memory": "My new state."' in pb.system
    assert pb.system.index('"reasoning"') < pb.system.index('"memory"') < pb.system.index('"action"')
    assert ACT_KEYS == ("reasoning", "action")


def test_verb_openings_end_with_a_space_when_arguments_follow():
    pb = PromptBuilder(["wait", "pick up <object_name>", "store <amount> <object_name> <container_name>"])
    assert pb.verb_words == ("pick up ", "store ", "wait")


def test_a_game_without_verbs_is_refused():
    with pytest.raises(ValueError, match="no verbs"):
        PromptBuilder([])


def test_qa_prompt_letters_the_choices():
    user = PromptBuilder(["wait"]).answer([], "Where is the anvil?", ["hall", "smithy_yard"])[1]["content"]
    assert "Question: Where is the anvil?\nA) hall\nB) smithy_yard" in user
