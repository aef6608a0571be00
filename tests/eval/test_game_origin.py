"""The report and the viewer say what a run's game is relative to the paper (results.json's ``game_origin``)."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

from odyssey_eval.collect import load_runs
from odyssey_eval.gameorigin import origin_text
from odyssey_eval.report import write_html
from odyssey_eval.viewer import view_data

PAPER = {
    "kind": "paper",
    "env_id": "AgentOdyssey/Remnant-v0",
    "summary": "imported from agentodyssey 0.1.0 (sha256 d849dd9d6ae4)",
    "release": "agentodyssey 0.1.0",
    "sha256": "d849dd9d6ae48590",
}
EVIL = "<script>window.__pwned=1</script>"


def test_the_line_names_the_kind_and_the_release() -> None:
    assert origin_text(PAPER) == (
        "the paper's game AgentOdyssey/Remnant-v0: imported from agentodyssey 0.1.0 (sha256 d849dd9d6ae4)"
    )
    own = {"kind": "odyssey", "env_id": "Odyssey/Mossfall-v0", "summary": "odyssey's own game"}
    assert origin_text(own) == "odyssey's own game, not one of the paper's (Odyssey/Mossfall-v0)"
    for bad in (None, "paper", [], {"kind": "paper"}, {"kind": "alien", "env_id": "x"}, {"kind": "user", "env_id": 3}):
        assert origin_text(bad) is None, bad
    assert "\u202e" not in (origin_text({**PAPER, "summary": "a\u202eb\nc"}) or "")


def _with_origin(run: Path, dest: Path, origin: object) -> Path:
    shutil.copytree(run, dest)
    results = json.loads((dest / "results.json").read_text())
    results["game_origin"] = origin
    (dest / "results.json").write_text(json.dumps(results))
    return dest


def test_the_report_says_it_under_the_games_heading(random_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "own.html"
    runs, _ = load_runs([random_run])
    write_html(runs, out, views=False)
    assert html.escape("odyssey's own game, not one of the paper's (Odyssey/Mossfall-v0)") in out.read_text()
    paper = _with_origin(random_run, tmp_path / "paper-run", PAPER)
    runs, _ = load_runs([paper])
    write_html(runs, out, views=False)
    assert html.escape(origin_text(PAPER) or "") in out.read_text()
    evil = _with_origin(random_run, tmp_path / "evil-run", {**PAPER, "summary": EVIL})
    runs, _ = load_runs([evil])
    write_html(runs, out, views=False)
    page = out.read_text()
    assert EVIL not in page and html.escape(EVIL) in page


def test_the_viewer_carries_it_for_its_header(random_run: Path, tmp_path: Path) -> None:
    assert view_data(random_run)["run"]["origin"] == "odyssey's own game, not one of the paper's (Odyssey/Mossfall-v0)"
    paper = _with_origin(random_run, tmp_path / "paper-run", PAPER)
    assert view_data(paper)["run"]["origin"] == origin_text(PAPER)
    older = _with_origin(random_run, tmp_path / "older-run", None)  # a run made before game_origin existed
    assert view_data(older)["run"]["origin"] is None
