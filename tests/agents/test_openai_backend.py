"""The OpenAI-compatible backend over real HTTP against a local server started by the test."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("openai")

from odyssey_agents.llm import ContextOverflow, LLMError, build_llm
from odyssey_agents.llm.openai_compat import OpenAIChat
from odyssey_agents.paradigms import ShortTermMemoryAgent

from .helpers import play
from .openai_server import FakeOpenAIServer

MESSAGES = [{"role": "system", "content": "You play."}, {"role": "user", "content": "What now?"}]


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def client(server, **kw):
    kw.setdefault("max_retries", 0)
    return OpenAIChat("tiny", base_url=server.url, timeout=5, **kw)


def test_a_call_sends_the_request_and_reports_the_servers_usage(server):
    server.script = [
        {
            "content": '{"reasoning": "r", "action": "defend"}',
            "usage": {"prompt_tokens": 321, "completion_tokens": 17, "total_tokens": 338},
        }
    ]
    llm = client(server, max_tokens=64, temperature=0.2, seed=4)
    done = llm.complete(MESSAGES, purpose="reflect")
    assert (done.text, done.input_tokens, done.output_tokens, done.purpose) == (
        '{"reasoning": "r", "action": "defend"}',
        321,
        17,
        "reflect",
    )
    assert not done.estimated and done.finish_reason == "stop"
    body = server.requests[-1]
    assert body["model"] == "tiny" and body["messages"] == MESSAGES
    assert body["max_tokens"] == 64 and body["temperature"] == 0.2 and body["seed"] == 4
    assert "max_completion_tokens" not in body


def test_context_window_is_read_from_the_server_and_max_tokens_kept_within_it(server):
    server.max_model_len = 400
    llm = client(server, max_tokens=4096)
    llm.complete(MESSAGES, purpose="act")
    assert llm.context_window == 400
    assert server.requests[-1]["max_tokens"] <= 400 - llm.count_tokens(MESSAGES)
    with pytest.raises(ContextOverflow):
        llm.complete([{"role": "user", "content": "word " * 2000}], purpose="act")


def test_the_calibrated_ratio_is_checkpointed(server):
    server.script = [{"usage": {"prompt_tokens": 60, "completion_tokens": 5, "total_tokens": 65}}]
    llm = client(server)
    long_prompt = [{"role": "user", "content": "x" * 600}]
    llm.complete(long_prompt, purpose="act")
    assert llm.state()["chars_per_token"] == pytest.approx(600 / 56)
    fresh = client(server)
    fresh.set_state(llm.state())
    assert fresh.count_tokens(long_prompt) == llm.count_tokens(long_prompt)


def test_reasoning_is_split_from_the_answer(server):
    server.script = [
        {"content": '{"reasoning": "r", "action": "wait"}', "reasoning_content": "Let me think."},
        {"content": '<think>hidden plan</think>\n{"reasoning": "r", "action": "defend"}'},
    ]
    llm = client(server)
    first = llm.complete(MESSAGES, purpose="act")
    assert first.reasoning == "Let me think." and first.text == '{"reasoning": "r", "action": "wait"}'
    second = llm.complete(MESSAGES, purpose="act")
    assert second.reasoning == "hidden plan" and second.text.startswith('{"reasoning"')


def test_thinking_switch_and_reasoning_effort_and_token_param(server):
    llm = client(
        server, enable_thinking=False, reasoning_effort="low", token_param="max_completion_tokens", json_mode=True
    )
    llm.complete(MESSAGES, purpose="act", json_keys=("reasoning", "action"))
    body = server.requests[-1]
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["reasoning_effort"] == "low" and "max_completion_tokens" in body and "max_tokens" not in body
    assert body["response_format"] == {"type": "json_object"}


def test_transient_failures_are_retried(server):
    server.script = [{"status": 503}, {"status": 429}, {"content": '{"action": "wait"}'}]
    llm = client(server, max_retries=3)
    assert llm.complete(MESSAGES, purpose="act").text == '{"action": "wait"}'
    assert len(server.requests) == 3


def test_failures_after_the_retries_raise_a_clear_error(server):
    server.script = [{"status": 500}, {"status": 500}]
    with pytest.raises(LLMError, match=r"failed 2 times .*llm\.max_retries=1.*HTTP 500"):
        client(server, max_retries=1).complete(MESSAGES, purpose="act")


def test_a_stalled_server_times_out(server):
    server.script = [{"delay": 3.0}]
    llm = OpenAIChat("tiny", base_url=server.url, timeout=0.5, max_retries=0)
    start = time.perf_counter()
    with pytest.raises(LLMError):
        llm.complete(MESSAGES, purpose="act")
    assert time.perf_counter() - start < 2.5


def test_a_context_length_refusal_becomes_context_overflow(server):
    server.script = [{"status": 400, "message": "This model's maximum context length is 4096 tokens."}]
    with pytest.raises(ContextOverflow):
        client(server).complete(MESSAGES, purpose="act")


def test_missing_usage_is_estimated_and_flagged(server):
    server.script = [{"content": '{"action": "wait"}', "usage": None}]
    done = client(server).complete(MESSAGES, purpose="act")
    assert done.estimated and done.input_tokens > 0 and done.output_tokens > 0


def test_the_official_api_needs_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMError, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-5-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert OpenAIChat("gpt-5-mini").token_param == "max_completion_tokens"


def test_vllm_preset_points_at_a_local_server(monkeypatch, server):
    monkeypatch.setenv("VLLM_BASE_URL", server.url)
    llm = build_llm({"name": "vllm", "model": "tiny", "max_retries": 0}, seed=3)
    assert llm.base_url == server.url and llm.seed == 3 and llm.backend == "vllm"
    llm.complete(MESSAGES, purpose="act")
    assert server.requests[-1]["seed"] == 3


def test_an_agent_plays_through_a_server_backed_by_a_tiny_model(tiny_models):
    from odyssey_agents.llm.transformers_local import TransformersLLM

    model = TransformersLLM(tiny_models["llama"], max_tokens=12, seed=1)
    with FakeOpenAIServer("tiny-llama", backend=model) as server:
        agent = ShortTermMemoryAgent(
            OpenAIChat("tiny-llama", base_url=server.url, max_tokens=12, max_retries=0), memory_size=2
        )
        decisions, *_ = play(agent, 3)
    assert len(decisions) == 3 and len(server.requests) == 3
    for decision, body in zip(decisions, server.requests, strict=True):
        (call,) = decision.usage.calls
        assert call.input_tokens == model.count_tokens(body["messages"])  # the model's own exact count
        assert 1 <= call.output_tokens <= 12
