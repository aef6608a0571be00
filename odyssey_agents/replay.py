"""Replays recorded commands: a run's ``trajectory.jsonl`` or a text file with one command a line.

Replaying a trajectory with the same game, seed and tutorial setting reproduces it exactly (the
engine is deterministic), which makes this agent the tool for re-rendering, debugging and
regression-testing a recorded episode. When the commands run out the agent asks the runner to stop
(``Decision.stop``) instead of inventing actions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from odyssey_agents.base import Agent, Decision, Task

__all__ = ["ReplayAgent", "read_commands"]


def read_commands(path: str | Path) -> list[str]:
    """Commands from a ``.jsonl`` trajectory (its ``action`` fields) or a plain text file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"replay file {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        commands = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{n}: not a JSON line ({exc.msg})") from None
            if "action" in record:
                commands.append(str(record["action"]))
        return commands
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


class ReplayAgent(Agent):
    name = "replay"

    def __init__(self, path: str | None = None):
        if not path:
            raise ValueError("the replay agent needs a file: agent.path=/path/to/trajectory.jsonl")
        self.path = str(path)
        self.commands = read_commands(self.path)
        self.position = 0

    def reset(self, task: Task) -> None:
        super().reset(task)
        self.position = 0

    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        if self.position >= len(self.commands):
            return Decision("wait", reasoning="replay file exhausted", stop=True)
        command = self.commands[self.position]
        self.position += 1
        return Decision(command)

    def save(self, directory: Path) -> None:
        (Path(directory) / "replay.json").write_text(json.dumps({"position": self.position}), encoding="utf-8")

    def load(self, directory: Path) -> None:
        self.position = json.loads((Path(directory) / "replay.json").read_text(encoding="utf-8"))["position"]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "path": self.path, "commands": len(self.commands)}
