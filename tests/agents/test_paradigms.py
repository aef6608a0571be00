"""The four in-context paradigms and their add-ons, end to end in a real game on the scripted backend."""

from __future__ import annotations

import json

import pytest

from odyssey_agents.base import Task
from odyssey_agents.llm import ContextOverflow, LLMConfigError, build_llm
from odyssey_agents.llm.scripted import ScriptedLLM
from odyssey_agents.paradigms import (
    AgentConfigError,
    LongContextAgent,
    Mem1Agent,
    NoMemoryAgent,
    ShortTermMemoryAgent,
)

from .helpers import Recording, play

PARADIGMS = [NoMemoryAgent, LongContextAgent, ShortTermMemoryAgent, Mem1Agent]
ADDON_SETS = [(), ("reflection",), ("summarisation",), ("reflection", "summarisation")]


def make(cls, addons=(), *, seed=0, malformed_every=4, **kw):
    return cls(Recording(ScriptedLLM(seed=seed, malformed_every=malformed_every)), addons=addons, **kw)


@pytest.mark.parametrize("cls", PARADIGMS)
@pytest.mark.parametrize("addons", ADDON_SETS)
def test_paradigm_plays_and_accounts_for_every_call(cls, addons):
    agent = make(cls, addons, summarise_every=5) if "summarisation" in addons else make(cls, addons)
    decisions, *_ = play(agent, 24)
    assert len(decisions) == 24
    calls = [c for d in decisions for c in d.usage.calls]
    recorded = agent.llm.completions
    assert len(calls) == len(recorded)  # no model call escapes the ledger
    assert sum(d.usage.input_tokens for d in decisions) == sum(c.input_tokens for c in recorded)
    assert sum(d.usage.output_tokens for d in decisions) == sum(c.output_tokens for c in recorded)
    purposes = {c.purpose for c in calls}
    assert "act" in purposes
    assert ("reflect" in purposes) == ("reflection" in addons)
    assert ("summarise" in purposes) == ("summarisation" in addons)
    malformed = [d for d in decisions if d.malformed]
    assert len(malformed) == 24 // 4 == agent.stats()["malformed"]
    assert all(d.action == "wait" and "unusable reply" in d.reasoning for d in malformed)
    assert all(d.raw for d in decisions)
    assert agent.describe()["label"] == "+".join([cls.name, *sorted(addons)])


def _act_tokens(agent, steps):
    decisions, *_ = play(agent, steps)
    return [next(c.input_tokens for c in d.usage.calls if c.purpose == "act") for d in decisions]


@pytest.mark.parametrize("cls", [NoMemoryAgent, ShortTermMemoryAgent, Mem1Agent])
def test_prompts_of_bounded_paradigms_stay_bounded(cls):
    tokens = _act_tokens(make(cls, malformed_every=0), 120)
    assert max(tokens[60:]) < 1.6 * max(tokens[5:15]), (tokens[10], max(tokens))


def test_long_context_grows_linearly_and_summarisation_bounds_it():
    lc = _act_tokens(make(LongContextAgent, malformed_every=0), 120)
    per_step = [(lc[i + 20] - lc[i]) / 20 for i in (20, 60, 99)]
    assert all(p > 100 for p in per_step)  # a whole observation-reasoning-action tuple per step
    assert max(per_step) < 2 * min(per_step)  # linear, not faster
    lc_sum = _act_tokens(make(LongContextAgent, ("summarisation",), malformed_every=0, summarise_every=10), 120)
    assert max(lc_sum[60:]) < 0.3 * lc[-1]


def test_short_term_memory_shows_exactly_the_last_n_steps():
    agent = make(ShortTermMemoryAgent, memory_size=3, malformed_every=0)
    play(agent, 10)
    prompt = agent.llm.prompts[-1][1]["content"]
    assert [r.step for r in agent.records] == [7, 8, 9]
    # the last prompt (step 9) shows the three steps before it
    assert "[Step 5]" not in prompt and all(f"[Step {i}]" in prompt for i in (6, 7, 8))
    assert "[Step 9]" not in prompt


