"""Shared helpers for the evaluation tests: a small cell config and a finished run to look at."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from odyssey_eval.runner import run_cell


def cell(output_dir: Path, **over: Any) -> dict[str, Any]:
    """A cell config as Hydra would resolve it, small enough for tests."""
    qa = {"enabled": True, "every": 0, "world_knowledge": 3, "episodic": 2, "choices": 4}
    qa.update(over.pop("qa", {}))
    ev = {
        "output_dir": str(output_dir),
        "checkpoint_every": 10,
        "checkpoint_min_seconds": 0.0,
        "progress": False,
        "qa": qa,
    }
    ev.update(over.pop("eval", {}))
    cfg = {
        "game": {"name": "mossfall", "path": None},
        "agent": {"name": "random", "seed": None},
        "llm": {"name": "none"},
        "seed": 0,
        "max_steps": 60,
        "tutorial": True,
        "eval": ev,
    }
    cfg.update(over)
    return cfg


#: The fields that may differ between two runs that are otherwise equal.
WALL_CLOCK = {"decision_time", "seconds", "wall_time", "decision_time_total", "decision_time_mean"}


def scrub(value: Any) -> Any:
    """Drop wall-clock fields, which are the only things allowed to differ between equal runs."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if k not in WALL_CLOCK}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def quiet(_msg: str) -> None:
    pass


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="session")
def random_run(tmp_path_factory) -> Path:
    """One finished 120-step random run on base (shared by tests that only read it)."""
    out = tmp_path_factory.mktemp("random_run")
    return run_cell(cell(out, max_steps=120, qa={"every": 40}), log=quiet).path
