"""Finding run directories and loading what reports need from them.

Metrics are recomputed from each trajectory (not copied from ``results.json``), so a report is
always what the data says, and a run whose stored results disagree with its trajectory is caught.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from odyssey_eval.metrics import compute_metrics, cumulative_rewards
from odyssey_eval.qa.ask import answered
from odyssey_eval.rundir import CELL, RESULTS, RunDir, RunDirError
from odyssey_eval.trajectory import Trajectory, TrajectoryError, read_trajectory

if TYPE_CHECKING:
    from odyssey_env.game import Game

__all__ = ["Run", "find_run_dirs", "load_runs"]


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

    @property
    def game(self) -> str:
        return self.results["game"]

    @property
    def label(self) -> str:
        """The agent configuration, without the seed: runs with the same label are averaged."""
        agent = self.results.get("agent_name") or self.results["agent"].get("name", "?")
        addons = (self.results.get("agent_config") or {}).get("addons") or []
        llm = self.results.get("llm") or {}
        llm_part = llm.get("name", "none") + (f":{llm['model']}" if llm.get("model") else "")
        text = "+".join([agent, *sorted(addons)])
        if llm_part != "none":
            text += f" / {llm_part}"
        if self.results.get("tag"):
            text += f" [{self.results['tag']}]"
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


def _load_game(rd: RunDir, results: dict[str, Any]) -> Game:
    from odyssey_env.game import load_game

    game_cfg = rd.cell().get("game", {})
    return load_game(game_cfg.get("path") or game_cfg.get("name") or results["game"])


def load_run(path: Path) -> Run:
    """Read one finished run directory and recompute its metrics from the trajectory."""
    from odyssey_env.game import GameError

    rd = RunDir(path)
    results = rd.results()
    try:
        traj: Trajectory = read_trajectory(rd.trajectory)
    except TrajectoryError as exc:
        raise RunDirError(str(exc)) from None
    warnings = []
    try:
        game = _load_game(rd, results)
    except GameError as exc:  # a generated game's folder moved or was removed: the stored metrics, said so
        metrics = results["metrics"]
        warnings.append(f"game {results['game']!r} could not be loaded ({exc}); using stored metrics")
    else:
        metrics = compute_metrics(traj, game, stop_tokens=results["metrics"].get("stop_decision_tokens"),
                                  stop_calls=results["metrics"].get("stop_decision_calls"))
    for key in ("main_reward", "supplementary_reward", "play_steps"):
        if results.get(key) != metrics.get(key):
            warnings.append(f"results.json says {key}={results.get(key)}, the trajectory gives {metrics.get(key)}")
    main, sup = cumulative_rewards(traj)
    tokens, total = [], 0
    for s in traj.play:
        total += sum(s.get("tokens", (0, 0)))
        tokens.append(total)
    return Run(path, results, metrics, main, sup, tokens, rd.qa_rounds(), warnings)


def load_runs(paths: Iterable[str | Path]) -> tuple[list[Run], list[Path]]:
    """Load every finished run under ``paths``; also return the unfinished run directories found."""
    finished, unfinished = find_run_dirs(paths)
    return [load_run(p) for p in finished], unfinished
