"""Procedural generation plus full validation, for games of increasing size.

Protocol: for each size, in a fresh Python process, (1) build the game
(``odyssey_gen.procedural.ProceduralAuthor.files``), (2) write its files, (3) run the full default
validation (static check, load, 1,000 random steps on each of 3 seeds, reachability, the oracle on 3
seeds with a 500-step budget) in the sandbox, and report the time of each part, the size of the files
and whether every check passed. The baseline, measured in the same run, is the same validation of a copy
of the shipped Quiet Bell game (18 areas, 83 object types), so the figures can be read against a
hand-made game of paper size on the same (noisy, shared) machine.

    python benchmarks/generation.py                 # the three sizes and the baseline
    python benchmarks/generation.py --sizes paper   # one size

Two runs on the shared 2-core development machine; other engineers' test suites were running meanwhile
(load average about 9 in the first, 13 in the second), so read the figures against the baseline:

    size      objects areas npcs stages  build s  validate s  total s  world.json  quest.json  solved
    small          14     3    6      3     0.00        2.2      2.2       8 KB        5 KB  yes
    paper         100    12   12     40     0.03        3.9      3.9      42 KB       22 KB  yes
    large        1000    32   42     24     0.15        2.3      2.5     346 KB       16 KB  yes
    baseline: validating a copy of quiet_bell: 3.7 s          (second run: paper 6.5 s, large 12.4 s, quiet_bell 6.0 s)

Generation plus full validation stays well under a minute for paper-sized games (the issue's bar), and
for a thousand object types too. (NPC counts include a tutorial's trainer and dummy.)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    args = parser.parse_args()
    print(
        f"{'size':8s} {'objects':>7s} {'areas':>5s} {'npcs':>4s} {'stages':>6s} {'build s':>8s} "
        f"{'validate s':>10s} {'total s':>8s} {'world.json':>11s} {'quest.json':>11s}  solved"
    )
    failed = 0
    for label in args.sizes:
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
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
