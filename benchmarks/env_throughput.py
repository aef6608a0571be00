"""Env throughput side by side with the reference engine: ``python benchmarks/env_throughput.py [games...]``.

The protocol, the same for every engine: a seeded random player picks a verb among those with valid
actions, then one of that verb's valid actions; valid actions are listed every step; N steps from reset
(steps 0-2,000 and 0-6,000 by default, both read off one 6,000-step run); CPU time of the process (user +
system), so other load on a shared machine stretches wall-clock time but hardly the CPU a process spends.
Each measurement is a fresh process. Per game, the reference engine (PyPI ``agentodyssey==0.1.0``, run
from its wheel by ``benchmarks/reference.py``) and odyssey are run interleaved, ``--rounds`` times (3), the
order alternating; each round's ratio is odyssey's rate over the reference's in that round. The table
gives the median rates and the median ratio with its range over the rounds. No figure comes from another
run or another machine.

Each odyssey game is set against the reference game of the same size it was made beside
(``mossfall``/``base``, ``quiet_bell``/``remnant``, ...); ``--pair REF=GAME`` sets another (a paper game
imported into odyssey, say). Either name selects a pair on the command line.

How each engine runs: odyssey's ``OdysseyEnv(game)`` with its defaults (no tutorial); the reference's
``AgentOdysseyEnv`` as its ``eval.py`` builds it (``enable_obs_valid_actions``; its tutorial where the game
has one), with its logging off and, having only its three declared dependencies, without the goal-tree
PNGs its DAG games draw when matplotlib and networkx are installed: both make the reference faster than
as it usually runs, never slower. Its world generation needs a fixed hash seed: ``PYTHONHASHSEED=0`` for
both engines.

Optional text-game peer: TextWorld 1.7.0 (``--textworld``, with ``pip install textworld==1.7.0`` in this
interpreter or the one named by ``--textworld-python``): a ``tw-make custom --world-size 10 --nb-objects 20
--quest-length 5`` game (made once into the cache), its admissible commands every step, a command's verb
its first word, stepped interleaved with ``--textworld-against`` (mossfall). Skipped with a line when
TextWorld is not installed.

``--details`` adds odyssey's own figures per game, measured in its worker: steps/s without valid actions
(the same commands replayed), reset time, peak RSS, drift (the last 1,000 steps' cost over the first
1,000's) and where a step goes (listing, engine step, rendering, info, the rest of ``env.step``).
``--json`` prints everything as JSON. ``--wheel PATH`` runs the reference from a local copy of the wheel.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import reference  # noqa: E402  (benchmarks/reference.py, stdlib only)

#: Each odyssey game beside the reference game whose size and shape it was made at.
PAIRS = {
    "base": "mossfall",
    "remnant": "quiet_bell",
    "mark": "tallowmere",
    "metropolis": "gavelmoor",
    "quarantine": "lazaret",
    "robot_kingdom": "rust_throne",
    "saltglass": "mirror_salt",
}
#: The TextWorld game, as the text-game comparisons in the literature make them.
TW_MAKE = ("custom", "--world-size", "10", "--nb-objects", "20", "--quest-length", "5")
PHASES = ("listing", "step", "render", "info", "other")
CHILD_ENV = {"PYTHONHASHSEED": "0"}


# ---------------------------------------------------------------------------------------- the protocol
def _pick(rng: random.Random, listing: dict[str, list[str]]) -> str:
    """The random player: a verb among those with valid actions, then one of its actions."""
    verb = rng.choice([verb for verb, commands in listing.items() if commands])
    return rng.choice(listing[verb])


def _checkpoints(steps: int, marks: list[int]) -> list[int]:
    return sorted({m for m in marks if 0 < m < steps} | {steps})


def odyssey_worker(game: str, steps: int, seed: int, marks: list[int], details: bool) -> dict[str, Any]:
    """The protocol on odyssey in this (fresh) process."""
    from odyssey_env.env import OdysseyEnv

    clock = time.process_time
    start = clock()
    env = OdysseyEnv(game)
    env.reset(seed=seed)
    reset_s = clock() - start
    rng = random.Random(seed)
    checkpoints = _checkpoints(steps, marks)
    done_at: dict[int, float] = {}
    blocks: list[float] = []
    commands: list[str] = []
    episodes = 0
    start = block_start = clock()
    for done_steps in range(1, steps + 1):
        command = _pick(rng, env.valid_actions())
        _, _, terminated, truncated, _ = env.step(command)
        if details:
            commands.append(command)
            if done_steps % 1000 == 0:
                now = clock()
                blocks.append(now - block_start)
                block_start = now
        if terminated or truncated:
            episodes += 1
            env.reset(seed=seed + episodes)
        if done_steps in checkpoints:
            done_at[done_steps] = clock() - start
    result: dict[str, Any] = {
        "engine": "odyssey",
        "game": game,
        "steps": steps,
        "cpu_s": done_at[steps],
        "checkpoints_cpu_s": {str(k): v for k, v in sorted(done_at.items())},
        "reset_cpu_s": reset_s,
        "episodes_ended": episodes,
    }
    if details:
        result.update(_details(env, game, seed, commands, blocks))
    return result


def _details(env: Any, game: str, seed: int, commands: list[str], blocks: list[float]) -> dict[str, Any]:
    """Odyssey's own figures: the same commands replayed without listing, phases, resets, memory, drift."""
    env.reset(seed=seed)
    start = time.process_time()
    for command in commands:
        env.step(command)  # (after an episode's end this replays other states: rare, and only a rate)
    plain_s = time.process_time() - start
    env.reset(seed=seed)
    phases = _phase_split(env, commands)
    resets = []
    for i in range(50):
        start = time.process_time()
        env.reset(seed=i)
        resets.append(time.process_time() - start)
    return {
        "plain_steps_per_s": len(commands) / plain_s,
        "phases_us": phases,
        "reset_ms_median": statistics.median(resets) * 1000,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "drift": blocks[-1] / blocks[0] if len(blocks) > 1 else float("nan"),
    }


