"""You, at the keyboard: the observation is printed and your command is read from the terminal.

Typing ``:quit`` (or end-of-input) ends the episode; ``:verbs`` lists the command forms and
``:valid`` the commands applicable now. Interrupting with Ctrl-C instead leaves the run resumable
from its last checkpoint.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from odyssey_agents.base import Agent, Answer, Decision, Task

__all__ = ["HumanAgent"]


class HumanAgent(Agent):
    name = "human"
    interactive = True  # the runner turns its progress bar off

    def __init__(
        self, show_valid: bool = False, input_fn: Callable[[str], str] | None = None, output: TextIO | None = None
    ):
        """``show_valid`` makes ``:valid`` work (the runner then computes valid actions every step)."""
        self.needs_valid_actions = show_valid
        self._input = input_fn or input
        self._out = output

    def _print(self, text: str) -> None:
        print(text, file=self._out or sys.stdout, flush=True)

    def reset(self, task: Task) -> None:
        super().reset(task)
        self._print(f"=== {task.title} ({task.game}, seed {task.seed}) ===")
        self._print("Commands: " + "; ".join(task.verbs))
        self._print("Type :quit to stop, :verbs for the command forms, :valid for what is possible now.")

    def _read(self, prompt: str) -> str | None:
        try:
            return self._input(prompt)
        except EOFError:
            return None

    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        self._print(observation)
        while True:
            line = self._read("> ")
            if line is None or line.strip() == ":quit":
                return Decision("wait", reasoning="the player quit", stop=True)
            command = line.strip()
            if command == ":verbs":
                assert self.task is not None  # reset gave it: the runner resets before the first act
                self._print("\n".join(self.task.verbs))
            elif command == ":valid":
                valid = info.get("valid_actions")
                self._print(
                    "\n".join(c for cs in valid.values() for c in cs)
                    if valid
                    else "(start the run with agent.show_valid=true to list them)"
                )
            elif command:
                return Decision(command)

    def answer(self, question: str, choices: list[str]) -> Answer:
        self._print(question)
        for i, choice in enumerate(choices):
            self._print(f"  {i}. {choice}")
        while True:
            line = self._read("answer> ")
            if line is None:
                return Answer(None)
            typed = line.strip()
            if typed.isdecimal() and int(typed) < len(choices):  # isdigit() would let "²" crash int()
                return Answer(int(typed), raw=line)
            self._print(f"Type a number from 0 to {len(choices) - 1}.")
