"""The local transformers backend and every paradigm on tiny locally built Llama and Qwen3 models."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from odyssey_agents.llm.transformers_local import TransformersLLM
from odyssey_agents.paradigms import LongContextAgent, Mem1Agent, NoMemoryAgent, ShortTermMemoryAgent

from .helpers import Recording, play

MESSAGES = [{"role": "system", "content": "You play."}, {"role": "user", "content": "Current Location: hall"}]


@pytest.fixture(scope="module")
def llama(tiny_models):
    return TransformersLLM(tiny_models["llama"], max_tokens=16, seed=0, device="cpu")


def test_counts_are_exact_and_include_the_chat_template(llama):
    done = llama.complete(MESSAGES, purpose="act")
    tok = llama.tokenizer
    text = tok.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert text.startswith("<|im_start|>system\nYou play.<|im_end|>")
    assert done.input_tokens == len(tok(text, add_special_tokens=False)["input_ids"]) == llama.count_tokens(MESSAGES)
    assert 1 <= done.output_tokens <= 16 and done.purpose == "act"


def test_sampling_is_seeded_per_call_and_resumable(tiny_models):
    a = TransformersLLM(tiny_models["llama"], max_tokens=12, seed=5)
    b = TransformersLLM(tiny_models["llama"], max_tokens=12, seed=5)
    first = [a.complete(MESSAGES, purpose="act").text for _ in range(3)]
    b.complete(MESSAGES, purpose="act")
    state = b.state()
    c = TransformersLLM(tiny_models["llama"], max_tokens=12, seed=5)
    c.set_state(state)
    assert [c.complete(MESSAGES, purpose="act").text for _ in range(2)] == first[1:]
    assert len(set(first)) > 1  # the draws differ call to call


def test_max_tokens_stays_within_the_context_window(tiny_models):
    llm = TransformersLLM(tiny_models["llama"], max_tokens=500, context_window=60, seed=0)
    prompt = llm.count_tokens(MESSAGES)
    assert llm.reply_budget(prompt) == 60 - prompt
    done = llm.complete(MESSAGES, purpose="act")
    assert done.input_tokens + done.output_tokens <= 60


@pytest.mark.parametrize("thinking", [None, False, True])
def test_qwen3_thinking_switch_reaches_the_template(tiny_models, thinking):
    llm = TransformersLLM(tiny_models["qwen3"], max_tokens=8, enable_thinking=thinking)
    llm.complete(MESSAGES, purpose="act")
    text = llm._prompt_text(MESSAGES)
    assert text.endswith("<think>\n\n</think>\n\n") == (thinking is False)


def test_prefill_and_guided_json(tiny_models):
    keys = ("reasoning", "action")
    pre = TransformersLLM(tiny_models["llama"], max_tokens=10, prefill_json=True)
    assert pre.complete(MESSAGES, purpose="act", json_keys=keys).text.startswith('{"reasoning": "')
    guided = TransformersLLM(tiny_models["qwen3"], max_tokens=40, guided_json=True, seed=2)
    done = guided.complete(MESSAGES, purpose="act", json_keys=keys)
    assert done.text.startswith('{"reasoning": "')
    if done.finish_reason == "stop":  # every value closed: the scaffold makes a well-formed object
        assert list(json.loads(done.text, strict=False)) == list(keys)
    assert done.input_tokens > guided.count_tokens(MESSAGES) and done.output_tokens <= 40


@pytest.fixture(scope="module")
def shared_llama(tiny_models):
    llm = TransformersLLM(tiny_models["llama"], max_tokens=10, seed=3)
    llm.load()
    return llm


@pytest.mark.parametrize("cls", [NoMemoryAgent, LongContextAgent, ShortTermMemoryAgent, Mem1Agent])
def test_each_paradigm_plays_on_a_tiny_model(shared_llama, cls, tmp_path):
    shared_llama.set_state({"calls": 0})
    a = cls(Recording(shared_llama), addons=("reflection",))
    decisions, *_ = play(a, 3)
    assert len(decisions) == 3
    assert sum(d.malformed for d in decisions) == a.stats()["malformed"]  # nonsense in, waits out, counted
    totals = sum(d.usage.total_tokens for d in decisions)
    assert totals == sum(c.input_tokens + c.output_tokens for c in a.llm.completions) > 0
    for prompt, completion in zip(a.llm.prompts, a.llm.completions, strict=True):
        assert completion.input_tokens == a.llm.count_tokens(prompt)
    # the same seed and the same memory give the same replies after a save and load
    a.save(tmp_path)
    question = ("Where am I?", ["hall", "marsh"])
    expected = a.answer(*question).raw
    b = cls(Recording(shared_llama), addons=("reflection",))
    b.reset(a.task)
    b.load(tmp_path)  # also rewinds the backend's sampling counter to the checkpoint
    assert b.answer(*question).raw == expected


def test_constrained_starts_make_values_begin_as_allowed(tiny_models):
    llm = TransformersLLM(tiny_models["llama"], max_tokens=30, guided_json=True, constrain_starts=True, seed=4)
    verbs = ("pick up", "enter", "talk to", "wait")
    for _ in range(3):
        done = llm.complete(MESSAGES, purpose="act", json_keys=("reasoning", "action"), starts={"action": verbs})
        if done.finish_reason == "stop":
            action = json.loads(done.text, strict=False)["action"]
            assert action.startswith(verbs), action
    answer = llm.complete(MESSAGES, purpose="answer", json_keys=("answer",), starts={"answer": ("A", "B")})
    assert answer.text.startswith(('{"answer": "A', '{"answer": "B'))
    free = TransformersLLM(tiny_models["llama"], max_tokens=30, guided_json=True, seed=4)
    assert free.describe()["constrain_starts"] is False  # only the embedded backend constrains by default


def test_decoding_keeps_thinking_tags_and_drops_end_markers(llama):
    tok = llama.tokenizer
    ids = tok("<think>plan</think>{}<|im_end|>", add_special_tokens=False)["input_ids"]
    assert tok.decode(ids, skip_special_tokens=True) == "plan{}"  # why plain skipping is not enough
    assert llama.decode(ids) == "<think>plan</think>{}"
