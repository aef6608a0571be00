"""The throughput protocol on the reference engine: ``throughput.py GAME STEPS SEED [CHECKPOINT...]``.

A seeded random player picks a verb among those with valid actions, then one of that verb's valid
actions; the reference lists them in every observation (``enable_obs_valid_actions``), so valid actions
are computed every step. Emits the CPU seconds (user + system, this process) of steps 0..STEPS from reset
and at each checkpoint, the reset's CPU seconds, and how many episodes ended (a finished main quest
starts a fresh env with the next seed, inside the timed loop, as odyssey's side resets inside it).
``benchmarks/env_throughput.py`` runs the same protocol on odyssey.
"""

from __future__ import annotations

import random
import sys
import time

from refgame import AGENT_ID, emit, make_env


def main() -> None:
    game, steps, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    checkpoints = sorted({int(c) for c in sys.argv[4:] if 0 < int(c) < steps} | {steps})
    clock = time.process_time
    start = clock()
    env, _ = make_env(game, seed)
    observations = env.reset()
    reset_s = clock() - start
    rng = random.Random(seed)
    episodes, marks = 0, {}
    start = clock()
    for done_steps in range(1, steps + 1):
        listing = observations[AGENT_ID]["valid_actions"]
        verb = rng.choice([verb for verb, commands in listing.items() if commands])
        observations, _, terminated, _ = env.step({AGENT_ID: rng.choice(listing[verb])})
        if terminated:
            episodes += 1
            env, _ = make_env(game, seed + episodes)
            observations = env.reset()
        if done_steps in checkpoints:
            marks[done_steps] = clock() - start
    emit(
        {
            "engine": "reference",
            "game": game,
            "steps": steps,
            "cpu_s": marks[steps],
            "checkpoints_cpu_s": {str(k): v for k, v in sorted(marks.items())},
            "reset_cpu_s": reset_s,
            "episodes_ended": episodes,
        }
    )


if __name__ == "__main__":
    main()
