"""The cell played one step at a time by an outer loop (``open_cell``, ``step``, ``checkpoint``, ``close``,
``finish``): what a launcher that interleaves cells, or stops them on a signal, builds on. Driven so, a
cell ends exactly as ``run_cell``/``run_multi_cell`` end it."""

from __future__ import annotations

import pytest

from odyssey_eval.rundir import RunDir, RunDirError
from odyssey_eval.runner import RunError, RunInterrupted, open_cell

from .conftest import quiet
from .test_cell_integrity import SHAPES

SMALL = {"max_steps": 30, "tutorial": False, "qa": {"every": 10}, "eval": {"checkpoint_every": 1000}}


@pytest.mark.parametrize("shape", SHAPES)
def test_a_cell_stopped_between_steps_with_a_checkpoint_resumes_and_ends_as_an_uninterrupted_one(tmp_path, shape):
    whole = shape.run(shape.config(tmp_path / "whole", **SMALL), log=quiet)
    cfg = shape.config(tmp_path / "stepped", **SMALL)
    with open_cell(cfg, log=quiet) as cell:
        assert cell.outcome is None and cell.playing
        for _ in range(13):
            assert cell.step()
        cell.checkpoint()  # what a signal handler asks for; no checkpoint was due (every 1000 steps)
        for _ in range(2):
            assert cell.step()  # steps after the checkpoint: played again on resume
    rd = RunDir(shape.path(cfg))
    assert (rd.checkpoints / "LATEST").read_text() == "step_000013" and not rd.finished
    with rd.lock():  # closed: the lock is free
        pass
    said: list[str] = []
    with open_cell(cfg, log=said.append) as cell:
        assert said == [f"resume from step 13: {rd.path}"]
        outcome = cell.finish()  # plays on to the end
    assert outcome.status == "finished" and not cell.playing and cell.step() is False
    assert shape.content(outcome.path) == shape.content(whole.path)


@pytest.mark.parametrize("shape", SHAPES)
def test_cells_interleaved_step_by_step_end_as_they_end_alone(tmp_path, shape):
    seeds = (0, 1, 2)
    alone = [shape.run(shape.config(tmp_path / "alone", seed=s, **SMALL), log=quiet) for s in seeds]
    cells = [open_cell(shape.config(tmp_path / "together", seed=s, **SMALL), log=quiet) for s in seeds]
    while any([c.step() for c in cells]):  # one step of each in turn
        pass
    together = [c.finish() for c in cells]
    assert [shape.content(o.path) for o in together] == [shape.content(o.path) for o in alone]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_finished_cell_opens_skipped_and_a_closed_one_refuses_to_go_on(tmp_path, shape):
    cfg = shape.config(tmp_path, **SMALL)
    first = shape.run(cfg, log=quiet)
    said: list[str] = []
    skipped = open_cell(cfg, log=said.append)
    assert skipped.outcome is not None and skipped.outcome.status == "skipped" and said[0].startswith("skip")
    assert skipped.step() is False and skipped.finish().results == first.results
    other = shape.config(tmp_path, seed=5, **SMALL)
    cell = open_cell(other, log=quiet)
    assert cell.step()
    with pytest.raises(RunDirError, match="another process"), RunDir(shape.path(other)).lock():
        pass  # the lock is held while the cell is open
    cell.close()
    assert cell.step() is False
    with pytest.raises(RunError, match="is not open: nothing to checkpoint"):
        cell.checkpoint()
    with pytest.raises(RunError, match="closed before it finished: open it again to resume"):
        cell.finish()
    assert open_cell(other, log=quiet).finish().status == "finished"


@pytest.mark.parametrize("shape", SHAPES)
def test_ctrl_c_during_a_step_is_one_line_and_frees_the_cell(tmp_path, shape, monkeypatch):
    cfg = shape.config(tmp_path, **SMALL)
    cell = open_cell(cfg, log=quiet)
    for _ in range(3):
        cell.step()
    cell.checkpoint()
    agent = list(cell.seats.values())[-1].agent

    def interrupted(observation, info):
        raise KeyboardInterrupt

    monkeypatch.setattr(agent, "act", interrupted)
    with pytest.raises(
        RunInterrupted, match=r"interrupted after step 3: run the same command again to resume from step 3"
    ):
        cell.step()
    assert not cell.playing
    with RunDir(shape.path(cfg)).lock():  # released
        pass
    assert open_cell(cfg, log=quiet).finish().status == "finished"
