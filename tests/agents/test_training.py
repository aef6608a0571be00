"""The agents that learn in their weights (lora_sft, rl_lora) on tiny local models, CPU, seconds."""

from __future__ import annotations

import re
import sys

import pytest

pytest.importorskip("peft")

import torch

from odyssey_agents.base import Task
from odyssey_agents.llm.protocol import MissingExtra
from odyssey_agents.llm.transformers_local import TransformersLLM
from odyssey_agents.paradigms import AgentConfigError
from odyssey_agents.prompting.prompt import PromptBuilder
from odyssey_agents.training.adapter import AdapterConfigError
from odyssey_agents.training.lora_sft import LoRASFTAgent, mean_loss, sft_update
from odyssey_agents.training.rl_lora import RLLoRAAgent
from odyssey_agents.training.sequences import ChatExample, StepText, encode, encode_text
from odyssey_eval.factory import build_agent

from .helpers import play
from .training_helpers import NORTH, SOUTH, TwoActions, fork_info

FORK = Task("fork", "The Fork", ("north", "south"), seed=0)
OBS = "Current Location: a fork in the road. Paths lead north and south."
FAST = {"lora_r": 8, "lora_alpha": 16, "learning_rate": 1e-2}


def llm_of(folder, cls=TransformersLLM, **kw):
    return cls(folder, max_tokens=12, seed=0, device="cpu", threads=1, **kw)


def changed(before: dict, after: dict) -> list[str]:
    return [k for k in before if not torch.equal(before[k], after[k])]


# ---------------------------------------------------------------------------------------------- LoRA SFT
def test_an_sft_update_changes_the_lora_weights_and_lowers_the_loss_on_its_examples(tiny_models):
    agent = LoRASFTAgent(llm_of(tiny_models["llama"], TwoActions), train_every=2, target="reply", **FAST)
    agent.reset(FORK)
    info = fork_info(None, "north")
    for _ in range(2):
        agent.act(OBS, info)
    examples = list(agent.examples)
    assert len(examples) == 2 and all(e.reply in (NORTH, SOUTH) for e in examples)  # canonical JSON targets
    encoded = [encode(agent.model_llm, e) for e in examples]
    before_loss, before = mean_loss(agent.adapter, encoded), agent.adapter.weights()
    decision = agent.act(OBS, info)  # the third step trains on the first two, then acts
    after_loss, after = mean_loss(agent.adapter, encoded), agent.adapter.weights()
    assert after_loss < before_loss
    assert changed(before, after)  # every LoRA B starts at zero: a step moves them
    record = decision.training
    assert record["examples"] == 2 and record["steps"] == [0, 1] and record["update"] == 1
    assert record["target_tokens"] == 2 * sum(e.targets for e in encoded)  # two epochs
    assert record["tokens"] == 2 * sum(len(e.ids) for e in encoded) and record["seconds"] > 0
    assert record["final_loss"] < record["loss"]
    train = decision.usage.calls[0]
    assert (train.purpose, train.input_tokens, train.output_tokens) == ("train", record["tokens"], 0)
    assert [c.purpose for c in decision.usage.calls] == ["train", "act"]
    stats = agent.stats()["training"]
    assert stats["updates"] == 1 and stats["examples"] == 2 and stats["first_loss"] == record["loss"]
    assert record["target"] == "reply" and set(record["trained"]) == {"assistant"}  # the reply only
    assert record["trained"]["assistant"] == sum(e.targets for e in encoded)
    assert set(record["context"]) == {"system", "user"} and stats["trained"] == record["trained"]


def test_the_default_target_is_the_papers_step_text_with_every_token_trained(tiny_models):
    """Paper §4: SFT agents encode the observation-reasoning-action tuple into their weights; the reference
    trains on that text, plain, every token. Each update says which tokens, per part of the step."""
    agent = LoRASFTAgent(llm_of(tiny_models["llama"], TwoActions), train_every=2, **FAST)
    assert agent.target == "step" and agent.describe()["target"] == "step"
    agent.reset(FORK)
    info = fork_info(None, "north")
    for _ in range(2):
        agent.act(OBS, info)
    examples = list(agent.examples)
    assert [e.step for e in examples] == [0, 1] and all(e.observation == OBS for e in examples)
    text = StepText.of(examples[0])
    assert text.text == examples[0].render()  # the step as it reads in memory: observation, reasoning, action
    encoded = encode_text(agent.model_llm, text)
    tok = agent.model_llm.tokenizer
    assert (
        encoded.start == 1
        and OBS in tok.decode(list(encoded.ids))
        and "<|im_start|>" not in tok.decode(list(encoded.ids))
    )  # no chat template
    assert set(encoded.trained_by_role()) == {"observation", "reasoning", "action"}
    before = mean_loss(agent.adapter, [agent._encode(e) for e in examples])
    decision = agent.act(OBS, info)
    record = decision.training
    assert record["target"] == "step" and record["steps"] == [0, 1]
    assert set(record["trained"]) == {"observation", "reasoning", "action"}
    assert sum(record["trained"].values()) == record["target_tokens"] // 2  # two epochs of the same tokens
    assert sum(record["context"].values()) == 2  # the first token of each text predicts nothing
    assert record["trained"]["observation"] > record["trained"]["action"]  # what it saw is learned too
    assert mean_loss(agent.adapter, [agent._encode(e) for e in examples]) < before


