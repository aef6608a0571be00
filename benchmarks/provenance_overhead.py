"""What the provenance tracker costs: ``python benchmarks/provenance_overhead.py [games] [--baseline SRC]``.

For each game, one fixed command sequence (a seeded random walk over valid actions, recorded once) is
replayed without computing valid actions, so the figures are the engine's step cost alone, in three
configurations:

* **off**: ``OdysseyEnv(game)``, the tracker off (the default);
* **on**: ``OdysseyEnv(game, provenance=True)``;
* **before** (with ``--baseline SRC``): the same replay with the ``odyssey_env`` found under ``SRC``,
  e.g. a checkout of the commit before the tracker existed: "off" against "before" is the cost of
  the tracker when it is off, which should be nothing but noise.

Each measurement runs in a fresh process; configurations are interleaved and repeated (``--repeats``)
and the best rate is kept, because this machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def record(game: str, steps: int, seed: int) -> list[str]:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, valid_actions=True)
    _, info = env.reset(seed=seed)
    rng = random.Random(seed)
    commands = []
    for _ in range(steps):
        va = info["valid_actions"]
        command = rng.choice(va[rng.choice(sorted(va))])
        commands.append(command)
        _, _, _, _, info = env.step(command)
    return commands


def worker(game: str, mode: str, commands_file: str, seed: int) -> dict:
    from odyssey_env.env import OdysseyEnv

    commands = json.loads(Path(commands_file).read_text())
    env = OdysseyEnv(game, provenance=True) if mode == "on" else OdysseyEnv(game)
    env.reset(seed=seed)
    start = time.perf_counter()
    for command in commands:
        env.step(command)
    seconds = time.perf_counter() - start
    out = {"steps_per_s": len(commands) / seconds}
    if mode == "on":
        g = env.dependency_graph()
        out.update(nodes=len(g["nodes"]), edges=len(g["edges"]))
    return out


def _run(game: str, mode: str, commands_file: str, seed: int, src: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            game,
            "--worker",
            mode,
            "--commands",
            commands_file,
            "--seed",
            str(seed),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=str(src),
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=["mossfall", "quiet_bell"])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", type=Path, help="a source tree with the odyssey_env to compare 'off' with")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--commands", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.games[0], args.worker, args.commands, args.seed)))
        return
    modes = {"off": HERE, "on": HERE}
    if args.baseline:
        modes = {"before": args.baseline.resolve(), **modes}
    print(
        f"{'game':10} "
        + " ".join(f"{m + ' steps/s':>15}" for m in modes)
        + f" {'off/before':>11} {'on/off':>8} {'graph':>16}"
    )
    for game in args.games:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(record(game, args.steps, args.seed), f)
        best: dict[str, dict] = {}
        try:
            for _ in range(args.repeats):
                for mode, src in modes.items():
                    r = _run(game, mode, f.name, args.seed, src)
                    if mode not in best or r["steps_per_s"] > best[mode]["steps_per_s"]:
                        best[mode] = r
        finally:
            os.unlink(f.name)
        rate = {m: best[m]["steps_per_s"] for m in modes}
        vs_before = f"{rate['off'] / rate['before']:.3f}" if "before" in rate else "-"
        graph = f"{best['on']['nodes']} nodes {best['on']['edges']} edges"
        print(
            f"{game:10} "
            + " ".join(f"{rate[m]:>15,.0f}" for m in modes)
            + f" {vs_before:>11} {rate['on'] / rate['off']:>8.3f} {graph:>16}"
        )


if __name__ == "__main__":
    main()
