"""MaskablePPO (sb3-contrib) on an odyssey game, against a masked random agent, with no glue code.

    pip install -e ".[sb3]"
    python examples/sb3_maskable_ppo.py                        # Mossfall, 4 envs, 50k steps (minutes on a CPU)
    python examples/sb3_maskable_ppo.py --timesteps 200000 --asynchronous --action-features

Everything RL-specific comes from keywords of ``gym.make`` / ``gym.make_vec``: ``max_actions=128`` gives
a ``Discrete(128)`` action space over the valid commands with ``action_masks()``,
``observation="bag_of_words+state"`` a numeric observation, ``action_features=True`` one row per action
slot saying what it is (a ``Dict`` observation, hence ``MultiInputPolicy``). The reward is the main
quest plus the paper's supplementary reward (side quests, new areas, new crafts, new defeats).
Both agents are then scored on the same held-out seeds; the last lines compare them.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import numpy as np
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor

import odyssey_env
from odyssey_env.sb3 import make_sb3_vec_env

#: Main quest + the paper's supplementary reward, one point each.
REWARD = {"quest": 1.0, "side_quest": 1.0, "exploration": 1.0, "craft": 1.0, "defeat": 1.0}
COMPONENTS = ("quest", "side_quest", "exploration", "craft", "defeat")


def evaluate(env: gym.Env, act: Callable[[object, np.ndarray], int], seeds: list[int]) -> dict[str, float]:
    """Mean return and reward components over one episode per seed."""
    totals = {"return": [], **{c: [] for c in COMPONENTS}, "invalid": []}
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        episode = dict.fromkeys(totals, 0.0)
        done = False
        while not done:
            obs, reward, terminated, truncated, info = env.step(act(obs, info["action_mask"]))
            episode["return"] += float(reward)
            episode["invalid"] += info["invalid_action"]
            for c in COMPONENTS:
                episode[c] += info["reward_breakdown"][c]
            done = terminated or truncated
        for key, value in episode.items():
            totals[key].append(value)
    return {key: float(np.mean(values)) for key, values in totals.items()} | {
        "return_std": float(np.std(totals["return"]))
    }


def line(name: str, stats: dict[str, float]) -> str:
    parts = ", ".join(f"{c} {stats[c]:.2f}" for c in COMPONENTS)
    spread = f"{stats['return']:6.2f} ± {stats['return_std']:.2f}"
    return f"{name:<14} return {spread}  ({parts}; invalid {stats['invalid']:.0f})"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="mossfall", choices=odyssey_env.available_games())
    ap.add_argument("--n-envs", type=int, default=4)
    ap.add_argument("--timesteps", type=int, default=50_000)
    ap.add_argument("--episode-steps", type=int, default=500, help="episode length (the paper's 500)")
    ap.add_argument("--eval-episodes", type=int, default=8)
    ap.add_argument("--n-steps", type=int, default=256, help="rollout length per env between updates")
    ap.add_argument("--action-features", action="store_true", help="one row per action slot in the observation")
    ap.add_argument("--asynchronous", action="store_true", help="step the envs in parallel processes")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    ident = odyssey_env.env_id(args.game)
    kwargs = {
        "max_actions": 128,
        "observation": "bag_of_words+state",
        "action_features": args.action_features,
        "reward_weights": REWARD,
        "max_episode_steps": args.episode_steps,
    }
    seeds = [10_000 + i for i in range(args.eval_episodes)]  # held out: training resets draw from args.seed
    env = gym.make(ident, **kwargs)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    random_stats = evaluate(env, lambda obs, mask: int(rng.choice(np.flatnonzero(mask))), seeds)
    random_s = time.perf_counter() - start

    venv = VecMonitor(make_sb3_vec_env(ident, args.n_envs, seed=args.seed, asynchronous=args.asynchronous, **kwargs))
    policy = "MultiInputPolicy" if args.action_features else "MlpPolicy"
    model = MaskablePPO(
        policy, venv, n_steps=args.n_steps, batch_size=256, ent_coef=0.01, seed=args.seed, device="cpu", verbose=0
    )
    start = time.perf_counter()
    try:
        model.learn(args.timesteps)
    finally:
        venv.close()
    train_s = time.perf_counter() - start

    def policy(deterministic: bool) -> Callable[[object, np.ndarray], int]:
        return lambda obs, mask: int(model.predict(obs, action_masks=mask, deterministic=deterministic)[0])

    ppo_stats = evaluate(env, policy(False), seeds)
    greedy_stats = evaluate(env, policy(True), seeds)
    print(f"{args.game}, {args.eval_episodes} held-out episodes of {args.episode_steps} steps, reward = {REWARD}")
    print(line("masked random", random_stats))
    print(line("MaskablePPO", ppo_stats))
    print(line("  greedy", greedy_stats))
    print(
        f"MaskablePPO/random return: {ppo_stats['return'] / max(random_stats['return'], 1e-9):.2f}x after "
        f"{model.num_timesteps} steps ({train_s:.0f} s training, {model.num_timesteps / train_s:.0f} steps/s; "
        f"random evaluation {random_s:.0f} s)"
    )


if __name__ == "__main__":
    main()
