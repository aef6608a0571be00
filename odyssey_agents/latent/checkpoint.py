"""Released MemoryLLM and M+ checkpoints (``YuWangX/memoryllm-8b-chat``, ``YuWangX/mplus-8b``...), as data.

Their authors ship the weights with their own modeling code (``modeling_memoryllm.py``,
``modeling_mplus.py``, run through ``trust_remote_code``). odyssey runs no code that comes with a model:
this module reads a checkpoint folder the user downloaded as *tensors* and puts them where the memory
agents (:mod:`~odyssey_agents.latent.memoryllm`) use them. The layout read (from the authors' public
modeling code; the real 8B checkpoints could not be opened while this was written, see
``docs/fidelity.md``):

* ``config.json``: a Llama configuration with ``architectures`` ``["MemoryLLM"]`` or ``["MPlus"]`` and the
  memory fields ``num_tokens`` (K, tokens per update), ``num_blocks`` (the pool holds ``num_blocks x
  num_tokens`` tokens per layer; for M+ ``num_blocks - num_ltm_blocks`` of them are short-term and
  ``num_ltm_blocks x num_tokens`` are retrieved from the long-term memory), ``add_bos_embedding``,
  ``lora_config`` (LoRA on the backbone) with ``add_decoder_lora`` (two adapters: ``default`` writes the
  memory, ``decoder_adapter`` reads it), and for M+ ``selector_hidden_dim`` and ``num_selector_layers``
  (the retriever's projectors).
* tensors (``*.safetensors``, one file or shards): the Llama backbone under ``model.`` and ``lm_head.``
  (with peft's ``base_layer`` / ``lora_A.<adapter>`` / ``lora_B.<adapter>`` names where LoRA is injected);
  ``memory`` ``[L, N, d]`` (the trained initial memory), ``bos_embedding`` ``[L, 1, d]`` (a memory token
  every layer reads first), ``new_memory_positional_emb`` ``[1, 1, d]`` (added to the tokens that become
  new memory); M+: ``model.layers.<l>.self_attn.query_proj.*`` and ``key_proj.*`` (one linear map, or two
  with the model's activation between). M+'s saved long-term memory (``ltm.<l>``...) is not read: a run
  starts with an empty long-term memory, filled by what the pool drops.

Pickled weights (``pytorch_model.bin``) are refused: loading them could run code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odyssey_agents.errors import ConfigError

__all__ = [
    "ARCHITECTURES",
    "RELEASES",
    "CheckpointError",
    "Released",
    "load_released",
    "released_config",
    "released_source",
]

#: ``architectures`` entry -> the agent it belongs to.
ARCHITECTURES = {"MemoryLLM": "memoryllm", "MPlus": "mplus"}
#: Configuration fields of the memory (everything else is the Llama backbone's).
MEMORY_FIELDS = (
    "num_tokens",
    "num_blocks",
    "num_ltm_blocks",
    "num_memory_tokens",
    "add_bos_embedding",
    "drop_memory_per_layer",
    "add_decoder_lora",
    "lora_config",
    "selector_hidden_dim",
    "num_selector_layers",
    "ltm_initial_size",
    "add_selector",
    "selector_layers",
    "update_ltm_mode",
    "update_ltm_frequency",
    "decay_frequency",
    "initial_rf_when_moving_stm_to_ltm",
    "add_encoder_retriever",
    "map_from_hidden_states",
    "detach_hidden_state",
)
_MEMORY_TENSORS = ("memory", "bos_embedding", "new_memory_positional_emb")
_RETRIEVER = (".self_attn.query_proj.", ".self_attn.key_proj.", ".self_attn.encoder_query_proj.")


#: The released checkpoints on the Hugging Face hub the paper's latent agents use (reference: ``YuWangX/...``),
#: and the agent each belongs to. Named by a hub id, one is read from the local hub cache only.
RELEASES = {
    "YuWangX/memoryllm-8b-chat": "memoryllm",
    "YuWangX/memoryllm-8b": "memoryllm",
    "YuWangX/mplus-8b": "mplus",
}


class CheckpointError(ConfigError):
    """A MemoryLLM / M+ checkpoint folder that cannot be read as the layout above."""


def released_source(name: str) -> str:
    """The folder to read ``name`` from: ``name`` itself when it is a folder, else the snapshot of the
    hub id ``name`` in the local Hugging Face cache (odyssey never downloads one), else ``name`` unchanged.

    A released checkpoint (:data:`RELEASES`) named by its hub id but not downloaded is an error that says
    how to get it: without it the name would reach ``transformers`` as an ordinary model, whose failure
    (an unknown ``memoryllm`` model type, or a missing file) would not say what is wrong.
    """
    if Path(name).is_dir():
        return name
    cached: Any = None
    if name.count("/") == 1:
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(name, "config.json")
        except Exception:  # no hub library, or a name it refuses: not a cached hub model
            cached = None
    if isinstance(cached, str):
        return str(Path(cached).parent)
    if name in RELEASES:
        raise CheckpointError(
            f"the released {RELEASES[name]} checkpoint {name} is not in the Hugging Face cache: download it "
            f"once (`huggingface-cli download {name} --local-dir DIR`, about 16 GB) and give llm.model=DIR "
            "(an 8B model: a GPU, device=auto)"
        )
    return name


def released_config(folder: str | Path) -> dict[str, Any] | None:
    """The ``config.json`` of ``folder`` if it is a released MemoryLLM / M+ checkpoint, else None."""
    path = Path(folder) / "config.json"
    if not path.is_file():
        return None
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path} cannot be read: {exc}") from None
    if not isinstance(config, dict):
        return None
    kinds = [ARCHITECTURES[a] for a in config.get("architectures") or [] if a in ARCHITECTURES]
    return config if kinds else None


@dataclass
class Released:
    """What a released checkpoint adds to its Llama backbone."""

    kind: str  # memoryllm | mplus
    memory: Any  # [L, N, d]: the trained initial short-term memory
    update_tokens: int  # K: memory tokens one update writes
    retrieve_tokens: int  # M+: long-term tokens retrieved per layer (0 for MemoryLLM)
    bos: Any = None  # [L, 1, d]
    position: Any = None  # [1, 1, d], added to the tokens that become new memory
    query_proj: list[Any] = field(default_factory=list)  # M+: per layer, hidden -> retrieval query
    key_proj: list[Any] = field(default_factory=list)  # M+: per layer, hidden -> retrieval key
    write_adapter: str | None = None  # the LoRA adapter active while writing (None: no LoRA)
    read_adapter: str | None = None  # ... and while reading

    def use(self, model: Any, adapter: str | None) -> None:
        """Activate ``adapter`` in every LoRA layer of ``model`` (nothing to do without LoRA)."""
        if adapter is None:
            return
        from peft.tuners.lora import LoraLayer

        for module in model.modules():
            if isinstance(module, LoraLayer):
                module.set_adapter(adapter)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "memory_tokens": int(self.memory.shape[1]),
            "update_tokens": self.update_tokens,
            "retrieve_tokens": self.retrieve_tokens,
            "bos_embedding": self.bos is not None,
            "lora": [a for a in (self.write_adapter, self.read_adapter) if a],
        }


def _tensor_files(folder: Path) -> list[Path]:
    files = sorted(folder.glob("*.safetensors"))
    if files:
        return files
    if any(folder.glob("*.bin")) or any(folder.glob("*.pt")):
        raise CheckpointError(
            f"{folder} holds pickled weights (*.bin); odyssey reads safetensors only, because loading a pickle "
            "can run code. Convert them once where you trust them, e.g. with transformers' save_pretrained "
            "(safe_serialization=True)"
        )
    raise CheckpointError(f"{folder} has no *.safetensors weights")


def _projector(state: dict[str, Any], prefix: str, hidden_act: str) -> Any:
    """A retriever projector from its tensors: ``prefix.weight`` (one linear map) or ``prefix.0.weight``
    and ``prefix.2.weight`` (two, the model's activation between)."""
    import torch
    from transformers.activations import ACT2FN

    if f"{prefix}.weight" in state:
        w = state[f"{prefix}.weight"]
        lin = torch.nn.Linear(w.shape[1], w.shape[0], bias=False)
        lin.weight.data = w
        return lin
    w0, w2 = state.get(f"{prefix}.0.weight"), state.get(f"{prefix}.2.weight")
    if w0 is None or w2 is None:
        raise CheckpointError(f"the checkpoint has no retriever projector {prefix} (.weight or .0/.2.weight)")
    a = torch.nn.Linear(w0.shape[1], w0.shape[0], bias=False)
    b = torch.nn.Linear(w2.shape[1], w2.shape[0], bias=False)
    a.weight.data, b.weight.data = w0, w2
    return torch.nn.Sequential(a, ACT2FN[hidden_act], b)


def _on(tensor: Any, device: str, dtype: Any) -> Any:
    return None if tensor is None else tensor.to(device=device, dtype=dtype)


def load_released(folder: str | Path, *, dtype: Any, device: str) -> tuple[Any, Released]:
    """The checkpoint's Llama backbone (a ``transformers`` model, LoRA adapters injected) and its memory."""
    from transformers import LlamaConfig, LlamaForCausalLM

    folder = Path(folder)
    config = released_config(folder)
    if config is None:
        raise CheckpointError(f"{folder} is not a MemoryLLM / M+ checkpoint (config.json architectures)")
    kind = next(ARCHITECTURES[a] for a in config["architectures"] if a in ARCHITECTURES)
    for key in ("num_tokens", "num_blocks"):
        if not isinstance(config.get(key), int) or config[key] < 1:
            raise CheckpointError(f"{folder / 'config.json'}: {key} must be a positive whole number")
    backbone = {
        k: v
        for k, v in config.items()
        if k not in MEMORY_FIELDS and k not in ("architectures", "model_type", "auto_map")
    }
    llama = LlamaConfig(**backbone)
    try:
        from transformers.initialization import no_init_weights
    except ImportError:  # transformers 4
        from transformers.modeling_utils import no_init_weights  # type: ignore[attr-defined,no-redef]  # 4 only
    with no_init_weights():
        model = LlamaForCausalLM(llama)
    lora = config.get("lora_config")
    write_adapter = read_adapter = None
    if lora:
        from peft import LoraConfig, inject_adapter_in_model

        lora_cfg = LoraConfig(
            r=int(lora["r"]),
            # peft annotates an int; the alpha only scales (alpha / r), and released configs may hold a float
            lora_alpha=float(lora["lora_alpha"]),  # type: ignore[arg-type]
            lora_dropout=0.0,
            target_modules=lora.get("target_modules"),
            inference_mode=True,
        )
        inject_adapter_in_model(lora_cfg, model.model, adapter_name="default")
        write_adapter = read_adapter = "default"
        if config.get("add_decoder_lora"):
            inject_adapter_in_model(lora_cfg, model.model, adapter_name="decoder_adapter")
            read_adapter = "decoder_adapter"
    from safetensors import safe_open

    state: dict[str, Any] = {}
    for path in _tensor_files(folder):
        with safe_open(str(path), framework="pt", device="cpu") as f:
            for key in f.keys():  # noqa: SIM118 - safe_open has no __iter__
                state[key] = f.get_tensor(key)
    extra = {k: state.pop(k) for k in [*_MEMORY_TENSORS] if k in state}
    retriever = {k: state.pop(k) for k in [k for k in state if any(r in k for r in _RETRIEVER)]}
    for k in [k for k in state if k.startswith(("ltm.", "ltm_keys.", "ltm_recall_frequencies.", "ltm_ages."))]:
        del state[k]  # M+'s saved long-term memory: a run starts its own (module docstring)
    if "memory" not in extra:
        raise CheckpointError(f"{folder} has no 'memory' tensor: not a MemoryLLM / M+ checkpoint")
    own = model.state_dict()
    missing = sorted(set(own) - set(state) - {k for k in own if k.endswith("rotary_emb.inv_freq")})
    if "lm_head.weight" in missing and llama.tie_word_embeddings:
        missing.remove("lm_head.weight")
    unexpected = sorted(set(state) - set(own))
    if missing or unexpected:
        raise CheckpointError(
            f"{folder}: the weights do not fit a Llama of this config ({len(missing)} missing, e.g. "
            f"{missing[:3]}; {len(unexpected)} unexpected, e.g. {unexpected[:3]})"
        )
    model.load_state_dict(state, strict=False)
    if llama.tie_word_embeddings:
        model.tie_weights()
    # transformers wraps ``to`` with functools.wraps, whose typing mypy reads as a call without ``self``
    model.to(device=device, dtype=dtype)  # type: ignore[call-arg]
    memory = extra["memory"]
    layers, d = llama.num_hidden_layers, llama.hidden_size
    if memory.dim() != 3 or memory.shape[0] != layers or memory.shape[2] != d:
        raise CheckpointError(f"{folder}: memory has shape {tuple(memory.shape)}, expected [{layers}, N, {d}]")
    K = int(config["num_tokens"])
    ltm_blocks = int(config.get("num_ltm_blocks") or 0) if kind == "mplus" else 0
    released = Released(
        kind=kind,
        memory=memory.to(device=device, dtype=dtype),
        update_tokens=K,
        retrieve_tokens=ltm_blocks * K,
        bos=_on(extra.get("bos_embedding") if config.get("add_bos_embedding", True) else None, device, dtype),
        position=_on(extra.get("new_memory_positional_emb"), device, dtype),
        write_adapter=write_adapter,
        read_adapter=read_adapter,
    )
    if kind == "mplus":
        act = str(config.get("hidden_act", "silu"))
        for layer in range(layers):
            base = f"model.layers.{layer}.self_attn"
            released.query_proj.append(_projector(retriever, f"{base}.query_proj", act).to(device=device, dtype=dtype))
            released.key_proj.append(_projector(retriever, f"{base}.key_proj", act).to(device=device, dtype=dtype))
    return model, released
