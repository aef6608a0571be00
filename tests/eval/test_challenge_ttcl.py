"""The TTCL challenge over its three games (Quiet Bell, Tallowmere, Gavelmoor), raw and normalised.

Raw scores average stages completed, so the games weigh 24:17:31; the normalised score averages the
fraction of each game's stages. Both are checked on real runs: the oracle (which completes every
stage) and the random agent, three seeds per game, played by the runner and read back from their run
directories as ``odyssey challenge`` reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from odyssey_eval.challenge import AGGREGATIONS, RANKING_GAMES, aggregate
from odyssey_eval.challenge import main as challenge_main
from odyssey_eval.collect import Run, load_runs
from odyssey_eval.runner import run_cell

from .conftest import cell, quiet

STAGES = {"quiet_bell": 24, "tallowmere": 17, "gavelmoor": 31}
#: Odyssey's own games of the ranking games' sizes: they play here without importing the paper's games.
OWN = ("quiet_bell", "tallowmere", "gavelmoor")
SEEDS = (0, 1, 2)


@pytest.fixture(scope="module")
def ttcl_runs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ttcl")
    for game in OWN:
        for seed in SEEDS:
            for agent in ({"name": "oracle"}, {"name": "random", "seed": None}):
                cfg = cell(
                    out,
                    game={"name": game, "path": None},
                    agent=agent,
                    seed=seed,
                    max_steps=500,
                    qa={"enabled": False},
                    eval={"checkpoint_every": 1000},
                )
                run_cell(cfg, log=quiet)
    return out


def _challenge(capsys, root: Path, *args: str) -> dict:
    assert challenge_main([str(root), "--json", "--games", *OWN, *args]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_challenge_games_are_those_of_the_reference() -> None:
    assert RANKING_GAMES == ("remnant", "mark", "metropolis") and AGGREGATIONS == ("raw", "normalized")


def test_raw_and_normalised_scores_of_oracle_and_random_runs(ttcl_runs, capsys) -> None:
    raw = _challenge(capsys, ttcl_runs)
    norm = _challenge(capsys, ttcl_runs, "--aggregate", "normalized")
    assert (raw["aggregation"], norm["aggregation"]) == ("raw", "normalized")
    by = {t["submission"]: t for t in raw["ranking"]}
    nby = {t["submission"]: t for t in norm["ranking"]}
    oracle, random_ = by["oracle"], by["random"]
    assert oracle["complete"] and oracle["rank"] == 1 and random_["rank"] == 2
    for game, n in STAGES.items():
        assert oracle["games"][game]["main"] == n and oracle["games"][game]["stages"] == n
        assert oracle["games"][game]["fraction"] == 1.0
        g = random_["games"][game]
        assert g["stages"] == n and g["fraction"] == pytest.approx(g["main"] / n)
    assert oracle["score"] == pytest.approx(sum(STAGES.values()) / 3)  # 24: raw stage counts
    assert nby["oracle"]["score"] == pytest.approx(1.0)
    fractions = [random_["games"][g]["fraction"] for g in STAGES]
    assert nby["random"]["score"] == pytest.approx(sum(fractions) / 3)
    assert random_["score"] == pytest.approx(sum(random_["games"][g]["main"] for g in STAGES) / 3)
    for t in (*raw["ranking"], *norm["ranking"]):
        assert not [w for w in t["warnings"] if "normalised" in w or "sizes" in w], t["warnings"]


def test_the_table_says_how_it_scored(ttcl_runs, capsys) -> None:
    assert challenge_main([str(ttcl_runs), "--games", *OWN, "--aggregate", "normalized"]) == 0
    out = capsys.readouterr().out
    assert "mean fraction of each game's main-quest stages" in out
    oracle = next(line for line in out.splitlines() if " oracle " in line)
    assert "100.0%" in oracle and "31.00 100%/" in oracle
    assert challenge_main([str(ttcl_runs), "--games", *OWN]) == 0
    out = capsys.readouterr().out
    assert "score = mean raw main-quest reward" in out
    assert "24.00" in next(line for line in out.splitlines() if " oracle " in line)


def test_normalising_needs_the_size_of_each_main_quest(ttcl_runs) -> None:
    runs, _ = load_runs([ttcl_runs])
    runs = [r for r in runs if r.label == "oracle"]
    assert all(r.metrics["main_stages"] == STAGES[r.game] for r in runs)
    blind = [
        Run(r.path, r.results, {**r.metrics, "main_stages": None}, r.main_curve, r.sup_curve, r.token_curve)
        if r.game == "tallowmere"
        else r
        for r in runs
    ]
    (t,) = aggregate(blind, OWN, aggregation="normalized")
    assert t["games"]["tallowmere"]["fraction"] is None
    assert sum("records no main-quest size" in w for w in t["warnings"]) == 3
    assert t["score"] == pytest.approx(1.0)  # over the games that can be normalised
    (t,) = aggregate(blind, OWN)  # the raw score needs no size and warns of nothing
    assert not any("size" in w for w in t["warnings"])
    with pytest.raises(ValueError, match="unknown aggregation 'median'"):
        aggregate(runs, OWN, aggregation="median")


def test_normalising_makes_games_weigh_the_same() -> None:
    """Two submissions that each complete one whole game: raw ranks by the bigger game, normalised ties."""

    def fake(game: str, agent: str, seed: int, main: int) -> Run:
        metrics = {
            "play_steps": 500,
            "terminated": False,
            "main_reward": main,
            "supplementary_reward": 0,
            "main_stages": STAGES[game],
        }
        results = {
            "game": game,
            "agent": {"name": agent},
            "agent_name": agent,
            "llm": {"name": "none"},
            "seed": seed,
            "max_steps": 500,
            "tutorial": True,
            "end_reason": "max_steps",
        }
        return Run(Path(f"/r/{game}/{agent}/{seed}"), results, metrics, [main], [0], [0])

    runs = [fake(g, "big", s, STAGES[g] if g == "gavelmoor" else 0) for g in STAGES for s in SEEDS]
    runs += [fake(g, "small", s, STAGES[g] if g == "tallowmere" else 0) for g in STAGES for s in SEEDS]
    raw = {t["submission"]: t for t in aggregate(runs, OWN)}
    norm = {t["submission"]: t for t in aggregate(runs, OWN, aggregation="normalized")}
    assert (raw["big"]["rank"], raw["small"]["rank"]) == (1, 2)
    assert raw["big"]["score"] == pytest.approx(31 / 3) and raw["small"]["score"] == pytest.approx(17 / 3)
    assert norm["big"]["score"] == norm["small"]["score"] == pytest.approx(1 / 3)
    assert norm["big"]["rank"] == norm["small"]["rank"] == 1


@pytest.mark.parametrize("game", RANKING_GAMES)
def test_every_ranking_game_is_played_by_name_from_the_command_line(game, capsys) -> None:
    """``odyssey run game=<name>`` needs a game config for each: the runs above bypass Hydra, the CLI does not."""
    pytest.importorskip("hydra")
    from odyssey_eval.run import main as run_main

    assert run_main([f"game={game}", "--cfg", "job"]) == 0
    assert f"name: {game}\n" in capsys.readouterr().out
