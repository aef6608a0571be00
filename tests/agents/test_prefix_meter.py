"""The cacheable-prefix measure: how much of each prompt repeats the start of an earlier one."""

from __future__ import annotations

import random

import pytest

from odyssey_agents.llm.prefix_meter import PrefixMeter, common_prefix, render_chat
from odyssey_agents.llm.scripted import ScriptedLLM
from odyssey_agents.paradigms import LongContextAgent, NoMemoryAgent, ShortTermMemoryAgent

from .helpers import Recording, play


def _naive(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_common_prefix_agrees_with_a_character_loop():
    rng = random.Random(3)
    for _ in range(300):
        base = "".join(rng.choice("ab") for _ in range(rng.randrange(0, 40)))
        a = base + "".join(rng.choice("abc") for _ in range(rng.randrange(0, 5)))
        b = base + "".join(rng.choice("abc") for _ in range(rng.randrange(0, 5)))
        assert common_prefix(a, b) == _naive(a, b)


def test_a_prompt_is_measured_against_the_last_prompt_of_every_purpose():
    meter = PrefixMeter()
    act1 = [{"role": "system", "content": "S" * 50}, {"role": "user", "content": "one"}]
    reflect = [{"role": "system", "content": "R" * 50}, {"role": "user", "content": "x"}]
    act2 = [{"role": "system", "content": "S" * 50}, {"role": "user", "content": "two"}]
    assert meter.measure(act1, "act") == 0.0
    meter.measure(reflect, "reflect")  # in between: the previous act prompt is still found
    share = meter.measure(act2, "act")
    text = render_chat(act2)
    assert share == pytest.approx(text.index("two") / len(text))
    assert PrefixMeter.tokens(share, 100) == int(share * 100) and PrefixMeter.tokens(1.0, 7) == 7


def _shares(cls, steps=12, **kw):
    agent = cls(ScriptedLLM(seed=0), **kw)
    decisions, *_ = play(agent, steps)
    calls = [c for d in decisions for c in d.usage.calls if c.purpose == "act"]
    assert all(0 <= c.prefix_tokens <= c.input_tokens for c in calls)
    return [c.prefix_tokens / c.input_tokens for c in calls]


def test_long_context_repeats_almost_its_whole_prompt_no_memory_only_its_system_prompt():
    long_context = _shares(LongContextAgent)
    no_memory = _shares(NoMemoryAgent)
    window = _shares(ShortTermMemoryAgent, memory_size=3)
    assert long_context[0] == no_memory[0] == window[0] == 0.0  # nothing before the first prompt
    assert min(long_context[7:]) > 0.8 and long_context[-1] > long_context[4]  # the new part: two observations
    assert min(no_memory[1:]) > 0.2 and max(no_memory[1:]) < 0.8  # the system prompt, then the observation
    # a sliding window drops its oldest step at the front of the memories: less repeats than with every step
    assert sum(window[4:]) < sum(long_context[4:])


def test_the_measure_goes_into_the_calls_by_purpose():
    agent = LongContextAgent(ScriptedLLM(seed=0))
    decisions, *_ = play(agent, 3)
    row = decisions[-1].usage.by_purpose()["act"]
    assert row["prefix_tokens"] == decisions[-1].usage.calls[0].prefix_tokens > 0
    assert "prefix_tokens" not in decisions[0].usage.by_purpose()["act"]  # none: the key is left out
    assert "cached_tokens" not in row  # the scripted backend reports no server cache


def test_a_resumed_agent_measures_its_prompts_as_an_uninterrupted_one(tmp_path):
    def make():
        return LongContextAgent(ScriptedLLM(seed=2), addons=["reflection"])

    whole = make()
    decisions, *_ = play(whole, 10)
    expected = [[c.prefix_tokens for c in d.usage.calls] for d in decisions[6:]]

    first = make()
    _, env, obs, info = play(first, 6)
    first.save(tmp_path)
    second = make()
    second.load(tmp_path)
    rest, *_ = play(second, 4, env=env, obs=obs, info=info, start=6)
    assert [[c.prefix_tokens for c in d.usage.calls] for d in rest] == expected


def test_the_questions_of_a_round_share_their_prefix_and_leave_the_saved_state_alone(tmp_path):
    agent = NoMemoryAgent(Recording(ScriptedLLM(seed=0)))
    _, env, obs, info = play(agent, 3)
    state = agent.meter.state()
    first = agent.answer("Where did I start?", ["hearth_square", "reed_marsh"])
    second = agent.answer("What did I hold?", ["nothing", "a stick"])
    assert second.usage.calls[0].prefix_tokens > first.usage.calls[0].prefix_tokens > 0
    assert agent.meter.state() == state
    assert agent.meter._asked
    play(agent, 1, env=env, obs=obs, info=info, start=3)  # a new step forgets the questions
    assert not agent.meter._asked
