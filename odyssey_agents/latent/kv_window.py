"""``agent=kv_window``: a ReAct agent that keeps the raw keys and values of its recent steps in attention.

What it is, plainly: a windowed long context. After every step the agent writes the step's text (the
observation, its reasoning and action) into a bounded pool of per-layer key/value vectors
(:mod:`~odyssey_agents.latent.pool`); every later model call — acting, reflecting, summarising,
answering QA questions — reads the whole pool through the model's own attention
(:mod:`~odyssey_agents.latent.attention`), exactly as if those steps' text were in the context before the
prompt. Nothing is trained or compressed: a pool of ``pool_size`` tokens holds about the last
``pool_size / tokens per step`` steps (about 8 at the default), and when it is full old tokens are
dropped at random. The text prompt holds only the current observation (plus whatever add-ons put
there). It works with any Hugging Face causal LM whose attention goes through transformers' attention
registry (Llama, Qwen2/3, Mistral, SmolLM, Gemma, ...), on CPU or GPU.

It is *not* the paper's latent memory (MemoryLLM, M+: trained memory tokens in every layer, updated by
the model itself, with long-term retrieval): that is ``agent=memoryllm`` and ``agent=mplus``
(:mod:`~odyssey_agents.latent.memoryllm`). This agent was called ``latent_memory`` before.

Settings: ``pool_size`` (tokens per layer, default 2048), ``write_tokens`` (tokens of each step kept,
from its end; null keeps the whole step). Checkpoints hold the pool (``latent_pool.safetensors``);
a resumed run continues with the same memory, bit for bit on CPU.
"""

from __future__ import annotations

import time
from typing import Any

from odyssey_agents.base import Call, Decision, Task
from odyssey_agents.latent.base import LatentAgent, LatentConfigError
from odyssey_agents.llm.protocol import LLM
from odyssey_agents.memory import StepRecord
from odyssey_agents.paradigms.react_agent import AgentConfigError
from odyssey_agents.training.agent import local_model

__all__ = ["KVWindowAgent"]


class KVWindowAgent(LatentAgent):
    """ReAct with a bounded window of past steps' keys and values in attention (see the module docstring)."""

    name = "kv_window"

    def __init__(self, llm: LLM, *, pool_size: int = 2048, write_tokens: int | None = None, **kwargs: Any):
        from odyssey_agents.latent.pool import LatentPool

        self.model_llm = local_model(llm, self.name)
        if int(pool_size) < 1:
            raise LatentConfigError(f"pool_size must be at least 1, got {pool_size}")
        if write_tokens is not None and int(write_tokens) < 1:
            raise LatentConfigError(f"write_tokens must be at least 1 or null, got {write_tokens}")
        self.write_tokens = None if write_tokens is None else int(write_tokens)
        self.pool = LatentPool(int(pool_size), seed=self.model_llm.seed)
        self._reader: Any = None
        self._rotate: Any = None
        self._layers = 0
        self.write_seconds = 0.0
        self.written_tokens = 0
        super().__init__(llm, **kwargs)

    # ------------------------------------------------------------------ set-up
    def _attach(self) -> None:
        if self._reader is not None:
            return
        from odyssey_agents.latent.attention import LatentAttachError, attach

        try:
            self._reader, self._rotate, self._layers = attach(self.model_llm.model)
        except LatentAttachError as exc:
            raise LatentConfigError(f"agent kv_window cannot use {self.model_llm.model_name}: {exc}") from None
        self._publish()

    def _publish(self) -> None:
        """Show the pool to the attention function (and drop prompt caches computed without it)."""
        self._reader.memory = self.pool.rotated(self._rotate)
        self.model_llm.invalidate_caches()

    def reset(self, task: Task) -> None:
        super().reset(task)
        self.pool.clear()
        self.write_seconds = 0.0
        self.written_tokens = 0
        self._attach()
        self._publish()

    # ------------------------------------------------------------------ acting
    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        self._attach()
        decision = super().act(observation, info)
        dropped = self.pool.dropped
        write = self._write(self.previous) if self.previous is not None else None
        if write is not None and self.previous is not None:
            decision.usage.add(write)
            # the trajectory's account of the write: the window stays within pool_size, step by step
            decision.memory = {
                "write": self.pool.writes,
                "step": self.previous.step,
                "read": write.input_tokens,
                "written": min(write.input_tokens, self.pool.size),  # a step longer than the pool keeps its end
                "dropped": self.pool.dropped - dropped,
                "tokens": len(self.pool),
                "pool_size": self.pool.size,
            }
        return decision

    def _write(self, record: StepRecord) -> Call | None:
        """Read the step's text with the pool in view and add its keys and values to the pool."""
        import torch

        start = time.perf_counter()
        llm = self.model_llm
        ids = llm._encode(record.render() + "\n\n")
        if self.write_tokens is not None:
            ids = ids[-self.write_tokens :]
        if not ids:
            return None
        model = llm.model
        tensor = torch.tensor([ids], dtype=torch.long, device=next(model.parameters()).device)
        with torch.no_grad(), self._reader.recording() as captured:
            model(input_ids=tensor, use_cache=False)
        if len(captured) != self._layers:
            raise LatentConfigError(f"writing to the latent pool saw {len(captured)} of {self._layers} layers")
        keys = [captured[i][0] for i in range(self._layers)]
        values = [captured[i][1] for i in range(self._layers)]
        positions = torch.arange(len(ids), dtype=torch.long, device=tensor.device)
        self.pool.add(keys, values, positions, record.step)
        self._publish()
        seconds = time.perf_counter() - start
        self.write_seconds += seconds
        self.written_tokens += len(ids)
        return Call("memorise", len(ids), 0, round(seconds, 6))

    # ------------------------------------------------------------------ checkpoints
    def _layer_count(self) -> int:
        return self._layers

    def _state(self) -> dict[str, Any]:
        return {"write_seconds": self.write_seconds, "written_tokens": self.written_tokens}

    def _set_state(self, state: dict[str, Any]) -> None:
        self.write_seconds = float(state["write_seconds"])
        self.written_tokens = int(state["written_tokens"])

    # ------------------------------------------------------------------ reporting
    def _own_description(self) -> dict[str, Any]:
        return {"pool_size": self.pool.size, "write_tokens": self.write_tokens}

    def stats(self) -> dict[str, Any]:
        return {
            **super().stats(),
            "latent": {
                **self.pool.stats(),
                "written_tokens": self.written_tokens,
                "seconds": round(self.write_seconds, 3),
            },
        }


__all__ += ["AgentConfigError", "LatentConfigError"]
