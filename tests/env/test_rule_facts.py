"""The facts rules declare about themselves (World-Knowledge QA): each is there, well formed and true.

A fact is a question with one right answer and plausible wrong ones; QA asks agents these before and
after play, so a fact that is missing, ambiguous or false for the game at hand corrupts the measure.
"""

from __future__ import annotations

import copy
import json

import pytest

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.rules import OPTIONAL_VERBS, RuleBook

from .conftest import TINY

#: verb -> the answers its facts give on the tiny game (verbs with nothing to declare have none).
ANSWERS = {
    "wait": ["all of it"],
    "defend": ["one tenth"],
    "pick up": ["two"],
    "drop": [],
    "inspect": [],
    "equip": ["no, weapons are held in the hands"],
    "unequip": [],
    "store": ["no"],
    "take out": [],
    "discard": [],
    "enter": ["no"],
    "lockpick": ["about 35% of tries"],
    "attack": ["they weaken as I tire", "a tenth"],
    "throw": ["on the ground of the area"],
    "talk to": [],
    "pickpocket": ["the victim refuses to talk or trade for a while"],
    "buy": ["its value in coins"],
    "sell": ["half"],
    "craft": ["on the ground of the area"],
    "disassemble": ["half of each ingredient, rounded up"],
    "write": ["a writing tool in one hand and something to write on in the other"],
    "eat": ["no"],
}


def test_every_verb_declares_its_facts(tiny_game):
    answers = {verb: [f.answer for f in rule.facts(tiny_game)] for verb, rule in tiny_game.rules.actions.items()}
    assert answers == ANSWERS


def test_facts_are_well_formed(tiny_game):
    for verb, rule in tiny_game.rules.actions.items():
        for fact in rule.facts(tiny_game):
            assert fact.topic and fact.question.endswith("?"), (verb, fact)
            assert len(fact.distractors) == 3 and len(set(fact.distractors)) == 3, (verb, fact)
            assert fact.answer not in fact.distractors, (verb, fact)


def test_tunable_facts_follow_the_rule_parameters(tiny_game):
    rules = RuleBook(verbs=OPTIONAL_VERBS, params={"sell": {"sell_ratio": 0.25}, "lockpick": {"chance": 0.6}})
    (sell,) = rules.actions["sell"].facts(tiny_game)
    assert sell.answer == "0.25" and sell.answer not in sell.distractors
    (lock,) = rules.actions["lockpick"].facts(tiny_game)
    assert lock.answer == "about 60% of tries"


# ------------------------------------------------------------------ the facts are true
def test_waiting_restores_all_stamina_and_a_guard_lets_a_tenth_through(h):
    h.agent.stamina = 0.2
    h.ok("wait")
    assert h.agent.stamina == 1.0
    wolf = h.npc("wolf")  # defense 2
    wolf.stance_index = 2  # its guard
    h.agent.attack = 102
    h.ok(f"attack {wolf.handle}")
    assert h.events("npc_attacked")[0]["damage"] == 10  # (102 - 2) / 10


@pytest.mark.parametrize(("hands", "answer"), [(1, "one"), (2, "two"), (3, "three"), (4, "four"), (10, "ten")])
def test_the_hands_fact_counts_the_game_s_hands(tmp_path, hands, answer):
    world = json.loads((TINY / "world.json").read_text())
    world = copy.deepcopy(world)
    world["agent"]["hands"] = hands
    folder = tmp_path / "hands"
    folder.mkdir()
    (folder / "world.json").write_text(json.dumps(world))
    game = load_game(folder, cache=False)
    (fact,) = game.rules.actions["pick up"].facts(game)
    assert fact.answer == answer and answer not in fact.distractors and len(set(fact.distractors)) == 3
    engine = Engine(game, 0)  # and the body really holds that many
    agent = engine.state.agents["player"]
    engine.state.areas[agent.area].objects.update({"stick": hands, "resin": 1})
    for _ in range(hands):
        engine.step({"player": "pick up stick"})
    assert sum(agent.hands.values()) == hands
    assert engine.step({"player": "pick up resin"})["player"].failed
