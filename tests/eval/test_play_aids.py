"""``odyssey play`` for a person: hints that cost no turn, tab completion, "did you mean" for game names."""

from __future__ import annotations

from pathlib import Path

import pytest

from odyssey_env.env import OdysseyEnv
from odyssey_eval import play
from odyssey_eval.play_aids import Completer, candidates_of, completions, did_you_mean, hint

TINY = str(Path(__file__).parents[1] / "env" / "data" / "tiny")


def run(monkeypatch, capsys, lines, *argv):
    feed = iter(lines)

    def fake_input(prompt=""):
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr("builtins.input", fake_input)
    code = play.main([*argv] if argv else [TINY])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def env():
    env = OdysseyEnv(TINY)
    env.reset(seed=0)
    return env


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("look", "Every observation already shows where you are"),
        ("L", "Every observation already shows where you are"),
        ("look at   camp", "use 'inspect camp'"),
        ("go to yard", "did you mean 'enter yard'?"),
        ("walk yard", "did you mean 'enter yard'?"),
        ("north", "Areas have names, not directions: move with 'enter <area_name>'. From here: yard."),
        ("go", "From here: yard."),
        ("inventory", "What you hold and wear is in every observation."),
        ("i", "What you hold and wear is in every observation."),
        ("get stick", "did you mean 'pick up stick'?"),
        ("take apple", "did you mean 'pick up apple'?"),  # 'take out' is a verb; 'take apple' is not it
        ("examine tom", "did you mean 'inspect tom'?"),
        ("talk tom", "did you mean 'talk to tom'?"),
        ("speak to tom", "did you mean 'talk to tom'?"),
        ("kill rat", "did you mean 'attack rat'?"),
        ("pik up stick", "There is no verb 'pik': did you mean 'pick up'?"),
    ],
)
def test_commands_of_other_games_get_the_command_of_this_one(env, typed, expected):
    obs = env.reset(seed=0)[0]
    said = hint(env, typed, obs)
    assert said is not None and expected in said and said.count("(No turn spent.)") == 1


def test_status_and_inventory_hints_quote_the_last_observation(env):
    obs = env.reset(seed=0)[0]
    assert "Neighboring areas: yard" in hint(env, "look", obs) and "My health is at 100." in hint(env, "look", obs)
    assert "I am holding no objects." in hint(env, "inventory", obs)


@pytest.mark.parametrize("typed", ["enter", "pick up", "pick up dragon", "wait", "dance", "enter yard", ""])
def test_commands_with_a_verb_of_the_game_and_unknown_words_go_to_the_game(env, typed):
    assert hint(env, typed, "") is None


def test_a_verb_of_the_game_always_wins_over_a_hint(env, monkeypatch):
    """A game with a verb named like a hint word ('look') gets its own verb."""
    from odyssey_env.parsing import verb_index

    rules = env.game.rules
    monkeypatch.setattr(rules, "verbs_by_first_word", verb_index([*rules.actions, "look", "go"]))
    assert hint(env, "look", "") is None and hint(env, "go north", "") is None


def test_hints_spend_no_turn_in_play(monkeypatch, capsys):
    code, out, _ = run(monkeypatch, capsys, ["look", "go to yard", "inventory", "get stick", "wait"])
    assert code == 0
    assert "did you mean 'enter yard'?" in out and "did you mean 'pick up stick'?" in out
    assert out.count("Current Time:") == 2  # the start and the one wait
    assert "Current Time: 0001-01-01 08:10:00" in out and "Invalid action" not in out


def test_completion_word_by_word_over_multi_word_verbs(env):
    cands = candidates_of(env)
    assert completions(cands, "pi", 0) == ["pick", "pickpocket"]
    assert completions(cands, "pick ", 5) == ["up"]
    assert completions(cands, "pick up s", 8) == ["scrap_0", "small_bag_0", "stick"]
    assert completions(cands, "enter ", 6) == ["yard"]  # the locked vault is not enterable now
    assert completions(cands, "ta", 0) == ["take", "talk"]
    assert completions(cands, "sa", 0) == ["save"]  # meta-commands too
    assert completions(cands, "PICK UP ST", 8) == ["stick"]
    assert completions(cands, "fly ", 4) == []


def test_completer_lists_valid_commands_once_per_line(env):
    calls = []

    def cands():
        calls.append(1)
        return candidates_of(env)

    line = {"buf": "enter ", "beg": 6}
    comp = Completer(cands, lambda: line["buf"], lambda: line["beg"])
    assert [comp.complete("", i) for i in range(2)] == ["yard", None]
    assert [comp.complete("", i) for i in range(2)] == ["yard", None]
    assert len(calls) == 1
    env.step("enter yard")
    comp.forget()
    line.update(buf="enter ", beg=6)
    assert comp.complete("", 0) == "camp" and len(calls) == 2


def test_did_you_mean_for_game_names(monkeypatch, capsys):
    code, _, err = run(monkeypatch, capsys, [], "mosfall")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith("odyssey play: no game named 'mosfall': did you mean 'mossfall'?")
    assert "odyssey games" in line
    code, _, err = run(monkeypatch, capsys, [], "zzzz")
    assert code == 2 and "no game named 'zzzz'. Games: " in err and "did you mean" not in err


def test_did_you_mean_words():
    assert did_you_mean("bse", ["base", "remnant"]) == ": did you mean 'base'?"
    assert did_you_mean("xyz", ["base"]) == ""
    assert did_you_mean("pik", {"pick": "pick up"}) == ": did you mean 'pick up'?"
