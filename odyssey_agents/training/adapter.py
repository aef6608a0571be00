"""A LoRA adapter on the ``hf`` backend's model, its optimizer, and their checkpoints.

The adapter is injected *in place* into the model the backend generates with (peft's LoRA layers wrap
the target projections), so every later call of that backend — actions, reflections, QA answers —
runs with what was learned; with :meth:`LoRAAdapter.reference` the same model answers as the frozen
base model (the KL anchor of RL), without a second copy of the weights.

Checkpoints hold the adapter weights (``adapter/adapter_model.safetensors`` with its
``adapter_config.json``, loadable by ``peft.PeftModel.from_pretrained`` on the base model) and the
optimizer's state (``adapter/optimizer.safetensors``: AdamW's moments survive a resume, so a resumed
run takes the same steps as an uninterrupted one). Nothing is pickled: loading a checkpoint executes
nothing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odyssey_agents.errors import ConfigError
from odyssey_agents.training import require_train

__all__ = ["ADAPTER_DIR", "AdapterConfigError", "LoRAAdapter", "LoRASettings"]

ADAPTER_DIR = "adapter"
WEIGHTS_FILE = "adapter_model.safetensors"
OPTIMIZER_FILE = "optimizer.safetensors"
DEFAULT_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")


class AdapterConfigError(ConfigError):
    """LoRA settings that cannot be used (a rank of 0, target modules the model does not have...)."""


@dataclass(frozen=True)
class LoRASettings:
    """The adapter and its optimizer. Defaults are the paper's reference LoRA SFT agent: rank 16, alpha
    32, dropout 0.05 on the attention projections, AdamW at 5e-6, gradients clipped at 1.0."""

    r: int = 16
    alpha: float = 32.0
    dropout: float = 0.05
    target_modules: tuple[str, ...] = DEFAULT_TARGETS
    learning_rate: float = 5e-6
    weight_decay: float = 0.0
    grad_clip: float | None = 1.0

    def __post_init__(self) -> None:
        if int(self.r) < 1:
            raise AdapterConfigError(f"lora_r must be at least 1, got {self.r}")
        if float(self.alpha) <= 0:
            raise AdapterConfigError(f"lora_alpha must be positive, got {self.alpha}")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise AdapterConfigError(f"lora_dropout must be in [0, 1), got {self.dropout}")
        if (
            isinstance(self.target_modules, str)
            or not self.target_modules
            or not all(isinstance(t, str) and t for t in self.target_modules)
        ):
            raise AdapterConfigError(
                f"lora_target_modules must be a list of module names, e.g. [{', '.join(DEFAULT_TARGETS)}]"
            )
        if float(self.learning_rate) <= 0:
            raise AdapterConfigError(f"learning_rate must be positive, got {self.learning_rate}")
        if float(self.weight_decay) < 0:
            raise AdapterConfigError(f"weight_decay must not be negative, got {self.weight_decay}")
        if self.grad_clip is not None and float(self.grad_clip) <= 0:
            raise AdapterConfigError(f"grad_clip must be positive or null, got {self.grad_clip}")

    def describe(self) -> dict[str, Any]:
        return {
            "lora_r": int(self.r),
            "lora_alpha": float(self.alpha),
            "lora_dropout": float(self.dropout),
            "lora_target_modules": list(self.target_modules),
            "learning_rate": float(self.learning_rate),
            "weight_decay": float(self.weight_decay),
            "grad_clip": self.grad_clip,
        }


class LoRAAdapter:
    """The LoRA adapter of one agent on a :class:`~odyssey_agents.llm.transformers_local.TransformersLLM`.

    ``seed`` seeds the adapter's initial weights; :meth:`seed_update` seeds each update (dropout, order
    of examples), so an update depends only on the seed, its number and the adapter's state.
    """

    def __init__(self, llm: Any, settings: LoRASettings, seed: int = 0):
        self.llm = llm
        self.settings = settings
        self.seed = int(seed)
        self.peft_model: Any = None
        self.optimizer: Any = None
        self._params: list[Any] = []
        self._initial: list[Any] = []

    # ------------------------------------------------------------------ set-up
    def attach(self) -> None:
        """Load the model (if the backend has not yet) and put the adapter on it; idempotent."""
        if self.peft_model is not None:
            return
        torch = require_train("torch", "training a LoRA adapter")
        peft = require_train("peft", "training a LoRA adapter")
        model = self.llm.model
        if getattr(model, "peft_config", None):
            raise AdapterConfigError(
                f"the model {self.llm.model_name} already carries an adapter: give each learning agent its own backend"
            )
        s = self.settings
        config = peft.LoraConfig(
            r=int(s.r),
            lora_alpha=float(s.alpha),
            lora_dropout=float(s.dropout),
            target_modules=list(s.target_modules),
            bias="none",
            task_type="CAUSAL_LM",
        )
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            try:
                self.peft_model = peft.get_peft_model(model, config)
            except ValueError as exc:
                raise AdapterConfigError(
                    f"cannot put a LoRA adapter on {self.llm.model_name}: {_first_line(exc)}; set "
                    "agent.lora_target_modules=[...] to names of its linear layers"
                ) from None
        self.peft_model.eval()
        self._params = [p for p in self.peft_model.parameters() if p.requires_grad]
        self._initial = [p.detach().clone() for p in self._params]
        self._new_optimizer()
        self.llm.invalidate_caches()

    def _new_optimizer(self) -> None:
        torch = require_train("torch", "training a LoRA adapter")
        self.optimizer = torch.optim.AdamW(
            self._params, lr=float(self.settings.learning_rate), weight_decay=float(self.settings.weight_decay)
        )

    def restart(self) -> None:
        """Back to the initial adapter (which leaves the model as it was) and a fresh optimizer: a new
        episode of a fresh agent."""
        self.attach()
        torch = require_train("torch", "training a LoRA adapter")
        with torch.no_grad():
            for p, p0 in zip(self._params, self._initial, strict=True):
                p.copy_(p0)
        self._new_optimizer()
        self.llm.invalidate_caches()

    # ------------------------------------------------------------------ training
    @property
    def model(self) -> Any:
        """The transformers model, adapter included (what the backend generates with)."""
        return self.llm.model

    @property
    def device(self) -> Any:
        return next(iter(self._params)).device

    def seed_update(self, update: int) -> None:
        """Seed torch for update number ``update``: dropout masks are then a function of the seed."""
        torch = require_train("torch", "training a LoRA adapter")
        torch.manual_seed((self.seed * 7_919 + int(update) * 104_729 + 17) % (2**63 - 1))

    @contextlib.contextmanager
    def training(self) -> Iterator[None]:
        """Train mode (dropout on) for the block; eval mode after, and the backend told that the
        weights changed."""
        self.peft_model.train()
        try:
            yield
        finally:
            self.peft_model.eval()
            self.llm.invalidate_caches()

    def reference(self) -> contextlib.AbstractContextManager[Any]:
        """The frozen base model for the block (the adapter switched off)."""
        return self.peft_model.disable_adapter()

    def step(self, losses: Iterable[Any]) -> float | None:
        """One optimizer step on the sum of ``losses``, each back-propagated as soon as it is produced (a
        mini-batch as a series of single sequences: no padding, and only one sequence's activations held
        at a time). Returns the gradient norm before clipping (None when unclipped)."""
        torch = require_train("torch", "training a LoRA adapter")
        self.optimizer.zero_grad(set_to_none=True)
        for loss in losses:
            loss.backward()
        norm = None
        if self.settings.grad_clip is not None:
            norm = float(torch.nn.utils.clip_grad_norm_(self._params, float(self.settings.grad_clip)))
        self.optimizer.step()
        return norm

    def weights(self) -> dict[str, Any]:
        """The adapter's tensors by name (copies), for tests and comparisons."""
        peft = require_train("peft", "training a LoRA adapter")
        return {k: v.detach().clone() for k, v in peft.get_peft_model_state_dict(self.peft_model).items()}

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory: Path) -> None:
        peft = require_train("peft", "training a LoRA adapter")
        st = require_train("safetensors.torch", "training a LoRA adapter")
        folder = Path(directory) / ADAPTER_DIR
        folder.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().contiguous() for k, v in peft.get_peft_model_state_dict(self.peft_model).items()}
        st.save_file(state, str(folder / WEIGHTS_FILE))
        self.peft_model.peft_config["default"].save_pretrained(str(folder))
        tensors, meta = _flatten_optimizer(self.optimizer.state_dict())
        st.save_file(tensors, str(folder / OPTIMIZER_FILE), metadata={"odyssey": json.dumps(meta)})

    def load(self, directory: Path) -> None:
        peft = require_train("peft", "training a LoRA adapter")
        st = require_train("safetensors.torch", "training a LoRA adapter")
        self.attach()
        folder = Path(directory) / ADAPTER_DIR
        weights_file, optimizer_file = folder / WEIGHTS_FILE, folder / OPTIMIZER_FILE
        for path in (weights_file, optimizer_file):
            if not path.is_file():
                raise AdapterCheckpointError(f"{path} is missing: the checkpoint holds no adapter")
        device = str(self.device)
        state = st.load_file(str(weights_file), device=device)
        expected = peft.get_peft_model_state_dict(self.peft_model)
        if set(state) != set(expected) or any(state[k].shape != expected[k].shape for k in expected):
            raise AdapterCheckpointError(
                f"{weights_file} does not fit this agent's adapter (other LoRA settings "
                "or another model); rerun with eval.overwrite=true"
            )
        peft.set_peft_model_state_dict(self.peft_model, state)
        with st.safe_open(str(optimizer_file), framework="pt", device=device) as f:
            meta = json.loads((f.metadata() or {}).get("odyssey", "{}"))
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open has no __iter__
        self.optimizer.load_state_dict(_unflatten_optimizer(tensors, meta))
        self.llm.invalidate_caches()


