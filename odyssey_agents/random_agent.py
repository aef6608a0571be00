"""The random baseline: a uniformly random verb, then a uniformly random command of that verb.

Choosing the verb first (as the paper's Random agent does) keeps verbs with many commands, such as
``inspect`` in a crowded area, from drowning out the rest. The agent reads ``info["valid_actions"]``,
so every command it sends is applicable; its randomness comes from one seeded RNG whose state is
saved with the agent, so a resumed run draws exactly what an uninterrupted one would.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from odyssey_agents.base import Agent, Answer, Decision, Task

__all__ = ["RandomAgent"]


class RandomAgent(Agent):
    name = "random"
    needs_valid_actions = True

    def __init__(self, seed: int | None = None):
        """``seed`` fixes the agent's draws; by default the episode seed is used."""
        self.seed = seed
        self._rng = random.Random("odyssey:random-agent:unset")
        self._answer_rng = random.Random("odyssey:random-agent:unset:qa")

    def reset(self, task: Task) -> None:
        super().reset(task)
        seed = task.seed if self.seed is None else self.seed
        self._rng = random.Random(f"odyssey:random-agent:{seed}")
        self._answer_rng = random.Random(f"odyssey:random-agent:{seed}:qa")

    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        if "valid_actions" not in info:
            raise RuntimeError("RandomAgent needs info['valid_actions']: create the env with valid_actions=True")
        valid: dict[str, list[str]] = info["valid_actions"]
        verbs = sorted(v for v, commands in valid.items() if commands)
        if not verbs:
            return Decision("wait", reasoning="no valid command")
        verb = self._rng.choice(verbs)
        return Decision(self._rng.choice(valid[verb]))

    def answer(self, question: str, choices: list[str]) -> Answer:
        """A uniformly random choice: the chance level every QA score is read against."""
        return Answer(self._answer_rng.randrange(len(choices)) if choices else None)

    def save(self, directory: Path) -> None:
        data = {"seed": self.seed, "rng": _dump_rng(self._rng), "answer_rng": _dump_rng(self._answer_rng)}
        (Path(directory) / "random_agent.json").write_text(json.dumps(data), encoding="utf-8")

    def load(self, directory: Path) -> None:
        data = json.loads((Path(directory) / "random_agent.json").read_text(encoding="utf-8"))
        self._rng.setstate(_load_rng(data["rng"]))
        self._answer_rng.setstate(_load_rng(data["answer_rng"]))

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "seed": self.seed}


def _dump_rng(rng: random.Random) -> list[Any]:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _load_rng(data: list[Any]) -> tuple[Any, ...]:
    version, internal, gauss = data
    return version, tuple(internal), gauss
