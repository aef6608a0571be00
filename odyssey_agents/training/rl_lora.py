"""``agent=rl_lora``: test-time reinforcement learning of a LoRA adapter from the env's rewards.

The agent learns from its own single stream of play — one episode that is never reset, branched or
replayed, as a deployed agent lives — so there is no group of rollouts from one state to compare (as
GRPO needs) and no value network to fit (trl has no PPO any more). The algorithm is a clipped policy
gradient with a running baseline and a KL anchor, PPO's objective without its critic:

1. **Transitions.** Each act call is a transition: the prompt the model saw and the reply it sampled
   (the whole reply is the "action" whose log-probability is trained: reasoning, keys and command).
2. **Rewards.** The next step's ``info`` brings the outcome of that action: the reward is
   ``sum(reward_weights[k] * info["reward_breakdown"][k])`` minus ``invalid_penalty`` when the engine
   refused the command, minus ``malformed_penalty`` when the reply had no usable action.
3. **Returns.** A transition is trained once ``horizon`` later rewards are known:
   ``G_t = r_t + gamma r_{t+1} + ... + gamma^horizon r_{t+horizon}`` (credit for what an action set up).
4. **Advantage.** ``A_t = G_t - b`` with ``b`` an exponential moving average of past returns
   (``baseline_decay``), updated after each update; ``normalize_advantages`` divides by their spread.
5. **Update.** Every ``update_every`` ready transitions: ``epochs`` passes of mini-batches over them
   with the token-level loss ``-min(rho A, clip(rho, 1-eps, 1+eps) A) + kl_coef * KL``, where ``rho`` is
   the ratio of the current to the sampling-time probability of each reply token and KL the k3
   estimator ``exp(q) - q - 1`` (``q`` = log-ratio of the frozen base model to the current policy) per
   token: the adapter is pulled back towards the model it started from, which bounds forgetting.

The sampling probabilities are recomputed at update time (before any step), which equals the policy
that sampled when nothing trained in between — true by construction, since updates happen only
between whole batches. Sampling settings of the backend (temperature, top-p) make the behaviour
policy differ from the model's distribution; keep them near 1.0 for an unbiased gradient. Thinking
models should play with thinking off (the reply then is all the model wrote).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from odyssey_agents.llm.protocol import LLM, Completion
from odyssey_agents.prompting.reply import Reply
from odyssey_agents.training.adapter import AdapterConfigError, LoRAAdapter
from odyssey_agents.training.agent import LearningAgent, TrainRecord, role_counts
from odyssey_agents.training.sequences import ChatExample, Encoded, batch_logprobs, encode, pad_id
from odyssey_env.rewards import COMPONENTS

__all__ = ["DEFAULT_REWARD_WEIGHTS", "PGResult", "RLLoRAAgent", "policy_gradient_update"]

#: Every component counts once; a death costs one (the ``death`` component counts deaths).
DEFAULT_REWARD_WEIGHTS: dict[str, float] = {k: (-1.0 if k == "death" else 1.0) for k in COMPONENTS}


@dataclass(frozen=True)
class PGResult:
    """Figures of one policy-gradient update."""

    loss: float  # mean surrogate loss of the first epoch
    final_loss: float
    kl: float  # mean per-token KL to the base model, last epoch
    clip_fraction: float  # share of tokens whose ratio was clipped, all epochs
    tokens: int
    target_tokens: int
    optimizer_steps: int


def policy_gradient_update(
    adapter: LoRAAdapter,
    encoded: Sequence[Encoded],
    advantages: Sequence[float],
    *,
    epochs: int,
    batch_size: int,
    clip_range: float,
    kl_coef: float,
    update: int,
) -> PGResult:
    """One clipped policy-gradient update of ``adapter`` on replies ``encoded`` with ``advantages``."""
    import torch

    adapter.attach()
    pad = pad_id(adapter.llm)
    old: dict[int, Any] = {}
    ref: dict[int, Any] = {}
    with torch.no_grad():  # per sequence, as training reads them: the first ratios are exactly 1
        for j, e in enumerate(encoded):
            old[j] = batch_logprobs(adapter.model, [e], pad)[0][0]
            with adapter.reference():
                ref[j] = batch_logprobs(adapter.model, [e], pad)[0][0]
    order_rng = random.Random(adapter.seed * 1_000_003 + update)
    adapter.seed_update(update)
    epoch_losses: list[float] = []
    kl_last = 0.0
    clipped = counted = 0.0
    steps = 0
    with adapter.training():
        for _ in range(epochs):
            order = list(range(len(encoded)))
            order_rng.shuffle(order)
            total = weight = kl_total = 0.0
            for i in range(0, len(order), batch_size):
                idx = order[i : i + batch_size]
                count = sum(encoded[j].targets for j in idx)
                sums: dict[str, float] = {"loss": 0.0, "kl": 0.0, "clipped": 0.0}

                def losses(idx: list[int] = idx, count: int = count, sums: dict[str, float] = sums) -> Any:
                    for j in idx:  # one sequence at a time: no padding, one sequence's activations
                        logp, _ = batch_logprobs(adapter.model, [encoded[j]], pad)
                        logp = logp[0]
                        ratio = torch.exp(logp - old[j])
                        adv = float(advantages[j])
                        surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - clip_range, 1 + clip_range) * adv)
                        q = ref[j] - logp
                        kl = torch.exp(q) - q - 1
                        loss = (-surrogate.sum() + kl_coef * kl.sum()) / count
                        sums["loss"] += float(loss.detach())
                        sums["kl"] += float(kl.detach().sum())
                        sums["clipped"] += float(((ratio.detach() - 1).abs() > clip_range).sum())
                        yield loss

                adapter.step(losses())
                steps += 1
                total += sums["loss"] * count
                kl_total += sums["kl"]
                clipped += sums["clipped"]
                counted += count
                weight += count
            epoch_losses.append(total / weight)
            kl_last = kl_total / weight
    targets = sum(e.targets for e in encoded)
    return PGResult(
        epoch_losses[0],
        epoch_losses[-1],
        kl_last,
        clipped / counted if counted else 0.0,
        sum(len(e.ids) for e in encoded) * epochs,
        targets * epochs,
        steps,
    )


class RLLoRAAgent(LearningAgent):
    """Test-time RL of a LoRA adapter on the agent's own stream (see the module docstring).

    ``reward_weights``: weight per reward component (missing components weigh 0; default: every
    component 1, death -1). ``invalid_penalty`` / ``malformed_penalty``: subtracted for a command the
    engine refused / a reply without a usable action. ``gamma``, ``horizon``: discount and how many later
    rewards a return waits for. ``update_every``: ready transitions per update. ``baseline_decay``: of the
    running baseline. ``normalize_advantages``: divide advantages by their standard deviation in the batch.
    ``kl_coef``: weight of the KL to the frozen base model. ``clip_range``: PPO's epsilon.
    """

    name = "rl_lora"
    default_learning_rate = 1e-5
    default_epochs = 1
    default_lora_dropout = 0.0  # dropout would make the ratio of the first step differ from 1

    def __init__(
        self,
        llm: LLM,
        *,
        reward_weights: Mapping[str, float] | None = None,
        invalid_penalty: float = 0.1,
        malformed_penalty: float = 0.5,
        gamma: float = 0.9,
        horizon: int = 4,
        update_every: int = 4,
        baseline_decay: float = 0.9,
        normalize_advantages: bool = False,
        kl_coef: float = 0.05,
        clip_range: float = 0.2,
        **kwargs: Any,
    ):
        weights = dict(DEFAULT_REWARD_WEIGHTS if reward_weights is None else reward_weights)
        unknown = sorted(set(weights) - set(COMPONENTS))
        if unknown:
            raise AdapterConfigError(
                f"reward_weights has unknown component(s) {', '.join(unknown)}; the components "
                f"are {', '.join(COMPONENTS)}"
            )
        self.reward_weights = {k: float(weights[k]) for k in COMPONENTS if k in weights}
        self.invalid_penalty, self.malformed_penalty = float(invalid_penalty), float(malformed_penalty)
        self.gamma, self.horizon, self.update_every = float(gamma), int(horizon), int(update_every)
        self.baseline_decay, self.normalize_advantages = float(baseline_decay), bool(normalize_advantages)
        self.kl_coef, self.clip_range = float(kl_coef), float(clip_range)
        checks = (
            ("gamma", 0.0 <= self.gamma <= 1.0, "in [0, 1]"),
            ("horizon", self.horizon >= 0, "at least 0"),
            ("update_every", self.update_every >= 1, "at least 1"),
            ("baseline_decay", 0.0 <= self.baseline_decay < 1.0, "in [0, 1)"),
            ("kl_coef", self.kl_coef >= 0, "at least 0"),
            ("clip_range", self.clip_range > 0, "positive"),
        )
        for key, ok, what in checks:
            if not ok:
                raise AdapterConfigError(f"{key} must be {what}, got {getattr(self, key)}")
        super().__init__(llm, **kwargs)

    def _clear_learning(self) -> None:
        self.transitions: list[dict[str, Any]] = []  # {"example", "malformed", "reward"} in step order
        self.baseline: float | None = None
        self.rewards_seen = 0
        self.reward_total = 0.0

    def _acted(self, messages: list[dict[str, str]], completion: Completion, reply: Reply) -> None:
        example = ChatExample(self.steps, [dict(m) for m in messages], completion.text)
        self.transitions.append({"example": example, "malformed": not reply.ok, "reward": None})

    def reward(self, info: Mapping[str, Any], malformed: bool) -> float:
        """The scalar reward of an action from the step ``info`` it produced."""
        breakdown = info.get("reward_breakdown") or {}
        r = sum(w * float(breakdown.get(k, 0)) for k, w in self.reward_weights.items())
        if info.get("invalid_action"):
            r -= self.invalid_penalty
        if malformed:
            r -= self.malformed_penalty
        return r

    def _learn(self, info: Mapping[str, Any]) -> TrainRecord | None:
        if self.transitions and self.transitions[-1]["reward"] is None and "reward_breakdown" in info:
            last = self.transitions[-1]
            last["reward"] = self.reward(info, last["malformed"])
            self.rewards_seen += 1
            self.reward_total += last["reward"]
        rewarded = [t for t in self.transitions if t["reward"] is not None]
        ready = len(rewarded) - self.horizon
        if ready < self.update_every:
            return None
        start = time.perf_counter()
        batch = self.transitions[:ready]
        returns = []
        for i in range(ready):
            future = rewarded[i : i + self.horizon + 1]
            returns.append(sum(self.gamma**k * t["reward"] for k, t in enumerate(future)))
        base = self.baseline if self.baseline is not None else 0.0
        advantages = [g - base for g in returns]
        if self.normalize_advantages and len(advantages) > 1:
            mean = sum(advantages) / len(advantages)
            spread = math.sqrt(sum((a - mean) ** 2 for a in advantages) / (len(advantages) - 1))
            advantages = [a / (spread + 1e-8) for a in advantages]
        encoded = [encode(self.model_llm, t["example"], loss_on="reply", max_len=self.max_seq_len) for t in batch]
        result = policy_gradient_update(
            self.adapter,
            encoded,
            advantages,
            epochs=self.epochs,
            batch_size=self.batch_size,
            clip_range=self.clip_range,
            kl_coef=self.kl_coef,
            update=self.updates + 1,
        )
        trained, context = role_counts(encoded)
        mean_return = sum(returns) / len(returns)
        self.baseline = (
            mean_return
            if self.baseline is None
            else (self.baseline_decay * self.baseline + (1 - self.baseline_decay) * mean_return)
        )
        del self.transitions[:ready]
        rewards = [t["reward"] for t in batch]
        return self._record(
            len(batch),
            result.tokens,
            result.target_tokens,
            result.loss,
            result.final_loss,
            start,
            steps=[t["example"].step for t in batch],
            reward_mean=_r(sum(rewards) / len(rewards)),
            return_mean=_r(mean_return),
            advantage_mean=_r(sum(advantages) / len(advantages)),
            baseline=_r(base),
            kl=_r(result.kl),
            clip_fraction=_r(result.clip_fraction),
            optimizer_steps=result.optimizer_steps,
            trained=trained,
            context=context,
        )

    def _learning_state(self) -> dict[str, Any]:
        return {
            "transitions": [{**t, "example": t["example"].to_dict()} for t in self.transitions],
            "baseline": self.baseline,
            "rewards_seen": self.rewards_seen,
            "reward_total": self.reward_total,
        }

    def _set_learning_state(self, state: dict[str, Any]) -> None:
        self.transitions = [{**t, "example": ChatExample.from_dict(t["example"])} for t in state["transitions"]]
        self.baseline = state["baseline"]
        self.rewards_seen, self.reward_total = int(state["rewards_seen"]), float(state["reward_total"])

    def _learning_description(self) -> dict[str, Any]:
        return {
            "reward_weights": self.reward_weights,
            "invalid_penalty": self.invalid_penalty,
            "malformed_penalty": self.malformed_penalty,
            "gamma": self.gamma,
            "horizon": self.horizon,
            "update_every": self.update_every,
            "baseline_decay": self.baseline_decay,
            "normalize_advantages": self.normalize_advantages,
            "kl_coef": self.kl_coef,
            "clip_range": self.clip_range,
        }

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        out["training"].update(
            rewards_seen=self.rewards_seen,
            reward_total=_r(self.reward_total),
            baseline=None if self.baseline is None else _r(self.baseline),
        )
        return out


def _r(x: float) -> float:
    return float(f"{x:.6g}")
