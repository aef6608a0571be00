"""A seeded random player's statistics on the reference engine: ``episode_stats.py GAME SEED STEPS [notutorial]``.

The player (``random.Random(seed)``) picks a verb among those with valid actions, then one of that verb's
valid actions, as ``benchmarks/fidelity_games.py`` does on odyssey. Emitted: rewards summed by kind
(exploration, craft, unique kills as "defeat", trade, quest, side quest), deaths, the share of steps
flagged invalid, of steps whose feedback is a refusal ("Cannot ..."), valid actions per step, observation
length, steps spent in the tutorial room, and main-quest stages reached. ``notutorial`` plays a private copy
of the game's world definition without ``"tutorial"`` in its ``custom_events`` (the reference's own switch).
"""

from __future__ import annotations

import random
import sys

import refgame
from refgame import AGENT_ID, emit, make_env


def main() -> None:
    game, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if "notutorial" in sys.argv[4:]:
        refgame.without_tutorial(game)
    env, _ = make_env(game, seed)
    observations = env.reset()
    rng = random.Random(seed)
    totals = {k: 0.0 for k in ("exploration", "craft", "defeat", "trade", "quest", "side_quest", "death")}
    invalid = failed = tutorial = 0
    n_valid = obs_len = 0
    for _ in range(steps):
        listing = observations[AGENT_ID]["valid_actions"]
        n_valid += sum(len(c) for c in listing.values())
        verb = rng.choice([verb for verb, commands in listing.items() if commands])
        aux = env.world.auxiliary.get("tutorial_room") or {}
        in_tutorial = (
            bool(aux)
            and not aux.get("removed", False)
            and env.curr_agents_state["area"][AGENT_ID] == aux.get("area_id")
        )
        tutorial += in_tutorial
        observations, rewards, terminated, info = env.step({AGENT_ID: rng.choice(listing[verb])})
        r = rewards[AGENT_ID]
        totals["exploration"] += r.exploration
        totals["craft"] += r.craft
        totals["defeat"] += r.unique_kill
        totals["trade"] += r.trade
        totals["quest"] += r.quest
        totals["side_quest"] += r.side_quest
        totals["death"] += r.death
        text = observations[AGENT_ID]["text"]
        obs_len += len(text)
        flagged = bool(info.get("step_invalid_action", {}).get(AGENT_ID))
        invalid += flagged
        failed += (not flagged) and "Cannot " in text
        if terminated:
            break
    emit(
        {
            "engine": "reference",
            "game": game,
            "seed": seed,
            "steps": steps,
            **totals,
            "invalid_rate": invalid / steps,
            "failed_rate": failed / steps,
            "valid_actions": n_valid / steps,
            "obs_chars": obs_len / steps,
            "tutorial_steps": tutorial,
        }
    )


if __name__ == "__main__":
    main()
