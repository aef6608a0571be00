"""What the RL wrappers cost per step, as ratios to ``ValidActions`` alone, in the same run.

    python benchmarks/rl_wrappers.py                    # Mossfall, 3 rounds of 3 s per configuration
    python benchmarks/rl_wrappers.py --game quiet_bell --rounds 5 --seconds 5

Each configuration runs in a fresh process, the configurations interleaved round by round, a
masked random policy choosing the commands; the figure is the median steps per second of a
configuration over the baseline's in the same rounds (lower than 1.00: slower than the baseline).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CONFIGS: dict[str, dict] = {
    "valid actions (baseline)": {},
    "+ bag_of_words": {"observation": "bag_of_words"},
    "+ state": {"observation": "state"},
    "+ bag_of_words+state": {"observation": "bag_of_words+state"},
    "+ both + action_features": {"observation": "bag_of_words+state", "action_features": True},
    "+ both + features + mask obs": {
        "observation": "bag_of_words+state",
        "action_features": True,
        "action_mask_observation": True,
    },
}

_CHILD = """
import json, sys, time
import gymnasium as gym, numpy as np
game, seconds, kwargs = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
import odyssey_env
env = gym.make(odyssey_env.env_id(game), max_actions=128, max_episode_steps=-1, **kwargs)
rng = np.random.default_rng(0)
obs, info = env.reset(seed=0)
for _ in range(50):  # warm caches
    obs, _, done, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
steps, start = 0, time.perf_counter()
while time.perf_counter() - start < seconds:
    obs, _, done, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    steps += 1
    if done:
        obs, info = env.reset()
print(steps / (time.perf_counter() - start))
"""


def measure(game: str, seconds: float, kwargs: dict) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, game, str(seconds), json.dumps(kwargs)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="mossfall")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args(argv)
    rates: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for _ in range(args.rounds):
        for name, kwargs in CONFIGS.items():
            rates[name].append(measure(args.game, args.seconds, kwargs))
    baseline = rates["valid actions (baseline)"]
    print(f"{args.game}: {args.rounds} rounds of {args.seconds:g} s, masked random commands")
    for name, values in rates.items():
        ratio = statistics.median(v / b for v, b in zip(values, baseline, strict=True))
        print(f"  {name:<30} {statistics.median(values):8.0f} steps/s   {ratio:4.2f}x the baseline")


if __name__ == "__main__":
    main()
