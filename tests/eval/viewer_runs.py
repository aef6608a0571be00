"""Run directories for the viewer's tests: a real finished run, and a copy of it that a hostile model
and a hostile game author filled with markup."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from odyssey_eval.runner import run_cell

from .conftest import cell, quiet

#: Text that would run a script, load an image or break out of an element if it were read as HTML.
EVIL = (
    '</script><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
    '"><svg onload="window.__pwned=3"> & &amp; <!-- \u2028'
)


def play(output: Path, **over: Any) -> Path:
    """A finished random run on base with QA during play and the dependency graph (deaths, a quest stage,
    rewards and several areas happen in its first 300 play steps with seed 0)."""
    cfg = cell(output, max_steps=300, qa={"every": 100}, eval={"dependency_graph": True}, **over)
    return run_cell(cfg, log=quiet).path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def poison(run: Path, dest: Path) -> tuple[Path, int]:
    """A copy of ``run`` whose model-written and game-written texts are markup; returns it and the step
    whose action, reasoning and reply are :data:`EVIL`."""
    shutil.copytree(run, dest)
    traj = lines(dest / "trajectory.jsonl")
    step = next(i for i, r in enumerate(traj) if i > 0 and not r.get("tutorial"))
    traj[step].update(
        action=EVIL,
        reasoning=EVIL,
        raw=EVIL,
        invalid=True,
        events=[{"kind": EVIL, EVIL: EVIL}],
        reward={"quest": 1, EVIL: 2},
    )
    traj[step]["quest"] = {
        "title": EVIL,
        "completed": 1,
        "total": 2,
        "current": [{"title": EVIL, "chapter": EVIL}],
        "done": False,
    }
    obs = traj[step]["observation"].split("\n")
    obs[3:3] = [EVIL, ""]  # as a message of the engine's feedback
    obs[-9] = f"I see {EVIL} nearby."  # the beings line of the fixed tail
    traj[step]["observation"] = "\n".join(obs)
    write_lines(dest / "trajectory.jsonl", traj)
    record = json.loads((dest / "cell.json").read_text())
    record["agent"]["name"] = EVIL
    record["tag"] = EVIL
    (dest / "cell.json").write_text(json.dumps(record))
    questions = json.loads((dest / "qa_questions.json").read_text())
    questions[0]["text"] = EVIL
    questions[0]["choices"] = [EVIL] * len(questions[0]["choices"])
    (dest / "qa_questions.json").write_text(json.dumps(questions))
    results = json.loads((dest / "results.json").read_text())
    results["game_title"] = EVIL
    (dest / "results.json").write_text(json.dumps(results))
    return dest, step