def test_stm_addon_gives_a_window_to_no_memory_and_mem1():
    for cls in (NoMemoryAgent, Mem1Agent):
        agent = make(cls, ("short_term_memory",), memory_size=2, malformed_every=0)
        play(agent, 6)
        assert [r.step for r in agent.records] == [4, 5]
        assert "My memories:\n[Step 3]" in agent.llm.prompts[-1][1]["content"]


def test_reflection_lands_in_memory_and_the_prompt():
    agent = make(NoMemoryAgent, ("reflection",), malformed_every=0)
    decisions, *_ = play(agent, 5)
    assert [c.purpose for c in decisions[0].usage.calls] == ["act"]  # nothing to reflect on yet
    assert [c.purpose for c in decisions[1].usage.calls] == ["reflect", "act"]
    assert agent.stats()["reflections"] == 4
    assert "My latest reflection:\n" in agent.llm.prompts[-1][1]["content"]
    lc = make(LongContextAgent, ("reflection",), malformed_every=0, reflect_every=2)
    decisions, *_ = play(lc, 6)
    assert sum(c.purpose == "reflect" for d in decisions for c in d.usage.calls) == 2  # steps 2 and 4
    assert "Reflection: " in lc.llm.prompts[-1][1]["content"]


def test_mem1_state_is_rewritten_bounded_and_kept_on_malformed_replies():
    long_state = " ".join(["remember"] * 300)
    replies = [
        json.dumps({"reasoning": "r", "memory": "anvil in smithy_yard", "action": "wait"}),
        "no json at all",
        json.dumps({"reasoning": "r", "action": "wait"}),  # no memory key
        json.dumps({"reasoning": "r", "memory": long_state, "action": "wait"}),
    ]
    agent = Mem1Agent(Recording(ScriptedLLM(replies)), max_memory_tokens=50)
    play(agent, 3)
    assert agent.state_text == "anvil in smithy_yard"
    assert "My internal state:\nanvil in smithy_yard" in agent.llm.prompts[-1][1]["content"]
    bounded = Mem1Agent(ScriptedLLM(replies[3:]), max_memory_tokens=50)
    play(bounded, 1)
    assert bounded.llm.count_text(bounded.state_text) <= 50
    assert bounded.stats()["memory_truncations"] == 1
    assert agent.stats()["memory_missing"] == 1 and agent.stats()["malformed"] == 1


@pytest.mark.parametrize("policy", ["truncate", "stop", "error"])
def test_long_context_overflow_policies(policy):
    agent = LongContextAgent(ScriptedLLM(context_window=3000, max_tokens=200), on_overflow=policy)
    if policy == "error":
        with pytest.raises(ContextOverflow, match="exceeds the context window"):
            play(agent, 60)
        return
    decisions, *_ = play(agent, 60)
    stats = agent.stats()["context_overflow"]
    assert stats["policy"] == policy and stats["context_window"] == 3000
    assert stats["first_overflow_step"] is not None
    if policy == "stop":
        assert decisions[-1].stop and len(decisions) == stats["first_overflow_step"] + 1
    else:
        assert len(decisions) == 60 and stats["dropped_steps"] > 0
        assert all(c.input_tokens + 200 <= 3000 for d in decisions for c in d.usage.calls)
        assert "earlier steps no longer fit" in agent.prompts.act(agent.sections(), "x")[1]["content"]


