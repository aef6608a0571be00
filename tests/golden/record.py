"""Record golden trajectories: ``python -m tests.golden.record [games...]`` (from the repository root).

A golden file freezes, for one game and seed, a command script and every observation, reward and flag
it produced. ``test_golden.py`` replays the script and compares, so no change alters a game's behaviour
without someone deciding to re-record (and the diff of the golden file shows what changed).

The script is recorded once from the oracle (tutorial included) and then kept as data: later changes to
the oracle do not touch it. Re-recording an existing game keeps its script and only refreshes the
observations; pass ``--new-script`` to draw a new script from the current oracle.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SEED = 0
STEPS = 160


def golden_path(game: str) -> Path:
    return HERE / f"{game}.jsonl"


def read(game: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    with golden_path(game).open(encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    return lines[0], lines[1:]


def play(game: str, seed: int, commands: list[str]) -> tuple[str, list[dict[str, Any]]]:
    """Replay ``commands``; return the first observation and one record per step."""
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, tutorial=True)
    first, _ = env.reset(seed=seed)
    records = []
    for command in commands:
        obs, reward, terminated, _, info = env.step(command)
        records.append(_record(command, obs, reward, terminated, info))
        if terminated:
            break
    return first, records


def _record(command: str, obs: str, reward: float, terminated: bool, info: dict[str, Any]) -> dict[str, Any]:
    return {
        "step": info["step"],
        "action": command,
        "observation": obs,
        "reward": reward,
        "breakdown": info["reward_breakdown"],
        "invalid": info["invalid_action"],
        "failed": info["action_failed"],
        "terminated": terminated,
    }


def oracle_script(game: str, seed: int, steps: int) -> list[str]:
    from odyssey_agents.base import Task
    from odyssey_agents.oracle import OracleAgent
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, tutorial=True)
    obs, info = env.reset(seed=seed)
    agent = OracleAgent(env)
    agent.reset(Task(game=game, title=env.game.title, verbs=tuple(env.verbs()), seed=seed))
    commands = []
    for _ in range(steps):
        command = agent.act(obs, {**info, "engine": env.engine}).action
        commands.append(command)
        obs, _, terminated, _, info = env.step(command)
        if terminated:
            break
    # A few malformed and refused commands, so the golden file pins their feedback too.
    odd = ["", "dance wildly", "store two coin pouch", 'write "unclosed', "enter the_moon"]
    return [*commands[:20], *odd, *commands[20:]]


def record(game: str, new_script: bool) -> None:
    path = golden_path(game)
    if path.exists() and not new_script:
        header, _ = read(game)
        commands = header["commands"]
    else:
        commands = oracle_script(game, SEED, STEPS)
    first, records = play(game, SEED, commands)
    header = {"game": game, "seed": SEED, "tutorial": True, "commands": commands, "first_observation": first}
    # One JSON object per line, so that a re-recording shows in a diff as the steps that changed.
    path.write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in [header, *records]), encoding="utf-8")
    print(f"{path.name}: {len(records)} steps")


def main(argv: list[str] | None = None) -> int:
    from odyssey_env import available_games

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*")
    parser.add_argument("--new-script", action="store_true")
    args = parser.parse_args(argv)
    for game in args.games or available_games():
        record(game, args.new_script)
    return 0


if __name__ == "__main__":
    sys.exit(main())
