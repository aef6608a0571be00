"""Finding run directories and loading what reports need from them.

Metrics are recomputed from each trajectory (not copied from ``results.json``), so a report is
always what the data says, and a run whose stored results disagree with its trajectory is caught.

Reading results never runs code. A run directory is data someone may have handed you, and the game
folder its ``cell.json`` names may hold a ``rules.py``: nothing here imports it, loads the game or
follows that path. What the metrics need to know about the game (its verbs, its carryable objects)
was recorded in ``cell.json`` when the run started (:class:`~odyssey_eval.metrics.GameFacts`). A run
directory from before that was recorded is recomputed only if it names a shipped game (package
code, loaded by name); otherwise its stored metrics are used, with a warning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odyssey_eval.metrics import GameFacts, compute_metrics, cumulative_rewards
from odyssey_eval.qa.ask import answered
from odyssey_eval.rundir import CELL, DEPENDENCY_GRAPH, RESULTS, RunDir, RunDirError, agent_variant
from odyssey_eval.trajectory import Trajectory, TrajectoryError, read_trajectory

__all__ = ["TOP_ACTIONS", "Run", "find_run_dirs", "game_facts", "load_runs", "top_actions"]

#: How many of a run's most frequent commands reports show.
TOP_ACTIONS = 3

#: The stored metrics reports read, when they cannot recompute them.
STORED_METRICS = (
    "play_steps",
    "terminated",
    "main_reward",
    "supplementary_reward",
    "object_exploration",
    "action_exploration",
    "action_diversity",
    "action_diversity_windows",
    "action_diversity_window_mean",
    "invalid_action_rate",
    "tokens_per_step",
    "total_tokens",
    "decision_time_mean",
    "tutorial",
)


@dataclass
class Run:
    """One finished run: its stored results, recomputed metrics and per-step curves."""

    path: Path
    results: dict[str, Any]
    metrics: dict[str, Any]
    main_curve: list[int]
    sup_curve: list[int]
    token_curve: list[int]
    qa: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: the run directory of the cell (a multi-agent cell's for each of its agents)
    cell_path: Path | None = None
    #: what the agent mostly did: its most frequent play commands with their counts, most frequent first
    top_actions: list[tuple[str, int]] = field(default_factory=list)

    @property
    def dependency_graph(self) -> Path | None:
        """The cell's saved action-dependency graph, if it tracked one."""
        p = (self.cell_path or self.path) / DEPENDENCY_GRAPH
        return p if p.is_file() else None

    @property
    def game(self) -> str:
        return self.results["game"]

    @property
    def label(self) -> str:
        """The agent configuration, without the seed: runs with the same label are averaged."""
        agent = self.results.get("agent_name") or self.results["agent"].get("name", "?")
        config = self.results.get("agent_config") or {}
        addons = config.get("addons") or []
        llm = self.results.get("llm") or {}
        llm_part = llm.get("name", "none") + (f":{llm['model']}" if llm.get("model") else "")
        text = "+".join([agent, *sorted(addons), *agent_variant({"name": agent, **config})])
        if llm_part != "none":
            text += f" / {llm_part}"
        if self.results.get("tag"):
            text += f" [{self.results['tag']}]"
        team = (self.results.get("multiagent") or {}).get("agents")
        if team:  # one agent of a multi-agent cell: kept apart from the same agent playing alone
            text += f" in {','.join(team)}"
        return text

    def qa_accuracy(self, kind: str, phase: str) -> float | None:
        """Accuracy of the last round of this kind and phase; None if there was none or the agent
        answered nothing (an agent without ``answer``, like the oracle, is not scored as 0)."""
        hits = [r["accuracy"] for r in self.qa if r["kind"] == kind and r["phase"] == phase and answered(r)]
        return hits[-1] if hits else None


