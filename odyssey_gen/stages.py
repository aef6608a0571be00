"""The stage runner: run an author's stages, validate, and ask the stage at fault again (a bounded repair loop).

An author is a list of stages (``entities``, ``rules``, ``quest`` for the LLM author; one ``build``
for the procedural one). Each stage writes its file(s) into the candidate folder and returns the
problems of its own quick checks (the reply did not parse, the schema does not hold...). A stage
with problems is asked again with those problems, verbatim; a stage that passes is kept. After the
last stage, the whole candidate is validated; every problem names the stage that owns it, and the
loop goes back to the earliest such stage, keeping everything before it. Each stage has at most
``max_attempts`` tries in all; when one runs out the candidate is rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from odyssey_gen.report import Attempt, Report
from odyssey_gen.spec import ValidationSettings
from odyssey_gen.validate import Problem, Validation, validate

__all__ = ["Author", "Rejected", "run_stages"]


class Rejected(Exception):
    """The candidate could not be repaired within the attempts allowed; the message is one line."""

    def __init__(self, message: str, problems: Sequence[Problem] = ()):
        super().__init__(message)
        self.problems = list(problems)


class Author(Protocol):
    """What the stage runner needs of a game's author (procedural or LLM): its stages, run one by one."""

    name: str
    stages: tuple[str, ...]

    def run_stage(self, stage: str, folder: Path, feedback: list[Problem], attempt: Attempt) -> list[Problem]:
        """Write the stage's files into ``folder`` (considering ``feedback``); return its own problems."""

    def owner(self, problem: Problem) -> str:
        """The stage that must repair ``problem``."""

    def summary(self, stage: str, folder: Path) -> str:
        """One line about what the stage produced (for the progress output)."""


def _first_line(problems: Sequence[Problem]) -> str:
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}"


def run_stages(
    author: Author,
    folder: Path,
    report: Report,
    settings: ValidationSettings,
    *,
    max_attempts: int = 3,
    say: Callable[[str], None] = print,
    first_step: int = 2,
    total_steps: int = 5,
    after_stages: Callable[[Path], None] | None = None,
) -> Validation:
    """Produce and validate a candidate in ``folder``; raise :class:`Rejected` when repair fails.

    ``after_stages`` runs on the folder each time the stages are done, before validation (the
    describing pass of ``--describe-with``).
    """
    stages = author.stages
    feedback: dict[str, list[Problem]] = {s: [] for s in stages}
    start = 0
    numbered = {s: first_step + i for i, s in enumerate(stages)}
    while True:
        for stage in stages[start:]:
            while True:
                tries = len(report.stages.get(stage, []))
                if tries >= max_attempts:
                    problems = feedback[stage]
                    raise Rejected(
                        f"stage {stage!r} still failed after {max_attempts} attempt(s): "
                        f"{_first_line(problems) if problems else 'no result'}",
                        problems,
                    )
                attempt = report.attempt(stage)
                if attempt.attempt > 1:
                    say(
                        f"      {stage}: attempt {attempt.attempt}/{max_attempts}, repairing "
                        f"{len(feedback[stage])} problem(s)"
                    )
                problems = author.run_stage(stage, folder, feedback[stage], attempt)
                attempt.problems = [p.to_dict() for p in problems]
                if not problems:
                    feedback[stage] = []
                    say(f"[{numbered[stage]}/{total_steps}] {stage}: {author.summary(stage, folder)}")
                    break
                feedback[stage] = problems
                say(f"      {stage}: attempt {attempt.attempt} has {len(problems)} problem(s): {_first_line(problems)}")
        if after_stages is not None:
            after_stages(folder)
        validation = validate(folder, settings)
        report.validation = {
            "settings": settings.__dict__,
            "checks": validation.by_check(),
            "stats": validation.stats,
            "seconds": validation.seconds,
        }
        if validation.ok:
            return validation
        owners = [author.owner(p) for p in validation.problems]
        start = min(stages.index(o) for o in owners)
        culprit = stages[start]
        feedback[culprit] = [p for p, o in zip(validation.problems, owners, strict=True) if o == culprit]
        say(f"      validation: {_first_line(validation.problems)}")
        if len(report.stages.get(culprit, [])) >= max_attempts:
            raise Rejected(
                f"validation failed and stage {culprit!r} has no attempts left: {_first_line(feedback[culprit])}",
                validation.problems,
            )
        say(f"      going back to stage {culprit!r}")