def test_a_reflection_joins_its_steps_text_and_reply_only_is_a_named_variant(tiny_models, tmp_path):
    from odyssey_agents.memory import StepRecord
    from odyssey_eval.rundir import run_path

    record = StepRecord(3, OBS, "The path forks.", "north")
    record.reflect("North was a dead end.")
    text = StepText.of(record)
    assert [r for r, _ in text.parts] == ["observation", "reasoning", "action", "reflection"]
    llm = llm_of(tiny_models["qwen3"])
    short = encode_text(llm, text, max_len=12)
    assert len(short.ids) == 12 and short.truncated and short.roles[-1] == "reflection"
    base = {"game": {"name": "tallowmere"}, "llm": {"name": "hf", "model": "m"}, "seed": 0, "max_steps": 5}
    paper = run_path({**base, "agent": {"name": "lora_sft", "target": "step", "addons": ["short_term_memory"]}})
    reply = run_path({**base, "agent": {"name": "lora_sft", "target": "reply", "addons": ["short_term_memory"]}})
    assert paper.parts[-3] == "lora_sft+short_term_memory"
    assert reply.parts[-3] == "lora_sft+short_term_memory+target=reply"
    with pytest.raises(AdapterConfigError, match="loss_on is now target"):
        LoRASFTAgent(llm, loss_on="reply")
    with pytest.raises(AdapterConfigError, match="target must be one of step, reply, turns"):
        LoRASFTAgent(llm, target="prompt")


def test_the_target_is_the_reply_and_the_prompt_is_masked(tiny_models):
    llm = llm_of(tiny_models["qwen3"])
    messages = PromptBuilder(FORK.verbs).act([], OBS)
    e = encode(llm, ChatExample(0, messages, NORTH))
    prompt_ids = llm._encode(llm._prompt_text(messages))
    assert list(e.ids[: e.start]) == prompt_ids  # the context is exactly what generation reads
    assert llm.tokenizer.decode(list(e.ids[e.start :])) == NORTH + "<|im_end|>"
    turns = encode(llm, ChatExample(0, messages, NORTH), loss_on="turns")
    assert llm.tokenizer.decode(list(turns.ids[turns.start :])).startswith("<|im_start|>user\n")
    short = encode(llm, ChatExample(0, messages, NORTH), max_len=40)
    assert len(short.ids) == 40 and short.truncated and short.ids[-e.targets :] == e.ids[-e.targets :]


@pytest.mark.parametrize("target", ["step", "reply"])
def test_malformed_steps_are_skipped_and_counted(tiny_models, target):
    agent = LoRASFTAgent(llm_of(tiny_models["llama"], guided_json=True), train_every=2, target=target, **FAST)
    decisions, *_ = play(agent, 3)  # a random tiny model never closes its JSON: every reply is malformed
    assert all(d.malformed for d in decisions) and all(d.training is None for d in decisions)
    assert agent.stats()["training"]["skipped_malformed"] == 3
    keen = LoRASFTAgent(
        llm_of(tiny_models["llama"], guided_json=True), train_every=2, train_on_malformed=True, target=target, **FAST
    )
    decisions, *_ = play(keen, 3)
    assert decisions[2].training["examples"] == 2


def test_answers_use_the_learned_adapter(tiny_models):
    llm = llm_of(tiny_models["llama"], guided_json=True, constrain_starts=True, do_sample=False)
    agent = LoRASFTAgent(llm, **FAST)
    agent.reset(FORK)
    question, choices = "Which way did I go?", ["north", "south", "east", "west"]
    untrained = agent.answer(question, choices).index
    target = next(i for i in (3, 2, 1, 0) if i != untrained)
    messages = agent._answer_messages(question, choices)
    reply = f'{{"answer": "{"ABCD"[target]}"}}'
    encoded = [encode(llm, ChatExample(0, messages, reply))]
    for update in range(1, 16):
        sft_update(agent.adapter, encoded, epochs=2, batch_size=1, update=update)
    assert agent.answer(question, choices).index == target
    agent.reset(FORK)  # a new episode starts from the base model again
    assert agent.answer(question, choices).index == untrained


