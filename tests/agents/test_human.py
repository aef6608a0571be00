"""The human agent's QA prompt: what is typed is checked, never trusted."""

from __future__ import annotations

import io

from odyssey_agents.human import HumanAgent


def test_an_answer_that_is_not_a_choice_number_is_asked_again():
    # "²" is a digit to str.isdigit() but not a number int() can read
    typed = iter(["maybe", "7", "²", " 1 "])
    out = io.StringIO()
    human = HumanAgent(input_fn=lambda prompt: next(typed), output=out)
    answer = human.answer("Where did I start?", ["hearth_square", "reed_marsh"])
    assert answer.index == 1
    assert out.getvalue().count("Type a number from 0 to 1.") == 3


def test_end_of_input_leaves_the_question_unanswered():
    def closed(prompt: str) -> str:
        raise EOFError

    assert HumanAgent(input_fn=closed, output=io.StringIO()).answer("?", ["a", "b"]).index is None
