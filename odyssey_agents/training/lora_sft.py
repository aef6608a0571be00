"""``agent=lora_sft``: online LoRA supervised fine-tuning on the agent's own steps (paper §4, Experiment 2).

Every ``train_every`` steps the agent fine-tunes its LoRA adapter on the examples of the steps since
the last update, then acts with the updated weights. What an example is, ``target``:

* ``step`` (the default, the paper's): the step's observation-reasoning-action text (with the
  reflection when the add-on wrote one), as plain text without the chat template, every token under
  the loss — what the paper's SFT agents "encode into parameters" and what the reference agent trains
  on. The weights absorb what the agent saw as well as what it did.
* ``reply``: the act prompt of the step (the model's chat template, as the backend rendered it) is
  context and only the reply is the target: the reply is written back as the canonical JSON object of
  the fields it parsed (``{"reasoning": ..., "action": ...}``), so a reply that needed repair teaches
  the clean format. The prompt is masked. A variant, not the paper's learner: a run with it is filed
  as ``lora_sft+target=reply``.
* ``turns``: as ``reply``, with the user turn (memory sections and the observation) under the loss too.

A malformed step (no usable reply) is skipped unless ``train_on_malformed`` (its raw reply is then the
target; with ``step`` the stored record, whose action became ``wait``). Each update records which
tokens it trained on and which it only read, per role (``trained``, ``context`` in the trajectory's
``train``; totals in ``results.json``).

Defaults follow the paper's reference agent: LoRA rank 16, alpha 32, dropout 0.05 on q/k/v/o, AdamW
at 5e-6, 2 epochs, batch 2, sequences up to 4096 tokens, gradients clipped at 1.0; it trains after
every step without short-term memory, and every N steps on the last N steps with the
``short_term_memory`` add-on of size N. Reflection and summarisation compose as with every paradigm
(they change the prompts, hence the chat examples; a reflection also joins its step's text).

Why a plain loop rather than TRL's SFTTrainer: an update here is a few examples every step or few,
for hundreds of steps. A Trainer is built per ``train()`` call (dataset, accelerator, output folder,
callbacks — seconds of overhead for milliseconds of work), re-creates its optimizer each time (AdamW's
moments would reset every step), and seeds and orders data its own way, which would make a killed run
resume to other weights. The loop keeps one optimizer for the whole run, checkpoints it, and seeds each
update by its number.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from odyssey_agents.llm.protocol import LLM, Completion
from odyssey_agents.memory import StepRecord
from odyssey_agents.prompting.reply import Reply
from odyssey_agents.training.adapter import AdapterConfigError, LoRAAdapter
from odyssey_agents.training.agent import LearningAgent, TrainRecord, role_counts
from odyssey_agents.training.sequences import (
    ChatExample,
    Encoded,
    StepText,
    batch_logprobs,
    encode,
    encode_text,
    pad_id,
)

__all__ = ["TARGETS", "LoRASFTAgent", "SFTResult", "mean_loss", "sft_update"]

#: What an update trains on (see the module docstring); the first is the paper's and the default.
TARGETS: tuple[str, ...] = ("step", "reply", "turns")


@dataclass(frozen=True)
class SFTResult:
    """Figures of one SFT update."""

    loss: float  # mean loss per target token in the first epoch
    final_loss: float  # the same in the last epoch
    tokens: int  # tokens read, all epochs
    target_tokens: int  # tokens under the loss, all epochs
    truncated: int  # examples cut to max_seq_len
    optimizer_steps: int


def sft_update(
    adapter: LoRAAdapter, encoded: Sequence[Encoded], *, epochs: int, batch_size: int, update: int
) -> SFTResult:
    """Train ``adapter`` on ``encoded`` for ``epochs`` epochs of shuffled mini-batches (seeded by
    ``adapter.seed`` and ``update``); the loss is the mean over target tokens of a mini-batch."""
    adapter.attach()
    pad = pad_id(adapter.llm)
    order_rng = random.Random(adapter.seed * 1_000_003 + update)
    adapter.seed_update(update)
    epoch_losses: list[float] = []
    steps = 0
    with adapter.training():
        for _ in range(epochs):
            order = list(range(len(encoded)))
            order_rng.shuffle(order)
            total = weight = 0.0
            for i in range(0, len(order), batch_size):
                batch = [encoded[j] for j in order[i : i + batch_size]]
                count = sum(e.targets for e in batch)
                sums: list[float] = []

                def losses(batch: list[Encoded] = batch, count: int = count, sums: list[float] = sums) -> Any:
                    for e in batch:  # one sequence at a time: no padding, one sequence's activations
                        logp, _ = batch_logprobs(adapter.model, [e], pad)
                        loss = -logp.sum() / count
                        sums.append(float(loss.detach()))
                        yield loss

                adapter.step(losses())
                steps += 1
                total += sum(sums) * count
                weight += count
            epoch_losses.append(total / weight if weight else float("nan"))
    return SFTResult(
        epoch_losses[0],
        epoch_losses[-1],
        sum(len(e.ids) for e in encoded) * epochs,
        sum(e.targets for e in encoded) * epochs,
        sum(e.truncated for e in encoded),
        steps,
    )


def mean_loss(adapter: LoRAAdapter, encoded: Sequence[Encoded], batch_size: int = 8) -> float:
    """Mean loss per target token of ``encoded`` under the current weights (no training, no dropout)."""
    import torch

    adapter.attach()
    pad = pad_id(adapter.llm)
    total = weight = 0.0
    with torch.no_grad():
        for i in range(0, len(encoded), batch_size):
            logp, mask = batch_logprobs(adapter.model, encoded[i : i + batch_size], pad)
            total -= float(logp.sum())
            weight += float(mask.sum())
    return total / weight


class LoRASFTAgent(LearningAgent):
    """Online LoRA SFT on its own recent steps (see the module docstring).

    ``train_every``: steps between updates, each on the examples of those steps (default: the
    ``short_term_memory`` add-on's size when it is on, else 1). ``target``: ``step`` (the step's text,
    every token: the paper's), ``reply`` (the act prompt masked, the reply the target) or ``turns``.
    ``train_on_malformed``: also train on steps whose reply could not be used (default off: they would
    teach the format error).
    """

    name = "lora_sft"

    def __init__(
        self,
        llm: LLM,
        *,
        train_every: int | None = None,
        target: str = "step",
        train_on_malformed: bool = False,
        loss_on: str | None = None,
        **kwargs: Any,
    ):
        if loss_on is not None:
            raise AdapterConfigError(
                f"lora_sft's loss_on is now target (step: the paper's step text, every token; reply; turns): "
                f"use agent.target={loss_on}"
            )
        if target not in TARGETS:
            raise AdapterConfigError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")
        self.target = str(target)
        self.train_on_malformed = bool(train_on_malformed)
        if train_every is not None and int(train_every) < 1:
            raise AdapterConfigError(f"train_every must be at least 1, got {train_every}")
        super().__init__(llm, **kwargs)
        default = self.addons.memory_size if self.addons.short_term_memory else 1
        self.train_every = int(default if train_every is None else train_every)

    def _clear_learning(self) -> None:
        self.examples: list[ChatExample | StepText | StepRecord] = []
        self.since_update = 0
        self.skipped = 0
        self.trained: dict[str, int] = {}  # tokens under the loss per role, over the run (one pass each)
        self.context: dict[str, int] = {}  # tokens read as context only, per role

    def _acted(self, messages: list[dict[str, str]], completion: Completion, reply: Reply) -> None:
        self.since_update += 1
        if not reply.ok and not self.train_on_malformed:
            self.skipped += 1
            return
        if self.target == "step":
            return  # the step's record is kept by _remember, once it exists
        ok = reply.ok  # a usable reply is written back canonically; a malformed one as it came
        target = json.dumps({k: reply.text(k) for k in self.keys}, ensure_ascii=False) if ok else completion.text
        self.examples.append(ChatExample(self.steps, [dict(m) for m in messages], target))

    def _remember(self, record: StepRecord) -> None:
        super()._remember(record)
        if self.target == "step" and (not record.malformed or self.train_on_malformed):
            # the record itself: a reflection written about it later still joins its text
            self.examples.append(record)

    def _encode(self, example: ChatExample | StepText | StepRecord) -> Encoded:
        if isinstance(example, StepRecord):
            return encode_text(self.model_llm, StepText.of(example), max_len=self.max_seq_len)
        if isinstance(example, StepText):
            return encode_text(self.model_llm, example, max_len=self.max_seq_len)
        return encode(self.model_llm, example, loss_on=self.target, max_len=self.max_seq_len)

    def _learn(self, info: Any) -> TrainRecord | None:
        if self.since_update < self.train_every:
            return None
        examples, self.examples, self.since_update = self.examples, [], 0
        if not examples:
            return None
        start = time.perf_counter()
        encoded = [self._encode(e) for e in examples]
        result = sft_update(
            self.adapter, encoded, epochs=self.epochs, batch_size=self.batch_size, update=self.updates + 1
        )
        trained, context = role_counts(encoded)
        for totals, counts in ((self.trained, trained), (self.context, context)):
            for role, n in counts.items():
                totals[role] = totals.get(role, 0) + n
        extra: dict[str, Any] = {
            "steps": [e.step for e in examples],
            "optimizer_steps": result.optimizer_steps,
            "target": self.target,
            "trained": trained,
            "context": context,
        }
        if result.truncated:
            extra["truncated"] = result.truncated
        return self._record(
            len(examples), result.tokens, result.target_tokens, result.loss, result.final_loss, start, **extra
        )

    def _learning_state(self) -> dict[str, Any]:
        return {
            "examples": [_example_dict(e) for e in self.examples],
            "since_update": self.since_update,
            "skipped": self.skipped,
            "trained": self.trained,
            "context": self.context,
        }

    def _set_learning_state(self, state: dict[str, Any]) -> None:
        self.examples = [_example_of(d, self.records, self.previous) for d in state["examples"]]
        self.since_update = int(state["since_update"])
        self.skipped = int(state["skipped"])
        self.trained = {str(k): int(v) for k, v in state.get("trained", {}).items()}
        self.context = {str(k): int(v) for k, v in state.get("context", {}).items()}

    def _learning_description(self) -> dict[str, Any]:
        return {"train_every": self.train_every, "target": self.target, "train_on_malformed": self.train_on_malformed}

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        out["training"].update(
            skipped_malformed=self.skipped, target=self.target, trained=dict(self.trained), context=dict(self.context)
        )
        return out


def _example_dict(example: ChatExample | StepText | StepRecord) -> dict[str, Any]:
    if isinstance(example, StepRecord):
        return {"record": example.to_dict()}
    if isinstance(example, StepText):
        return {"text": example.to_dict()}
    return example.to_dict()


def _example_of(data: dict[str, Any], records: list[StepRecord], previous: StepRecord | None) -> Any:
    """An example from a checkpoint; a step record is the same object as the agent's memory holds, when
    it holds it (so a reflection written after the resume joins the text, as it would have)."""
    if "record" in data:
        step = int(data["record"]["step"])
        for kept in [*records, *([previous] if previous is not None else [])]:
            if kept.step == step:
                return kept
        return StepRecord.from_dict(data["record"])
    if "text" in data:
        return StepText.from_dict(data["text"])
    return ChatExample.from_dict(data)
