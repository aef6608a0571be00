"""A tiny fake of a released MemoryLLM / M+ checkpoint, in the layout the authors' modeling code saves.

The real checkpoints (8B, GPU) cannot be used in tests; this one has the same files and tensor names
(a Llama backbone with peft's LoRA names, ``memory``, ``bos_embedding``, ``new_memory_positional_emb``,
M+'s retriever projectors and saved long-term memory), at a size a CPU loads in milliseconds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

NUM_TOKENS, NUM_BLOCKS, NUM_LTM_BLOCKS = 4, 6, 2


def build_fake_release(tiny_model: Path, folder: Path, kind: str) -> Path:
    import torch
    from peft import LoraConfig, inject_adapter_in_model
    from safetensors.torch import save_file
    from transformers import LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    for f in tiny_model.iterdir():
        if f.name not in ("config.json", "model.safetensors", "generation_config.json"):
            shutil.copy(f, folder / f.name)
    torch.manual_seed(1)
    model = LlamaForCausalLM.from_pretrained(tiny_model)
    lora = {
        "r": 2,
        "lora_alpha": 4,
        "lora_dropout": 0.0,
        "target_modules": ["q_proj", "v_proj"],
        "inference_mode": True,
    }
    cfg = LoraConfig(**{k: v for k, v in lora.items()})
    inject_adapter_in_model(cfg, model.model, adapter_name="default")
    inject_adapter_in_model(cfg, model.model, adapter_name="decoder_adapter")
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:  # both adapters matter (peft starts B at zero)
                p.copy_(torch.randn_like(p) * 0.5)
    c = model.config
    L, d = c.num_hidden_layers, c.hidden_size
    held = NUM_BLOCKS - (NUM_LTM_BLOCKS if kind == "mplus" else 0)
    state = {k: v.contiguous() for k, v in model.state_dict().items()}
    state["memory"] = torch.randn(L, held * NUM_TOKENS, d) * 0.5
    state["bos_embedding"] = torch.randn(L, 1, d) * 0.5
    state["new_memory_positional_emb"] = torch.randn(1, 1, d) * 0.1
    config = {**c.to_dict(), "num_tokens": NUM_TOKENS, "num_blocks": NUM_BLOCKS, "add_bos_embedding": True}
    config.update(lora_config=lora, add_decoder_lora=True)
    if kind == "mplus":
        config.update(
            architectures=["MPlus"],
            model_type="llama",
            num_ltm_blocks=NUM_LTM_BLOCKS,
            selector_hidden_dim=8,
            num_selector_layers=2,
            ltm_initial_size=3,
        )
        for layer in range(L):
            base = f"model.layers.{layer}.self_attn"
            for proj in ("query_proj", "key_proj"):
                state[f"{base}.{proj}.0.weight"] = torch.randn(16, d) * 0.3
                state[f"{base}.{proj}.2.weight"] = torch.randn(8, 16) * 0.3
            state[f"ltm.{layer}"] = torch.randn(3, d)  # M+'s saved long-term memory: not read
            state[f"ltm_keys.{layer}"] = torch.randn(3, 8)
    else:
        config.update(architectures=["MemoryLLM"], model_type="memoryllm")
    config.pop("transformers_version", None)
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    save_file(state, str(folder / "model.safetensors"))
    return folder