@pytest.mark.parametrize("target", ["step", "reply"])
def test_a_checkpoint_restores_adapter_optimizer_and_pending_examples_exactly(tiny_models, tmp_path, target):
    def agent():
        return LoRASFTAgent(llm_of(tiny_models["llama"], TwoActions), train_every=2, target=target, **FAST)

    a = agent()
    a.reset(FORK)
    info = fork_info(None, "north")
    for _ in range(4):  # one update, and one step pending
        a.act(OBS, info)
    a.save(tmp_path)
    assert (tmp_path / "adapter" / "adapter_model.safetensors").is_file()
    assert (tmp_path / "adapter" / "adapter_config.json").is_file()
    b = agent()
    b.reset(FORK)
    b.load(tmp_path)
    assert not changed(a.adapter.weights(), b.adapter.weights())
    assert [e.to_dict() for e in b.examples] == [e.to_dict() for e in a.examples]
    for _ in range(3):  # both go on identically: same draws, same updates, same weights
        da, db = a.act(OBS, info), b.act(OBS, info)
        assert (da.action, da.training and da.training["loss"]) == (db.action, db.training and db.training["loss"])
    assert not changed(a.adapter.weights(), b.adapter.weights())
    sa, sb = a.adapter.optimizer.state_dict()["state"], b.adapter.optimizer.state_dict()["state"]
    assert all(torch.equal(sa[i]["exp_avg_sq"], sb[i]["exp_avg_sq"]) for i in sa)


def test_sft_composes_with_short_term_memory_and_trains_on_its_window(tiny_models):
    agent = LoRASFTAgent(llm_of(tiny_models["llama"], TwoActions), addons=["short_term_memory"], memory_size=3, **FAST)
    assert agent.train_every == 3 and agent.label == "lora_sft+short_term_memory"
    agent.reset(FORK)
    decisions = [agent.act(OBS, fork_info(None, "north")) for _ in range(4)]
    assert [d.training is not None for d in decisions] == [False, False, False, True]
    assert decisions[3].training["steps"] == [0, 1, 2]
    assert agent.describe()["train_every"] == 3


# ---------------------------------------------------------------------------------------------- RL LoRA
@pytest.mark.parametrize("rewarded", ["north", "south"])
def test_rl_moves_the_policy_toward_the_rewarded_action(tiny_models, rewarded):
    llm = llm_of(tiny_models["qwen3"], TwoActions)
    agent = RLLoRAAgent(llm, horizon=0, update_every=4, batch_size=4, kl_coef=0.0, **FAST)
    agent.reset(FORK)
    prompt = agent.prompts.act([], OBS)
    index = 0 if rewarded == "north" else 1
    before = float(llm.probabilities(prompt)[index])
    previous = None
    records = []
    for _ in range(41):
        decision = agent.act(OBS, fork_info(previous, rewarded))
        previous = decision.action
        if decision.training:
            records.append(decision.training)
    after = float(llm.probabilities(prompt)[index])
    assert len(records) == 10 and all(r["examples"] == 4 for r in records)
    assert after > before + 0.2, (before, after)


def test_rl_rewards_returns_and_the_horizon(tiny_models):
    agent = RLLoRAAgent(
        llm_of(tiny_models["llama"], TwoActions),
        horizon=2,
        update_every=2,
        gamma=0.5,
        reward_weights={"exploration": 2.0, "death": -3.0},
        invalid_penalty=0.25,
        **FAST,
    )
    assert agent.reward({"reward_breakdown": {"exploration": 1, "quest": 5}, "invalid_action": True}, False) == 1.75
    assert agent.reward({"reward_breakdown": {"death": 1}}, True) == -3.5
    agent.reset(FORK)
    trained = [agent.act(OBS, fork_info(None, "north")).training for _ in range(5)]
    # act t credits step t-1; steps 0 and 1 are ready once steps 2 and 3 are rewarded (at act 4)
    assert [t is not None for t in trained] == [False, False, False, False, True]
    assert trained[4]["steps"] == [0, 1] and trained[4]["baseline"] == 0.0
    assert len(agent.transitions) == 3 and agent.baseline is not None