def _phase_split(env: Any, commands: list[str]) -> dict[str, float]:
    """CPU microseconds per step in each phase of ``env.step`` plus the listing, for ``commands``.

    The phases are timed by wrapping the engine's and the env's own methods on these instances, so the
    env steps exactly as it does for its users.
    """
    spent = dict.fromkeys(PHASES, 0.0)
    clock = time.process_time

    def timed(owner: Any, name: str, phase: str) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            try:
                return original(*args, **kwargs)
            finally:
                spent[phase] += clock() - start

        setattr(owner, name, wrapper)

    engine = env.engine
    timed(engine, "step", "step")
    timed(env, "_observe", "render")
    timed(env, "_info", "info")
    total = 0.0
    for command in commands:
        start = clock()
        env.valid_actions()
        middle = clock()
        env.step(command)
        end = clock()
        spent["listing"] += middle - start
        total += end - middle
    spent["other"] = total - spent["step"] - spent["render"] - spent["info"]
    del engine.__dict__["step"], env.__dict__["_observe"], env.__dict__["_info"]
    return {phase: seconds / len(commands) * 1e6 for phase, seconds in spent.items()}


def textworld_worker(game_file: str, steps: int, seed: int, marks: list[int]) -> dict[str, Any]:
    """The protocol on TextWorld in this (fresh) process: admissible commands every step."""
    import textworld

    clock = time.process_time
    start = clock()
    env = textworld.start(game_file, textworld.EnvInfos(admissible_commands=True))
    state = env.reset()
    reset_s = clock() - start
    rng = random.Random(seed)
    checkpoints = _checkpoints(steps, marks)
    done_at: dict[int, float] = {}
    episodes = 0
    start = clock()
    for done_steps in range(1, steps + 1):
        listing: dict[str, list[str]] = {}
        for command in state.admissible_commands:
            listing.setdefault(command.split()[0], []).append(command)
        state, _, done = env.step(_pick(rng, listing))
        if done:
            episodes += 1
            state = env.reset()
        if done_steps in checkpoints:
            done_at[done_steps] = clock() - start
    return {
        "engine": "textworld",
        "game": Path(game_file).name,
        "steps": steps,
        "cpu_s": done_at[steps],
        "checkpoints_cpu_s": {str(k): v for k, v in sorted(done_at.items())},
        "reset_cpu_s": reset_s,
        "episodes_ended": episodes,
    }


