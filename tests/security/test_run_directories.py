"""Issue 23 items 5-7: reading a run directory never writes outside its output, never sends raw text to the
terminal, and never ends in a traceback, whatever someone planted in it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from .conftest import CORPUS, odyssey, one_line_refusal

ESCAPES = json.loads((CORPUS / "rundirs" / "escapes.json").read_text())
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    from odyssey_eval.runner import run_cell

    root = tmp_path_factory.mktemp("finished")
    cfg = {
        "game": {"name": "mossfall", "path": None},
        "agent": {"name": "random", "seed": None},
        "llm": {"name": "none"},
        "seed": 0,
        "max_steps": 25,
        "tutorial": False,
        "eval": {
            "output_dir": str(root / "runs"),
            "checkpoint_every": 10,
            "checkpoint_min_seconds": 0.0,
            "progress": False,
            "dependency_graph": True,
            "qa": {"enabled": False},
        },
    }
    return run_cell(cfg, log=lambda _m: None).path


@pytest.fixture
def run(finished, tmp_path) -> Path:
    """A copy of the finished run, alone in a folder of its own (``runs/``)."""
    dest = tmp_path / "runs" / "cell"
    shutil.copytree(finished, dest)
    return dest


@pytest.fixture
def victim(tmp_path) -> Path:
    """A file of the user's outside every output: it must never change."""
    path = tmp_path / "outside" / "precious.txt"
    path.parent.mkdir()
    path.write_text("precious\n")
    return path


def _unchanged(victim: Path) -> None:
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["precious.txt"], "something was written beside it"


# ---------------------------------------------------------------------------- item 5: writes
def test_view_never_writes_through_a_planted_link(run, victim, tmp_path, store):
    (run / "view.html.tmp").symlink_to(victim)  # the old temporary name
    done = odyssey("view", str(run), cwd=tmp_path, store=store)
    assert done.returncode == 0, done.stderr
    _unchanged(victim)
    (run / "view.html").unlink()
    (run / "view.html").symlink_to(victim)
    one_line_refusal(odyssey("view", str(run), cwd=tmp_path, store=store), "symbolic link")
    _unchanged(victim)


def test_report_never_writes_through_planted_links(run, victim, tmp_path, store):
    runs = run.parent
    (runs / "report.html").symlink_to(victim)
    one_line_refusal(odyssey("report", str(runs), cwd=tmp_path, store=store), "symbolic link")
    _unchanged(victim)
    (runs / "report.html").unlink()
    assert not (runs / "report_views").exists(), "nothing is written before the refusal"
    (runs / "report_views").symlink_to(victim.parent, target_is_directory=True)  # a folder elsewhere
    done = odyssey("report", str(runs), cwd=tmp_path, store=store)
    assert "Traceback" not in done.stderr
    _unchanged(victim)
    (runs / "report_views").unlink()
    (runs / "report_views").mkdir()
    for name in ("cell.html", "cell.html.tmp"):
        (runs / "report_views" / name).symlink_to(victim)
    done = odyssey("report", str(runs), cwd=tmp_path, store=store)
    assert "Traceback" not in done.stderr
    _unchanged(victim)


def test_safe_write_refuses_links_and_leaves_no_temporary_file(tmp_path):
    from odyssey_env.safeio import UnsafeFile, write_atomic

    out = tmp_path / "out"
    write_atomic(out / "a" / "b.txt", "x", root=out)
    assert (out / "a" / "b.txt").read_text() == "x"
    (out / "link").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(UnsafeFile, match="symbolic link"):
        write_atomic(out / "link" / "c.txt", "x", root=out)
    assert not (tmp_path / "c.txt").exists()
    assert sorted(p.name for p in (out / "a").iterdir()) == ["b.txt"]


# ---------------------------------------------------------------------------- item 6: the terminal
def _plant_escapes(run: Path) -> None:
    results = json.loads((run / "results.json").read_text())
    results.update(game=ESCAPES["game"], agent_name=ESCAPES["agent_name"], tag=ESCAPES["tag"])
    results["llm"] = {"name": "openai", "model": ESCAPES["model"]}
    (run / "results.json").write_text(json.dumps(results))


@pytest.mark.parametrize("command", ["report", "challenge", "view"])
def test_names_from_a_run_directory_reach_the_terminal_escaped(run, tmp_path, store, command):
    _plant_escapes(run)
    args = [str(run)] if command == "view" else [str(run.parent), *(["--no-html"] if command == "report" else [])]
    if command == "challenge":
        args += ["--games", ESCAPES["game"]]
    done = odyssey(command, *args, cwd=tmp_path, store=store)
    text = done.stdout + done.stderr
    assert "Traceback" not in text, text
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the terminal: {text!r}"
    assert not any(line.startswith("all runs verified OK") for line in text.splitlines())
    if command != "view":
        assert "\\x1b" in text  # shown, escaped


def test_printable_escapes_every_control_and_format_character():
    from odyssey_env.safeio import printable

    for value in ESCAPES.values():
        out = printable(value)
        assert out.isprintable() and "\n" not in out
    assert printable("plain text") == "plain text"


# ---------------------------------------------------------------------------- item 7: tracebacks
def _deep(n: int = 200_000) -> str:
    return "[" * n + "]" * n


@pytest.mark.parametrize(
    "planted",
    [
        "cell_deep",
        "results_deep",
        "qa_deep",
        "trajectory_deep",
        "graph_string_step",
        "results_fifo",
        "trajectory_link",
        "graph_wrong_types",
    ],
)
@pytest.mark.parametrize("command", ["report", "view", "challenge"])
def test_a_damaged_run_directory_is_one_line_never_a_traceback(run, tmp_path, store, victim, planted, command):
    if planted == "cell_deep":
        (run / "cell.json").write_text(_deep())
    elif planted == "results_deep":
        (run / "results.json").write_text(_deep())
    elif planted == "qa_deep":
        (run / "qa.jsonl").write_text(_deep() + "\n")
    elif planted == "trajectory_deep":
        with open(run / "trajectory.jsonl", "a") as f:
            f.write(_deep(5_000) + "\n")
    elif planted == "graph_string_step":
        graph = json.loads((run / "dependency_graph.json").read_text())
        graph["nodes"][0]["step"] = "seven"
        (run / "dependency_graph.json").write_text(json.dumps(graph))
    elif planted == "graph_wrong_types":
        (run / "dependency_graph.json").write_text(json.dumps({"nodes": "x", "edges": [[1, 2]]}))
    elif planted == "results_fifo":
        (run / "results.json").unlink()
        os.mkfifo(run / "results.json")
    else:
        (run / "trajectory.jsonl").unlink()
        (run / "trajectory.jsonl").symlink_to(victim)
    target = str(run) if command == "view" else str(run.parent)
    done = odyssey(
        command, target, *(["--no-html"] if command == "report" else []), cwd=tmp_path, store=store, timeout=120
    )
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "RecursionError" not in text, text
    if planted.startswith("graph"):  # a damaged graph spoils its own section, not the command
        assert done.returncode == 0 or command == "challenge", text
    elif planted == "results_fifo" and command == "view":
        assert done.returncode == 0, text  # not finished as far as the viewer is concerned; the FIFO is never opened
    else:
        assert done.returncode != 0 or command == "challenge", text
        if done.returncode != 0:
            one_line_refusal(done)
    _unchanged(victim)
