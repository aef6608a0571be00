"""Fixtures for the agent tests: offline hub, tiny locally built chat models, a game's verbs.

The tiny models (a Llama and a Qwen3 of a few thousand parameters, with a BPE tokenizer trained in
milliseconds and a ChatML template) are built once per session into a temporary folder. They write
nonsense, which is the point: the agents must survive it, count its tokens exactly and mark its
replies malformed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

CHATML = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}"
    "{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]


def _corpus() -> list[str]:
    from odyssey_env import OdysseyEnv

    env = OdysseyEnv("mossfall")
    obs, _ = env.reset(seed=0)
    lines = [
        obs,
        *env.verbs(),
        '{"reasoning": "I go north.", "action": "enter reed_marsh"}',
        '{"memory": "notes", "reflection": "ok", "summary": "s", "answer": "B"}',
    ]
    for cmd in ("enter reed_marsh", "pick up mushroom", "wait", "talk to odette_marl"):
        obs, *_ = env.step(cmd)
        lines.append(obs)
    return lines * 3


def build_tiny_model(folder: Path, arch: str) -> Path:
    """A random-weight chat model of the given architecture (``llama`` or ``qwen3``) in ``folder``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(_corpus(), trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None, unk_token=None
    )
    fast.chat_template = CHATML
    vocab = len(fast)
    common = dict(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        bos_token_id=None,
    )
    torch.manual_seed(0)
    if arch == "llama":
        model = LlamaForCausalLM(LlamaConfig(**common))
    elif arch == "qwen3":
        model = Qwen3ForCausalLM(Qwen3Config(head_dim=8, **common))
    else:
        raise ValueError(arch)
    model.generation_config.eos_token_id = fast.eos_token_id
    model.generation_config.pad_token_id = fast.pad_token_id
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("tiny-models")
    return {arch: build_tiny_model(root / arch, arch) for arch in ("llama", "qwen3")}


@pytest.fixture(scope="session")
def base_verbs() -> tuple[str, ...]:
    from odyssey_env import OdysseyEnv

    return tuple(OdysseyEnv("mossfall").verbs())


@pytest.fixture(scope="session")
def minilm():
    """The real offline all-MiniLM-L6-v2 embedder, loaded once for the whole session."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("faiss")
    from odyssey_agents.retrieval.embedder import Embedder

    return Embedder()
