"""The parser's exact edges: the limits it enforces, how it splits verbs and arguments, what it echoes.

``test_env_invalid_actions.py`` checks what an invalid command does to a turn; these tests pin the
parser itself (``parse`` and ``echo``), one boundary at a time, so that an off-by-one cannot hide.
"""

from __future__ import annotations

import sys

import pytest

from odyssey_env.limits import MAX_AMOUNT, MAX_NAME_LENGTH
from odyssey_env.parsing import echo, parse
from odyssey_env.rules import BASE_RULE_MODULES, ActionRule, RuleBook, action_rule


def _verb_and_args(rules, command):
    parsed = parse(rules, command)
    assert not isinstance(parsed, str), (command, parsed)
    rule, args = parsed
    return rule.verb, args


# ------------------------------------------------------------------ echo
def test_echo_keeps_up_to_the_limit_and_cuts_beyond_it():
    assert echo("a" * 80) == "a" * 80
    cut = echo("b" * 81)
    assert cut == "b" * 77 + "..." and len(cut) == 80


def test_echo_escapes_what_is_not_printable_ascii():
    assert echo("tab\there é\x00") == "tab\\there \\xe9\\x00"


def test_unknown_command_echo_is_cut_at_eighty_characters(tiny_game):
    exact = "z" * 80
    assert f"could not understand '{exact}'." in parse(tiny_game.rules, exact)
    long = "z" * 81
    assert f"could not understand '{'z' * 77}...'." in parse(tiny_game.rules, long)


# ------------------------------------------------------------------ verbs
@pytest.mark.parametrize("command", ["pick up stick", "pick   up stick", "pick\tup  stick", "PICK\n UP stick"])
def test_two_word_verbs_take_any_spacing(tiny_game, command):
    assert _verb_and_args(tiny_game.rules, command) == ("pick up", ("stick",))


@pytest.mark.parametrize("command", ["take   out stick small_bag_0", "talk  to mira"])
def test_other_two_word_verbs_take_any_spacing(tiny_game, command):
    verb, _ = _verb_and_args(tiny_game.rules, command)
    assert verb == command.split()[0] + " " + command.split()[1]


def test_a_verb_alone_has_no_arguments(tiny_game):
    assert _verb_and_args(tiny_game.rules, "wait") == ("wait", ())
    assert _verb_and_args(tiny_game.rules, "  Defend ") == ("defend", ())


@action_rule
class _Pick(ActionRule):
    """A game verb whose name is the first word of a base verb ("pick" / "pick up")."""

    verb = "pick"
    params = (("object_name", "object"),)

    def apply(self, turn, handle):
        turn.say(f"I picked at {handle}.")

    def candidates(self, turn):
        return ()


def test_the_longest_verb_wins_over_one_that_shares_its_first_word():
    rules = RuleBook([*BASE_RULE_MODULES, sys.modules[__name__]])
    assert rules.verbs_by_first_word["pick"] == ["pick up", "pick"]
    assert _verb_and_args(rules, "pick up stick") == ("pick up", ("stick",))
    assert _verb_and_args(rules, "pick   up stick") == ("pick up", ("stick",))
    assert _verb_and_args(rules, "pick stick") == ("pick", ("stick",))
    assert _verb_and_args(rules, "pick upstick") == ("pick", ("upstick",))


# ------------------------------------------------------------------ arguments
def test_text_keeps_its_case_and_names_are_lowered(tiny_game):
    assert _verb_and_args(tiny_game.rules, 'write "Hello World" Parchment_0') == (
        "write",
        ("Hello World", "parchment_0"),
    )
    assert _verb_and_args(tiny_game.rules, "write Hi scrap") == ("write", ("Hi", "scrap"))


def test_amounts_are_whole_numbers_from_one_to_the_maximum(tiny_game):
    rules = tiny_game.rules
    assert _verb_and_args(rules, "craft 1 torch") == ("craft", (1, "torch"))
    assert _verb_and_args(rules, f"craft {MAX_AMOUNT} torch") == ("craft", (MAX_AMOUNT, "torch"))
    assert _verb_and_args(rules, "store 3 stick small_bag_0") == ("store", (3, "stick", "small_bag_0"))
    for bad in ("0", str(MAX_AMOUNT + 1), "+1", "1e3"):
        assert "<amount> must be a whole number" in parse(rules, f"craft {bad} torch"), bad


def test_names_may_be_as_long_as_the_limit_and_no_longer(tiny_game):
    exact = "n" * MAX_NAME_LENGTH
    assert _verb_and_args(tiny_game.rules, f"enter {exact}") == ("enter", (exact,))
    message = parse(tiny_game.rules, f"enter {exact}n")
    assert isinstance(message, str) and f"(at most {MAX_NAME_LENGTH})" in message


def test_quoted_names_lose_their_quotes(tiny_game):
    assert _verb_and_args(tiny_game.rules, "drop 'stick'") == ("drop", ("stick",))


# ------------------------------------------------------------------ the engine's memory of parsed commands
def test_the_engine_parses_a_command_again_under_another_rule_book(tiny_game):
    """Parsed commands are remembered per rule book: a new one (a game verb added) parses afresh."""
    from odyssey_env.engine import Engine

    engine = Engine(tiny_game, 0)
    assert engine._parse("pick stick") == parse(tiny_game.rules, "pick stick")  # "pick up" expects more
    assert isinstance(engine._parse("pick stick"), str)
    engine.rules = RuleBook([*BASE_RULE_MODULES, sys.modules[__name__]])
    rule, args = engine._parse("pick stick")
    assert (rule.verb, args) == ("pick", ("stick",))
    engine.rules = tiny_game.rules
    assert isinstance(engine._parse("pick stick"), str)


def test_the_engine_remembers_few_and_short_commands(tiny_game, monkeypatch):
    """The memory of parsed commands is bounded in entries and in text length, and what it returns is
    what parsing returns."""
    from odyssey_env import engine as engine_module

    monkeypatch.setattr(engine_module, "PARSED_COMMANDS", 3)
    engine = engine_module.Engine(tiny_game, 0)
    for n in range(1, 8):
        command = f"craft {n} torch"
        assert engine._parse(command) == parse(tiny_game.rules, command)
        assert len(engine._parsed) <= 3
    long = "wait" + " " * engine_module._PARSE_MEMO_TEXT
    assert engine._parse(long) == parse(tiny_game.rules, long)
    assert long not in engine._parsed
    assert engine._parse(42) == parse(tiny_game.rules, 42)
