"""TorchRL on odyssey's vector envs: a masked random rollout, then PPO, compared on held-out seeds.

    pip install -e ".[torchrl]"
    python examples/torchrl_ppo.py                        # Mossfall, 4 envs, 50k frames (minutes on a CPU)
    python examples/torchrl_ppo.py --frames 200000 --asynchronous

The env is ``gym.make_vec(id, n, autoreset_mode="Disabled", ...)``, TorchRL's preferred mode (it
resets finished sub-envs itself, through Gymnasium's ``reset_mask``), wrapped in TorchRL's own
``GymWrapper``. ``action_mask_observation=True`` puts the mask in the observation, where TorchRL's
``ActionMask`` transform reads it: the action spec's ``rand()`` is then the masked random agent, and
``MaskedCategorical`` the masked policy. ``minimal_info=True`` keeps ``info`` to fixed-shape entries.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import torch
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
from torchrl.envs import ActionMask, GymWrapper, TransformedEnv
from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator
from torchrl.objectives import ClipPPOLoss
from torchrl.objectives.value import GAE

import odyssey_env

#: Main quest + the paper's supplementary reward, one point each.
REWARD = {"quest": 1.0, "side_quest": 1.0, "exploration": 1.0, "craft": 1.0, "defeat": 1.0}


def make_env(game: str, n_envs: int, episode_steps: int, asynchronous: bool) -> TransformedEnv:
    envs = gym.make_vec(
        odyssey_env.env_id(game),
        num_envs=n_envs,
        autoreset_mode="Disabled",
        asynchronous=asynchronous,
        max_actions=128,
        observation="bag_of_words+state",
        action_mask_observation=True,
        minimal_info=True,
        reward_weights=REWARD,
        max_episode_steps=episode_steps,
    )
    return TransformedEnv(GymWrapper(envs, categorical_action_encoding=True), ActionMask())


def episode_returns(env: TransformedEnv, steps: int, seed: int, policy=None) -> torch.Tensor:
    """One whole episode per sub-env (they start together and end together at the step limit)."""
    env.set_seed(seed)
    with torch.no_grad():
        rollout = env.rollout(steps, policy, break_when_any_done=False)
    return rollout["next", "reward"].sum(dim=1).squeeze(-1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="mossfall", choices=odyssey_env.available_games())
    ap.add_argument("--n-envs", type=int, default=4)
    ap.add_argument("--frames", type=int, default=50_000, help="training frames (steps of all envs together)")
    ap.add_argument("--episode-steps", type=int, default=500, help="episode length (the paper's 500)")
    ap.add_argument("--frames-per-batch", type=int, default=1024)
    ap.add_argument("--asynchronous", action="store_true", help="step the envs in parallel processes")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    env = make_env(args.game, args.n_envs, args.episode_steps, args.asynchronous)
    try:
        start = time.perf_counter()
        random = episode_returns(env, args.episode_steps, seed=10_000)  # no policy: the masked action spec's rand()
        random_s = time.perf_counter() - start

        n_obs = env.observation_spec["observation"].shape[-1]
        n_act = env.action_spec.space.n
        body = nn.Sequential(nn.Linear(n_obs, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh())
        logits = TensorDictModule(nn.Sequential(body, nn.Linear(128, n_act)), ["observation"], ["logits"])
        as_bool = TensorDictModule(torch.Tensor.bool, ["action_mask"], ["valid"])  # MultiBinary comes as int8
        actor = ProbabilisticActor(
            TensorDictSequential(logits, as_bool),
            in_keys={"logits": "logits", "mask": "valid"},
            distribution_class=MaskedCategorical,
            spec=env.action_spec,
            return_log_prob=True,
        )
        critic = ValueOperator(
            nn.Sequential(nn.Linear(n_obs, 128), nn.Tanh(), nn.Linear(128, 1)), in_keys=["observation"]
        )
        loss = ClipPPOLoss(actor, critic, entropy_coeff=0.01)
        advantage = GAE(gamma=0.99, lmbda=0.95, value_network=critic, average_gae=True)
        optimiser = torch.optim.Adam(loss.parameters(), lr=3e-4)
        buffer = ReplayBuffer(storage=LazyTensorStorage(args.frames_per_batch), sampler=SamplerWithoutReplacement())
        collector = Collector(
            env,
            actor,
            frames_per_batch=args.frames_per_batch,
            total_frames=args.frames,
            auto_register_policy_transforms=False,
        )
        start = time.perf_counter()
        frames = 0
        for batch in collector:
            frames += batch.numel()
            with torch.no_grad():
                advantage(batch)
            buffer.extend(batch.reshape(-1))
            for _ in range(4):  # epochs
                for _ in range(args.frames_per_batch // 256):
                    parts = loss(buffer.sample(256))
                    total = parts["loss_objective"] + parts["loss_critic"] + parts["loss_entropy"]
                    optimiser.zero_grad()
                    total.backward()
                    nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
                    optimiser.step()
            collector.update_policy_weights_()
        train_s = time.perf_counter() - start
        collector.shutdown()
        trained = episode_returns(env, args.episode_steps, seed=10_000, policy=actor)
    finally:
        env.close()
    print(f"{args.game}, {args.n_envs} held-out episodes of {args.episode_steps} steps, reward = {REWARD}")
    print(f"masked random  return {random.mean():6.2f} ± {random.std(correction=0):.2f}")
    print(f"TorchRL PPO    return {trained.mean():6.2f} ± {trained.std(correction=0):.2f}")
    ratio = float(trained.mean() / max(float(random.mean()), 1e-9))
    print(
        f"PPO/random return: {ratio:.2f}x after {frames} frames ({train_s:.0f} s training, "
        f"{frames / train_s:.0f} frames/s; random rollout {random_s:.0f} s)"
    )


if __name__ == "__main__":
    main()