class AdapterCheckpointError(ConfigError):
    """A checkpoint whose adapter is missing or does not fit the agent."""


def _flatten_optimizer(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An optimizer state dict as named tensors plus JSON (safetensors holds tensors only)."""
    tensors: dict[str, Any] = {}
    plain: dict[str, dict[str, Any]] = {}
    for index, entry in state["state"].items():
        kept: dict[str, Any] = {}
        for key, value in entry.items():
            if hasattr(value, "detach"):
                tensors[f"{index}.{key}"] = value.detach().contiguous()
            else:
                kept[key] = value
        plain[str(index)] = kept
    return tensors, {"param_groups": state["param_groups"], "state": plain}


def _unflatten_optimizer(tensors: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    if "param_groups" not in meta:
        raise AdapterCheckpointError("the optimizer checkpoint has no parameter groups")
    state: dict[int, dict[str, Any]] = {int(k): dict(v) for k, v in meta.get("state", {}).items()}
    for name, tensor in tensors.items():
        index, _, key = name.partition(".")
        state.setdefault(int(index), {})[key] = tensor
    return {"state": state, "param_groups": meta["param_groups"]}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def as_targets(value: Sequence[str] | str) -> tuple[str, ...]:
    """``lora_target_modules`` from a config: a list, or a comma-separated string."""
    if isinstance(value, str):
        return tuple(v.strip() for v in value.split(",") if v.strip())
    return tuple(str(v) for v in value)
