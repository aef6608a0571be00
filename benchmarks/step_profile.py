"""Where an odyssey step's time goes, per game: ``python benchmarks/step_profile.py [games...]``.

The throughput protocol of ``benchmarks/env_throughput.py`` (a seeded random player, valid actions every
step, N steps from reset), run once per game in a fresh process with the engine's own methods wrapped on
their instances, so the env steps as it does for its users. Microseconds per step (``perf_counter``: the
wrappers cost about 0.1 us each, and on a loaded machine preemption shows in every phase alike):

* **listing**: ``env.valid_actions()``, and inside it each verb's ``candidates`` (the rest is the cache's
  own bookkeeping: fingerprints, copies);
* **parse**: the engine's command parser (remembered per text);
* **verb**: the verb's ``apply``;
* **step rules**: each step rule's ``apply``, the game's own rules (``odyssey_env/games/<game>/rules.py``)
  marked ``*``;
* **engine, rest**: the rest of ``Engine.step`` (clock, turn set-up, rewards, outcomes);
* **render**: the observation text; **info**: the ``info`` dict; **env, rest**: the rest of ``env.step``.

``--top N`` lists the costliest verbs' listings and step rules; ``--cprofile N`` adds cProfile's N
functions of most own time (cProfile slows every call, and small functions most).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

PHASES = ("listing", "parse", "verb", "step rules", "engine, rest", "render", "info", "env, rest")


def _wrap(owner: Any, name: str, sink: dict[str, float], key: str, *, generator: bool = False) -> None:
    """Time ``owner.name`` into ``sink[key]``; a ``generator`` is drained inside the timing (a verb's
    ``candidates`` yields its commands: calling it alone costs nothing)."""
    original = getattr(owner, name)
    clock = time.perf_counter

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return tuple(original(*args, **kwargs)) if generator else original(*args, **kwargs)
        finally:
            sink[key] += clock() - start

    setattr(owner, name, timed)


def worker(game: str, steps: int, seed: int, top_functions: int) -> dict[str, Any]:
    from odyssey_env.env import OdysseyEnv

    # first, while no method is wrapped (the wrappers stay on the game's shared rule objects)
    profiled = _cprofile(game, steps, seed, top_functions) if top_functions else None
    env = OdysseyEnv(game)
    env.reset(seed=seed)
    rules = env.engine.rules
    spent: dict[str, float] = defaultdict(float)
    candidates: dict[str, float] = defaultdict(float)
    verbs: dict[str, float] = defaultdict(float)
    step_rules: dict[str, float] = defaultdict(float)
    own = f"odyssey_env.games.{game}."
    for verb, rule in rules.actions.items():
        _wrap(rule, "candidates", candidates, verb, generator=True)
        _wrap(rule, "apply", verbs, verb)
    for rule in rules.steps:
        mark = "*" if type(rule).__module__.startswith(own) else ""
        _wrap(rule, "apply", step_rules, f"{rule.name}{mark}")
    engine = env.engine
    _wrap(engine, "_parse", spent, "parse")
    _wrap(engine, "step", spent, "engine")
    _wrap(env, "_observe", spent, "render")
    _wrap(env, "_info", spent, "info")
    rng = random.Random(seed)
    clock = time.perf_counter
    for _ in range(steps):
        start = clock()
        listing = env.valid_actions()
        middle = clock()
        verb = rng.choice([v for v, commands in listing.items() if commands])
        command = rng.choice(listing[verb])
        before = clock()
        _, _, terminated, truncated, _ = env.step(command)
        end = clock()
        spent["listing"] += middle - start
        spent["env"] += end - before
        if terminated or truncated:
            raise SystemExit(f"{game}: an episode ended within {steps} steps; profile fewer steps")
    per_step = 1e6 / steps
    phases = {
        "listing": spent["listing"],
        "parse": spent["parse"],
        "verb": sum(verbs.values()),
        "step rules": sum(step_rules.values()),
        "render": spent["render"],
        "info": spent["info"],
    }
    phases["engine, rest"] = spent["engine"] - phases["parse"] - phases["verb"] - phases["step rules"]
    phases["env, rest"] = spent["env"] - spent["engine"] - phases["render"] - phases["info"]
    result: dict[str, Any] = {
        "game": game,
        "steps": steps,
        "phases_us": {k: phases[k] * per_step for k in PHASES},
        "candidates_us": {k: v * per_step for k, v in sorted(candidates.items(), key=lambda kv: -kv[1])},
        "verbs_us": {k: v * per_step for k, v in sorted(verbs.items(), key=lambda kv: -kv[1])},
        "step_rules_us": {k: v * per_step for k, v in sorted(step_rules.items(), key=lambda kv: -kv[1])},
    }
    if profiled:
        result["cprofile"] = profiled
    return result


def _cprofile(game: str, steps: int, seed: int, top: int) -> str:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game)
    env.reset(seed=seed)
    rng = random.Random(seed)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(steps):
        listing = env.valid_actions()
        verb = rng.choice([v for v, commands in listing.items() if commands])
        env.step(rng.choice(listing[verb]))
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("tottime").print_stats(top)
    root = str(Path(__file__).resolve().parents[1]) + os.sep
    return "\n".join(line.replace(root, "") for line in out.getvalue().splitlines() if line.strip()[:1].isdigit())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=4, help="costliest listings and step rules shown per game")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="cProfile's top N functions per game")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.steps, args.seed, args.cprofile)))
        return 0
    from odyssey_env import available_games

    rows = []
    for game in args.games or available_games():
        command = [sys.executable, __file__, "--worker", game, "--steps", str(args.steps), "--seed", str(args.seed)]
        command += ["--cprofile", str(args.cprofile)]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout))
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"us per step, steps 0-{args.steps:,} from reset (seed {args.seed}), valid actions every step")
    header = f"{'game':<13}" + "".join(f"{p:>14}" for p in PHASES) + f"{'total':>8}"
    print(header)
    for row in rows:
        phases = row["phases_us"]
        total = sum(phases.values())
        print(f"{row['game']:<13}" + "".join(f"{phases[p]:>14.1f}" for p in PHASES) + f"{total:>8.1f}")
    for row in rows:
        print(f"\n{row['game']}:")
        for title, key in (("listing", "candidates_us"), ("verbs", "verbs_us"), ("step rules", "step_rules_us")):
            items = list(row[key].items())[: args.top]
            print(f"  {title:<11}" + ", ".join(f"{name} {us:.1f}" for name, us in items))
        if row.get("cprofile"):
            print("  cProfile, most own time (ncalls tottime percall cumtime percall where):")
            print("\n".join("    " + line for line in row["cprofile"].splitlines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
