"""Procedural generation: full validation for games of increasing size, and the diversity of what it makes.

Protocol: for each size, in a fresh Python process, (1) build the game
(``odyssey_gen.procedural.ProceduralAuthor.files``), (2) write its files, (3) run the full default
validation (static check, load, 1,000 random steps on each of 3 seeds, reachability, the oracle on 3
seeds with a 500-step budget) in the sandbox, and report the time of each part, the size of the files
and whether every check passed. The baseline, measured in the same run, is the same validation of a copy
of the shipped Quiet Bell game (18 areas, 83 object types), so the figures can be read against a
hand-made game of paper size on the same (noisy, shared) machine.

    python benchmarks/generation.py                    # the three sizes, the baseline and the diversity tables
    python benchmarks/generation.py --sizes paper      # one size (and the diversity tables)
    python benchmarks/generation.py --part diversity   # only the diversity tables (generation only, seconds)

Two runs on the shared 2-core development machine; other engineers' test suites were running meanwhile
(load average about 9 in the first, 13 in the second), so read the figures against the baseline:

    size      objects areas npcs stages  build s  validate s  total s  world.json  quest.json  solved
    small          14     3    6      3     0.00        2.2      2.2       8 KB        5 KB  yes
    paper         100    12   12     40     0.03        3.9      3.9      42 KB       22 KB  yes
    large        1000    32   42     24     0.15        2.3      2.5     346 KB       16 KB  yes
    baseline: validating a copy of quiet_bell: 3.7 s          (second run: paper 6.5 s, large 12.4 s, quiet_bell 6.0 s)

Generation plus full validation stays well under a minute for paper-sized games (the issue's bar), and
for a thousand object types too. (NPC counts include a tutorial's trainer and dummy.)

**Diversity** (paper A8 discusses the diversity of its generated games; this is our own measure, see
docs/fidelity.md). Games of the default size with ``--action-rules 2 --step-rules 2``, over 20 seeds of one
theme and over 10 themes (seed 0), and, as the baseline, the shipped hand-made games. Per set: how many
distinct non-base verbs and non-core step rules appear (``Game.summary()``'s ``extra_verbs`` /
``extra_step_rules``), distinct recipe shapes (sorted ingredient amounts, number of stations, yield),
distinct quest shapes (each stage's condition type, with the types of the parts of a conjunction, a choice or a
predicate's plan, and which earlier stages it waits for), distinct plot
shapes, and the pairwise overlap of entity names (Jaccard of the sets of area, object and NPC handles,
mean and maximum over all pairs); and what the games' ``rules.json`` invents: distinct verbs and step rules
declared there, distinct rule files, and kinds of mechanic (odyssey_gen.procedural.mechanics.MECHANIC_KINDS).
Figures are recorded in docs/generation.md ("Diversity").
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SIZES: dict[str, dict] = {
    "small": dict(places=1, areas_per_place=3, objects=14, npcs=4, max_level=2, chapters=1, stages=3),
    "paper": dict(
        places=4,
        areas_per_place=3,
        objects=100,
        npcs=10,
        max_level=5,
        chapters=4,
        stages=10,
        branching=2,
        verbs=["lockpick", "eat", "throw", "disassemble", "pickpocket"],
        dynamics=["noise", "wandering_patrols", "quiet_enemies", "quiet_food"],
    ),
    "large": dict(places=8, areas_per_place=4, objects=1000, npcs=40, max_level=5, chapters=4, stages=6, branching=2),
}
THEME = "a drowned cathedral city where the tide keeps the only records"

CHILD = r"""
import json, sys, time
from pathlib import Path
from odyssey_gen.spec import GameSpec, ValidationSettings
from odyssey_gen.procedural import ProceduralAuthor
from odyssey_gen.validate import validate

spec = GameSpec.from_dict(json.loads(sys.argv[1]))
folder = Path(sys.argv[2]) / spec.name
folder.mkdir(parents=True)
t0 = time.perf_counter()
files = ProceduralAuthor(spec).files()
t1 = time.perf_counter()
for name, text in files.items():
    (folder / name).write_text(text)
result = validate(folder, ValidationSettings())
t2 = time.perf_counter()
summary = result.stats.get("summary", {})
print(json.dumps({"build": t1 - t0, "validate": t2 - t1, "ok": result.ok,
                  "problems": [str(p) for p in result.problems[:3]],
                  "bytes": {n: len(t.encode()) for n, t in files.items()},
                  "areas": summary.get("areas"), "objects": summary.get("object_types"),
                  "npcs": summary.get("npc_types"), "stages": summary.get("stages")}))
