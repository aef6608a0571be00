"""Golden trajectories: every shipped game replays its frozen script to the same observations.

If this fails after a deliberate change to a game or the engine, re-record with
``python -m tests.golden.record <game>`` and review the diff of the golden file.
"""

from __future__ import annotations

import difflib

import pytest

from odyssey_env import available_games

from .record import golden_path, play, read


@pytest.mark.parametrize("game", available_games())
def test_game_replays_its_golden_trajectory(game):
    if not golden_path(game).exists():
        pytest.fail(f"no golden trajectory for {game}: record one with python -m tests.golden.record {game}")
    header, expected = read(game)
    first, actual = play(game, header["seed"], header["commands"])
    assert first == header["first_observation"], "the first observation changed"
    assert len(actual) == len(expected), f"the episode now lasts {len(actual)} steps, not {len(expected)}"
    for want, got in zip(expected, actual, strict=True):
        if want != got:
            diff = "\n".join(
                difflib.unified_diff(
                    want["observation"].splitlines(), got["observation"].splitlines(), "golden", "now", lineterm=""
                )
            )
            others = {k: (want[k], got[k]) for k in want if k != "observation" and want[k] != got[k]}
            pytest.fail(
                f"{game} step {want['step']} ({want['action']!r}) differs: {others}\n{diff}\n"
                f"If intended, re-record: python -m tests.golden.record {game}"
            )