# ---------------------------------------------------------------------------------------- running them
def _worker_args(kind: str, target: str, steps: int, seed: int, marks: list[int]) -> list[str]:
    return [str(Path(__file__)), "--worker", kind, target, str(steps), str(seed), *map(str, marks)]


def _run(command: list[str]) -> dict[str, Any]:
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **CHILD_ENV}, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"{' '.join(command[1:4])} failed: {last}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_odyssey(game: str, steps: int, seed: int, marks: list[int], details: bool = False) -> dict[str, Any]:
    args = _worker_args("odyssey", game, steps, seed, marks) + (["--details"] if details else [])
    return _run([sys.executable, *args])


def run_reference(game: str, steps: int, seed: int, marks: list[int], wheel: str | None) -> dict[str, Any]:
    args = [game, str(steps), str(seed), *map(str, marks)]
    return reference.run_json(reference.DRIVERS / "throughput.py", args, wheel=wheel)  # type: ignore[return-value]


def run_textworld(python: str, game_file: Path, steps: int, seed: int, marks: list[int]) -> dict[str, Any]:
    return _run([python, *_worker_args("textworld", str(game_file), steps, seed, marks)])


def _textworld_python(explicit: str | None) -> str | None:
    """An interpreter that imports textworld, or None (TextWorld is an optional peer)."""
    python = explicit or os.environ.get("ODYSSEY_TEXTWORLD_PYTHON") or sys.executable
    found = subprocess.run([python, "-c", "import textworld"], capture_output=True, check=False)
    return python if found.returncode == 0 else None


def _textworld_game(python: str, seed: int) -> Path:
    """The TextWorld game of ``TW_MAKE``, made once into the cache with the ``tw-make`` next to ``python``."""
    folder = reference.cache_dir().parent / "textworld"
    game = folder / f"custom-10-rooms-seed{seed}.z8"
    if game.is_file():
        return game
    folder.mkdir(parents=True, exist_ok=True)
    tw_make = Path(python).parent / "tw-make"
    command = [str(tw_make) if tw_make.is_file() else "tw-make", *TW_MAKE, "--seed", str(seed), "--output", str(game)]
    made = subprocess.run(command, capture_output=True, text=True, check=False)
    if made.returncode != 0 or not game.is_file():
        last = (made.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"tw-make failed: {last}")
    return game


def _rates(run: dict[str, Any]) -> dict[int, float]:
    return {int(k): int(k) / v for k, v in run["checkpoints_cpu_s"].items()}


