"""Progress lines in logs: one per step of a slow agent, a handful for a fast one, none when off."""

from __future__ import annotations

import io
import re

from odyssey_eval import progress as progress_module
from odyssey_eval.progress import LineProgress
from odyssey_eval.runner import run_cell

from .conftest import cell, quiet


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_a_slow_agent_gets_a_line_per_step(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock)
    out = io.StringIO()
    bar = LineProgress("base short_term_memory seed 0", 20, stream=out)
    for step in range(1, 4):
        clock.now += 4.0  # a model step of four seconds
        bar.update(step, 0, step, 1000 * step)
    bar.update(3, 0, 3, 3000, force=True)  # the runner's last update repeats the last step: no new line
    bar.close()
    printed = out.getvalue().splitlines()
    assert printed == [
        f"base short_term_memory seed 0: step {s}/20  main 0  sup {s}  tokens {1000 * s:,}  "
        f"4.0 s/step  0:00:{4 * s:02d}"
        for s in range(1, 4)
    ]


def test_a_fast_agent_gets_a_line_a_second_and_the_last_step(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_module.time, "monotonic", clock)
    out = io.StringIO()
    bar = LineProgress("x", 1000, stream=out)
    for step in range(1, 1001):
        clock.now += 2**-9  # exact in binary: the 512th step is one second in
        bar.update(step, 0, 0, 0, "tutorial" if step < 10 else "")
    bar.update(1000, 0, 0, 0, force=True)
    printed = out.getvalue().splitlines()
    assert len(printed) == 2  # after one second, then the end
    assert printed[0].startswith("x: step 512/1000  main 0") and "0.0 s/step" in printed[0]
    assert printed[-1].startswith("x: step 1000/1000")


def test_a_run_logged_to_a_file_shows_its_progress(tmp_path, capsys):
    """Not a terminal (pytest captures output): ``auto`` prints lines, ``false`` prints none."""
    run_cell(
        cell(tmp_path / "a", max_steps=30, tutorial=False, eval={"progress": "auto"}, qa={"enabled": False}), log=quiet
    )
    printed = capsys.readouterr().out
    assert re.search(r"^mossfall random seed 0: step 30/30  main \d+  sup \d+  tokens 0  ", printed, re.M), printed
    run_cell(
        cell(tmp_path / "b", max_steps=30, tutorial=False, eval={"progress": False}, qa={"enabled": False}), log=quiet
    )
    assert capsys.readouterr().out == ""


def test_a_slow_qa_round_is_logged(tmp_path, monkeypatch):
    """A model's QA round takes a while; the log says so (a fast agent's rounds stay quiet)."""
    import itertools

    from odyssey_eval import cell as cell_module

    said: list[str] = []
    run_cell(cell(tmp_path / "fast", max_steps=5, tutorial=False, eval={"progress": "lines"}), log=said.append)
    assert not any(line.startswith("qa ") for line in said)
    ticks = itertools.count(0.0, 0.5)  # every clock reading half a second later: rounds "take" seconds
    monkeypatch.setattr(cell_module.time, "perf_counter", lambda: next(ticks))
    said.clear()
    run_cell(cell(tmp_path / "slow", max_steps=5, tutorial=False, eval={"progress": "lines"}), log=said.append)
    rounds = [line for line in said if line.startswith("qa ")]
    assert len(rounds) == 2 and rounds[0].startswith("qa before step 0: ") and "questions in" in rounds[0]
    assert rounds[1].startswith("qa after step 5: ")
    said.clear()
    run_cell(cell(tmp_path / "off", max_steps=5, tutorial=False, eval={"progress": False}), log=said.append)
    assert not any(line.startswith("qa ") for line in said)
