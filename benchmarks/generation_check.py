"""The rule-language issue's own acceptance check of ``odyssey generate``, on themes and seeds no test names.

For each theme line and each of two seeds, ``odyssey generate THEME --action-rules 2 --step-rules 2`` runs
offline in a fresh process, as a user would type it (its own validation included), and the folder it
writes is then checked here, independently of that validation:

* ``no code``: the folder holds no ``.py`` file;
* ``invents``: ``rules.json`` declares at least two verbs and two step rules, none of them named like a
  built-in verb (``odyssey_env.rules.BASE_VERBS`` / ``OPTIONAL_VERBS``) or engine dynamic
  (``odyssey_env.steprules.order.ENGINE_STEP_ORDER``);
* ``verbs used``: each new verb succeeds (listed, sent, neither invalid nor refused) at least once in the
  oracle's play or in a seeded random player's (a random verb, then one of its valid commands);
* ``solved``: the oracle completes every main-quest stage within the budget, on every play seed;
* ``seeds differ``: the two seeds of a theme declare different sets of verbs and step rules.

    python benchmarks/generation_check.py                  # the built-in themes, seeds 731 and 1907
    python benchmarks/generation_check.py --themes "a salt marsh of eel trappers" --seeds 5 6

Exit status 1 when any check fails. The themes and seeds below are chosen to be absent from ``tests/``
(``grep`` for them); pass your own to check lines nobody has tried.
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

THEMES = (
    "a lighthouse archipelago of storm keepers",
    "a salt marsh of eel trappers and peat cutters",
    "a flooded canal town of lantern makers",
    "a mountain vineyard of feuding vintners",
    "an apiary valley where beekeepers guard the queen's wax",
    "a clockwork foundry beneath a mining town",
    "a glacier monastery of ice carvers",
    "an ash-covered volcano colony of smiths",
    "a jungle river delta of herbalists and smugglers",
    "a cursed orchard of cider witches",
)
SEEDS = (731, 1907)


def _generate(theme: str, seed: int, out: Path) -> tuple[bool, str, float]:
    cli = Path(sys.executable).with_name("odyssey")
    command = [str(cli)] if cli.exists() else [sys.executable, "-m", "odyssey_eval.cli"]
    command += ["generate", theme, "--name", out.name, "--seed", str(seed), "--out", str(out)]
    command += ["--action-rules", "2", "--step-rules", "2", "--quiet"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    return done.returncode == 0, (done.stdout + done.stderr).strip(), time.perf_counter() - start


def _verb_of(command: str, listing: dict[str, list[str]]) -> str | None:
    return next((verb for verb, commands in listing.items() if command in commands), None)


def _play_oracle(folder: Path, seed: int, budget: int, new: set[str]) -> tuple[bool, str, set[str]]:
    from odyssey_agents.base import Task
    from odyssey_agents.oracle.agent import OracleAgent
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(str(folder), tutorial=False)
    obs, info = env.reset(seed=seed)
    agent = OracleAgent(env)
    agent.reset(Task(game=env.game.name, title=env.game.title, verbs=tuple(env.verbs()), seed=seed, max_steps=budget))
    used: set[str] = set()
    terminated, steps = False, 0
    while not terminated and steps < budget:
        listing = env.valid_actions() if new else {}
        action = str(agent.act(obs, {**info, "engine": env.engine}).action)
        obs, _, terminated, _, info = env.step(action)
        steps += 1
        if not (info["invalid_action"] or info["action_failed"]):
            verb = _verb_of(action, listing)
            if verb in new:
                used.add(verb)
    quest = info["quest"]
    solved = terminated and quest["completed"] == quest["total"]
    return solved, f"{quest['completed']}/{quest['total']} in {steps}", used


def _play_random(folder: Path, seed: int, steps: int, new: set[str]) -> set[str]:
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(str(folder), tutorial=False)
    env.reset(seed=seed)
    rng = random.Random(seed)
    used: set[str] = set()
    for _ in range(steps):
        listing = {verb: commands for verb, commands in env.valid_actions().items() if commands}
        verb = rng.choice(sorted(listing))
        command = rng.choice(listing[verb])
        _, _, terminated, truncated, info = env.step(command)
        if verb in new and not (info["invalid_action"] or info["action_failed"]):
            used.add(verb)
        if terminated or truncated:
            env.reset(seed=rng.randrange(2**31))
    return used


def check(theme: str, seed: int, folder: Path, args: argparse.Namespace) -> dict:
    from odyssey_env.rules import BASE_VERBS, OPTIONAL_VERBS
    from odyssey_env.steprules.order import ENGINE_STEP_ORDER

    ok, output, seconds = _generate(theme, seed, folder)
    row: dict = {"theme": theme, "seed": seed, "generate_s": round(seconds, 1), "generated": ok}
    if not ok:
        row["error"] = output[-2000:]
        return row
    row["no_code"] = not any(folder.rglob("*.py"))
    rules = json.loads((folder / "rules.json").read_text(encoding="utf-8")) if (folder / "rules.json").exists() else {}
    verbs = [v["verb"] for v in rules.get("verbs", ())]
    steps = [r["name"] for r in rules.get("step_rules", ())]
    builtin = (set(BASE_VERBS) | set(OPTIONAL_VERBS)) | set(ENGINE_STEP_ORDER)
    row["verbs"], row["step_rules"] = verbs, steps
    row["invents"] = len(verbs) >= 2 and len(steps) >= 2 and not (set(verbs) | set(steps)) & builtin
    used: set[str] = set()
    solved = []
    for play_seed in range(args.play_seeds):
        ok_seed, summary, by_oracle = _play_oracle(folder, play_seed, args.budget, set(verbs))
        solved.append(summary)
        used |= by_oracle
        row.setdefault("solved", True)
        row["solved"] &= ok_seed
    row["oracle"] = solved
    row["verbs_by_oracle"] = sorted(used)
    missing = set(verbs) - used
    if missing:
        used |= _play_random(folder, 0, args.random_steps, missing)
    row["verbs_used"] = sorted(used)
    row["all_verbs_used"] = set(verbs) <= used
    return row


CHECKS = ("generated", "no_code", "invents", "all_verbs_used", "solved")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--themes", nargs="+", default=list(THEMES))
    parser.add_argument("--seeds", nargs=2, type=int, default=list(SEEDS), metavar=("A", "B"))
    parser.add_argument("--play-seeds", type=int, default=3, help="oracle episodes per game (seeds 0..N-1)")
    parser.add_argument("--budget", type=int, default=500, help="oracle steps per episode")
    parser.add_argument("--random-steps", type=int, default=2000, help="random play for verbs the oracle left")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rows, failed = [], 0
    with tempfile.TemporaryDirectory(prefix="odyssey-gencheck-") as tmp:
        for i, theme in enumerate(args.themes):
            pair = [check(theme, seed, Path(tmp) / f"theme{i}_seed{seed}", args) for seed in args.seeds]
            differ = {frozenset(r.get("verbs", ()) + r.get("step_rules", ())) for r in pair}
            for row in pair:
                row["seeds_differ"] = len(differ) == 2
                bad = [c for c in (*CHECKS, "seeds_differ") if not row.get(c)]
                failed += bool(bad)
                mark = "ok" if not bad else "FAILED: " + ", ".join(bad)
                print(
                    f"{row['theme'][:48]:48s} {row['seed']:>5d}  verbs {', '.join(row.get('verbs', ())):28s} "
                    f"steps {len(row.get('step_rules', ())):d}  oracle {'; '.join(row.get('oracle', ())):30s} "
                    f"{row['generate_s']:5.1f}s  {mark}",
                    flush=True,
                )
                if "error" in row:
                    print("    " + row["error"].replace("\n", "\n    "))
                rows.append(row)
    print(f"{len(rows) - failed}/{len(rows)} games pass every check")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
