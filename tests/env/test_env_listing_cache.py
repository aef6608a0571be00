"""The valid-action cache (odyssey_env.listing): a cached listing is always the listing a fresh one would give.

Every test in this folder runs with the check mode on (conftest), so every walk elsewhere also compares
each cached listing with a fresh one. The tests here make sure that the cache is really used, that the
check catches a verb that reads what it does not declare, and that what no single-agent walk covers
(several agents in one area, a replaced state, callers that change the lists they got) stays exact.
"""

from __future__ import annotations

import random
import types

import pytest

from odyssey_env import available_games, load_game
from odyssey_env.engine import Engine
from odyssey_env.listing import CHECK_ENV, StaleListingError, declared_dependencies
from odyssey_env.rules import BASE_RULE_MODULES, DEPENDENCIES, ActionRule, RuleBook, RuleError, action_rule
from odyssey_env.turn import Turn
from odyssey_env.verbs.items import Drop

PLAYER = "player"


def _walk(engine: Engine, steps: int, seed: int, agents: tuple[str, ...] = (PLAYER,)) -> None:
    """Each agent picks a verb at random, then one of its listed commands; all act in the same step.

    A lone agent's command must succeed; with several, one may take what another meant to use.
    """
    rng = random.Random(seed)
    for _ in range(steps):
        commands = {}
        for agent in agents:
            va = engine.valid_actions(agent)
            commands[agent] = rng.choice(va[rng.choice(list(va))])
        outcomes = engine.step(commands)
        assert not any(o.invalid for o in outcomes.values()), engine.state.feedback
        assert len(agents) > 1 or not outcomes[PLAYER].failed, engine.state.feedback


@pytest.mark.parametrize("game_name", [*available_games(), "tiny"])
def test_cached_listing_matches_a_fresh_one_on_every_game(game_name, tiny_game):
    """The check mode lists every verb afresh beside the cache at every step and raises on a difference."""
    game = tiny_game if game_name == "tiny" else load_game(game_name)
    engine = Engine(game, 7, check_valid_actions=True)
    _walk(engine, 1500, 7)
    listing = engine._listings[PLAYER]
    assert listing.check and listing.fingerprints is not None


def test_the_cache_is_used(tiny_game):
    """Listing twice in a row calls no verb the second time."""
    engine = Engine(tiny_game, 0, check_valid_actions=False)
    calls = []
    listing = engine.valid_actions(PLAYER)
    original = Turn.__init__

    def counting(self, *args, **kwargs):
        calls.append(1)
        original(self, *args, **kwargs)

    Turn.__init__ = counting
    try:
        assert engine.valid_actions(PLAYER) == listing
    finally:
        Turn.__init__ = original
    assert calls == []


def test_the_environment_switches_the_check_on(tiny_game, monkeypatch):
    monkeypatch.setenv(CHECK_ENV, "1")
    assert Engine(tiny_game, 0).check_valid_actions
    monkeypatch.setenv(CHECK_ENV, "0")
    assert not Engine(tiny_game, 0).check_valid_actions
    assert Engine(tiny_game, 0, check_valid_actions=True).check_valid_actions


# ---------------------------------------------------------------------------- declarations
def _lying_rules(game) -> RuleBook:
    """The game's rules plus ``polish``, which lists held objects but declares that it reads the ground."""
    module = types.ModuleType("lying_rules")

    class Polish(ActionRule):
        verb = "polish"
        params = (("object_name", "object"),)
        description = "Polish something I hold."
        depends_on = ("ground",)  # wrong: candidates read the hands

        def apply(self, turn, handle):
            turn.say(f"I polished {handle}.")

        def candidates(self, turn):
            return [f"polish {h}" for h in turn.agent.hands]

    Polish.__module__ = module.__name__
    module.Polish = action_rule(Polish)
    spec = game.spec.game
    return RuleBook(
        [*BASE_RULE_MODULES, module],
        verbs=spec.verbs,
        step_rules=spec.step_rules,
        disable=spec.disable,
        params=spec.params,
    )


