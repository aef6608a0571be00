"""Playing one episode with the oracle and summarising it: the solvability check of a game.

``python -m odyssey_agents.oracle mossfall tallowmere --seeds 0-9`` prints, per game and seed, the main-quest
stages completed, the steps used after the tutorial and inside it, and the decision time. CI and game
generators use :func:`solve` to prove that a game can be completed within the step budget.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from odyssey_agents.base import Task
from odyssey_agents.oracle.agent import OracleAgent

__all__ = ["Solution", "solve"]


@dataclass
class Solution:
    """What one oracle episode achieved."""

    game: str
    seed: int
    stages: int  # main-quest stages completed
    total: int  # main-quest stages in the game
    terminated: bool
    steps: int  # steps after the tutorial (the budgeted ones)
    tutorial_steps: int
    tutorial_completed: bool | None  # None: the game has no tutorial
    invalid: int  # invalid actions sent (should be 0)
    failed: int  # commands the state refused (should be 0)
    deaths: int
    decide_ms: float  # mean time per decision
    agent: dict[str, Any] = field(default_factory=dict)

    @property
    def solved(self) -> bool:
        return self.terminated and self.stages == self.total

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "solved": self.solved}


def solve(game: str, seed: int, *, budget: int = 500, tutorial: bool = True, max_tutorial_steps: int = 300) -> Solution:
    """Play ``game`` from ``seed`` with the oracle until the main quest ends or ``budget`` steps pass."""
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, tutorial=tutorial)
    obs, info = env.reset(seed=seed)
    agent = OracleAgent(env)
    agent.reset(Task(game=env.game.name, title=env.game.title, verbs=tuple(env.verbs()), seed=seed, max_steps=budget))
    has_tutorial = bool(info.get("in_tutorial"))
    steps = tutorial_steps = invalid = failed = 0
    tutorial_completed: bool | None = None if not has_tutorial else False
    thinking = 0.0
    terminated = False
    while not terminated and steps < budget and tutorial_steps < max_tutorial_steps:
        in_tutorial = bool(info.get("in_tutorial"))
        start = time.perf_counter()
        decision = agent.act(obs, {**info, "engine": env.engine})
        thinking += time.perf_counter() - start
        obs, _, terminated, _, info = env.step(decision.action)
        if in_tutorial:
            tutorial_steps += 1
        else:
            steps += 1
        invalid += bool(info["invalid_action"])
        failed += bool(info["action_failed"])
        for ev in info["events"]:
            if ev["kind"] == "tutorial_completed":
                tutorial_completed = bool(ev["completed"])
    quest = info.get("quest", {"completed": 0, "total": 0})
    assert env.engine is not None  # reset made it
    return Solution(
        game=env.game.name,
        seed=seed,
        stages=quest["completed"],
        total=quest["total"],
        terminated=terminated,
        steps=steps,
        tutorial_steps=tutorial_steps,
        tutorial_completed=tutorial_completed,
        invalid=invalid,
        failed=failed,
        deaths=env.engine.state.agents["player"].deaths,
        decide_ms=1000 * thinking / max(1, steps + tutorial_steps),
        agent=agent.stats(),
    )


def _seeds(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m odyssey_agents.oracle", description="Prove games solvable with the oracle agent."
    )
    parser.add_argument("games", nargs="+")
    parser.add_argument("--seeds", default="0-9", help="e.g. 0-9 or 0,3,7")
    parser.add_argument("--budget", type=int, default=500, help="steps allowed after the tutorial")
    args = parser.parse_args(argv)
    print(
        f"{'game':10s} {'seed':>4s} {'stages':>7s} {'steps':>5s} {'tutorial':>8s} {'deaths':>6s} "
        f"{'ms/step':>7s}  status"
    )
    unsolved = 0
    for game in args.games:
        for seed in _seeds(args.seeds):
            s = solve(game, seed, budget=args.budget)
            unsolved += not s.solved
            tut = "-" if s.tutorial_completed is None else f"{s.tutorial_steps}{'' if s.tutorial_completed else '!'}"
            status = "solved" if s.solved else "NOT SOLVED"
            if s.invalid or s.failed:
                status += f" ({s.invalid} invalid, {s.failed} refused)"
            if s.agent.get("corrected") or s.agent.get("stalls"):
                status += f" [{s.agent.get('corrected', 0)} corrected, {s.agent.get('stalls', 0)} stalls]"
            print(
                f"{s.game:10s} {seed:4d} {s.stages:>3d}/{s.total:<3d} {s.steps:5d} {tut:>8s} {s.deaths:6d} "
                f"{s.decide_ms:7.2f}  {status}"
            )
    return 1 if unsolved else 0
