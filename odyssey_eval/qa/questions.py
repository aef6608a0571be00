"""The multiple-choice question both QA kinds share, and how choices are drawn."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["NONE", "Question", "QuestionError", "make_question"]

#: The choice that is right when the asked-about set is empty ("Which object did you craft?").
NONE = "none"


class QuestionError(AssertionError):
    """A generated question whose answer does not survive the independent check (a bug)."""


@dataclass(frozen=True)
class Question:
    """One multiple-choice question. ``answer`` indexes ``choices``; ``subject`` holds what the
    answer was computed from, so a checker can recompute it."""

    id: str
    kind: str  # world_knowledge | episodic
    template: str
    text: str
    choices: tuple[str, ...]
    answer: int
    subject: dict[str, Any] = field(default_factory=dict)

    @property
    def correct(self) -> str:
        return self.choices[self.answer]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["choices"] = list(self.choices)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Question:
        return cls(**{**d, "choices": tuple(d["choices"])})


def make_question(
    rng: random.Random,
    *,
    qid: str,
    kind: str,
    template: str,
    text: str,
    answer: str,
    wrong: Iterable[str],
    n_choices: int,
    subject: dict[str, Any],
    extra_wrong: Sequence[str] = (),
) -> Question | None:
    """Draw ``n_choices - 1`` distractors from ``wrong`` (sorted first: never sample a set), shuffle.

    ``extra_wrong`` are always included (the ``none`` option). Returns None when fewer than one
    distractor is available: a question with a single choice tests nothing.
    """
    pool = sorted(set(wrong) - {answer} - set(extra_wrong))
    fixed = [w for w in extra_wrong if w != answer]
    k = max(0, min(n_choices - 1 - len(fixed), len(pool)))
    distractors = fixed + rng.sample(pool, k)
    if not distractors:
        return None
    choices = [answer, *distractors]
    rng.shuffle(choices)
    return Question(qid, kind, template, text, tuple(choices), choices.index(answer), subject)


def check_single_truth(q: Question, truth: set[str]) -> None:
    """Exactly one choice is true, and it is the marked answer; otherwise raise QuestionError."""
    true_choices = [c for c in q.choices if c in truth]
    if true_choices != [q.correct] or len(set(q.choices)) != len(q.choices):
        raise QuestionError(
            f"question {q.id} ({q.text!r}) is wrong: choices {list(q.choices)}, marked "
            f"{q.correct!r}, true by recomputation {sorted(truth)}"
        )
