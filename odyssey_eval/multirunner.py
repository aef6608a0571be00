"""Playing one multi-agent cell: several agents in one shared world -> a finished run directory.

    odyssey run agents=[oracle,random,long_context] game=mossfall seed=0 llm=scripted

Each entry of ``agents`` names an agent preset (``odyssey_eval/conf/agent/<name>.yaml``) or is an agent
config (``{name: random, seed: 3}``); agents that use a language model share the cell's ``llm`` group.
The agents get the ids ``player_0``, ``player_1``, ... in list order, which is also the order their
commands apply within a step (see ``odyssey_env.multiagent``). ``multiagent.episode_end`` and
``multiagent.supplies`` choose when the episode ends and what the world holds.

Layout of a multi-agent run directory (the cell-level files are those of a single-agent run)::

    cell.json  config.yaml  qa_questions.json  results.json  [dependency_graph.json]
    checkpoints/step_<N>/{env.json, runner.json, agent/<agent id>/}
    agents/<agent id>/{trajectory.jsonl, qa.jsonl, results.json}

Each agent's files have the single-agent formats, so its metrics, QA and curves come out of the same
code. The budget ``max_steps`` counts each agent's play steps: an agent that has used it, or that asks
to stop, leaves the world (what it holds stays on the ground) while the others play on. Resuming works
as for single-agent cells: the newest checkpoint restores the world, every agent's memory and counters,
and cuts every agent's files back to what that checkpoint had seen. Everything around the loop is
:mod:`odyssey_eval.lifecycle`'s, as for single-agent cells: the config checks, the cell's lock, the
check of the game's files on resume, the game facts recorded in ``cell.json`` (so reports never load
the game), the seeded regeneration of a lost ``qa_questions.json``, and the one-line stops.
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
from odyssey_eval.configs import CONFIG_DIR
from odyssey_eval.factory import ConfigError, build_agent
from odyssey_eval.lifecycle import RESULTS_FORMAT, STOPPING, CellOutcome, RunError, sanitize
from odyssey_eval.metrics import RunningMetrics
from odyssey_eval.progress import NullProgress, make_progress
from odyssey_eval.qa.ask import ask_questions
from odyssey_eval.qa.episodic import EpisodeLog, episodic_questions
from odyssey_eval.qa.questions import Question
from odyssey_eval.rundir import DEPENDENCY_GRAPH, RunDir, RunDirError, cell_key, run_path, slug
from odyssey_eval.trajectory import JsonlWriter, reset_record, step_record

__all__ = ["AGENTS_DIR", "MULTIAGENT_DEFAULTS", "multi_cell_key", "multi_run_path", "resolve_agents", "run_multi_cell"]

AGENTS_DIR = "agents"
#: ``multiagent`` settings of a cell when the config leaves them out (as ``conf/run.yaml`` has them).
MULTIAGENT_DEFAULTS: dict[str, Any] = {"episode_end": "first", "supplies": "shared"}
#: Agent i is seeded with ``seed + AGENT_SEED_STRIDE * i`` so that two agents of one kind do not draw alike.
AGENT_SEED_STRIDE = 1_000_003


def resolve_agents(entries: Any) -> list[dict[str, Any]]:
    """The agent configs a cell's ``agents`` list names: presets by name, or configs as given."""
    if isinstance(entries, str | bytes) or not isinstance(entries, list | tuple) or not entries:
        raise ConfigError(f"agents must be a non-empty list, e.g. agents=[oracle,random], got {entries!r}")
    out = []
    for entry in entries:
        if isinstance(entry, str):
            preset = CONFIG_DIR / "agent" / f"{entry}.yaml"
            if preset.is_file():
                from omegaconf import OmegaConf

                out.append(dict(OmegaConf.to_container(OmegaConf.load(preset), resolve=True)))
            else:
                out.append({"name": entry})  # an agent registered by a plugin, with no preset
        elif isinstance(entry, Mapping) and entry.get("name"):
            out.append(dict(entry))
        else:
            raise ConfigError(f"each entry of agents must be an agent name or a config with a name, got {entry!r}")
    return out


