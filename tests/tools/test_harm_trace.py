"""benchmarks/harm_trace.py, the tracer of docs/fidelity.md's death figures: odyssey's side, offline.

The reference's side needs the wheel (``ODYSSEY_REFERENCE_WHEEL``); its what-if patches change rule classes
for the whole process, so they run in a subprocess here.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.tools.scripts import BENCHMARKS, load


@pytest.fixture(scope="module")
def harm_trace():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield load("harm_trace.py")
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_every_death_is_put_on_the_rule_that_dealt_it_and_the_rules_are_left_as_found(harm_trace):
    from odyssey_env.game import load_game

    run = harm_trace.ours("quiet_bell", 0, 300)
    assert run["died"] > 0, "the random player should die on this seed within 300 steps"
    assert sum(run["deaths"].values()) == run["died"], run
    names = {r.name for r in load_game("quiet_bell").rules.steps}
    assert set(run["lost"]) <= names and sum(run["lost"].values()) > 0
    assert run["engaged_steps"] > 0 and run["hostile_steps"] >= run["engaged_steps"]
    # the wrappers are taken off the game's shared rule objects again
    assert all("apply" not in vars(r) for r in load_game("quiet_bell").rules.steps)


def test_the_what_ifs_run_in_their_own_process_and_say_so():
    args = ["quiet_bell", "--seeds", "2", "--steps", "120", "--no-reference", "--what-if", "flee", "ambush"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "harm_trace.py"), *args], capture_output=True, text=True, env=env, check=True
    )
    assert "quiet_bell, odyssey + flee, ambush (mean of 2 seeds x 120 steps)" in done.stdout
    assert "death_total" in done.stdout and "reference" not in done.stdout.split("\n", 1)[1]
