"""``agent=lora_sft``: online LoRA supervised fine-tuning on the agent's own steps (paper §4, Experiment 2).

Every ``train_every`` steps the agent fine-tunes its LoRA adapter on the examples of the steps since
the last update, then acts with the updated weights. An example is the act prompt of a step (the
model's chat template, as the backend rendered it) with the reply the agent gave as the target: the
reply is written back as the canonical JSON object of the fields it parsed (``{"reasoning": ...,
"action": ...}``), so a reply that needed repair teaches the clean format; a malformed step (no usable
reply) is skipped unless ``train_on_malformed``. ``loss_on=turns`` also trains on the user turn (what
the agent saw: its memory sections and the observation), the nearest to the reference agent's
plain-text training.

Defaults follow the paper's reference agent: LoRA rank 16, alpha 32, dropout 0.05 on q/k/v/o, AdamW
at 5e-6, 2 epochs, batch 2, sequences up to 4096 tokens, gradients clipped at 1.0; it trains after
every step without short-term memory, and every N steps on the last N steps with the
``short_term_memory`` add-on of size N. Reflection and summarisation compose as with every paradigm
(they change the prompts, hence the examples).

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
from odyssey_agents.prompting.reply import Reply
from odyssey_agents.training.adapter import AdapterConfigError, LoRAAdapter
from odyssey_agents.training.agent import LearningAgent, TrainRecord, check_loss_on
from odyssey_agents.training.sequences import ChatExample, Encoded, batch_logprobs, encode, pad_id

__all__ = ["LoRASFTAgent", "SFTResult", "mean_loss", "sft_update"]


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
    ``short_term_memory`` add-on's size when it is on, else 1). ``loss_on``: ``reply`` (the target is the
    reply; the prompt is masked) or ``turns`` (the user turn too). ``train_on_malformed``: also train on
    steps whose reply could not be used (default off: they would teach the format error).
    """

    name = "lora_sft"

    def __init__(
        self,
        llm: LLM,
        *,
        train_every: int | None = None,
        loss_on: str = "reply",
        train_on_malformed: bool = False,
        **kwargs: Any,
    ):
        self.loss_on = check_loss_on(str(loss_on))
        self.train_on_malformed = bool(train_on_malformed)
        self._train_every_request = train_every
        if train_every is not None and int(train_every) < 1:
            raise AdapterConfigError(f"train_every must be at least 1, got {train_every}")
        super().__init__(llm, **kwargs)
        default = self.addons.memory_size if self.addons.short_term_memory else 1
        self.train_every = int(default if train_every is None else train_every)

    def _clear_learning(self) -> None:
        self.examples: list[ChatExample] = []
        self.since_update = 0
        self.skipped = 0

    def _acted(self, messages: list[dict[str, str]], completion: Completion, reply: Reply) -> None:
        self.since_update += 1
        if reply.ok:
            target = json.dumps({k: reply.text(k) for k in self.keys}, ensure_ascii=False)
        elif self.train_on_malformed:
            target = completion.text
        else:
            self.skipped += 1
            return
        self.examples.append(ChatExample(self.steps, [dict(m) for m in messages], target))

    def _learn(self, info: Any) -> TrainRecord | None:
        if self.since_update < self.train_every:
            return None
        examples, self.examples, self.since_update = self.examples, [], 0
        if not examples:
            return None
        start = time.perf_counter()
        encoded = [encode(self.model_llm, e, loss_on=self.loss_on, max_len=self.max_seq_len) for e in examples]
        result = sft_update(
            self.adapter, encoded, epochs=self.epochs, batch_size=self.batch_size, update=self.updates + 1
        )
        extra: dict[str, Any] = {"steps": [e.step for e in examples], "optimizer_steps": result.optimizer_steps}
        if result.truncated:
            extra["truncated"] = result.truncated
        return self._record(
            len(examples), result.tokens, result.target_tokens, result.loss, result.final_loss, start, **extra
        )

    def _learning_state(self) -> dict[str, Any]:
        return {
            "examples": [e.to_dict() for e in self.examples],
            "since_update": self.since_update,
            "skipped": self.skipped,
        }

    def _set_learning_state(self, state: dict[str, Any]) -> None:
        self.examples = [ChatExample.from_dict(d) for d in state["examples"]]
        self.since_update = int(state["since_update"])
        self.skipped = int(state["skipped"])

    def _learning_description(self) -> dict[str, Any]:
        return {"train_every": self.train_every, "loss_on": self.loss_on, "train_on_malformed": self.train_on_malformed}

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        out["training"]["skipped_malformed"] = self.skipped
        return out
