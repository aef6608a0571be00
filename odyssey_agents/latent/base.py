"""What the latent agents share: a local model, torch, and a memory checkpointed next to ``memory.json``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from odyssey_agents.errors import ConfigError
from odyssey_agents.paradigms.react_agent import ReActAgent
from odyssey_agents.training import require_train

if TYPE_CHECKING:
    from odyssey_agents.llm.transformers_local import TransformersLLM

__all__ = ["LatentAgent", "LatentConfigError", "MemoryFileError"]


class LatentConfigError(ConfigError):
    """A latent memory setting out of range, or a model that cannot carry the memory."""


class MemoryFileError(ValueError):
    """A checkpoint whose memory file is missing or was written for another model or memory size."""


class LatentAgent(ReActAgent):
    """A ReAct agent whose memory (``self.pool``) lives in the model: subclasses attach it to the model
    (``_attach``), count its layers (``_layer_count``) and show it to attention (``_publish``)."""

    pool: Any
    model_llm: TransformersLLM  # the local model the memory lives in (set by the subclass's constructor)

    @classmethod
    def from_config(cls, params: Mapping[str, Any], llm_cfg: Mapping[str, Any], seed: int) -> ReActAgent:
        require_train("torch", f"agent {cls.name!r}")
        return super().from_config(params, llm_cfg, seed)

    def _attach(self) -> None:
        raise NotImplementedError

    def _publish(self) -> None:
        raise NotImplementedError

    def _layer_count(self) -> int:
        raise NotImplementedError

    def save(self, directory: Path) -> None:
        super().save(directory)
        self.pool.save(Path(directory))

    def load(self, directory: Path) -> None:
        super().load(directory)
        self._attach()
        device = next(self.model_llm.model.parameters()).device
        try:
            self.pool.load(Path(directory), device, self._layer_count())
        except MemoryFileError as exc:
            raise LatentConfigError(str(exc)) from None
        self._publish()
