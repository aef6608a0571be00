"""Property-based fuzzing of the command line: whatever an agent sends, the env answers sensibly.

Never an exception, always some feedback, and the observation stays inside ``observation_space``
(printable ASCII and newlines, bounded length), whatever unicode, quoting or size comes in.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odyssey_env.env import OdysseyEnv

VERBS = [
    "wait",
    "pick up",
    "drop",
    "enter",
    "attack",
    "store",
    "take out",
    "discard",
    "talk to",
    "inspect",
    "equip",
    "unequip",
    "craft",
    "write",
    "buy",
    "sell",
    "lockpick",
    "eat",
    "throw",
    "disassemble",
    "pickpocket",
]
NAMES = ["stick", "coin", "small_bag_0", "mira", "tom", "yard", "camp", "vault", "scrap_0", "apple", "rat_0"]

any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=200)
tricky = st.text(st.sampled_from(list("\"'\\ \t\n\r\x00\x0b\x1b\u2028\u00a0\u200bé\u212aK1-0ab_")), max_size=60)
word = st.one_of(st.sampled_from(NAMES), st.integers(-5, 10**7).map(str), tricky, any_text)
commands = st.one_of(
    any_text,
    tricky,
    st.builds(lambda v, ws: " ".join([v, *ws]), st.sampled_from(VERBS), st.lists(word, max_size=4)),
    st.builds(
        lambda v, c, n: f"{v} " + c * n,
        st.sampled_from(VERBS),
        st.sampled_from(["a", "é", '"', " ", "x "]),
        st.integers(0, 30_000),
    ),
)


@pytest.fixture(scope="module")
def env(tiny_game):
    e = OdysseyEnv(tiny_game)
    e.reset(seed=0)
    return e


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=commands)
def test_any_command_gets_feedback_and_a_valid_observation(env, command):
    step = env.engine.state.step
    obs, reward, terminated, truncated, info = env.step(command)
    feedback = env.engine.state.feedback["player"]
    assert feedback and all(isinstance(x, str) and x for x in feedback)
    assert env.observation_space.contains(obs), repr(obs[:300])
    assert info["step"] == step + 1
    assert not (info["invalid_action"] and info["action_failed"])
    assert isinstance(reward, float) and not terminated and not truncated


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(VERBS).flatmap(lambda v: st.just(v) | st.builds(lambda w: f"{v} {w}", word)))
def test_feedback_never_echoes_unprintable_input(env, command):
    env.step(command)
    for line in env.engine.state.feedback["player"]:
        assert line.isascii() and all(c.isprintable() for c in line), repr(line)
        assert len(line) < 2000
