"""Reports and the challenge aggregation on run directories and on hand-made runs."""

from __future__ import annotations

import json
import sys

import pytest

from odyssey_agents.base import Agent, Answer, Call, Decision, Usage
from odyssey_eval.challenge import aggregate
from odyssey_eval.collect import Run, load_runs
from odyssey_eval.progress import LineProgress, NullProgress, make_progress
from odyssey_eval.report import build_rows, format_table, mean_rows
from odyssey_eval.report import main as report_main
from odyssey_eval.runner import run_cell

from .conftest import cell, quiet

TWO = ("quiet_bell", "tallowmere")  # the ranking logic, on two of the challenge's games


def fake(game, agent, seed, main, sup, *, steps=500, tag="", end="max_steps", tutorial=True, protocol="paper"):
    """A finished run as the challenge reads it (of the challenge's protocol unless told; ``steps`` counts all)."""
    metrics = {"play_steps": steps, "terminated": end == "terminated", "main_reward": main, "supplementary_reward": sup}
    results = {
        "game": game,
        "agent": {"name": agent},
        "agent_name": agent,
        "agent_config": {"name": agent},
        "llm": {"name": "none"},
        "seed": seed,
        "max_steps": 500,
        "tutorial": tutorial,
        "tag": tag,
        "end_reason": end,
        "protocol": protocol,
        "steps": steps,
    }
    return Run(
        path=f"/runs/{game}/{agent}/{seed}",
        results=results,
        metrics=metrics,
        main_curve=[main],
        sup_curve=[sup],
        token_curve=[0],
    )


def test_challenge_ranks_by_mean_main_then_supplementary():
    runs = []
    for seed in range(3):
        runs += [fake("quiet_bell", "a", seed, 4, 10), fake("tallowmere", "a", seed, 2, 1)]  # score 3, tie 5.5
        runs += [fake("quiet_bell", "b", seed, 2, 20), fake("tallowmere", "b", seed, 4, 0)]  # score 3, tie 10
        runs += [fake("quiet_bell", "c", seed, 1 + seed, 0), fake("tallowmere", "c", seed, 0, 0)]  # score 1
    table = aggregate(runs, TWO)
    assert [t["submission"] for t in table] == ["b", "a", "c"]
    assert [t["rank"] for t in table] == [1, 2, 3]
    assert table[0]["score"] == pytest.approx(3.0) and table[0]["tiebreak"] == pytest.approx(10.0)
    assert table[2]["games"]["quiet_bell"]["main"] == pytest.approx(2.0)  # (1 + 2 + 3) / 3
    assert all(t["warnings"] == [] and t["complete"] for t in table)


def test_challenge_protocol_warnings():
    runs = [
        fake("quiet_bell", "x", 0, 3, 1),
        fake("quiet_bell", "x", 0, 3, 1, steps=120),
        fake("quiet_bell", "x", 1, 3, 1, tutorial=False),
        fake("mossfall", "x", 0, 9, 9),
    ]
    (t,) = aggregate(runs, TWO)
    text = "\n".join(t["warnings"])
    assert "no runs of tallowmere" in text and not t["complete"]
    assert "at least 3" not in text  # 3 runs of quiet_bell
    assert "the same seed appears more than once" in text
    assert "ended after 120 steps" in text
    assert "without the tutorial" in text
    assert "non-ranking games ignored: mossfall" in text
    assert t["score"] == pytest.approx(3.0)  # over the games present


def test_ties_share_a_rank():
    runs = [fake(g, a, s, 1, 1) for g in ("quiet_bell", "tallowmere") for a in ("p", "q") for s in range(3)]
    assert [t["rank"] for t in aggregate(runs, TWO)] == [1, 1]


def test_report_rows_and_table_from_a_run(random_run, tmp_path):
    runs, unfinished = load_runs([random_run])
    assert unfinished == []
    (row,) = build_rows(runs)
    stored = json.loads((random_run / "results.json").read_text())
    assert (row["main"], row["sup"], row["play_steps"]) == (stored["main_reward"], stored["supplementary_reward"], 120)
    assert row["combined"] == pytest.approx(1.0 if row["main"] or row["sup"] else 0.0)  # alone: its own max
    assert row["wk_before"] is not None and row["em_after"] is not None
    phases = [(q["phase"], q["step"]) for q in stored["qa"] if q["kind"] == "world_knowledge"]
    assert phases == [("before", 0), ("during", 40), ("during", 80), ("after", 120)]
    table = format_table(mean_rows(build_rows(runs)))
    assert table.splitlines()[2].split()[:3] == ["mossfall", "random", "n=1"]