def _settings(cfg: Mapping[str, Any]) -> dict[str, Any]:
    ma = {**MULTIAGENT_DEFAULTS, **dict(cfg.get("multiagent") or {})}
    unknown = sorted(set(ma) - set(MULTIAGENT_DEFAULTS))
    if unknown:
        raise ConfigError(f"unknown multiagent setting(s) {unknown}; known: {', '.join(MULTIAGENT_DEFAULTS)}")
    return ma


def multi_cell_key(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """What makes a multi-agent cell what it is: the single-agent key, with the agents in place of the agent."""
    key = cell_key({**cfg, "agent": {"name": "multi"}})
    del key["agent"]
    return {
        "agents": [{k: v for k, v in a.items() if v is not None} for a in resolve_agents(cfg["agents"])],
        **key,
        "multiagent": _settings(cfg),
    }


def multi_run_path(cfg: Mapping[str, Any]) -> Path:
    """``<output_dir>/<game>/multi/<agent>--<agent>--.../<llm[-model]>/seed_<seed>[...]`` (raises for a
    config :func:`run_multi_cell` would refuse)."""
    return _path(lifecycle.checked(cfg, "agents"))


def _path(cfg: Mapping[str, Any]) -> Path:
    single = run_path({**cfg, "agent": {"name": "multi"}})
    names = []
    for a in resolve_agents(cfg["agents"]):
        names.append("+".join([slug(a["name"]), *(slug(x) for x in sorted(a.get("addons") or []))]))
    return single.parents[1] / "--".join(names) / single.parent.name / single.name


def run_multi_cell(
    cfg: Mapping[str, Any], *, config_yaml: str | None = None, log: Callable[[str], None] = print
) -> CellOutcome:
    """Play (or resume, or skip) the multi-agent cell ``cfg`` describes and return its results.

    ``cfg`` is a single-agent cell's config (see :func:`odyssey_eval.runner.run_cell`) with ``agents``
    in place of ``agent``, and optionally ``multiagent`` (:data:`MULTIAGENT_DEFAULTS`).
    """
    cfg = lifecycle.checked(cfg, "agents")
    key = multi_cell_key(cfg)
    rd = RunDir(_path(cfg))
    return lifecycle.play(cfg, key, rd, lambda: _MultiCell(cfg, key, rd, config_yaml, log), log)


class _Seat:
    """One agent of the cell: its mind, its files and its counters."""

    COUNTERS = ("total", "play", "tutorial_steps", "main", "sup", "tokens")

    def __init__(self, agent_id: str, config: dict[str, Any], agent: Agent, rd: RunDir):
        self.id, self.config, self.agent, self.rd = agent_id, config, agent, rd
        self.llm: dict[str, Any] = {"name": "none"}  # the cell's llm group if this agent uses a model
        self.total = self.play = self.tutorial_steps = self.main = self.sup = self.tokens = 0
        self.end: str | None = None  # terminated | max_steps | agent_stopped, once the agent is out
        self.stop_usage = None
        self.writer: JsonlWriter | None = None
        self.qa_writer: JsonlWriter | None = None
        self.reset_line: dict[str, Any] = {}
        self.running: RunningMetrics | None = None  # the metrics, gathered as the run goes
        self.episode: EpisodeLog | None = None  # what episodic questions read, when they are asked
        self.obs = ""
        self.info: dict[str, Any] = {}

    def track(self, seen: list[dict[str, Any]], facts: Any, episodic: bool) -> None:
        """Start gathering from the reset line and the step lines ``seen`` before (a resumed run's):
        no step line stays in memory."""
        self.running = RunningMetrics(self.reset_line, facts)
        self.episode = EpisodeLog(self.reset_line) if episodic else None
        for step in seen:
            self.add(step)

    def add(self, record: dict[str, Any]) -> None:
        self.running.add(record)  # type: ignore[union-attr]
        if self.episode is not None:
            self.episode.add(record)

    def counters(self) -> dict[str, Any]:
        return {
            **{k: getattr(self, k) for k in self.COUNTERS},
            "end": self.end,
            "trajectory_bytes": self.writer.tell(),
            "qa_bytes": self.qa_writer.tell(),
        }

    def close(self) -> None:
        for w in (self.writer, self.qa_writer):
            if w is not None:
                w.close()


class _MultiCell:
    def __init__(
        self, cfg: dict[str, Any], key: dict[str, Any], rd: RunDir, config_yaml: str | None, log: Callable[[str], None]
    ):
        from odyssey_agents.options import keyword_options
        from odyssey_agents.registry import agent_class

        try:
            from odyssey_env.multiagent import parallel_env
        except ModuleNotFoundError as exc:
            if exc.name != "pettingzoo":
                raise
            raise ConfigError(str(exc)) from None

        self.cfg, self.key, self.rd, self.log, self.config_yaml = cfg, key, rd, log, config_yaml
        self.ev, self.qa = cfg["eval"], cfg["eval"]["qa"]
        self.seed, self.max_steps = key["seed"], key["max_steps"]
        self.game, self.content, self.facts = lifecycle.open_game(
            cfg["game"], rd, overwrite=self.ev["overwrite"], seed=key["seed"], log=log
        )
        llm = dict(cfg.get("llm") or {"name": "none"})
        self.seats: dict[str, _Seat] = {}
        uses_model = False
        for i, agent_cfg in enumerate(key["agents"]):
            aid = f"player_{i}"
            cls = agent_class(agent_cfg["name"])
            params = dict(agent_cfg)
            with_model = hasattr(cls, "from_config")
            uses_model |= with_model
            if not with_model and "agent_id" in keyword_options(cls):
                params["agent_id"] = aid  # privileged agents read their own body in the shared world
            seat_llm = llm if with_model else {"name": "none"}
            agent = build_agent(params, seat_llm, seed=self.seed + AGENT_SEED_STRIDE * i)
            self.seats[aid] = _Seat(aid, agent_cfg, agent, RunDir(rd.path / AGENTS_DIR / aid))
            self.seats[aid].llm = {k: v for k, v in seat_llm.items() if v is not None}
        if llm.get("name", "none") != "none" and not uses_model:
            raise ConfigError(
                f"no agent of agents={[a['name'] for a in key['agents']]} uses a language model; "
                f"drop llm={llm.get('name')} (or use llm=none)"
            )
        ma = key["multiagent"]
        try:
            self.env = parallel_env(
                self.game,
                agents=list(self.seats),
                episode_end=ma["episode_end"],
                supplies=ma["supplies"],
                tutorial=key["tutorial"],
                valid_actions=any(s.agent.needs_valid_actions for s in self.seats.values()),
                provenance=bool(self.ev.get("dependency_graph")),
            )
        except ValueError as exc:
            raise ConfigError(f"multiagent: {exc}") from None
        verbs = tuple(self.env.verbs())
        self.tasks = {
            aid: Task(self.game.name, self.game.title, verbs, self.seed + AGENT_SEED_STRIDE * i, self.max_steps)
            for i, aid in enumerate(self.seats)
        }
        self.checkpoint_every, self.progress_setting, self.kill_after = lifecycle.cadence(
            self.ev, any(getattr(s.agent, "interactive", False) for s in self.seats.values())
        )
        self.cycles = 0
        self.elapsed = 0.0
        self.wk_questions: list[Question] = []
        self._episodic = bool(self.qa["enabled"]) and int(self.qa["episodic"]) > 0

    # ------------------------------------------------------------ start / resume
    def _start(self) -> None:
        lifecycle.begin(self.rd, self.key, self.config_yaml, self.content, self.facts)
        obs, infos = self.env.reset(seed=self.seed)
        for aid, seat in self.seats.items():
            seat.agent.reset(self.tasks[aid])
            seat.reset_line = {**reset_record(self.game.name, self.seed, obs[aid], infos[aid]), "agent": aid}
            seat.writer, seat.qa_writer = lifecycle.open_files(seat.rd, seat.reset_line)
            seat.track([], self.facts, self._episodic)
            seat.obs, seat.info = obs[aid], infos[aid]
        if self.qa["enabled"]:
            self.wk_questions = self._world_knowledge()
            self.rd.write_questions([q.to_dict() for q in self.wk_questions])
            for seat in self.seats.values():
                self._ask(seat, "before")
        self.log(f"start: {self.rd.path} ({len(self.seats)} agents)")

    def _resume(self, ckpt) -> None:
        r = ckpt.runner
        obs = self.env.load_state(ckpt.env_state)
        for aid, seat in self.seats.items():
            saved = r["agents"][aid]
            seat.agent.reset(self.tasks[aid])
            seat.agent.load(ckpt.agent_dir / aid)
            if aid in obs and obs[aid] != saved["observation"]:
                raise RunDirError(
                    f"checkpoint {ckpt.path} does not reproduce {aid}'s observation: the game or "
                    "the engine changed since it was written; rerun with eval.overwrite=true"
                )
            seat.obs, seat.info = saved["observation"], dict(saved["info"])
            if aid in self.env.agents and seat.agent.needs_valid_actions:
                seat.info["valid_actions"] = self.env.valid_actions(aid)
            seat.reset_line, seen, seat.writer, seat.qa_writer = lifecycle.reopen_files(seat.rd, saved, ckpt.path.name)
            seat.track(seen, self.facts, self._episodic)
            for name in _Seat.COUNTERS:
                setattr(seat, name, saved[name])
            seat.end = saved["end"]
        self.cycles, self.elapsed = r["cycles"], r["elapsed"]
        if self.qa["enabled"]:
            self.wk_questions = lifecycle.stored_questions(
                self.rd, self._world_knowledge, [s.rd for s in self.seats.values()], self.log
            )
        self.log(f"resume from step {self.cycles}: {self.rd.path}")

    def _world_knowledge(self) -> list[Question]:
        """The cell's World-Knowledge questions: every agent is asked the same ones."""
        return lifecycle.draw_questions(self.game, self.seed, self.key["tutorial"], self.qa, self.log)

    def _checkpoint(self) -> None:
        runner = {
            "cycles": self.cycles,
            "elapsed": self.elapsed + time.perf_counter() - self._t0,
            "agents": {
                aid: {**seat.counters(), "observation": seat.obs, "info": sanitize(seat.info)}
                for aid, seat in self.seats.items()
            },
        }

        def save_agents(directory: Path) -> None:
            for aid, seat in self.seats.items():
                (directory / aid).mkdir()
                seat.agent.save(directory / aid)

        self.rd.write_checkpoint(
            self.cycles, self.env.save_state(), runner, save_agents, keep=int(self.ev["keep_checkpoints"])
        )

    # ------------------------------------------------------------ QA
    def _ask(self, seat: _Seat, phase: str) -> None:
        rounds = []
        if self.wk_questions:
            rounds.append(
                ask_questions(seat.agent, self.wk_questions, phase=phase, step=seat.play, kind="world_knowledge")
            )
        if phase != "before" and seat.episode is not None:
            em = episodic_questions(
                seat.episode.trajectory(),
                self.game,
                self.seed,
                per_template=int(self.qa["episodic"]),
                n_choices=int(self.qa["choices"]),
                salt=f"{seat.id}:{seat.play}",
            )
            if em:
                rounds.append(ask_questions(seat.agent, em, phase=phase, step=seat.play, kind="episodic"))
        for r in rounds:
            seat.qa_writer.write({"game": self.game.name, "agent": seat.id, **r.to_dict()})

    # ------------------------------------------------------------ the loop
    def run(self) -> CellOutcome:
        ckpt = self.rd.latest_checkpoint() if self.rd.started else None
        self._t0 = time.perf_counter()
        try:
            if ckpt is not None:
                self._resume(ckpt)
            else:
                self._start()
            names = ",".join(s.config["name"] for s in self.seats.values())
            progress = make_progress(
                self.progress_setting, f"{self.game.name} [{names}] seed {self.seed}", self.max_steps
            )
            try:
                self._loop(progress)
            finally:
                progress.close()
            return self._finish()
        except STOPPING as exc:  # the run stops; its directory stays resumable
            writers = [w for s in self.seats.values() for w in (s.writer, s.qa_writer)]
            lifecycle.stopped(exc, self.rd, self.cycles, writers, "cycles")

    def _retire(self, seat: _Seat, reason: str) -> None:
        seat.end = reason
        if seat.id in self.env.agents:
            self.env.retire(seat.id)

    def _loop(self, progress: NullProgress) -> None:
        env, seats = self.env, self.seats
        max_tutorial = int(self.ev["max_tutorial_steps"])
        min_gap = 0.0 if self.checkpoint_every == 1 else float(self.ev["checkpoint_min_seconds"])
        max_seconds = self.ev["checkpoint_max_seconds"]
        max_gap = float("inf") if max_seconds is None else float(max_seconds)
        qa_every = int(self.qa["every"]) if self.qa["enabled"] else 0
        perf = time.perf_counter
        last_checkpoint = perf()
        engine_info = {}
        spent = protocol.budget_counter(protocol.of(self.key))  # the counter max_steps bounds
        while env.agents:
            decisions: dict[str, tuple[Decision, float, bool]] = {}
            for aid in list(env.agents):
                seat = seats[aid]
                tutorial = bool(seat.info.get("in_tutorial"))
                if tutorial and seat.tutorial_steps >= max_tutorial:
                    raise RunError(
                        f"{aid} ({seat.config['name']}) is still in the tutorial after {max_tutorial} "
                        "steps (eval.max_tutorial_steps)"
                    )
                info = seat.info
                if seat.agent.privileged:
                    engine_info["engine"] = env.engine
                    info = {**info, **engine_info}
                start = perf()
                decision = seat.agent.act(seat.obs, info)
                seconds = perf() - start
                if not isinstance(decision, Decision):
                    raise RunError(
                        f"{type(seat.agent).__name__}.act returned {type(decision).__name__}, not a Decision"
                    )
                if decision.stop:  # it leaves the world; the calls made deciding to stop still cost tokens
                    seat.tokens += decision.usage.total_tokens
                    seat.stop_usage = decision.usage
                    self._retire(seat, "agent_stopped")
                    continue
                decisions[aid] = (decision, seconds, tutorial)
            if not decisions:
                break
            quests = {aid: seats[aid].info.get("quest") for aid in decisions}
            obs, _, terms, truncs, infos = env.step({aid: d.action for aid, (d, _, _) in decisions.items()})
            self.cycles += 1
            for aid, (decision, seconds, tutorial) in decisions.items():
                seat = seats[aid]
                info = infos[aid]
                record = step_record(
                    decision, tutorial, obs[aid], terms[aid], info, seconds, info.get("quest") != quests[aid]
                )
                seat.writer.write(record)
                seat.add(record)
                seat.obs, seat.info = obs[aid], info
                seat.total += 1
                if tutorial:
                    seat.tutorial_steps += 1
                else:
                    seat.play += 1
                    r = info["reward_breakdown"]
                    seat.main += r["quest"]
                    seat.sup += r["side_quest"] + r["exploration"] + r["craft"] + r["defeat"]
                if decision.usage.calls:
                    seat.tokens += decision.usage.total_tokens
                if terms[aid] or truncs[aid]:
                    seat.end = "terminated" if terms[aid] else "truncated"
                elif getattr(seat, spent) >= self.max_steps:
                    self._retire(seat, "max_steps")
                elif qa_every and not tutorial and seat.play % qa_every == 0:
                    self._ask(seat, "during")
            if self.cycles == self.kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            since = perf() - last_checkpoint
            if (self.cycles % self.checkpoint_every == 0 and since >= min_gap) or since >= max_gap:
                self._checkpoint()
                last_checkpoint = perf()
            live = [seats[a] for a in env.agents]
            progress.update(
                max((s.play for s in live), default=self.max_steps),
                sum(s.main for s in seats.values()),
                sum(s.sup for s in seats.values()),
                sum(s.tokens for s in seats.values()),
                "tutorial" if any(s.info.get("in_tutorial") for s in live) else "",
            )
        progress.update(
            max(s.play for s in seats.values()),
            sum(s.main for s in seats.values()),
            sum(s.sup for s in seats.values()),
            sum(s.tokens for s in seats.values()),
            force=True,
        )

    def _finish(self) -> CellOutcome:
        per_agent: dict[str, dict[str, Any]] = {}
        wall = round(self.elapsed + time.perf_counter() - self._t0, 3)
        common = {
            "format": RESULTS_FORMAT,
            "game": self.game.name,
            "game_title": self.game.title,
            "seed": self.seed,
            "max_steps": self.max_steps,
            "protocol": protocol.of(self.key),
            "tutorial": self.key["tutorial"],
            "tag": self.key["tag"],
            "llm": self.key["llm"],
            "versions": lifecycle.versions(),
        }
        for aid, seat in self.seats.items():
            if self.qa["enabled"]:
                self._ask(seat, "after")
            seat.close()
            stop = seat.stop_usage
            metrics = seat.running.metrics(  # type: ignore[union-attr]
                stop_tokens=(stop.input_tokens, stop.output_tokens) if stop and stop.calls else None,
                stop_calls=stop.by_purpose() if stop and stop.calls else None,
            )
            rounds = seat.rd.qa_rounds()
            results = {
                **common,
                "agent_id": aid,
                "agent": seat.agent.describe(),
                "agent_stats": seat.agent.stats(),
                "agent_name": seat.config["name"],
                "agent_config": seat.config,
                "llm": seat.llm,
                "end_reason": seat.end or "terminated",
                "steps": seat.total,
                "play_steps": metrics["play_steps"],
                "tutorial_steps": metrics["tutorial"]["steps"],
                "main_reward": metrics["main_reward"],
                "supplementary_reward": metrics["supplementary_reward"],
                "metrics": metrics,
                "qa": lifecycle.qa_summary(rounds),
                "multiagent": {"agents": [s.config["name"] for s in self.seats.values()], **self.key["multiagent"]},
                "wall_time": wall,
            }
            seat.rd.write_results(results)
            per_agent[aid] = results
        graph = None
        if self.env.engine.provenance is not None:  # every agent's actions in one graph
            self.rd.write_dependency_graph(self.env.dependency_graph())
            graph = DEPENDENCY_GRAPH
        results = {
            **common,
            "multiagent": {**self.key["multiagent"], "agents": self.key["agents"]},
            "steps": self.cycles,
            "agents": per_agent,
            "dependency_graph": graph,
            "wall_time": wall,
        }
        self.rd.write_results(results)
        summary = ", ".join(
            f"{aid} {r['agent_name']} main {r['main_reward']} ({r['end_reason']})" for aid, r in per_agent.items()
        )
        self.log(f"done ({self.cycles} steps; {summary}): {self.rd.path}")
        return CellOutcome(self.rd.path, "finished", results)
