"""Playing one cell: (game, agent, llm, seed) -> a finished run directory.

The loop is deliberately plain: the agent acts on the last observation, the env steps, one line goes
to ``trajectory.jsonl`` and is flushed. Every ``checkpoint_every`` steps (but not more often than
every ``checkpoint_min_seconds``, and at least every ``checkpoint_max_seconds``) the env state, the
agent's memory and the runner's counters are written as a checkpoint; a killed run restarts from the newest
one, cutting the trajectory back to the bytes that checkpoint had seen, and finishes exactly as an
uninterrupted run would (only wall-clock fields differ). Nothing on the per-step path copies or
serialises the world.

The budget ``max_steps`` counts play steps: steps taken in the tutorial do not use it up (they are
recorded, marked, and reported apart), so agents are compared on the same amount of play. Under the
``paper`` protocol it counts every step, tutorial included, as the reference does (``odyssey_eval.protocol``).

This module knows nothing of Hydra: ``run_cell`` takes the resolved config as a plain dict, which
keeps it usable from Python, tests and benchmarks.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from odyssey_agents.base import Agent, Decision, Task
from odyssey_eval import lifecycle, protocol
from odyssey_eval.factory import build_agent
from odyssey_eval.lifecycle import (
    _DEFAULT_EVAL,  # noqa: F401 - tests compare it with conf/eval/default.yaml
    KILL_AFTER_ENV,
    RESULTS_FORMAT,
    STOPPING,
    CellOutcome,
    RunError,
    RunInterrupted,
    sanitize,
)
from odyssey_eval.metrics import RunningMetrics
from odyssey_eval.progress import NullProgress, make_progress
from odyssey_eval.qa.ask import ask_questions
from odyssey_eval.qa.episodic import EpisodeLog, episodic_questions
from odyssey_eval.qa.questions import Question
from odyssey_eval.rundir import DEPENDENCY_GRAPH, RunDir, RunDirError, cell_key, run_path
from odyssey_eval.trajectory import JsonlWriter, reset_record, step_record

__all__ = ["KILL_AFTER_ENV", "RESULTS_FORMAT", "CellOutcome", "RunError", "RunInterrupted", "cell_path", "run_cell"]


def run_cell(
    cfg: Mapping[str, Any], *, config_yaml: str | None = None, log: Callable[[str], None] = print
) -> CellOutcome:
    """Play (or resume, or skip) the cell ``cfg`` describes and return its results.

    ``cfg`` needs ``game`` (``name``, optional ``path``), ``agent`` (``name`` + parameters), ``llm``,
    ``seed``, ``max_steps``, ``tutorial`` and ``eval`` (see ``odyssey_eval/conf/eval/default.yaml``).
    """
    cfg = lifecycle.checked(cfg)
    key = cell_key(cfg)
    rd = RunDir(run_path(cfg))
    return lifecycle.play(cfg, key, rd, lambda: _Cell(cfg, key, rd, config_yaml, log), log)


def cell_path(cfg: Mapping[str, Any]) -> Path:
    """The run directory ``run_cell(cfg)`` would use (raises for a config it would refuse)."""
    return run_path(lifecycle.checked(cfg))


class _Cell:
    def __init__(
        self, cfg: dict[str, Any], key: dict[str, Any], rd: RunDir, config_yaml: str | None, log: Callable[[str], None]
    ):
        from odyssey_env.env import OdysseyEnv

        self.cfg, self.key, self.rd, self.log = cfg, key, rd, log
        self.ev = cfg["eval"]
        self.qa = self.ev["qa"]
        self.seed = key["seed"]
        self.max_steps = key["max_steps"]
        self.game, self.content, self.facts = lifecycle.open_game(
            cfg["game"], rd, overwrite=self.ev["overwrite"], seed=key["seed"], log=log
        )
        self.agent: Agent = build_agent(cfg["agent"], cfg.get("llm"), seed=self.seed)
        self.env = OdysseyEnv(
            self.game,
            valid_actions=bool(self.agent.needs_valid_actions),
            tutorial=key["tutorial"],
            provenance=bool(self.ev["dependency_graph"]),
        )
        self.task = Task(self.game.name, self.game.title, tuple(self.env.verbs()), self.seed, self.max_steps)
        self.config_yaml = config_yaml
        self.checkpoint_every, self.progress_setting, self.kill_after = lifecycle.cadence(
            self.ev, bool(getattr(self.agent, "interactive", False))
        )
        # counters (saved in checkpoints)
        self.total = self.play = self.tutorial_steps = 0
        self.tokens = 0  # main and supplementary reward: self.running counts them
        self.terminated = self.stopped = False
        self.stop_usage = None  # model calls of a decision to stop: counted, though no step records them
        self.checkpointed_at = -1  # the step of the newest checkpoint this process wrote or resumed from
        self.elapsed = 0.0
        self.wk_questions: list[Question] = []
        self.writer: JsonlWriter | None = None  # trajectory.jsonl and qa.jsonl, open while the run goes
        self.qa_writer: JsonlWriter | None = None
        # what the final metrics and the episodic QA rounds need of the trajectory lines, gathered as the
        # run goes (the lines themselves are on disk only): set up once the reset line is known
        self.running: RunningMetrics | None = None
        self.episode: EpisodeLog | None = None

    # ------------------------------------------------------------ start / resume
    def _start(self) -> tuple[str, dict[str, Any]]:
        lifecycle.begin(self.rd, self.key, self.config_yaml, self.content, self.facts)
        self.agent.reset(self.task)
        obs, info = self.env.reset(seed=self.seed)
        self.reset_line = reset_record(self.game.name, self.seed, obs, info)
        self.writer, self.qa_writer = lifecycle.open_files(self.rd, self.reset_line)
        self._track([])
        if self.qa["enabled"]:
            self.wk_questions = self._world_knowledge()
            self.rd.write_questions([q.to_dict() for q in self.wk_questions])
            self._ask("before")
        self.log(f"start: {self.rd.path}")
        return obs, info

    def _resume(self, ckpt) -> tuple[str, dict[str, Any]]:
        r = ckpt.runner
        self.agent.reset(self.task)
        self.agent.load(ckpt.agent_dir)
        obs = self.env.load_state(ckpt.env_state)
        if obs != r["observation"]:
            raise RunDirError(
                f"checkpoint {ckpt.path} does not reproduce its observation: the game or the "
                "engine changed since it was written; rerun with eval.overwrite=true"
            )
        info = dict(r["info"])
        if self.agent.needs_valid_actions:
            info["valid_actions"] = self.env.valid_actions()
        self.reset_line, seen, self.writer, self.qa_writer = lifecycle.reopen_files(self.rd, r, ckpt.path.name)
        self._track(seen)
        for name in ("total", "play", "tutorial_steps", "tokens", "elapsed"):  # rewards: from the lines seen
            setattr(self, name, r[name])
        self.terminated = r["terminated"]
        self.checkpointed_at = self.total
        if self.qa["enabled"]:
            self.wk_questions = lifecycle.stored_questions(self.rd, self._world_knowledge, [self.rd], self.log)
        self.log(f"resume from step {self.total}: {self.rd.path}")
        return obs, info

    def _track(self, seen: list[dict[str, Any]]) -> None:
        """Start gathering metrics (and, if episodic rounds will be asked, the episode) from the reset
        line and the step lines ``seen`` before (a resumed run's)."""
        self.running = RunningMetrics(self.reset_line, self.facts)
        if self.qa["enabled"] and int(self.qa["episodic"]) > 0:
            self.episode = EpisodeLog(self.reset_line)
        for step in seen:
            self.running.add(step)
            if self.episode is not None:
                self.episode.add(step)

    def _world_knowledge(self) -> list[Question]:
        return lifecycle.draw_questions(self.game, self.seed, self.key["tutorial"], self.qa, self.log)

    def _checkpoint(self, obs: str, info: Mapping[str, Any]) -> None:
        runner = {
            "total": self.total,
            "play": self.play,
            "tutorial_steps": self.tutorial_steps,
            "main": self.running.main_reward,
            "sup": self.running.supplementary_reward,
            "tokens": self.tokens,
            "terminated": self.terminated,
            "elapsed": self.elapsed + time.perf_counter() - self._t0,
            "trajectory_bytes": self.writer.tell(),
            "qa_bytes": self.qa_writer.tell(),
            "observation": obs,
            "info": sanitize(info),
        }
        self.checkpointed_at = self.total
        self.rd.write_checkpoint(
            self.total, self.env.save_state(), runner, self.agent.save, keep=int(self.ev["keep_checkpoints"])
        )

    # ------------------------------------------------------------ QA
    def _ask(self, phase: str) -> None:
        start = time.perf_counter()
        rounds = []
        if self.wk_questions:
            rounds.append(
                ask_questions(self.agent, self.wk_questions, phase=phase, step=self.play, kind="world_knowledge")
            )
        if phase != "before" and self.episode is not None:
            em = episodic_questions(
                self.episode.trajectory(),
                self.game,
                self.seed,
                per_template=int(self.qa["episodic"]),
                n_choices=int(self.qa["choices"]),
                salt=str(self.play),
            )
            if em:
                rounds.append(ask_questions(self.agent, em, phase=phase, step=self.play, kind="episodic"))
        for r in rounds:
            self.qa_writer.write({"game": self.game.name, **r.to_dict()})
        seconds = time.perf_counter() - start
        if seconds >= 1.0 and self.progress_setting not in (False, "false", "off", "no"):
            # a model's QA round takes a while: say so, or a log looks hung (a fast agent's stays quiet)
            asked = sum(len(r.answers) for r in rounds)
            self.log(f"qa {phase} step {self.play}: {asked} questions in {seconds:.0f} s")

    # ------------------------------------------------------------ the loop
    def run(self) -> CellOutcome:
        ckpt = self.rd.latest_checkpoint() if self.rd.started else None
        self._t0 = time.perf_counter()
        try:  # Ctrl-C can come at any point, a QA round with a person or a slow model included
            obs, info = self._resume(ckpt) if ckpt is not None else self._start()
            label = f"{self.game.name} {self.cfg['agent']['name']} seed {self.seed}"
            progress = make_progress(self.progress_setting, label, self.max_steps)
            try:
                self._loop(obs, info, progress)
            finally:
                progress.close()
            return self._finish()
        except STOPPING as exc:  # the run stops; its directory stays resumable
            lifecycle.stopped(exc, self.rd, self.total, (self.writer, self.qa_writer), "total")

    def _loop(self, obs: str, info: dict[str, Any], progress: NullProgress) -> None:
        env, agent, running, write = self.env, self.agent, self.running, self.writer.write
        count = running.add
        remember = None if self.episode is None else self.episode.add
        privileged = bool(agent.privileged)
        max_steps, max_tutorial = self.max_steps, int(self.ev["max_tutorial_steps"])
        every, kill_after = self.checkpoint_every, self.kill_after
        min_gap = 0.0 if every == 1 else float(self.ev["checkpoint_min_seconds"])
        max_seconds = self.ev["checkpoint_max_seconds"]
        max_gap = float("inf") if max_seconds is None else float(max_seconds)
        perf = time.perf_counter
        last_checkpoint = perf()
        qa_every = int(self.qa["every"]) if self.qa["enabled"] else 0
        show = None if type(progress) is NullProgress else progress.update  # batch runs: no call per step
        spent = protocol.budget_counter(protocol.of(self.key))  # the counter max_steps bounds
        while not self.terminated and getattr(self, spent) < max_steps:
            tutorial = bool(info.get("in_tutorial"))
            if tutorial and self.tutorial_steps >= max_tutorial:
                raise RunError(f"still in the tutorial after {max_tutorial} steps (eval.max_tutorial_steps)")
            start = perf()
            decision = agent.act(obs, {**info, "engine": env.engine} if privileged else info)
            decided = perf()  # also the clock of the time-based checkpoints: one clock read per step is enough
            seconds = decided - start
            if not isinstance(decision, Decision):
                raise RunError(f"{type(agent).__name__}.act returned {type(decision).__name__}, not a Decision")
            if decision.stop:  # no step is taken, but the calls made deciding to stop still cost tokens
                self.tokens += decision.usage.total_tokens
                self.stop_usage = decision.usage
                self.stopped = True
                break
            quest = info.get("quest")
            obs, _, terminated, _, info = env.step(decision.action)
            record = step_record(decision, tutorial, None, terminated, info, seconds, info.get("quest") != quest)
            write(record, obs)  # the observation goes to disk only
            count(record)
            if remember is not None:
                remember(record)
            self.total += 1
            self.terminated = terminated
            if tutorial:
                self.tutorial_steps += 1
            else:
                self.play += 1
            if decision.usage.calls:
                self.tokens += decision.usage.total_tokens
            if self.total == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            if qa_every and not tutorial and self.play % qa_every == 0 and self.play < max_steps and not terminated:
                self._ask("during")
            since = decided - last_checkpoint
            if (self.total % every == 0 and since >= min_gap) or since >= max_gap:
                self._checkpoint(obs, info)
                last_checkpoint = perf()
            if show is not None:
                show(
                    self.play,
                    running.main_reward,
                    running.supplementary_reward,
                    self.tokens,
                    "tutorial" if tutorial else "",
                )
        progress.update(self.play, running.main_reward, running.supplementary_reward, self.tokens, force=True)
        if self.checkpointed_at != self.total:  # the final state too: what a learning agent ends with is kept
            self._checkpoint(obs, info)

    def _finish(self) -> CellOutcome:
        if self.qa["enabled"]:
            self._ask("after")
        self.writer.close()
        self.qa_writer.close()
        stop = self.stop_usage
        stopped = stop is not None and bool(stop.calls)
        metrics = self.running.metrics(
            stop_tokens=(stop.input_tokens, stop.output_tokens) if stopped else None,
            stop_calls=stop.by_purpose() if stopped else None,
        )
        rounds = self.rd.qa_rounds()  # from the file: a resumed run asked its earlier rounds in another process
        end = "terminated" if self.terminated else "agent_stopped" if self.stopped else "max_steps"
        results = {
            "format": RESULTS_FORMAT,
            "game": self.game.name,
            "game_title": self.game.title,
            "agent": self.agent.describe(),
            "agent_stats": self.agent.stats(),
            "agent_name": self.key["agent"]["name"],
            "agent_config": self.key["agent"],
            "llm": self.key["llm"],
            "seed": self.seed,
            "max_steps": self.max_steps,
            "protocol": protocol.of(self.key),
            "tutorial": self.key["tutorial"],
            "tag": self.key["tag"],
            "end_reason": end,
            "steps": self.total,
            "play_steps": metrics["play_steps"],
            "tutorial_steps": metrics["tutorial"]["steps"],
            "main_reward": metrics["main_reward"],
            "supplementary_reward": metrics["supplementary_reward"],
            "metrics": metrics,
            "qa": lifecycle.qa_summary(rounds),
            "wall_time": round(self.elapsed + time.perf_counter() - self._t0, 3),
            "versions": lifecycle.versions(),
        }
        if self.env.engine.provenance is not None:  # decided when the run started (it is in the saved state)
            self.rd.write_dependency_graph(self.env.dependency_graph())
            results["dependency_graph"] = DEPENDENCY_GRAPH
        self.rd.write_results(results)
        self.log(
            f"done ({end}, {metrics['play_steps']} play steps, main {metrics['main_reward']}, "
            f"sup {metrics['supplementary_reward']}): {self.rd.path}"
        )
        return CellOutcome(self.rd.path, "finished", results)
