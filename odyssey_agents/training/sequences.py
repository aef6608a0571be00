"""Chat examples as token ids with the context masked, and their log-probabilities in batches.

An example is what the agent saw and what it answered: the act prompt (system and user messages,
rendered with the model's own chat template, exactly as the backend sends it) and the reply. The
reply, closed by the template's end-of-turn token, is the target; the prompt is context (its tokens
carry no loss). ``loss_on="turns"`` also puts the user turn — memory sections and the observation —
under the loss, which makes the weights absorb what the agent saw, as the paper's reference agent did
by training on plain "observation, reasoning, action" text.

Prompt and reply are tokenized apart and joined, which is how the model saw them while generating.
Batches are padded on the left, so every target ends at the last position and only the last logits
are computed (``logits_to_keep``): the vocabulary projection, the largest tensor of a step, covers
the targets and nothing else. Training feeds one sequence at a time (gradients accumulate over a
mini-batch): without padding there is no attention mask, so PyTorch's fused causal attention runs
and no ``[heads, T, T]`` attention matrix is kept for the backward pass — on CPU that is the
difference between about 5 GB and under 1 GB for two 1,500-token examples on a 135M model.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["LOSS_ON", "ChatExample", "Encoded", "batch_logprobs", "encode", "pad_id"]

#: What a training example puts under the loss.
LOSS_ON: tuple[str, ...] = ("reply", "turns")


@dataclass
class ChatExample:
    """One step as training data: the act prompt and the reply (the target)."""

    step: int
    messages: list[dict[str, str]]
    reply: str

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "messages": self.messages, "reply": self.reply}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatExample:
        return cls(int(data["step"]), [dict(m) for m in data["messages"]], str(data["reply"]))


@dataclass(frozen=True)
class Encoded:
    """Token ids of an example; positions ``start`` onwards are targets."""

    ids: tuple[int, ...]
    start: int
    truncated: bool = False

    @property
    def targets(self) -> int:
        return len(self.ids) - self.start


def encode(llm: Any, example: ChatExample, *, loss_on: str = "reply", max_len: int = 4096) -> Encoded:
    """``example`` as the ids the model reads, with the target boundary (see the module docstring).

    ``llm`` is the :class:`~odyssey_agents.llm.transformers_local.TransformersLLM` the agent plays with:
    its template settings (Qwen3's thinking switch included) render the prompt. Too long an example
    loses the start of its context (the end of the prompt — the observation and the question — stays
    next to the reply); a reply longer than ``max_len`` alone keeps its beginning.
    """
    if loss_on not in LOSS_ON:
        raise ValueError(f"loss_on must be one of {', '.join(LOSS_ON)}, got {loss_on!r}")
    tokenizer = llm.tokenizer
    prompt = llm._prompt_text(example.messages)  # the backend's own rendering: what generation saw
    target_ids = llm._encode(example.reply + (tokenizer.eos_token or ""))
    if loss_on == "reply":
        context_ids, turn_ids = llm._encode(prompt), []
    else:
        system = [m for m in example.messages[:1] if m.get("role") == "system"]
        head = tokenizer.apply_chat_template(system, tokenize=False) if system else ""
        if not head or not prompt.startswith(head):
            head = ""
        context_ids, turn_ids = llm._encode(head), llm._encode(prompt[len(head) :])
    target_ids = turn_ids + target_ids
    truncated = False
    if len(target_ids) >= max_len:
        target_ids, context_ids, truncated = target_ids[: max_len - 1], context_ids[-1:], True
    elif len(context_ids) + len(target_ids) > max_len:
        context_ids, truncated = context_ids[len(context_ids) + len(target_ids) - max_len :], True
    if not context_ids:  # the first token predicts nothing: it must be context
        context_ids, target_ids = target_ids[:1], target_ids[1:]
    return Encoded(tuple(context_ids + target_ids), len(context_ids), truncated)


def pad_id(llm: Any) -> int:
    """The id padding uses (never read: padded positions are masked)."""
    tok = llm.tokenizer
    return int(tok.pad_token_id if tok.pad_token_id is not None else (tok.eos_token_id or 0))


_KEEPS_LOGITS: dict[type, bool] = {}


def _accepts_logits_to_keep(model: Any) -> bool:
    kind = type(model)
    if kind not in _KEEPS_LOGITS:
        try:
            _KEEPS_LOGITS[kind] = "logits_to_keep" in inspect.signature(model.forward).parameters
        except (TypeError, ValueError):
            _KEEPS_LOGITS[kind] = False
    return _KEEPS_LOGITS[kind]


def batch_logprobs(model: Any, batch: Sequence[Encoded], pad_id: int) -> tuple[Any, Any]:
    """Log-probabilities of the target tokens of ``batch`` under ``model`` (gradients flow if enabled).

    Returns ``(logp, mask)``, both ``[len(batch), K]`` with K the longest target: row i's targets are
    its last ``batch[i].targets`` columns; ``mask`` is 1.0 there and 0.0 elsewhere.
    """
    import torch

    device = next(model.parameters()).device
    length = max(len(e.ids) for e in batch)
    keep = max(e.targets for e in batch)
    ids = torch.full((len(batch), length), int(pad_id), dtype=torch.long)
    attention = torch.zeros((len(batch), length), dtype=torch.long)
    mask = torch.zeros((len(batch), keep), dtype=torch.float32)
    for i, e in enumerate(batch):
        ids[i, length - len(e.ids) :] = torch.tensor(e.ids, dtype=torch.long)
        attention[i, length - len(e.ids) :] = 1
        mask[i, keep - e.targets :] = 1.0
    ids, mask = ids.to(device), mask.to(device)
    kwargs: dict[str, Any] = {"input_ids": ids, "use_cache": False}
    if any(len(e.ids) != length for e in batch):  # padded: say where the tokens are (no fused causal kernel then)
        positions = (attention.cumsum(-1) - 1).clamp(min=0)
        kwargs.update(attention_mask=attention.to(device), position_ids=positions.to(device))
    if _accepts_logits_to_keep(model):
        kwargs["logits_to_keep"] = keep + 1
    logits = model(**kwargs).logits[:, -(keep + 1) : -1, :].float()
    targets = ids[:, length - keep :]
    logp = torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return logp * mask, mask
