"""Where an odyssey step goes, counted in Python bytecodes: ``python benchmarks/step_bytecodes.py [games...]``.

The throughput protocol of ``benchmarks/env_throughput.py`` (a seeded random player, valid actions every step,
N steps from reset), each bytecode the interpreter runs counted (``sys.settrace`` opcode events) against the
phase it runs in: the listing's own bookkeeping (fingerprints, the cache) and each verb's ``candidates``, the
parser, each verb's ``apply``, each step rule, the rest of ``Engine.step``, the observation, ``info`` and the
rest of ``env.step``. A count does not move with the machine's load, so shares and before-and-after checks
read the same on a busy machine as on a quiet one (``--steps`` at 500-1,000 takes seconds); what it does not
see is the cost of each bytecode: a builtin that copies a dict is one, as is a name load, so read it beside
``benchmarks/step_profile.py``'s microseconds or an instruction count (docs/engine.md, "Performance").
The phases are found by wrapping the engine's and the rules' methods on their instances, as step_profile does.
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

GROUPS = ("listing", "parse", "verb", "rule", "engine", "render", "info", "env", "protocol")


def count(game: str, steps: int, seed: int = 0) -> dict[str, float]:
    """Bytecodes per step in each phase (``group: name`` keys, e.g. ``rule: main_quest``), steps 0-``steps``."""
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game)
    env.reset(seed=seed)
    rng = random.Random(seed)
    engine = env.engine
    assert engine is not None
    counts: collections.Counter[str] = collections.Counter()
    phase = ["protocol"]

    def wrap(owner: Any, name: str, label: str, *, generator: bool = False) -> None:
        original = getattr(owner, name)

        def tagged(*args: Any, **kwargs: Any) -> Any:
            outer, phase[0] = phase[0], label
            try:
                return tuple(original(*args, **kwargs)) if generator else original(*args, **kwargs)
            finally:
                phase[0] = outer

        setattr(owner, name, tagged)

    for verb, rule in engine.rules.actions.items():
        wrap(rule, "candidates", f"listing: {verb}", generator=True)
        wrap(rule, "apply", f"verb: {verb}")
    for step_rule in engine.rules.steps:
        wrap(step_rule, "apply", f"rule: {step_rule.name}")
    wrap(engine, "_parse", "parse: parse")
    wrap(env, "_observe", "render: render")
    wrap(env, "_info", "info: info")
    wrap(engine, "valid_actions", "listing: (cache)")
    wrap(engine, "step", "engine: rest")
    wrap(env, "step", "env: rest")

    def on_opcode(frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        if event == "opcode":
            counts[phase[0]] += 1
        return on_opcode

    def on_call(frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        frame.f_trace_opcodes = True
        return on_opcode

    sys.settrace(on_call)
    try:
        for _ in range(steps):
            listing = env.valid_actions()
            verb = rng.choice([v for v, commands in listing.items() if commands])
            _, _, terminated, truncated, _ = env.step(rng.choice(listing[verb]))
            if terminated or truncated:
                raise SystemExit(f"{game}: an episode ended within {steps} steps; count fewer steps")
    finally:
        sys.settrace(None)
    return {key: n / steps for key, n in counts.items()}


def summary(game: str, per_step: dict[str, float], top: int) -> str:
    total = sum(per_step.values())
    groups: collections.Counter[str] = collections.Counter()
    for key, n in per_step.items():
        groups[key.split(":")[0]] += int(n)
    lines = [
        f"{game}: {total:,.0f} bytecodes a step; " + ", ".join(f"{g} {n / total:.0%}" for g, n in groups.most_common())
    ]
    for group in ("listing", "rule", "verb"):
        mine = sorted(
            ((k.split(": ", 1)[1], n) for k, n in per_step.items() if k.startswith(group + ":")), key=lambda kv: -kv[1]
        )
        lines.append(f"  {group:8} " + ", ".join(f"{k} {n:,.0f}" for k, n in mine[:top]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=["mossfall"])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=8, help="costliest listings, step rules and verbs shown per game")
    args = parser.parse_args(argv)
    for game in args.games:
        print(summary(game, count(game, args.steps, args.seed), args.top), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
