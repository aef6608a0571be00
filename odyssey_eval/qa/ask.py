"""Asking an agent a round of questions and scoring the answers."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from odyssey_agents.base import Agent, Usage
from odyssey_eval.qa.questions import Question

__all__ = ["QARound", "answered", "ask_questions"]


@dataclass
class QARound:
    """The answers of one round: which phase (before / during / after play), at which play step."""

    phase: str
    step: int
    kind: str
    answers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def accuracy(self) -> float | None:
        return sum(a["correct"] for a in self.answers) / len(self.answers) if self.answers else None

    @property
    def chance(self) -> float | None:
        return sum(1 / a["n_choices"] for a in self.answers) / len(self.answers) if self.answers else None

    def by_template(self) -> dict[str, float]:
        groups: dict[str, list[bool]] = {}
        for a in self.answers:
            groups.setdefault(a["template"], []).append(a["correct"])
        return {t: sum(v) / len(v) for t, v in groups.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "step": self.step,
            "kind": self.kind,
            "questions": len(self.answers),
            "accuracy": self.accuracy,
            "chance": self.chance,
            "by_template": self.by_template(),
            "unanswered": sum(a["chosen"] is None for a in self.answers),
            "tokens": [sum(a["tokens"][0] for a in self.answers), sum(a["tokens"][1] for a in self.answers)],
            "answers": self.answers,
        }


def ask_questions(agent: Agent, questions: Sequence[Question], *, phase: str, step: int, kind: str) -> QARound:
    """Ask every question; an unusable reply (None, out of range) counts as wrong."""
    qa = QARound(phase, step, kind)
    for q in questions:
        start = time.perf_counter()
        reply = agent.answer(q.text, list(q.choices))
        seconds = time.perf_counter() - start
        chosen = reply.index if isinstance(reply.index, int) and 0 <= reply.index < len(q.choices) else None
        usage = reply.usage if isinstance(reply.usage, Usage) else Usage()
        qa.answers.append(
            {
                "id": q.id,
                "template": q.template,
                "chosen": chosen,
                "answer": q.answer,
                "correct": chosen == q.answer,
                "n_choices": len(q.choices),
                "tokens": [usage.input_tokens, usage.output_tokens],
                "seconds": round(seconds, 6),
            }
        )
    return qa


def answered(round_: Mapping[str, Any]) -> bool:
    """Whether a recorded round (a ``qa.jsonl`` line) says anything about the agent: it has an
    accuracy and the agent answered at least one question. An agent that cannot answer (the oracle)
    scores 0 by construction; counting that as knowing nothing would skew means and verdicts."""
    return round_.get("accuracy") is not None and round_.get("unanswered", 0) < round_.get("questions", 1)
