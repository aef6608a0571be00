"""The ReAct agent that trains a LoRA adapter while it plays: shared by ``lora_sft`` and ``rl_lora``.

Per step: the paradigm decides whether an update is due (:meth:`LearningAgent._learn`, given the
step's ``info``, which carries the reward of the previous action), trains if so, then acts as any
ReAct agent does — with the updated weights — and keeps what it needs from the act call
(:meth:`LearningAgent._acted`). An update is recorded three ways:

* in the step's usage, as work of purpose ``train`` (input tokens = tokens the update processed, all
  epochs; seconds = its wall time): a training pass is not a model call, so it stays out of the model
  cost (``total_tokens``) and is reported as ``training_tokens``;
* in the trajectory line, as ``train``: loss, examples, tokens, target tokens, seconds, and the
  paradigm's own figures (rewards, advantages, KL for RL);
* in ``results.json``, as totals under ``agent.run.training``.

Checkpoints add the adapter and the optimizer (:mod:`~odyssey_agents.training.adapter`) to the
memory file; every update is seeded by the cell seed and its number, so a killed run resumes to the
same weights, bit for bit on CPU.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from odyssey_agents.base import Call, Decision, Task
from odyssey_agents.llm.protocol import LLM, Completion
from odyssey_agents.paradigms.react_agent import AgentConfigError, ReActAgent
from odyssey_agents.prompting.reply import Reply
from odyssey_agents.training import INSTALL, require_train
from odyssey_agents.training.adapter import DEFAULT_TARGETS, AdapterConfigError, LoRAAdapter, LoRASettings, as_targets

if TYPE_CHECKING:
    from odyssey_agents.llm.transformers_local import TransformersLLM

__all__ = ["LearningAgent", "TrainRecord", "local_model"]


@dataclass
class TrainRecord:
    """One update, as the trajectory line shows it (``train``)."""

    update: int
    examples: int
    tokens: int  # tokens the forward passes read, all epochs
    target_tokens: int  # tokens under the loss, all epochs
    loss: float  # mean loss of the first epoch (the weights before this update)
    final_loss: float  # mean loss of the last epoch
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self) -> Call:
        return Call("train", self.tokens, 0, round(self.seconds, 6))

    def to_dict(self) -> dict[str, Any]:
        return {
            "update": self.update,
            "examples": self.examples,
            "tokens": self.tokens,
            "target_tokens": self.target_tokens,
            "loss": _round(self.loss),
            "final_loss": _round(self.final_loss),
            "seconds": round(self.seconds, 6),
            **self.extra,
        }


def _round(x: float) -> float:
    return float(f"{x:.6g}")


def local_model(llm: LLM, agent: str) -> TransformersLLM:
    """The backend if it is a local transformers model (``llm=hf`` or ``llm=embedded``), else an error."""
    from odyssey_agents.llm.transformers_local import TransformersLLM

    if not isinstance(llm, TransformersLLM):
        raise AgentConfigError(
            f"agent {agent!r} learns in the model itself, so it needs a local model: llm=hf "
            f"(llm.model=<hub id or folder>) or llm=embedded, not llm={llm.backend}"
        )
    return llm


class LearningAgent(ReActAgent):
    """Base of ``lora_sft`` and ``rl_lora`` (see the module docstring). On its own it never trains."""

    name = "learning"
    #: The paradigm's defaults for the adapter settings it shares (RL trains at a higher rate).
    default_learning_rate: ClassVar[float] = 5e-6
    default_epochs: ClassVar[int] = 2
    default_lora_dropout: ClassVar[float] = 0.05

    def __init__(
        self,
        llm: LLM,
        *,
        lora_r: int = 16,
        lora_alpha: float = 32.0,
        lora_dropout: float | None = None,
        lora_target_modules: Sequence[str] | str = DEFAULT_TARGETS,
        learning_rate: float | None = None,
        weight_decay: float = 0.0,
        grad_clip: float | None = 1.0,
        epochs: int | None = None,
        batch_size: int = 2,
        max_seq_len: int = 4096,
        **kwargs: Any,
    ):
        self.model_llm = local_model(llm, self.name)
        settings = LoRASettings(
            r=int(lora_r),
            alpha=float(lora_alpha),
            dropout=float(self.default_lora_dropout if lora_dropout is None else lora_dropout),
            target_modules=as_targets(lora_target_modules),
            learning_rate=float(self.default_learning_rate if learning_rate is None else learning_rate),
            weight_decay=float(weight_decay),
            grad_clip=None if grad_clip is None else float(grad_clip),
        )
        self.epochs = int(self.default_epochs if epochs is None else epochs)
        self.batch_size = int(batch_size)
        self.max_seq_len = int(max_seq_len)
        for key, value, low in (
            ("epochs", self.epochs, 1),
            ("batch_size", self.batch_size, 1),
            ("max_seq_len", self.max_seq_len, 8),
        ):
            if value < low:
                raise AdapterConfigError(f"{key} must be at least {low}, got {value}")
        self.adapter = LoRAAdapter(self.model_llm, settings, seed=self.model_llm.seed)
        super().__init__(llm, **kwargs)

    @classmethod
    def from_config(cls, params: Mapping[str, Any], llm_cfg: Mapping[str, Any], seed: int) -> ReActAgent:
        for module in ("torch", "peft"):
            require_train(module, f"agent {cls.name!r}")
        return super().from_config(params, llm_cfg, seed)

    # ------------------------------------------------------------------ episode
    def _clear(self) -> None:
        super()._clear()
        self.updates = 0
        self.totals: dict[str, float] = {"updates": 0, "examples": 0, "tokens": 0, "target_tokens": 0, "seconds": 0.0}
        self.first_loss: float | None = None
        self.last_loss: float | None = None
        self._clear_learning()

    def _clear_learning(self) -> None:
        """Forget the paradigm's buffers (pending examples, transitions)."""

    def reset(self, task: Task) -> None:
        super().reset(task)
        self.adapter.restart()  # a new episode is a fresh learner (a resumed run loads its adapter after this)

    # ------------------------------------------------------------------ acting
    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        record = self._learn(info)
        decision = super().act(observation, info)
        if record is not None:
            decision.usage.calls.insert(0, record.call())
            decision.training = record.to_dict()
        return decision

    def _learn(self, info: Mapping[str, Any]) -> TrainRecord | None:
        """Called before each act: take in the step's outcome and train if an update is due."""
        return None

    def _acted(self, messages: list[dict[str, str]], completion: Completion, reply: Reply) -> None:
        """Keep what an update will need from this act call."""

    def _record(
        self, examples: int, tokens: int, target_tokens: int, first: float, last: float, start: float, **extra: Any
    ) -> TrainRecord:
        """Count an update that just ran and return its record."""
        self.updates += 1
        seconds = time.perf_counter() - start
        record = TrainRecord(self.updates, examples, tokens, target_tokens, first, last, seconds, extra)
        t = self.totals
        t["updates"] += 1
        t["examples"] += examples
        t["tokens"] += tokens
        t["target_tokens"] += target_tokens
        t["seconds"] += seconds
        if self.first_loss is None:
            self.first_loss = record.to_dict()["loss"]
        self.last_loss = record.to_dict()["final_loss"]
        return record

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: Path) -> None:
        super().save(directory)
        self.adapter.save(Path(directory))

    def load(self, directory: Path) -> None:
        super().load(directory)
        self.adapter.load(Path(directory))

    def _state(self) -> dict[str, Any]:
        return {
            "updates": self.updates,
            "totals": self.totals,
            "first_loss": self.first_loss,
            "last_loss": self.last_loss,
            **self._learning_state(),
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        self.updates = int(state["updates"])
        self.totals = dict(state["totals"])
        self.first_loss, self.last_loss = state["first_loss"], state["last_loss"]
        self._set_learning_state(state)

    def _learning_state(self) -> dict[str, Any]:
        return {}

    def _set_learning_state(self, state: dict[str, Any]) -> None:
        pass

    # ------------------------------------------------------------------ reporting
    def _own_description(self) -> dict[str, Any]:
        return {
            **self.adapter.settings.describe(),
            "epochs": self.epochs,
            "batch_size": self.batch_size,
            "max_seq_len": self.max_seq_len,
            **self._learning_description(),
        }

    def _learning_description(self) -> dict[str, Any]:
        return {}

    def stats(self) -> dict[str, Any]:
        t = self.totals
        training = {
            "updates": int(t["updates"]),
            "examples": int(t["examples"]),
            "tokens": int(t["tokens"]),
            "target_tokens": int(t["target_tokens"]),
            "seconds": round(float(t["seconds"]), 3),
            "first_loss": self.first_loss,
            "last_loss": self.last_loss,
        }
        return {**super().stats(), "training": training}


def role_counts(encoded: Sequence[Any]) -> tuple[dict[str, int], dict[str, int]]:
    """Tokens an update trained on and tokens it read as context only, per role, over its examples (one
    pass: the epochs repeat the same tokens)."""
    trained: dict[str, int] = {}
    context: dict[str, int] = {}
    for e in encoded:
        for into, counts in ((trained, e.trained_by_role()), (context, e.masked_by_role())):
            for role, n in counts.items():
                into[role] = into.get(role, 0) + n
    return trained, context


__all__ += ["INSTALL", "role_counts"]