@pytest.mark.parametrize("cls", PARADIGMS)
def test_a_resumed_agent_continues_exactly(cls, tmp_path):
    addons = ("reflection", "summarisation")
    whole = make(cls, addons, seed=3, summarise_every=4)
    expected, *_ = play(whole, 20)
    first = make(cls, addons, seed=3, summarise_every=4)
    head, env, obs, info = play(first, 11)
    first.save(tmp_path)
    state = env.save_state()
    resumed = make(cls, addons, seed=3, summarise_every=4)
    resumed.reset(first.task)
    resumed.load(tmp_path)
    from odyssey_env import OdysseyEnv

    env2 = OdysseyEnv("mossfall")
    obs2 = env2.load_state(state)
    assert obs2 == obs
    tail, *_ = play(resumed, 9, env=env2, obs=obs2, info=info)

    def key(d):
        return (
            d.action,
            d.reasoning,
            d.malformed,
            d.raw,
            [(c.purpose, c.input_tokens, c.output_tokens) for c in d.usage.calls],
        )

    assert [key(d) for d in head + tail] == [key(d) for d in expected]
    assert resumed.stats() == whole.stats()


def test_answer_uses_memory_counts_tokens_and_leaves_memory_alone(tmp_path):
    agent = make(LongContextAgent, malformed_every=0)
    play(agent, 5)
    agent.save(tmp_path)
    before = (tmp_path / "memory.json").read_text()
    answer = agent.answer("Where did I start?", ["hearth_square", "reed_marsh", "smithy_yard"])
    assert answer.index in (0, 1, 2)
    assert [c.purpose for c in answer.usage.calls] == ["answer"] and answer.usage.input_tokens > 0
    prompt = agent.llm.prompts[-1][1]["content"]
    assert "[Step 0]" in prompt and "A) hearth_square" in prompt
    agent.llm.inner.set_state(json.loads(before)["llm"])  # the answer call advanced the sampler only
    agent.save(tmp_path)
    assert (tmp_path / "memory.json").read_text() == before
    unusable = NoMemoryAgent(ScriptedLLM(["I cannot say."]))
    unusable.reset(Task("mossfall", "Mossfall", ("wait",), 0))
    assert unusable.answer("?", ["a", "b"]).index is None


def test_load_refuses_another_paradigms_memory(tmp_path):
    agent = make(Mem1Agent)
    play(agent, 2)
    agent.save(tmp_path)
    other = make(NoMemoryAgent)
    with pytest.raises(ValueError, match="mem1"):
        other.load(tmp_path)


# ---------------------------------------------------------------------- configs
def test_from_config_builds_the_agent_with_its_backend():
    from odyssey_eval.factory import build_agent

    agent = build_agent(
        {"name": "mem1", "addons": ["refl", "stm"], "max_memory_tokens": 64, "memory_size": 3},
        {"name": "scripted", "policy": "wait"},
        seed=5,
    )
    assert isinstance(agent, Mem1Agent) and agent.label == "mem1+reflection+short_term_memory"
    assert agent.window == 3 and agent.llm.seed == 5 and agent.llm.policy == "wait"


@pytest.mark.parametrize(
    ("agent_cfg", "llm_cfg", "message"),
    [
        ({"name": "long_context", "addons": ["short_term_memory"]}, {"name": "scripted"}, "would add nothing"),
        ({"name": "short_term_memory", "addons": ["stm"]}, {"name": "scripted"}, "would add nothing"),
        ({"name": "no_memory", "addons": ["telepathy"]}, {"name": "scripted"}, "unknown add-on"),
        ({"name": "no_memory", "addons": ["reflection", "refl"]}, {"name": "scripted"}, "listed twice"),
        ({"name": "no_memory", "reflect_every": 2}, {"name": "scripted"}, "add reflection to agent.addons"),
        ({"name": "no_memory", "memory_size": 2}, {"name": "scripted"}, "short_term_memory"),
        ({"name": "no_memory", "window": 2}, {"name": "scripted"}, "has no setting"),
        ({"name": "long_context", "on_overflow": "pray"}, {"name": "scripted"}, "on_overflow must be"),
        ({"name": "short_term_memory", "memory_size": 0}, {"name": "scripted"}, "at least 1"),
        ({"name": "no_memory"}, {"name": "none"}, "needs a language model"),
        ({"name": "no_memory"}, {"name": "gpt"}, "unknown llm backend"),
        ({"name": "no_memory"}, {"name": "scripted", "temperature": 0.1}, "has no option"),
    ],
)
def test_bad_configs_give_clear_errors(agent_cfg, llm_cfg, message):
    from odyssey_eval.factory import build_agent

    with pytest.raises((AgentConfigError, LLMConfigError, ValueError), match=message):
        build_agent(agent_cfg, llm_cfg)


