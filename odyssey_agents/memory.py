"""What an LLM agent remembers of one step, and how a step reads inside a prompt.

A step record is the observation–reasoning–action tuple of the paper (plus the reflection written
about it, when the reflection add-on is on). Records render once and cache the text, so a Long
Context prompt of hundreds of steps is a join, not a re-format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["StepRecord"]


@dataclass
class StepRecord:
    step: int
    observation: str
    reasoning: str
    action: str
    malformed: bool = False
    reflection: str = ""
    _text: str | None = field(default=None, repr=False, compare=False)

    def render(self) -> str:
        if self._text is None:
            parts = [
                f"[Step {self.step}]",
                f"Observation:\n{self.observation}",
                f"Reasoning: {self.reasoning or '(none)'}",
                f"Action: {self.action}",
            ]
            if self.reflection:
                parts.append(f"Reflection: {self.reflection}")
            self._text = "\n".join(parts)
        return self._text

    def reflect(self, text: str) -> None:
        self.reflection = text
        self._text = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "observation": self.observation,
            "reasoning": self.reasoning,
            "action": self.action,
            "malformed": self.malformed,
            "reflection": self.reflection,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepRecord:
        return cls(
            int(data["step"]),
            data["observation"],
            data["reasoning"],
            data["action"],
            bool(data.get("malformed", False)),
            data.get("reflection", ""),
        )
