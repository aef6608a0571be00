"""Training examples as token ids with what is context marked, and their log-probabilities in batches.

Two kinds of example, for the two targets a learner may train on:

* :class:`StepText` — the paper's (§4: "SFT agents encode experience, i.e. the observation-reasoning-
  action tuple, into parameters"), as the reference agent trains: the step's text (observation,
  reasoning, action, and the reflection when there is one) as plain text, without the chat template,
  every token under the loss (the first token predicts nothing, so it is context). :func:`encode_text`.
* :class:`ChatExample` — what the agent saw and what it answered: the act prompt (system and user
  messages, rendered with the model's own chat template, exactly as the backend sends it) and the reply.
  The reply, closed by the template's end-of-turn token, is the target; the prompt is context
  (``loss_on="reply"``). ``loss_on="turns"`` also puts the user turn (memory sections and the
  observation) under the loss. :func:`encode`.

Every encoded example knows the role of each of its tokens (``system``, ``user``, ``assistant`` for a
chat; ``observation``, ``reasoning``, ``action``, ``reflection`` for a step's text), so an update can
say exactly which tokens it trained on (:meth:`Encoded.trained_by_role`) and which it only read.

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

__all__ = ["LOSS_ON", "ChatExample", "Encoded", "StepText", "batch_logprobs", "encode", "encode_text", "pad_id"]

#: What a chat example puts under the loss.
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


@dataclass
class StepText:
    """One step as the paper's learner trains on it: its text, in parts, each with its role."""

    step: int
    parts: list[tuple[str, str]]  # (role, text), in order; joined they are the step's text

    @classmethod
    def of(cls, record: Any) -> StepText:
        """The parts of a :class:`~odyssey_agents.memory.StepRecord` (how a step reads in memory)."""
        parts = [
            ("observation", f"[Step {record.step}]\nObservation:\n{record.observation}\n"),
            ("reasoning", f"Reasoning: {record.reasoning or '(none)'}\n"),
            ("action", f"Action: {record.action}"),
        ]
        if record.reflection:
            parts.append(("reflection", f"\nReflection: {record.reflection}"))
        return cls(int(record.step), parts)

    @property
    def text(self) -> str:
        return "".join(t for _, t in self.parts)

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "parts": [list(p) for p in self.parts]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepText:
        return cls(int(data["step"]), [(str(r), str(t)) for r, t in data["parts"]])


@dataclass(frozen=True)
class Encoded:
    """Token ids of an example; positions ``start`` onwards are targets. ``roles`` names the role of
    each id (empty when unknown)."""

    ids: tuple[int, ...]
    start: int
    truncated: bool = False
    roles: tuple[str, ...] = ()

    @property
    def targets(self) -> int:
        return len(self.ids) - self.start

    def trained_by_role(self) -> dict[str, int]:
        """Tokens under the loss, per role."""
        return _count(self.roles[self.start :])

    def masked_by_role(self) -> dict[str, int]:
        """Tokens read as context only (no loss), per role."""
        return _count(self.roles[: self.start])


def _count(roles: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in roles:
        out[r] = out.get(r, 0) + 1
    return out


def _fit(ids: list[int], roles: list[str], start: int, max_len: int) -> tuple[list[int], list[str], int, bool]:
    """Cut an example to ``max_len`` tokens: the start of the context goes first (what is next to the
    target stays); a target longer than ``max_len`` alone keeps its beginning after one token of context.
    At least the first token is context: it predicts nothing."""
    truncated = False
    targets = len(ids) - start
    if targets >= max_len:
        keep = list(range(start - 1, start)) if start else []
        ids, roles = (
            [ids[i] for i in keep] + ids[start : start + max_len - len(keep)],
            ([roles[i] for i in keep] + roles[start : start + max_len - len(keep)]),
        )
        start, truncated = len(keep), True
    elif len(ids) > max_len:
        cut = len(ids) - max_len
        ids, roles, start, truncated = ids[cut:], roles[cut:], start - cut, True
    if start < 1 and ids:
        start = 1
    return ids, roles, start, truncated


def encode_text(llm: Any, example: StepText, *, max_len: int = 4096) -> Encoded:
    """A step's text as plain token ids (no chat template), every token a target but the first; the
    tokenizer's own special tokens open it (BOS where the tokenizer adds one) and its end-of-text token
    closes it. Too long a text loses its beginning (the action, at the end, stays)."""
    tokenizer = llm.tokenizer
    ids: list[int] = []
    roles: list[str] = []
    for i, (role, text) in enumerate(example.parts):
        part = tokenizer(text, add_special_tokens=i == 0)["input_ids"]
        ids += part
        roles += [role] * len(part)
    if tokenizer.eos_token_id is not None:
        ids.append(int(tokenizer.eos_token_id))
        roles.append(example.parts[-1][0] if example.parts else "text")
    truncated = len(ids) > max_len
    if truncated:
        ids, roles = ids[-max_len:], roles[-max_len:]
    return Encoded(tuple(ids), 1, truncated, tuple(roles))


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
    system = [m for m in example.messages[:1] if m.get("role") == "system"]
    head = tokenizer.apply_chat_template(system, tokenize=False) if system else ""
    if not head or not prompt.startswith(head):
        head = ""
    if loss_on == "reply":
        context_ids, turn_ids = llm._encode(prompt), []
        n_system = min(len(llm._encode(head)), len(context_ids)) if head else 0
        context_roles = ["system"] * n_system + ["user"] * (len(context_ids) - n_system)
    else:
        context_ids, turn_ids = llm._encode(head), llm._encode(prompt[len(head) :])
        context_roles = ["system"] * len(context_ids)
    ids = context_ids + turn_ids + target_ids
    roles = context_roles + ["user"] * len(turn_ids) + ["assistant"] * len(target_ids)
    ids, roles, start, truncated = _fit(ids, roles, len(context_ids), max_len)
    return Encoded(tuple(ids), start, truncated, tuple(roles))


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