"""

BASELINE = r"""
import shutil, sys, time
from pathlib import Path
from odyssey_env.game import GAMES_DIR
from odyssey_gen.spec import ValidationSettings
from odyssey_gen.validate import validate

folder = Path(sys.argv[1]) / "quiet_bell"
shutil.copytree(GAMES_DIR / "quiet_bell", folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
t0 = time.perf_counter()
result = validate(folder, ValidationSettings())
print(time.perf_counter() - t0, result.ok)
"""


#: Ten themes of ten different lexicon themes, none of them a line the tests use.
DIVERSITY_THEMES = (
    "an old observatory where the astronomers wait for a comet",
    "a harbour drowned by the sea, with quays and sunken chapels",
    "a quarantine lazaret where the fever never breaks",
    "a clockwork city of gears and rusting automatons",
    "caravans crossing a desert of salt and mirages",
    "a court of judges who change the laws every night",
    "a deep fungal forest where spores hang in the air",
    "a winter fortress on a glacier in the frozen north",
    "forges on the slopes of a volcano of black obsidian",
    "a mountain monastery whose bells ring for the dead",
)
DIVERSITY_SPEC = dict(action_rules=2, step_rules=2)


def _game_facts(folder: Path) -> dict:
    """What the diversity tables count, read from a game folder (loaded, so only what the engine accepts)."""
    from odyssey_env import load_game

    game = load_game(folder, cache=False)
    summary = game.summary()
    world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
    quest = json.loads((folder / "quest.json").read_text(encoding="utf-8"))
    recipes = set()
    for o in world["objects"]:
        r = o.get("recipe")
        if r:
            recipes.add((tuple(sorted(r["ingredients"].values())), len(r.get("stations", ())), r.get("yields", 1)))
    stages = [s for ch in (quest.get("main") or {}).get("chapters", ()) for s in ch["stages"]]
    index = {s["id"]: i for i, s in enumerate(stages)}
    shape = tuple(
        (_condition_shape(s["done"]), tuple(sorted(i - index[r] for r in s["requires"])) if "requires" in s else (1,))
        for i, s in enumerate(stages)
    )
    rule_file = folder / "rules.json"
    rules = json.loads(rule_file.read_text(encoding="utf-8")) if rule_file.is_file() else {}
    names = {a["name"] for p in world["places"] for a in p["areas"]}
    names |= {o["name"] for o in world["objects"]} | {n["name"] for n in world["npcs"]}
    return {
        "verbs": set(summary["extra_verbs"]),
        "steps": set(summary["extra_step_rules"]),
        "recipes": recipes,
        "quest": shape,
        "plot": "",  # the generator's choice, not in the files: filled in by the caller for generated games
        "names": names,
        # what rules.json invents: its verbs and step rules, and the file itself (a rule set)
        "rule_verbs": {v["verb"] for v in rules.get("verbs", ())},
        "rule_steps": {r["name"] for r in rules.get("step_rules", ())},
        "rule_set": json.dumps(rules, sort_keys=True) if rules else "",
        "mechanics": set(),  # the generator's kinds of mechanic: filled in by the caller for generated games
    }


def _condition_shape(c: dict) -> tuple:
    """A condition's type, and the shape of what it is made of: the parts of ``all_of`` / ``any_of``, the
    plan of a game's own predicate (``did``: the event of a verb, whichever verb it is)."""
    parts = c.get("conditions") or c.get("plan") or ()
    return (c["type"], *(_condition_shape(p) for p in parts)) if parts else (c["type"],)


def _row(label: str, games: list[dict]) -> dict:
    pairs = [len(a["names"] & b["names"]) / len(a["names"] | b["names"]) for a, b in itertools.combinations(games, 2)]
    return {
        "set": label,
        "games": len(games),
        "verbs": len(set().union(*(g["verbs"] for g in games))),
        "step_rules": len(set().union(*(g["steps"] for g in games))),
        "recipe_shapes": len(set().union(*(g["recipes"] for g in games))),
        "quest_shapes": len({g["quest"] for g in games}),
        "plots": len({g["plot"] for g in games if g["plot"]}),
        "rule_verbs": len(set().union(*(g["rule_verbs"] for g in games))),
        "rule_steps": len(set().union(*(g["rule_steps"] for g in games))),
        "rule_sets": len({g["rule_set"] for g in games if g["rule_set"]}),
        "mechanic_kinds": len(set().union(*(g["mechanics"] for g in games))),
        "overlap_mean": sum(pairs) / len(pairs) if pairs else 0.0,
        "overlap_max": max(pairs, default=0.0),
    }


def diversity() -> list[dict]:
    """The diversity rows: 20 seeds of one theme, 10 themes, and the shipped games as the baseline."""
    from odyssey_env.game import GAMES_DIR, available_games
    from odyssey_gen.procedural import ProceduralAuthor
    from odyssey_gen.spec import GameSpec

    def generated(specs: list[GameSpec], tmp: Path) -> list[dict]:
        out = []
        for k, spec in enumerate(specs):
            folder = tmp / f"g{k}"
            folder.mkdir()
            author = ProceduralAuthor(spec)
            for name, text in author.files().items():
                (folder / name).write_text(text, encoding="utf-8")
            facts = _game_facts(folder)
            facts["plot"] = author.draft.plot
            facts["mechanics"] = set(author.draft.mechanics.kinds)
            out.append(facts)
        return out

    tmp = Path(tempfile.mkdtemp(prefix="odyssey-bench-div-"))
    try:
        seeds = [GameSpec(theme=DIVERSITY_THEMES[0], name="div", seed=s, **DIVERSITY_SPEC) for s in range(20)]
        themes = [GameSpec(theme=t, name="div", seed=0, **DIVERSITY_SPEC) for t in DIVERSITY_THEMES]
        (tmp / "seeds").mkdir()
        (tmp / "themes").mkdir()
        rows = [
            _row("20 seeds, one theme", generated(seeds, tmp / "seeds")),
            _row("10 themes, seed 0", generated(themes, tmp / "themes")),
        ]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    shipped = [_game_facts(GAMES_DIR / name) for name in available_games()]
    rows.append(_row(f"baseline: {len(shipped)} shipped games", shipped))
    return rows


def print_diversity() -> None:
    rows = diversity()
    print(
        f"{'set':32s} {'games':>5s} {'verbs':>5s} {'steps':>5s} {'recipes':>7s} {'quests':>6s} {'plots':>5s} "
        f"{'overlap mean':>12s} {'max':>5s} {'json verbs':>10s} {'json steps':>10s} {'rule sets':>9s} {'kinds':>5s}"
    )
    for r in rows:
        print(
            f"{r['set']:32s} {r['games']:5d} {r['verbs']:5d} {r['step_rules']:5d} {r['recipe_shapes']:7d} "
            f"{r['quest_shapes']:6d} {r['plots']:5d} {r['overlap_mean']:12.3f} {r['overlap_max']:5.2f} "
            f"{r['rule_verbs']:10d} {r['rule_steps']:10d} {r['rule_sets']:9d} {r['mechanic_kinds']:5d}"
        )
    base = rows[-1]["overlap_mean"]
    if base:
        print(
            f"name overlap against the shipped games' (x): {rows[0]['overlap_mean'] / base:.1f} across seeds, "
            f"{rows[1]['overlap_mean'] / base:.1f} across themes"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--part", choices=("all", "sizes", "diversity"), default="all")
    args = parser.parse_args()
    failed = 0
    if args.part in ("all", "sizes"):
        failed = print_sizes(args.sizes)
    if args.part in ("all", "diversity"):
        print_diversity()
    return 1 if failed else 0


def print_sizes(sizes: list[str]) -> int:
    print(
        f"{'size':8s} {'objects':>7s} {'areas':>5s} {'npcs':>4s} {'stages':>6s} {'build s':>8s} "
        f"{'validate s':>10s} {'total s':>8s} {'world.json':>11s} {'quest.json':>11s}  solved"
    )
    failed = 0
    for label in sizes:
        spec = {"theme": THEME, "name": f"bench_{label}", "seed": 0, **SIZES[label]}
        tmp = tempfile.mkdtemp(prefix="odyssey-bench-gen-")
        try:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, json.dumps(spec), tmp], capture_output=True, text=True, check=True
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        failed += not r["ok"]
        print(
            f"{label:8s} {r['objects']:7d} {r['areas']:5d} {r['npcs']:4d} {r['stages']:6d} {r['build']:8.2f} "
            f"{r['validate']:10.1f} {r['build'] + r['validate']:8.1f} {r['bytes']['world.json'] / 1024:8.0f} KB "
            f"{r['bytes']['quest.json'] / 1024:8.0f} KB  {'yes' if r['ok'] else 'NO: ' + '; '.join(r['problems'])}"
        )
    tmp = tempfile.mkdtemp(prefix="odyssey-bench-gen-")
    try:
        out = subprocess.run([sys.executable, "-c", BASELINE, tmp], capture_output=True, text=True, check=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    seconds, ok = out.stdout.split()
    print(
        f"baseline: validating a copy of quiet_bell: {float(seconds):.1f} s ({'passed' if ok == 'True' else 'FAILED'})"
    )
    return failed


if __name__ == "__main__":
    sys.exit(main())
