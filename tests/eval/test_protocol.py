"""Run protocols: ``protocol=paper`` counts the tutorial's steps in ``max_steps``, as the reference does.

Real cells (the oracle, which finishes Mossfall's tutorial in a few dozen steps) under both protocols:
the budget, ``results.json``, the run directory, and ``odyssey challenge`` refusing to rank runs of
different protocols together.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odyssey_eval import protocol
from odyssey_eval.challenge import main as challenge_main
from odyssey_eval.factory import ConfigError
from odyssey_eval.runner import run_cell

from .conftest import cell, quiet

BUDGET = 45
#: odyssey's own games of the challenge's sizes (the ranking games are the paper's, once imported)
OWN_GAMES = ("--games", "quiet_bell", "tallowmere", "gavelmoor")


def _oracle(out: Path, game: str = "mossfall", seed: int = 0, **over) -> dict:
    return cell(
        out, game={"name": game, "path": None}, agent={"name": "oracle"}, seed=seed, max_steps=BUDGET,
        qa={"enabled": False}, eval={"checkpoint_every": 1000}, **over,
    )  # fmt: skip


def test_the_paper_protocol_spends_the_budget_on_the_tutorial_too(tmp_path):
    plain = run_cell(_oracle(tmp_path), log=quiet)
    paper = run_cell(_oracle(tmp_path, protocol="paper"), log=quiet)
    r, p = plain.results, paper.results
    assert r["protocol"] == "odyssey" and p["protocol"] == "paper"
    assert r["tutorial_steps"] == p["tutorial_steps"] > 0  # the same tutorial, the same oracle
    assert r["play_steps"] == BUDGET and r["steps"] == BUDGET + r["tutorial_steps"]
    assert p["steps"] == BUDGET and p["play_steps"] == BUDGET - p["tutorial_steps"]
    assert (r["end_reason"], p["end_reason"]) == ("max_steps", "max_steps")
    assert plain.path.name == "seed_0" and paper.path.name == "seed_0_protocol=paper"
    assert json.loads((paper.path / "cell.json").read_text())["protocol"] == "paper"
    assert "protocol" not in json.loads((plain.path / "cell.json").read_text())  # as before protocols


def test_an_unknown_protocol_is_one_line_naming_the_known_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"^protocol must be one of odyssey, paper, got 'reference'$"):
        run_cell(_oracle(tmp_path, protocol="reference"), log=quiet)


@pytest.fixture(scope="module")
def challenge_runs(tmp_path_factory) -> dict[str, Path]:
    """One oracle run per ranking game under each protocol, in two folders."""
    roots = {name: tmp_path_factory.mktemp(name) for name in protocol.PROTOCOLS}
    for name, root in roots.items():
        for game in ("quiet_bell", "tallowmere", "gavelmoor"):
            run_cell(_oracle(root, game=game, protocol=name), log=quiet)
    return roots


def test_the_challenge_refuses_runs_of_different_protocols_in_one_line_naming_them(challenge_runs, capsys):
    paper, plain = challenge_runs["paper"], challenge_runs["odyssey"]
    assert challenge_main([str(paper), str(plain), "--min-runs", "1", *OWN_GAMES]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("odyssey challenge: runs of different protocols")
    assert err.count("seed_0_protocol=paper") == 3 and err.count(str(plain)) == 3
    # --protocol names the one protocol to rank: runs of another are refused, named
    assert challenge_main([str(plain), "--protocol", "paper", "--min-runs", "1", *OWN_GAMES]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "not of protocol paper" in err and err.count(str(plain)) == 3


def test_the_challenge_ranks_paper_runs_and_marks_runs_of_another_protocol(challenge_runs, capsys):
    assert (
        challenge_main([str(challenge_runs["paper"]), "--json", "--min-runs", "1", *OWN_GAMES, "--budget", str(BUDGET)])
        == 0
    )
    ranked = json.loads(capsys.readouterr().out)
    assert ranked["protocol"] == "paper"
    (oracle,) = ranked["ranking"]
    assert not [w for w in oracle["warnings"] if "protocol" in w or "budget" in w or "ended after" in w], oracle
    assert (
        challenge_main(
            [str(challenge_runs["odyssey"]), "--json", "--min-runs", "1", *OWN_GAMES, "--budget", str(BUDGET)]
        )
        == 0
    )
    (oracle,) = json.loads(capsys.readouterr().out)["ranking"]
    assert any("played under protocol odyssey, not the challenge's paper" in w for w in oracle["warnings"])


def test_a_multi_agent_cell_under_the_paper_protocol_counts_each_agents_tutorial_steps(tmp_path):
    pytest.importorskip("pettingzoo", reason='multi-agent cells need the "multiagent" extra')
    from odyssey_eval.runner import AGENTS_DIR, run_multi_cell

    cfg = _oracle(tmp_path, protocol="paper")
    cfg.pop("agent")
    cfg["agents"] = ["oracle", "oracle"]
    out = run_multi_cell(cfg, log=quiet)
    assert out.path.name == "seed_0_protocol=paper" and out.results["protocol"] == "paper"
    for agent_dir in sorted((out.path / AGENTS_DIR).iterdir()):
        r = json.loads((agent_dir / "results.json").read_text())
        assert r["protocol"] == "paper" and r["tutorial_steps"] > 0
        assert r["steps"] == BUDGET and r["play_steps"] == BUDGET - r["tutorial_steps"], agent_dir.name
