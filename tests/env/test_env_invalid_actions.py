"""Invalid-action accounting: format failures are counted, explained, and the turn passes as a wait.

State failures (a well-formed command the world does not allow) are a different thing: corrective
feedback, ``action_failed`` in the env info, never ``invalid_action``.
"""

from __future__ import annotations

import pytest

from odyssey_env.env import OdysseyEnv
from odyssey_env.limits import MAX_AMOUNT

INVALID = [
    ("", "the command is empty"),
    ("   \n\t ", "the command is empty"),
    ("dance wildly", "could not understand 'dance wildly'"),
    ("waiting", "could not understand 'waiting'"),
    ("pick upstick", "could not understand 'pick upstick'"),
    ("wait now", "'wait' takes the form 'wait', but got 1 argument(s)"),
    ("pick up", "'pick up' takes the form 'pick up <object_name>', but got 0 argument(s)"),
    ("pick up stick resin", "but got 2 argument(s)"),
    ("craft torch", "'craft' takes the form 'craft <amount> <object_name>', but got 1 argument(s)"),
    ("store 1 stick", "but got 2 argument(s)"),
    ("craft two torch", "<amount> must be a whole number from 1 to"),
    ("craft 0 torch", "got '0'"),
    ("craft -1 torch", "got '-1'"),
    ("craft 1.5 torch", "got '1.5'"),
    ("craft ２ torch", "<amount> must be a whole number"),
    (f"craft {MAX_AMOUNT + 1} torch", f"from 1 to {MAX_AMOUNT}"),
    ('write "hello parchment_0', "unclosed quote"),
    ("pick up 'stick", "unclosed quote"),
    ('pick up ""', "<object_name> must be a name of printable ASCII characters"),
    ("pick up stické", "got 'stick\\xe9'"),
    ("enter \x1b[2J", "<area_name> must be a name"),
    ("talk to " + "a" * 101, "(at most 100)"),
]


@pytest.mark.parametrize(("command", "message"), INVALID)
def test_invalid_command_passes_as_wait(h, command, message):
    h.agent.stamina = 0.4
    hands = dict(h.agent.hands)
    area, step, minute = h.agent.area, h.state.step, h.state.minute
    out = h.do(command)
    assert out.invalid and not out.failed
    assert message in h.feedback
    assert "Invalid action" in h.feedback and "The turn passes as a wait." in h.feedback
    assert "I waited for a while." in h.feedback  # the wait really happened
    assert h.agent.stamina == 1.0
    assert h.state.step == step + 1 and h.state.minute == minute + 10
    assert h.agent.area == area and h.agent.hands == hands
    assert [e.kind for e in out.events].count("invalid_action") == 1
    assert out.reward.to_dict() == dict.fromkeys(out.reward.to_dict(), 0)


@pytest.mark.parametrize("action", [None, 5, b"wait", ["wait"], {"verb": "wait"}])
def test_non_text_action_is_invalid(h, action):
    out = h.do(action)
    assert out.invalid
    assert f"expected a text command, got {type(action).__name__}" in h.feedback
    assert h.state.step == 1


def test_feedback_echo_is_bounded_and_printable(h):
    h.do("\x00\x07zap " + "é" * 500)
    line = next(x for x in h.state.feedback["player"] if x.startswith("Invalid action"))
    assert line.isascii() and all(c.isprintable() for c in line)
    echoed = line.split("'")[1]
    assert echoed.startswith("\\x00\\x07zap \\xe9") and echoed.endswith("...")
    assert len(echoed) <= 80


@pytest.mark.parametrize("command", ["PICK UP Stick", "  pick up stick  ", 'pick up "stick"', "Pick Up STICK"])
def test_case_spacing_and_quotes_are_accepted(h, command):
    h.put("stick")
    h.ok(command)
    assert h.agent.hands == {"stick": 1}


def test_leading_zero_amount_is_a_number(h):
    h.put("stick", 2)
    h.hold("small_bag")
    h.ok("store 02 stick " + next(iter(h.agent.hands)))
    assert "I stored 2 stick" in h.feedback


def test_state_failure_is_not_invalid(h):
    out = h.do("pick up dragon_egg")
    assert out.failed and not out.invalid
    assert "Cannot pick up dragon_egg: there is none here." in h.feedback
    assert "Invalid action" not in h.feedback
    assert not [e for e in out.events if e.kind == "invalid_action"]


def test_env_info_flags(tiny_game):
    env = OdysseyEnv(tiny_game)
    env.reset(seed=3)
    _, _, _, _, info = env.step("flap my arms")
    assert info["invalid_action"] is True and info["action_failed"] is False
    assert info["step"] == 1 and info["time"].endswith("08:10:00")
    assert any(e["kind"] == "invalid_action" for e in info["events"])
    obs, _, _, _, info = env.step("pick up dragon_egg")
    assert info["invalid_action"] is False and info["action_failed"] is True
    assert "Cannot pick up dragon_egg" in obs
    _, _, _, _, info = env.step("wait")
    assert info["invalid_action"] is False and info["action_failed"] is False
    assert info["step"] == 3 and info["time"].endswith("08:30:00")
    _, _, _, _, info = env.step(None)
    assert info["invalid_action"] is True and info["step"] == 4


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize(
    "action",
    [10**5000, float("nan"), _BadRepr(), ["x" * 10_000] * 1_000, 2**64],
    ids=["huge_int", "nan", "bad_repr", "huge_list", "big_int"],
)
def test_any_non_text_action_is_refused_before_the_clock_moves(tiny_game, action):
    """``env.step(10**5000)`` raised after the clock had advanced (a half-stepped episode)."""
    env = OdysseyEnv(tiny_game)
    env.reset(seed=3)
    _, _, _, _, info = env.step(action)
    assert info["invalid_action"] and info["step"] == 1 and info["time"].endswith("08:10:00")
    (event,) = [e for e in info["events"] if e["kind"] == "invalid_action"]
    assert isinstance(event["command"], str) and len(event["command"]) <= 512
    _, _, _, _, info = env.step("wait")  # and the episode goes on normally
    assert info["step"] == 2 and not info["invalid_action"]


def test_a_megabyte_command_is_not_echoed_into_info(tiny_game):
    import json

    from odyssey_env.env import MAX_INFO_TEXT

    env = OdysseyEnv(tiny_game)
    env.reset(seed=3)
    obs, _, _, _, info = env.step("x" * 1_000_000)
    assert info["invalid_action"]
    (event,) = [e for e in info["events"] if e["kind"] == "invalid_action"]
    assert len(event["command"]) == MAX_INFO_TEXT and event["command"].endswith("...")
    assert len(json.dumps(info)) < 5_000
    assert len(obs) < 5_000


def test_an_unknown_agent_leaves_the_engine_untouched(h):
    step, minute = h.state.step, h.state.minute
    with pytest.raises(KeyError, match="unknown agent"):
        h.engine.step({"player": "wait", "ghost": "wait"})
    assert (h.state.step, h.state.minute) == (step, minute)
    assert h.do("wait").invalid is False and h.state.step == step + 1