@pytest.mark.parametrize("check", [True, False])
def test_a_verb_that_reads_what_it_does_not_declare(h, check):
    """Without the check the cache really serves a stale listing; with it, the listing raises and says why."""
    h.engine.valid_actions(PLAYER)  # a listing under the game's own rules first: a new rule book starts afresh
    h.engine.rules = _lying_rules(h.game)
    h.engine._listings[PLAYER].check = h.engine.check_valid_actions = check
    h.hold("stick")
    assert h.engine.valid_actions(PLAYER)["polish"] == ["polish stick"]
    h.hold("resin")
    if check:
        with pytest.raises(StaleListingError, match=r"verb 'polish' \(depends_on=\('ground',\)\)"):
            h.engine.valid_actions(PLAYER)
    else:
        assert h.engine.valid_actions(PLAYER)["polish"] == ["polish stick"]  # stale: what the check is for


def test_a_subclass_must_declare_for_itself(tiny_game):
    """A subclass inherits candidates but may read more: until it declares, it is listed afresh every time."""

    class MyDrop(Drop):
        pass

    class MyDeclaredDrop(Drop):
        depends_on = ("hands", "ground")

    assert declared_dependencies(Drop()) == ("hands",)
    assert declared_dependencies(MyDrop()) is None
    assert declared_dependencies(MyDeclaredDrop()) == ("hands", "ground")


@pytest.mark.parametrize("bad", [("hands", "pockets"), "hands"])
def test_unknown_dependencies_are_refused(bad):
    class Odd(ActionRule):
        verb = "odd"
        depends_on = bad

    with pytest.raises(RuleError, match="depends_on must be a tuple of place, exits, hands"):
        action_rule(Odd)


def test_every_shipped_verb_declares_known_dependencies(tiny_game):
    """All engine verbs are cached (none falls back to listing afresh), from the documented vocabulary."""
    for verb, rule in tiny_game.rules.actions.items():
        declared = declared_dependencies(rule)
        assert declared is not None, verb
        assert set(declared) <= set(DEPENDENCIES), verb


# ---------------------------------------------------------------------------- what walks do not cover
def test_agents_in_one_area_change_each_others_listings(tiny_game):
    engine = Engine(tiny_game, 0, agents=("ann", "bob"), check_valid_actions=True)
    assert engine.state.agents["ann"].area == engine.state.agents["bob"].area
    assert "pick up apple" in engine.valid_actions("ann")["pick up"]
    engine.valid_actions("bob")
    engine.step({"bob": "pick up apple", "ann": "wait"})  # the only apple
    assert "pick up apple" not in engine.valid_actions("ann")["pick up"]
    assert "drop apple" in engine.valid_actions("bob")["drop"]
    assert "drop" not in engine.valid_actions("ann")
    engine.step({"ann": "wait", "bob": "drop apple"})
    assert "pick up apple" in engine.valid_actions("ann")["pick up"]


def test_many_agents_walk_together(tiny_game):
    engine = Engine(tiny_game, 3, agents=("ann", "bob", "cid"), check_valid_actions=True)
    _walk(engine, 600, 3, agents=("ann", "bob", "cid"))


def test_a_replaced_state_is_listed_afresh(tiny_game):
    engine = Engine(tiny_game, 0, check_valid_actions=True)
    saved = engine.save_state()
    first = engine.valid_actions(PLAYER)
    engine.step({PLAYER: "pick up stick"})
    assert engine.valid_actions(PLAYER) != first
    engine.load_state(saved)
    assert engine.valid_actions(PLAYER) == first


def test_callers_cannot_spoil_the_cache(tiny_game):
    engine = Engine(tiny_game, 0, check_valid_actions=True)
    first = engine.valid_actions(PLAYER)
    expected = {verb: list(commands) for verb, commands in first.items()}
    first["pick up"].clear()
    first.pop("enter")
    assert engine.valid_actions(PLAYER) == expected


def test_an_unknown_agent_is_a_clear_error(tiny_game):
    with pytest.raises(KeyError, match="no agent 'ghost'"):
        Engine(tiny_game, 0).valid_actions("ghost")
