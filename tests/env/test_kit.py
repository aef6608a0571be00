"""The test kit's own checks (tests/kit.py): each promise its harness checks can fail.

Every game's tests lean on :meth:`kit.Harness.fails`; a check there that could never fail would let hundreds of
tests pass for nothing, so each one is shown failing here, on the tiny game.
"""

from __future__ import annotations

import pytest
from kit import PLAYER, Harness, Scripted, subprocess_digest

from odyssey_env.turn import Event

from .conftest import TINY

HIT, TAKEN = Event("agent_hit", PLAYER, {}), Event("object_taken", PLAYER, {})


def test_fails_passes_on_a_refusal_and_returns_its_feedback(h: Harness) -> None:
    assert "there is none here" in h.fails("pick up stick", "there is none here")


def test_fails_rejects_a_success_an_invalid_command_and_another_message(h: Harness) -> None:
    h.put("stick")
    with pytest.raises(AssertionError):
        h.fails("pick up stick", "there is none here")  # it succeeds
    with pytest.raises(AssertionError):
        h.fails("fly to the moon", "there is none here")  # not a command at all
    with pytest.raises(AssertionError):
        h.fails("pick up resin", "my hands are full")  # refused, but for another reason


def test_fails_rejects_a_refusal_that_changed_what_the_game_keeps(h: Harness) -> None:
    class Keeping(Harness):
        refusal_keeps = ("areas",)

        def do(self, command):
            self.put("stick")  # as if the refused command had left something on the ground
            return super().do(command)

    with pytest.raises(AssertionError):
        Keeping(h.engine).fails("pick up resin", "there is none here")


def test_fails_rejects_a_refused_command_still_listed(h: Harness) -> None:
    class Unlisted(Harness):
        refusal_unlisted = True

        def listed(self, verb=None):
            return ["pick up resin"]

    with pytest.raises(AssertionError):
        Unlisted(h.engine).fails("pick up resin", "there is none here")


def test_what_a_refusal_may_report_is_the_game_s_to_say(h: Harness) -> None:
    assert Harness(h.engine).caused([HIT, TAKEN]) == [TAKEN]  # the world's blows are not the command's

    class Loud(Harness):
        refusal_events = frozenset({"agent_hit", "object_taken"})

    class Verbs(Harness):
        verb_events = frozenset({"agent_hit"})

    assert Loud(h.engine).caused([HIT, TAKEN]) == []
    assert Verbs(h.engine).caused([HIT, TAKEN]) == [HIT]


def test_hold_one_and_put_one_insist_on_one_handle(h: Harness) -> None:
    assert h.hold_one("stick", 3) == "stick" and h.agent.hands["stick"] == 3
    assert h.put_one("parchment", text="hello").startswith("parchment")
    with pytest.raises(ValueError):
        h.put_one("parchment", 2)  # two instances, two handles


def test_scripted_rolls_come_first_then_never_succeed() -> None:
    rng = Scripted((0.1, 0.2))
    assert [rng.random() for _ in range(4)] == [0.1, 0.2, 0.999, 0.999]


def test_the_digest_depends_on_the_seed() -> None:
    assert subprocess_digest(TINY, 1, 30, "0") != subprocess_digest(TINY, 2, 30, "0")