def side_by_side(
    label: str, baseline: Any, odyssey: Any, rounds: int, marks: list[int], progress: bool
) -> dict[str, Any]:
    """``rounds`` rounds of a baseline run and an odyssey run, each a fresh process, the order alternating."""
    runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "odyssey": []}
    for r in range(rounds):
        order = (("baseline", baseline), ("odyssey", odyssey))
        for name, run in order if r % 2 == 0 else order[::-1]:
            runs[name].append(run())
        if progress:
            print(f"  {label}: round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    table = {}
    for mark in marks:
        ours = [_rates(run)[mark] for run in runs["odyssey"]]
        theirs = [_rates(run)[mark] for run in runs["baseline"]]
        ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
        table[mark] = {
            "odyssey_steps_per_cpu_s": statistics.median(ours),
            "baseline_steps_per_cpu_s": statistics.median(theirs),
            "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "ratios": ratios,
        }
    return {"label": label, "by_steps": table, "runs": runs}


def _select(names: list[str], pairs: dict[str, str]) -> list[str]:
    """Reference games for ``names`` (either engine's name); all pairs when none is given."""
    if not names:
        return list(pairs)
    by_odyssey = {ours: ref for ref, ours in pairs.items()}
    chosen = []
    for name in names:
        ref = name if name in pairs else by_odyssey.get(name)
        if ref is None:
            known = ", ".join(f"{ours}/{ref}" for ref, ours in pairs.items())
            raise SystemExit(f"env_throughput.py: no pair has a game {name!r}; the pairs are {known}")
        chosen.append(ref)
    return chosen


def _cells(rows: list[dict[str, Any]]) -> list[tuple[str, str, str, str, str, str]]:
    """One line per game and step count: label, steps, both rates, the median ratio and its range."""
    return [
        (
            row["label"],
            f"0-{mark:,}",
            f"{cell['odyssey_steps_per_cpu_s']:,.0f}",
            f"{cell['baseline_steps_per_cpu_s']:,.0f}",
            f"{cell['ratio_median']:.1f}x",
            f"{cell['ratio_min']:.1f}-{cell['ratio_max']:.1f}",
        )
        for row in rows
        for mark, cell in row["by_steps"].items()
    ]


def _print_table(rows: list[dict[str, Any]], baseline_name: str) -> None:
    widths = (30, 9, 10, 11, 8)
    titles = (f"game (odyssey / {baseline_name})", "steps", "odyssey", baseline_name, "ratio")
    header = f"{titles[0]:<{widths[0]}}" + "".join(f"{t:>{w}}" for t, w in zip(titles[1:], widths[1:], strict=True))
    print(header + "   range over rounds")
    print("-" * (len(header) + 20))
    for label, *numbers, spread in _cells(rows):
        cells = "".join(f"{n:>{w}}" for n, w in zip(numbers, widths[1:], strict=True))
        print(f"{label:<{widths[0]}}{cells}   {spread}")


def _print_markdown(rows: list[dict[str, Any]], baseline_name: str) -> None:
    print(f"| odyssey / {baseline_name} | steps | odyssey, steps per CPU-s | {baseline_name} | ratio, median | range |")
    print("|---|---|---|---|---|---|")
    for cells in _cells(rows):
        print("| " + " | ".join(cells) + " |")


def _print_details(rows: list[dict[str, Any]]) -> None:
    print("\nodyssey alone (one more worker per game): steps/s without valid actions, reset, memory, drift")
    header = f"{'game':<14}{'no listing':>12}{'reset ms':>10}{'RSS MB':>8}{'last/first 1k':>15}"
    print(header)
    for row in rows:
        d = row["details"]
        print(
            f"{row['odyssey_game']:<14}{d['plain_steps_per_s']:>12,.0f}{d['reset_ms_median']:>10.2f}"
            f"{d['peak_rss_mb']:>8.0f}{d['drift']:>15.2f}"
        )
    print("\nwhere a step goes, CPU us per step (valid actions every step):")
    header = f"{'game':<14}" + "".join(f"{p:>15}" for p in PHASES) + f"{'total':>9}"
    print(header)
    for row in rows:
        phases = row["details"]["phases_us"]
        total = sum(phases.values())
        cells = "".join(f"{phases[p]:>8.1f} ({100 * phases[p] / total:>2.0f}%)" for p in PHASES)
        print(f"{row['odyssey_game']:<14}{cells}{total:>9.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", help="odyssey or reference game names (default: every pair)")
    parser.add_argument("--steps", type=int, nargs="+", default=[2000, 6000], help="steps from reset (one run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pair", action="append", default=[], metavar="REF=GAME", help="set a reference game's peer")
    parser.add_argument("--wheel", help="a local copy of the agentodyssey 0.1.0 wheel (offline use)")
    parser.add_argument("--no-reference", dest="reference", action="store_false", help="skip the reference engine")
    parser.add_argument("--textworld", action="store_true", help="add TextWorld 1.7.0 as a peer (if installed)")
    parser.add_argument("--textworld-python", help="an interpreter with textworld (default: this one)")
    parser.add_argument("--textworld-against", default="mossfall", help="the odyssey game set against TextWorld")
    parser.add_argument("--details", action="store_true", help="odyssey's own figures: no-listing rate, phases...")
    parser.add_argument("--json", action="store_true", help="print every figure as JSON")
    parser.add_argument("--markdown", action="store_true", help="the tables in Markdown (for the docs)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, target, steps, seed, *marks = args.worker
        if kind == "odyssey":
            result = odyssey_worker(target, int(steps), int(seed), [int(m) for m in marks], args.details)
        else:
            result = textworld_worker(target, int(steps), int(seed), [int(m) for m in marks])
        print(json.dumps(result))
        return 0

    pairs = dict(PAIRS)
    for item in args.pair:
        ref, sep, ours = item.partition("=")
        if not sep or ref not in reference.GAMES:
            parser.error(f"--pair takes REF=GAME with REF one of {', '.join(reference.GAMES)}, got {item!r}")
        pairs[ref] = ours
    steps, marks = max(args.steps), sorted(set(args.steps))
    progress = not args.quiet
    out: dict[str, Any] = {
        "protocol": "random verb, then random valid action; valid actions every step; CPU time; fresh processes",
        "rounds": args.rounds,
        "seed": args.seed,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "games": [],
        "textworld": None,
    }
    rows = []
    try:
        if args.reference:  # set up before anything is measured (the first time: a download and a venv)
            if progress:
                print("preparing the reference engine (first time: download and venv, about a minute)", file=sys.stderr)
            reference.ensure_tree(args.wheel)
            reference.ensure_python()
        for ref in _select(args.games, pairs):
            ours = pairs[ref]

            def ody(ours: str = ours) -> dict[str, Any]:
                return run_odyssey(ours, steps, args.seed, marks)

            if args.reference:

                def theirs(ref: str = ref) -> dict[str, Any]:
                    return run_reference(ref, steps, args.seed, marks, args.wheel)

                row = side_by_side(f"{ours} / {ref}", theirs, ody, args.rounds, marks, progress)
            else:
                row = {"label": ours, "by_steps": {}, "runs": {"odyssey": [ody() for _ in range(args.rounds)]}}
            row.update(reference_game=ref, odyssey_game=ours)
            if args.details:
                row["details"] = run_odyssey(ours, steps, args.seed, marks, details=True)
            rows.append(row)
    except reference.ReferenceUnavailable as exc:
        print(
            f"env_throughput.py: the reference engine is needed for side-by-side figures: {exc} "
            "(or pass --no-reference)",
            file=sys.stderr,
        )
        return 2
    except subprocess.CalledProcessError as exc:  # the reference's driver failed
        last = ((exc.stderr or "").strip().splitlines() or ["no output"])[-1]
        print(f"env_throughput.py: the reference engine failed: {last}", file=sys.stderr)
        return 1
    except RuntimeError as exc:  # an odyssey worker failed
        print(f"env_throughput.py: {exc}", file=sys.stderr)
        return 1
    out["games"] = rows
    tw_note = None
    if args.textworld:
        python = _textworld_python(args.textworld_python)
        if python is None:
            tw_note = "TextWorld peer skipped: textworld is not installed (pip install textworld==1.7.0)"
        else:
            game_file = _textworld_game(python, 1)
            ours = args.textworld_against
            out["textworld"] = side_by_side(
                f"{ours} / textworld",
                lambda: run_textworld(python, game_file, steps, args.seed, marks),
                lambda: run_odyssey(ours, steps, args.seed, marks),
                args.rounds,
                marks,
                progress,
            )
            out["textworld"]["game"] = f"tw-make {' '.join(TW_MAKE)} --seed 1"
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    machine = out["machine"]
    print(
        f"steps per CPU-second, {args.rounds} round(s) of fresh processes interleaved, medians; seed {args.seed}; "
        f"{machine['cpus']} CPUs, load {machine['load'][0]:.1f}, Python {machine['python']}"
    )
    if args.reference:
        print(f"reference: {reference.NAME} {reference.VERSION} from its wheel (logging off, no goal-tree PNGs)\n")
        (_print_markdown if args.markdown else _print_table)(rows, "reference")
        for mark in marks:
            medians = [row["by_steps"][mark]["ratio_median"] for row in rows]
            met = sum(m >= 10 for m in medians)
            print(
                f"steps 0-{mark:,}: median ratios {min(medians):.1f}x-{max(medians):.1f}x; "
                f">= 10x on {met} of {len(rows)} games"
            )
    else:
        print("reference skipped (--no-reference): odyssey's rates alone\n")
        for row in rows:
            rates = [_rates(run) for run in row["runs"]["odyssey"]]
            cells = ", ".join(f"0-{m:,}: {statistics.median(r[m] for r in rates):,.0f}" for m in marks)
            print(f"{row['odyssey_game']:<14}{cells}")
    if out["textworld"]:
        print(f"\nTextWorld 1.7.0 peer, {out['textworld']['game']}:")
        (_print_markdown if args.markdown else _print_table)([out["textworld"]], "textworld")
    elif tw_note:
        print(f"\n{tw_note}")
    if args.details:
        _print_details(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
