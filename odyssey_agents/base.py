"""The agent interface every paradigm implements, and the token ledger every LLM call writes to.

The runner talks to agents through five methods only::

    agent.reset(task)                      # a new episode of a game
    decision = agent.act(observation, info)  # -> Decision(action, reasoning, usage, ...)
    answer = agent.answer(question, choices) # -> Answer(index, usage) for QA diagnostics
    agent.save(directory) / agent.load(directory)  # memory checkpoints (resume)

``usage`` carries one :class:`Call` per piece of counted work done while deciding: every model call
(the act itself, reflection, summarisation, extraction, answering...) and the work that is not a model
call (a training update, embedding texts, writing a latent memory). The model cost of the paper (§3.4:
input plus output tokens of the model's calls) is the sum over model calls only; the other work is
counted by kind in fields of its own (:data:`WORK_PURPOSES`), so neither hides in the other.
"""

from __future__ import annotations

import abc
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["WORK_PURPOSES", "Agent", "Answer", "Call", "Decision", "Task", "Usage"]

#: Purposes of counted work that is not a call of the model (not inference), and the field each kind
#: of work is reported in (``results.json`` metrics, the report). Everything else is a model call.
WORK_PURPOSES: dict[str, str] = {
    "train": "training_tokens",  # tokens a training update read (all epochs)
    "embed": "embedding_tokens",  # word pieces an embedding model read
    "memorise": "memory_write_tokens",  # tokens read to write a latent memory (no text is generated)
}


@dataclass(frozen=True)
class Task:
    """What an agent is told about the episode it starts (nothing privileged)."""

    game: str  # game name, e.g. "quiet_bell"
    title: str  # the game's title
    verbs: tuple[str, ...]  # usage line per verb: "store <amount> <object_name> <container_name>"
    seed: int
    max_steps: int | None = None


@dataclass
class Call:
    """One model call: why it was made and what it cost.

    ``prefix_tokens``: the input tokens that repeat the start of one of the agent's previous prompts,
    which a server's prompt cache could serve (:mod:`odyssey_agents.llm.prefix_meter`; an estimate).
    ``cached_tokens``: the input tokens the server says it served from its cache (0 where it says
    nothing). Both are part of ``input_tokens``, not added to them."""

    purpose: str  # act | reflect | summarise | answer | extract | ... (model calls); train | embed | memorise
    input_tokens: int
    output_tokens: int
    seconds: float = 0.0
    prefix_tokens: int = 0
    cached_tokens: int = 0

    @property
    def inference(self) -> bool:
        """Whether this is a call of the model (it counts in the model cost), not other work."""
        return self.purpose not in WORK_PURPOSES


@dataclass
class Usage:
    """Counted work done for one decision (or one answer). Empty for non-LLM agents.

    ``input_tokens``, ``output_tokens`` and ``total_tokens`` are the model cost: model calls only.
    :meth:`work_tokens` gives the tokens of the other work by kind."""

    calls: list[Call] = field(default_factory=list)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.calls if c.inference)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.calls if c.inference)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def work_tokens(self) -> dict[str, int]:
        """Tokens of the work that is not a model call, by field (``training_tokens``, ...); kinds with
        none are left out."""
        out: dict[str, int] = {}
        for c in self.calls:
            if not c.inference:
                key = WORK_PURPOSES[c.purpose]
                out[key] = out.get(key, 0) + c.input_tokens + c.output_tokens
        return out

    def add(self, call: Call) -> None:
        self.calls.append(call)

    def extend(self, other: Usage) -> None:
        self.calls.extend(other.calls)

    def by_purpose(self) -> dict[str, dict[str, int]]:
        """Calls and tokens by purpose; ``prefix_tokens`` and ``cached_tokens`` only where some."""
        out: dict[str, dict[str, int]] = {}
        for c in self.calls:
            row = out.setdefault(c.purpose, {"calls": 0, "input_tokens": 0, "output_tokens": 0})
            row["calls"] += 1
            row["input_tokens"] += c.input_tokens
            row["output_tokens"] += c.output_tokens
            if c.prefix_tokens:
                row["prefix_tokens"] = row.get("prefix_tokens", 0) + c.prefix_tokens
            if c.cached_tokens:
                row["cached_tokens"] = row.get("cached_tokens", 0) + c.cached_tokens
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "calls": [asdict(c) for c in self.calls],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls([Call(**c) for c in data.get("calls", [])])


@dataclass
class Decision:
    """An agent's choice for one step.

    ``malformed`` marks a model reply that could not be used; the action is then ``"wait"`` and the
    step is counted apart from engine-invalid actions (paper A3.1). ``stop`` asks the runner to end
    the episode now, without taking the step (a replay that ran out of commands, a player who quit).
    ``training`` is written to the trajectory line as ``train``, ``memory`` as ``memory``.
    """

    action: str
    reasoning: str = ""
    usage: Usage = field(default_factory=Usage)
    malformed: bool = False
    raw: str | None = None  # the model's raw reply, for the trajectory
    stop: bool = False
    #: What an agent that learns in its weights did before choosing this action (a training update:
    #: loss, examples, tokens trained, seconds), for the trajectory line.
    training: dict[str, Any] | None = None
    #: What a latent memory did with this step (an update: tokens read and written, tokens dropped, the
    #: pool's size after it), for the trajectory line: a reader of the run sees the memory bounded and updated
    #: step by step, not only its final state in ``results.json``.
    memory: dict[str, Any] | None = None


@dataclass
class Answer:
    """A multiple-choice answer: ``index`` into the choices, or None when the reply was unusable."""

    index: int | None
    usage: Usage = field(default_factory=Usage)
    raw: str | None = None


class Agent(abc.ABC):
    """Base class of every agent. Subclasses implement :meth:`act`; the rest has sensible defaults."""

    #: Registry name used in configs and run directories (``random``, ``long_context``, ...).
    name: ClassVar[str] = "agent"
    #: Whether the runner must put ``valid_actions`` into ``info`` (costs time; LLM agents say no).
    #: A class default: an agent whose need depends on its settings sets its own (``HumanAgent``).
    needs_valid_actions: bool = False
    #: Whether the agent reads the true engine state through ``info["engine"]`` (the oracle only).
    privileged: ClassVar[bool] = False
    #: The episode's task, from :meth:`reset` (None in agents that load it from a checkpoint before one).
    task: Task | None

    def reset(self, task: Task) -> None:
        """Start an episode. Memory that should survive episodes is the subclass's choice."""
        self.task = task

    @abc.abstractmethod
    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        """Choose the next command from the latest observation and step info."""

    def answer(self, question: str, choices: list[str]) -> Answer:
        """Answer a multiple-choice question from memory. Agents without a mind cannot: None."""
        return Answer(index=None)

    def save(self, directory: Path) -> None:  # noqa: B027 - optional hook
        """Write memory to ``directory`` (created by the caller). Stateless agents write nothing."""

    def load(self, directory: Path) -> None:  # noqa: B027 - optional hook
        """Restore what :meth:`save` wrote."""

    def describe(self) -> dict[str, Any]:
        """The exact configuration, for ``results.json`` and run-directory names."""
        return {"name": self.name}

    def stats(self) -> dict[str, Any]:
        """Facts about the run only the agent knows (malformed replies, add-on calls, context overflow),
        for ``results.json``. Empty for agents with nothing to report."""
        return {}
