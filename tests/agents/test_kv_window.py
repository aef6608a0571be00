"""agent=kv_window (formerly latent_memory): a bounded pool of raw keys and values, read through any HF
causal LM's attention."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

import torch

from odyssey_agents.base import Task
from odyssey_agents.latent.attention import attach
from odyssey_agents.latent.kv_window import KVWindowAgent, LatentConfigError
from odyssey_agents.latent.pool import LatentPool
from odyssey_agents.llm.transformers_local import TransformersLLM
from odyssey_agents.paradigms import AgentConfigError
from odyssey_eval.factory import build_agent

from .helpers import play


def llm_of(folder, **kw):
    return TransformersLLM(folder, max_tokens=10, seed=0, device="cpu", threads=1, **kw)


def write(pool, reader, rotate, model, layers, ids, step=0):
    """What the agent does after a step: read the text with the pool in view, add it, show the new pool."""
    reader.memory = pool.rotated(rotate)
    with torch.no_grad(), reader.recording() as cap:
        model(input_ids=torch.tensor([ids]), use_cache=False)
    pool.add([cap[i][0] for i in range(layers)], [cap[i][1] for i in range(layers)], torch.arange(len(ids)), step)
    reader.memory = pool.rotated(rotate)


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_a_pool_written_from_a_text_reads_exactly_like_that_text_in_the_context(tiny_models, arch):
    """Keys are turned to the positions just before the prompt: memory = the text right before it."""
    llm = llm_of(tiny_models[arch])
    model = llm.model
    reader, rotate, layers = attach(model)
    text, prompt = llm._encode("You enter the reed marsh. A mushroom grows here."), llm._encode(" Where is it?")
    pool = LatentPool(500)
    write(pool, reader, rotate, model, layers, llm._encode("An earlier step."), step=0)
    write(pool, reader, rotate, model, layers, text, step=1)  # read with the first write in view
    with torch.no_grad():
        remembered = model(input_ids=torch.tensor([prompt])).logits[0]
        greedy = model.generate(torch.tensor([prompt]), max_new_tokens=6, do_sample=False)[0, len(prompt) :]
        reader.memory = None
        first = llm._encode("An earlier step.")
        context = model(input_ids=torch.tensor([first + text + prompt])).logits[0, -len(prompt) :]
        bare = model(input_ids=torch.tensor([prompt])).logits[0]
        expected = model.generate(torch.tensor([first + text + prompt]), max_new_tokens=6, do_sample=False)[
            0, len(first + text + prompt) :
        ]
    assert torch.allclose(remembered, context, atol=1e-5)
    assert not torch.allclose(remembered, bare, atol=1e-3)  # the memory is read
    assert greedy.tolist() == expected.tolist()  # through generation and its KV cache too


def test_the_pool_stays_within_its_bound_and_forgets_at_random_reproducibly(tiny_models):
    llm = llm_of(tiny_models["llama"])
    reader, rotate, layers = attach(llm.model)
    pools = [LatentPool(64, seed=3), LatentPool(64, seed=3), LatentPool(64, seed=4)]
    written = 0
    for step in range(12):
        ids = llm._encode(f"Step {step}: I walked to the mill and picked up wood_log number {step}.")
        written += len(ids)
        for pool in pools:
            write(pool, reader, rotate, llm.model, layers, ids, step)
            assert len(pool) <= 64 and all(k.shape[1] == len(pool) for k in pool.keys)
    reader.memory = None
    a, b, c = pools
    assert a.writes == 12 and a.dropped == written - 64
    assert torch.equal(a.steps, b.steps) and torch.equal(a.keys[0], b.keys[0])  # the same draws
    assert not torch.equal(a.steps, c.steps)  # another seed forgets other tokens
    assert a.steps.tolist() == sorted(a.steps.tolist())  # survivors keep their order
    assert a.steps[-len(ids) :].tolist() == [11] * len(ids)  # a write is kept whole
    assert a.stats()["steps_present"] > 1  # older steps survive in part


def test_the_agent_writes_each_step_reads_the_pool_when_answering_and_resumes_exactly(tiny_models, tmp_path):
    def agent():
        return KVWindowAgent(llm_of(tiny_models["qwen3"], guided_json=True), pool_size=600)

    a = agent()
    decisions, *_ = play(a, 3)
    assert [c.purpose for c in decisions[0].usage.calls] == ["act", "memorise"]
    stats = a.stats()["latent"]
    assert stats["writes"] == 3 and stats["tokens"] == min(600, stats["written_tokens"])
    a.save(tmp_path)
    reader = a._reader
    before = reader.reads
    question = ("Where am I?", ["the hall", "the marsh", "the mill"])
    answer = a.answer(*question)
    assert reader.reads > before  # the answer's forward passes read the pool
    b = agent()
    b.reset(a.task)
    b.load(tmp_path)
    assert torch.equal(a.pool.steps, b.pool.steps)
    assert all(torch.equal(x, y) for x, y in zip(a.pool.keys, b.pool.keys, strict=True))
    assert b.answer(*question).raw == answer.raw  # same memory, same draw
    b.pool.clear()
    b._publish()
    b.llm.set_state({"calls": b.llm.calls - 1})
    assert b.answer(*question).raw != answer.raw  # without the memory the same draw answers otherwise


def test_latent_settings_and_backends_are_checked(tiny_models):
    with pytest.raises(AgentConfigError, match="needs a local model"):
        build_agent({"name": "kv_window"}, {"name": "scripted"})
    hf = {"name": "hf", "model": str(tiny_models["llama"]), "device": "cpu"}
    with pytest.raises(LatentConfigError, match="pool_size must be at least 1"):
        build_agent({"name": "kv_window", "pool_size": 0}, hf)
    agent = build_agent({"name": "kv_window", "pool_size": 32, "write_tokens": 8}, hf)
    agent.reset(Task("mossfall", "Mossfall", ("wait",), 0))
    agent.act("Current Location: hall", {})
    assert agent.stats()["latent"]["written_tokens"] == 8