def find_run_dirs(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """(finished, unfinished) run directories under the given paths, sorted."""
    finished: set[Path] = set()
    unfinished: set[Path] = set()
    for p in map(Path, paths):
        if not p.exists():
            raise FileNotFoundError(f"{p} does not exist")
        candidates = [p] if (p / CELL).is_file() else [c.parent for c in p.rglob(CELL)]
        for c in candidates:
            if any(part.startswith(".") for part in c.relative_to(p).parts):
                continue  # .hydra and other tool folders
            (finished if (c / RESULTS).is_file() else unfinished).add(c)
    return sorted(finished), sorted(unfinished)


def game_facts(rd: RunDir) -> GameFacts | None:
    """What the run recorded of its game (see the module docstring); None if nothing safe is known.

    ``rd`` is the cell's directory: an agent's folder of a multi-agent cell reads its cell's record.
    """
    recorded = rd.recorded_facts()
    if recorded is not None:
        try:
            return GameFacts.from_dict(recorded)
        except ValueError as exc:
            raise RunDirError(f"{rd.path / CELL} is damaged (facts: {exc}); remove the run directory") from None
    game = rd.cell().get("game")
    if not isinstance(game, dict) or game.get("path") or not isinstance(game.get("name"), str):
        return None
    from odyssey_env.game import available_games, load_game

    if game["name"] not in available_games():  # a bare name could also be read as a folder: never
        return None
    return GameFacts.of(load_game(game["name"]))


def top_actions(steps: Iterable[dict[str, Any]], n: int = TOP_ACTIONS) -> list[tuple[str, int]]:
    """The ``n`` most frequent commands of these steps, with their counts; ties go to the command first
    played, so the answer is the same in any process. Commands are compared as written, after trimming
    and lower-casing (as the engine reads them), and a line without a text command counts as ``?``."""
    counts: Counter[str] = Counter()
    for s in steps:
        action = s.get("action")
        counts[" ".join(action.lower().split()) if isinstance(action, str) and action.strip() else "?"] += 1
    return counts.most_common(n)  # most_common keeps insertion order among equal counts


def load_cell(path: Path) -> list[Run]:
    """The runs of one finished cell: itself, or each agent of a multi-agent cell.

    A field of the wrong type anywhere in the cell's files is one line naming the cell, never a traceback
    later in a report."""
    try:
        runs = _load_cell(path)
        for run in runs:  # what reports read of every run, computed once here where a failure names it
            _ = run.label, run.game
    except (RunDirError, FileNotFoundError):
        raise
    except (TypeError, KeyError, AttributeError, IndexError, ValueError) as exc:
        raise RunDirError(
            f"{path} is damaged ({type(exc).__name__}: {str(exc)[:200]}); remove the run directory"
        ) from None
    return runs


def _stored_metrics_problem(metrics: dict[str, Any]) -> str | None:
    """What is wrong with stored metrics a report would use as they are (None: nothing)."""
    for key in STORED_METRICS:
        value = metrics.get(key)
        if key == "terminated":
            ok = isinstance(value, bool)
        elif key == "action_diversity_windows":
            ok = isinstance(value, list) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
        elif key == "tutorial":
            ok = isinstance(value, dict) and isinstance(value.get("steps"), int)
        else:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok:
            return f"metrics.{key} is missing or of the wrong type"
    return None


def _load_cell(path: Path) -> list[Run]:
    rd = RunDir(path)
    results = rd.results()
    if "agents" in results and "multiagent" in results:
        from odyssey_eval.cell import AGENTS_DIR

        return [load_run(path / AGENTS_DIR / aid, cell_path=path) for aid in results["agents"]]
    return [load_run(path)]


def load_run(path: Path, *, cell_path: Path | None = None) -> Run:
    """Read one finished run directory and recompute its metrics from the trajectory (an agent's folder
    of a multi-agent cell reads the game's record from its cell, ``cell_path``)."""
    rd = RunDir(path)
    results = rd.results()
    try:
        traj: Trajectory = read_trajectory(rd.trajectory)
    except TrajectoryError as exc:
        raise RunDirError(str(exc)) from None
    warnings = []
    facts = game_facts(RunDir(cell_path) if cell_path is not None else rd)
    if facts is None:
        metrics = results["metrics"]
        missing = [k for k in STORED_METRICS if k not in metrics]
        if missing:
            raise RunDirError(
                f"{rd.results_file} is damaged (metrics lack {', '.join(missing)}); remove the run directory"
            )
        wrong = _stored_metrics_problem(metrics)
        if wrong:
            raise RunDirError(f"{rd.results_file} is damaged ({wrong}); remove the run directory")
        warnings.append(
            f"the run recorded no facts of game {results['game']!r} and it is not a shipped game; using stored metrics"
        )
    else:
        stop = results["metrics"].get("stop_decision_tokens")
        stop_calls = results["metrics"].get("stop_decision_calls")
        metrics = compute_metrics(
            traj,
            facts,
            stop_tokens=stop if isinstance(stop, list) else None,
            stop_calls=stop_calls if isinstance(stop_calls, dict) else None,
        )
    for key in ("main_reward", "supplementary_reward", "play_steps"):
        if results.get(key) != metrics.get(key):
            warnings.append(f"results.json says {key}={results.get(key)}, the trajectory gives {metrics.get(key)}")
    main, sup = cumulative_rewards(traj)
    tokens, total = [], 0
    for s in traj.play:
        total += sum(s.get("tokens", (0, 0)))
        tokens.append(total)
    return Run(
        path, results, metrics, main, sup, tokens, rd.qa_rounds(), warnings, cell_path or path, top_actions(traj.play)
    )


def load_runs(paths: Iterable[str | Path]) -> tuple[list[Run], list[Path]]:
    """Load every finished run under ``paths``; also return the unfinished run directories found."""
    finished, unfinished = find_run_dirs(paths)
    return [run for p in finished for run in load_cell(p)], unfinished