def test_the_kl_penalty_pulls_the_adapter_back_to_the_base_model(tiny_models):
    from odyssey_agents.training.rl_lora import policy_gradient_update

    llm = llm_of(tiny_models["qwen3"], TwoActions)
    agent = RLLoRAAgent(llm, **FAST)
    agent.reset(FORK)
    prompt = agent.prompts.act([], OBS)
    base = float(llm.probabilities(prompt)[0])
    encoded = [encode(llm, ChatExample(0, prompt, NORTH))]
    for update in range(1, 11):  # drift towards north, unanchored
        policy_gradient_update(
            agent.adapter, encoded, [1.0], epochs=1, batch_size=1, clip_range=10.0, kl_coef=0.0, update=update
        )
    assert float(llm.probabilities(prompt)[0]) > base + 0.1
    kls = [
        policy_gradient_update(
            agent.adapter, encoded, [0.0], epochs=1, batch_size=1, clip_range=10.0, kl_coef=1.0, update=update
        ).kl
        for update in range(11, 31)
    ]  # no advantage: only the anchor
    assert kls[0] > 0.01 and kls[-1] < kls[0] / 4, kls


# ---------------------------------------------------------------------------------------------- configs
def test_learning_agents_need_a_local_model_and_clear_settings(tiny_models):
    with pytest.raises(AgentConfigError, match="needs a local model: llm=hf"):
        build_agent({"name": "lora_sft"}, {"name": "scripted"})
    hf = {"name": "hf", "model": str(tiny_models["llama"]), "device": "cpu"}
    with pytest.raises(AdapterConfigError, match="lora_r must be at least 1"):
        build_agent({"name": "lora_sft", "lora_r": 0}, hf)
    with pytest.raises(AdapterConfigError, match="reward_weights has unknown component"):
        build_agent({"name": "rl_lora", "reward_weights": {"gold": 1}}, hf)
    with pytest.raises(AgentConfigError, match="has no setting"):
        build_agent({"name": "rl_lora", "train_every": 2}, hf)
    agent = build_agent({"name": "lora_sft", "lora_target_modules": ["nope_proj"]}, hf)
    with pytest.raises(AdapterConfigError, match="lora_target_modules"):
        agent.reset(FORK)


def test_a_missing_train_extra_is_one_line_naming_it(tiny_models, monkeypatch):
    monkeypatch.setitem(sys.modules, "peft", None)
    from odyssey_env.extras import install_command

    with pytest.raises(MissingExtra, match=re.escape(install_command("train"))) as err:
        build_agent({"name": "lora_sft"}, {"name": "hf", "model": str(tiny_models["llama"])})
    assert "\n" not in str(err.value)


def test_padded_batches_score_each_sequence_as_it_scores_alone(tiny_models):
    from odyssey_agents.training.sequences import batch_logprobs, pad_id

    llm = llm_of(tiny_models["qwen3"])
    prompts = PromptBuilder(FORK.verbs)
    short = encode(llm, ChatExample(0, prompts.act([], "Here."), NORTH))
    long = encode(llm, ChatExample(1, prompts.act([("My memories", "a long day " * 20)], OBS), SOUTH + " and more"))
    assert len(short.ids) != len(long.ids)
    with torch.no_grad():
        both, mask = batch_logprobs(llm.model, [short, long], pad_id(llm))
        alone = [batch_logprobs(llm.model, [e], pad_id(llm))[0][0] for e in (short, long)]
    assert mask.sum(-1).tolist() == [short.targets, long.targets]
    assert torch.allclose(both[0, -short.targets :], alone[0][-short.targets :], atol=1e-5)
    assert torch.allclose(both[1, -long.targets :], alone[1][-long.targets :], atol=1e-5)
    assert float(both[0, : -short.targets].abs().sum()) == 0.0  # padding carries nothing


def test_the_gpu_smoke_script_skips_without_a_gpu():
    import subprocess
    from pathlib import Path

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: run benchmarks/gpu_smoke.py itself")
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_smoke.py"
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("gpu_smoke: skipped: no CUDA GPU"), done.stderr


def test_sft_composes_with_reflection_and_summarisation(tiny_models):
    agent = LoRASFTAgent(
        llm_of(tiny_models["llama"], TwoActions),
        addons=["reflection", "summarisation"],
        summarise_every=2,
        train_every=2,
        **FAST,
    )
    assert agent.label == "lora_sft+reflection+summarisation"
    agent.reset(FORK)
    decisions = [agent.act(OBS, fork_info(None, "north")) for _ in range(3)]
    purposes = [c.purpose for c in decisions[2].usage.calls]
    assert purposes == ["train", "reflect", "summarise", "act"]  # trained first, then the add-ons, then acted
    assert decisions[2].training["examples"] == 2