def test_report_command_lists_unfinished_and_writes_html(random_run, tmp_path, capsys):
    # an unfinished cell next to a finished one
    cfg = cell(tmp_path, max_steps=30)
    from odyssey_eval.rundir import RunDir, run_path

    RunDir(run_path(cfg)).start({"game": {"name": "mossfall"}})
    out = tmp_path / "r.html"
    assert report_main([str(random_run), str(tmp_path), "--html", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "unfinished:" in printed and str(out) in printed
    html = out.read_text()
    assert "Unfinished run directories" in html and html.count("<img") == 4


def test_report_without_matplotlib_says_so_instead_of_failing(random_run, tmp_path, monkeypatch):
    """Reports need only the core install; figures need the eval extra."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    out = tmp_path / "r.html"
    assert report_main([str(random_run), "--html", str(out)]) == 0
    html = out.read_text()
    assert "Plots need matplotlib" in html and "<img" not in html


def test_report_warns_when_results_disagree_with_the_trajectory(tmp_path, capsys):
    out = run_cell(cell(tmp_path, max_steps=20, qa={"enabled": False}), log=quiet)
    results = json.loads((out.path / "results.json").read_text())
    results["main_reward"] += 5
    (out.path / "results.json").write_text(json.dumps(results))
    assert report_main([str(out.path), "--no-html"]) == 0
    assert "results.json says main_reward" in capsys.readouterr().out


def test_a_run_whose_game_folder_is_gone_is_still_recomputed_from_what_it_recorded(tmp_path):
    import shutil

    from odyssey_env.game import GAMES_DIR

    folder = tmp_path / "my_game"
    shutil.copytree(GAMES_DIR / "mossfall", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    out = run_cell(
        cell(tmp_path / "runs", game={"name": "mossfall", "path": str(folder)}, max_steps=10, qa={"enabled": False}),
        log=quiet,
    )
    shutil.rmtree(folder)
    (run,) = load_runs([out.path])[0]
    assert run.metrics == out.results["metrics"] and run.warnings == []


def test_an_old_run_directory_of_a_game_folder_is_reported_from_its_stored_metrics(tmp_path):
    """A run directory from before game facts were recorded: its folder is never loaded to find them."""
    import shutil

    from odyssey_env.game import GAMES_DIR

    folder = tmp_path / "my_game"
    shutil.copytree(GAMES_DIR / "mossfall", folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    out = run_cell(
        cell(tmp_path / "runs", game={"name": "mossfall", "path": str(folder)}, max_steps=10, qa={"enabled": False}),
        log=quiet,
    )
    record = json.loads((out.path / "cell.json").read_text())
    del record["facts"]
    (out.path / "cell.json").write_text(json.dumps(record))
    (run,) = load_runs([out.path])[0]
    assert run.metrics == out.results["metrics"]
    assert any("recorded no facts" in w and "using stored metrics" in w for w in run.warnings)


def test_report_errors(tmp_path, capsys):
    assert report_main([str(tmp_path / "missing")]) == 2
    assert report_main([str(tmp_path)]) == 1
    assert "no finished runs" in capsys.readouterr().err


def test_progress_bar_modes(capsys):
    assert isinstance(make_progress(False, "x", 10), NullProgress)
    assert type(make_progress("auto", "x", 10)) is LineProgress  # tests do not run on a terminal
    bar = make_progress(True, "base random seed 0", 10)
    bar.update(5, 1, 2, 300, force=True)
    bar.close()
    assert "main 1" in capsys.readouterr().out


class TalkerAgent(Agent):
    """A test agent that 'spends' tokens: 100 in and 7 out per act, 5 in and 1 out per answer."""

    name = "talker"

    def act(self, observation, info):
        return Decision("wait", usage=Usage([Call("act", 100, 7)]))

    def answer(self, question, choices):
        return Answer(0, usage=Usage([Call("answer", 5, 1)]))


def test_tokens_are_counted_and_plotted(tmp_path):
    from odyssey_agents.registry import AGENTS, register_agent

    register_agent("talker", f"{__name__}:TalkerAgent")
    try:
        out = run_cell(cell(tmp_path, agent={"name": "talker"}, max_steps=12), log=quiet)
    finally:
        del AGENTS["talker"]
    m = out.results["metrics"]
    assert (m["input_tokens"], m["output_tokens"], m["tokens_per_step"]) == (1200, 84, 107.0)
    wk = [q for q in out.results["qa"] if q["kind"] == "world_knowledge"]
    assert wk[0]["tokens"] == [5 * wk[0]["questions"], wk[0]["questions"]]
    html = tmp_path / "r.html"
    assert report_main([str(out.path), "--html", str(html)]) == 0
    text = html.read_text()
    # tokens plotted; a waiting agent earns nothing (said, not drawn), and no window plot for 12 steps
    assert text.count("<img") == 1 and "alt='Cumulative tokens'" in text and "No reward in this run" in text


def test_labels_are_drawn_verbatim_even_with_mathtext_characters(tmp_path):
    """A tag with ``$`` used to crash the HTML report inside matplotlib's mathtext parser."""
    pytest.importorskip("matplotlib")
    from odyssey_eval.plots import figure_png, literal

    for label in ("random [$x^$]", "a $\\frac{$ b", "_hidden", "cost $5 and $6"):
        assert figure_png("t $^$", {label: [[0, 1, 2]]}).startswith(b"\x89PNG")
    assert literal("$x$") == "\\$x\\$" and literal("_a") == " _a"
    out = run_cell(cell(tmp_path, max_steps=5, qa={"enabled": False}, eval={"tag": "$^{bad"}), log=quiet)
    assert report_main([str(out.path), "--html", str(tmp_path / "r.html")]) == 0
    assert "$^{bad" in (tmp_path / "r.html").read_text()


def test_no_negative_zero_in_tables():
    from odyssey_eval.report import _fmt

    assert _fmt(-0.0001, ".3f") == "0.000" and _fmt(-0.0, ".2f") == "0.00" and _fmt(-0.00001, ".1%") == "0.0%"
    assert _fmt(-0.5, ".3f") == "-0.500" and _fmt(-0.0004, ".4f") == "-0.0004"


def test_short_runs_get_no_empty_window_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = run_cell(cell(tmp_path, max_steps=30, qa={"enabled": False}), log=quiet)
    assert report_main([str(out.path), "--html", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert "Action diversity (window of 100)" not in html
    assert "longer than one window of 100 commands" in html and html.count("<img") == 3


def test_every_column_is_defined_in_the_legend_and_its_tooltip(random_run, tmp_path):
    from odyssey_eval.report import COLUMNS, GLOSSARY

    assert {k for k, _, _ in COLUMNS} <= set(GLOSSARY)
    out = tmp_path / "r.html"
    assert report_main([str(random_run), "--html", str(out), "--no-views"]) == 0
    html = out.read_text()
    assert "What the columns mean" in html
    for header in ("OE", "AE", "AD", "AD100", "EM", "failed"):
        assert f"<dt>{header}</dt>" in html
    assert "<th title='OE, object exploration:" in html and "<th title='EM, Episodic-Memory QA" in html


class FumblerAgent(Agent):
    """Asks the world for what is not there every third step (a failed action), else waits or mumbles."""

    name = "fumbler"

    def act(self, observation, info):
        self.n = getattr(self, "n", 0) + 1
        return Decision(("pick up dragon_egg", "wait", "fly away")[self.n % 3])


def test_failed_action_rate_is_a_column_beside_the_invalid_rate(tmp_path, capsys):
    from odyssey_agents.registry import AGENTS, register_agent

    register_agent("fumbler", f"{__name__}:FumblerAgent")
    try:
        out = run_cell(cell(tmp_path, agent={"name": "fumbler"}, max_steps=12, tutorial=False), log=quiet)
    finally:
        del AGENTS["fumbler"]
    m = out.results["metrics"]
    assert (m["failed_actions"], m["invalid_actions"]) == (4, 4)
    assert m["failed_action_rate"] == pytest.approx(4 / 12)
    (row,) = build_rows(load_runs([out.path])[0])
    assert row["failed_action_rate"] == pytest.approx(4 / 12)
    capsys.readouterr()
    assert report_main([str(out.path), "--no-html"]) == 0
    header, _, body = capsys.readouterr().out.splitlines()[:3]
    cols, cells = header.split(), body.split()
    assert cols[cols.index("invalid") + 1] == "failed"
    assert cells[cols.index("invalid") : cols.index("invalid") + 2] == ["33.3%", "33.3%"]


def _play_lines(run_dir):
    lines = [json.loads(line) for line in (run_dir / "trajectory.jsonl").read_text().splitlines()[1:]]
    return [s for s in lines if not s.get("tutorial")]


class WaiterAgent(Agent):
    """Waits every step: earns nothing, so its report has no reward to draw."""

    name = "waiter"

    def act(self, observation, info):
        return Decision("wait")


def test_a_run_without_reward_says_so_instead_of_drawing_flat_zeros(tmp_path):
    pytest.importorskip("matplotlib")
    from odyssey_agents.registry import AGENTS, register_agent

    register_agent("waiter", f"{__name__}:WaiterAgent")
    try:
        out = run_cell(cell(tmp_path, agent={"name": "waiter"}, max_steps=15, qa={"enabled": False}), log=quiet)
    finally:
        del AGENTS["waiter"]
    assert out.results["main_reward"] == out.results["supplementary_reward"] == 0
    html_path = tmp_path / "r.html"
    assert report_main([str(out.path), "--html", str(html_path), "--no-views"]) == 0
    html = html_path.read_text()
    assert "No reward in this run" in html
    assert "<img" not in html  # no reward, no model, one window: nothing to draw
    assert "<code>wait</code> 100% (15)" in html  # what it mostly did


def test_each_run_says_what_the_agent_mostly_did(random_run, tmp_path):
    from collections import Counter

    (run,) = load_runs([random_run])[0]
    top = Counter(s["action"] for s in _play_lines(random_run)).most_common(1)[0]
    assert run.top_actions[0][1] == top[1] and len(run.top_actions) == 3
    assert [c for _, c in run.top_actions] == sorted((c for _, c in run.top_actions), reverse=True)
    out = tmp_path / "r.html"
    assert report_main([str(random_run), "--html", str(out), "--no-views", "--json", str(tmp_path / "r.json")]) == 0
    assert "What each run mostly did" in out.read_text()
    assert json.loads((tmp_path / "r.json").read_text())["runs"][0]["top_actions"] == [list(p) for p in run.top_actions]