def test_build_llm_fills_the_seed_and_drops_nulls():
    llm = build_llm({"name": "scripted", "context_window": None, "policy": "explore"}, seed=9)
    assert llm.seed == 9 and llm.context_window is None


def test_import_odyssey_agents_stays_cheap():
    import subprocess
    import sys

    code = (
        "import sys, odyssey_agents, odyssey_agents.paradigms, odyssey_agents.llm; "
        "print(any(m in sys.modules for m in ('torch', 'transformers', 'openai')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_qa_prompts_of_a_full_long_context_fit_the_window_without_touching_memory():
    llm = Recording(ScriptedLLM(context_window=3000, max_tokens=200))
    agent = LongContextAgent(llm, on_overflow="stop")
    decisions, *_ = play(agent, 60)
    assert decisions[-1].stop
    kept = [r.step for r in agent.records]
    answer = agent.answer("Where did I start?", ["hearth_square", "reed_marsh"])
    assert answer.index is not None and answer.usage.input_tokens + 200 <= 3000
    assert [r.step for r in agent.records] == kept
    tiny = NoMemoryAgent(ScriptedLLM(context_window=50))  # not even the question fits
    tiny.reset(agent.task)
    unasked = tiny.answer("Where did I start?", ["hearth_square", "reed_marsh"])
    assert unasked.index is None and "not asked" in unasked.raw and not unasked.usage.calls


def test_every_shipped_preset_builds(monkeypatch):
    """conf/llm/*.yaml and conf/agent/<paradigm>.yaml hold only options their classes take."""
    from pathlib import Path

    omegaconf = pytest.importorskip("omegaconf")
    pytest.importorskip("openai")
    from odyssey_eval.factory import build_agent

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    conf = Path(__file__).resolve().parents[2] / "odyssey_eval" / "conf"
    for path in sorted((conf / "llm").glob("*.yaml")):
        cfg = omegaconf.OmegaConf.to_container(omegaconf.OmegaConf.load(path), resolve=True)
        if cfg["name"] != "none":
            assert build_llm(cfg, seed=1).describe()["backend"] == cfg["name"], path
    for name in ("no_memory", "long_context", "short_term_memory", "mem1"):
        cfg = omegaconf.OmegaConf.to_container(omegaconf.OmegaConf.load(conf / "agent" / f"{name}.yaml"))
        assert build_agent(cfg, {"name": "scripted"}).name == name


def test_a_paradigm_built_on_another_takes_the_settings_of_both():
    """A subclass of a paradigm passes ``**kwargs`` on to it, so the base's settings stay settable."""

    class Careful(LongContextAgent):
        name = "careful"

        def __init__(self, llm, *, patience: int = 3, **kwargs):
            self.patience = patience
            super().__init__(llm, **kwargs)

    assert {"patience", "on_overflow", "addons", "reflect_every"} <= Careful.settings()
    agent = Careful.from_config(
        {"patience": 5, "on_overflow": "stop", "addons": ["refl"]}, {"name": "scripted"}, seed=0
    )
    assert agent.patience == 5 and agent.on_overflow == "stop" and agent.addons.reflection


def test_the_embedded_backend_takes_the_options_of_the_transformers_backend():
    """``EmbeddedLLM`` passes ``**kwargs`` on to ``TransformersLLM``: ``llm.threads=1`` must reach it."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    llm = build_llm({"name": "embedded", "threads": 1, "do_sample": False}, seed=2)
    assert llm.threads == 1 and llm.do_sample is False and llm.seed == 2
    with pytest.raises(LLMConfigError, match="has no option"):
        build_llm({"name": "embedded", "thread": 1})
