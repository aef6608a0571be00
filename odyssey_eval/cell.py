"""A cell, played one step at a time: its world, its seats, its run directory.

A cell is one world and the seats that play in it: one seat for a cell of one agent (``agent=...``),
one per agent for a cell of several (``agents=[...]``, one shared world). The same loop plays both::

    cell = Cell.open(cfg, key, rd, team=False)  # built, its lock taken, started or resumed (or skipped)
    while cell.step():                           # every live seat acts once, then the world steps once
        ...                                      # an outer loop may drive other cells in between,
        if asked_to_stop:                        # or stop on a signal: a checkpoint of this step, the
            cell.interrupt()                     # cell closed, RunInterrupted naming the step to resume from
    outcome = cell.finish()                      # plays on to the end if need be; final QA, results.json

(:func:`odyssey_eval.runner.open_cell` checks a config and opens its cell; ``run_cell`` and
``run_multi_cell`` are the loop above, stopped by SIGINT/SIGTERM: :mod:`odyssey_eval.stopping`.) A cell
is also a context manager that closes it, whatever happens. Every method leaves the run directory
resumable when it raises: Ctrl-C or a model that cannot be reached comes out as one line naming the step
the same command resumes from, and the lock is released. Nothing is shared between cells, so an outer
loop may interleave steps of many cells (one thread at a time per cell).

Each step writes one trajectory line per seat (flushed); every ``checkpoint_every`` steps (but not
more often than every ``checkpoint_min_seconds``, and at least every ``checkpoint_max_seconds``) the
world's state, every agent's memory and the counters are written as a checkpoint; a cell of agents that
call a model that takes time (any backend but ``scripted``) is checkpointed after every step that called
it and after every QA round, the pre-play one included (see :class:`Seat`), and a ``KeyboardInterrupt``
between two steps (the sweep board's stop) checkpoints the step just played first. A killed run
restarts from the newest one, cutting every seat's files back to the bytes that checkpoint had seen,
and finishes exactly as an uninterrupted run would (only wall-clock fields differ). Nothing on the
per-step path copies or serialises the world. The budget ``max_steps`` counts each seat's play steps:
steps in the tutorial do not use it up (they are recorded, marked, and reported apart); under
``protocol=paper`` it counts every step, tutorial included, as the reference does
(``odyssey_eval.protocol``). A seat whose budget is spent, or whose agent asks to stop, leaves the world
(in a shared world what it holds stays on the ground where it stood) while the others play on.

What differs between one seat and several is only how the files are laid out (:class:`_Solo`,
:class:`_Team`): the formats earlier versions wrote, kept byte for byte so their run directories
still resume. Everything around the loop (config checks, the lock, the game's digests, the seeded
questions, the one-line stops) is :mod:`odyssey_eval.lifecycle`'s.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn

from odyssey_agents.base import Agent, Decision, Task, Usage
from odyssey_env.userdir import origin
from odyssey_eval import lifecycle, protocol
from odyssey_eval.cost import cell_cost, load_prices, sweep_cost
from odyssey_eval.factory import ConfigError, build_agent
from odyssey_eval.lifecycle import RESULTS_FORMAT, STOPPING, CellOutcome, RunError, sanitize
from odyssey_eval.metrics import RunningMetrics
from odyssey_eval.progress import NullProgress, make_progress
from odyssey_eval.qa.ask import ask_questions
from odyssey_eval.qa.episodic import EpisodeLog, episodic_questions
from odyssey_eval.qa.questions import Question
from odyssey_eval.rundir import DEPENDENCY_GRAPH, Checkpoint, RunDir, RunDirError, cannot_write
from odyssey_eval.trajectory import JsonlWriter, reset_record, step_record

__all__ = ["AGENTS_DIR", "AGENT_SEED_STRIDE", "INSTANT_BACKENDS", "Cell", "Seat"]

#: Where each agent's files of a multi-agent cell live: ``<cell>/agents/<agent id>/``.
AGENTS_DIR = "agents"
#: Agent i of a multi-agent cell is seeded with ``seed + AGENT_SEED_STRIDE * i``, so that two agents
#: of one kind do not draw alike.
AGENT_SEED_STRIDE = 1_000_003
#: Model backends that answer at once (no call worth keeping a checkpoint for): a cell of agents that
#: use another is checkpointed after every step that called the model (see :class:`Seat`).
INSTANT_BACKENDS = frozenset({"none", "scripted"})


class Seat:
    """One agent of a cell: its mind, its files, its counters and what it last saw."""

    def __init__(
        self, agent_id: str, config: dict[str, Any], agent: Agent, rd: RunDir, llm: dict[str, Any], task: Task
    ):
        self.id, self.config, self.agent, self.rd, self.llm, self.task = agent_id, config, agent, rd, llm, task
        self.total = self.play = self.tutorial_steps = self.tokens = 0
        self.end: str | None = None  # terminated | max_steps | agent_stopped | truncated, once it is out
        self.stop_usage: Usage | None = None  # model calls of a decision to stop: counted, though no step records them
        self.writer: JsonlWriter | None = None  # trajectory.jsonl and qa.jsonl, open while the cell plays
        self.qa_writer: JsonlWriter | None = None
        self.reset_line: dict[str, Any] = {}
        # what the final metrics and the episodic QA rounds need of the trajectory lines, gathered as the
        # run goes (the lines themselves are on disk only)
        self.running: RunningMetrics | None = None
        self.episode: EpisodeLog | None = None
        self.obs = ""
        self.info: dict[str, Any] = {}
        #: Whether its agent uses a language model at all (its calls may be priced: ``eval.prices``).
        self.uses_model = hasattr(type(agent), "from_config")
        #: Whether its agent calls a model that takes a while (not ``scripted``): such a seat's steps and
        #: QA rounds are checkpointed as soon as they are done, and a stop does not wait for its calls.
        self.calls_model = self.uses_model and llm.get("name", "none") not in INSTANT_BACKENDS
        #: Whether waiting on its agent may take long (a model, or a person at ``agent=human``).
        self.slow = self.calls_model or bool(getattr(agent, "interactive", False))

    def track(self, seen: list[dict[str, Any]], facts: Any, episodic: bool) -> None:
        """Start gathering from the reset line and the step lines ``seen`` before (a resumed run's)."""
        self.running = RunningMetrics(self.reset_line, facts)
        self.episode = EpisodeLog(self.reset_line) if episodic else None
        for step in seen:
            self.running.add(step)
            if self.episode is not None:
                self.episode.add(step)

    @property
    def tally(self) -> RunningMetrics:
        """What :meth:`track` gathers: there from the moment the cell starts playing the seat."""
        if self.running is None:
            raise RunError(f"seat {self.id} is not being tracked: the cell has not started it")
        return self.running

    @property
    def trajectory(self) -> JsonlWriter:
        """``trajectory.jsonl``, open from the moment the cell starts playing the seat."""
        return _opened(self.writer, self.id)

    @property
    def qa_file(self) -> JsonlWriter:
        """``qa.jsonl``, open as ``trajectory.jsonl`` is."""
        return _opened(self.qa_writer, self.id)

    def files(self) -> dict[str, int]:
        """The byte counts of its files, as a checkpoint records them."""
        return {"trajectory_bytes": self.trajectory.tell(), "qa_bytes": self.qa_file.tell()}

    def close(self) -> None:
        for writer in (self.writer, self.qa_writer):
            if writer is not None:
                writer.close()


def _opened(writer: JsonlWriter | None, seat: str) -> JsonlWriter:
    if writer is None:
        raise RunError(f"the files of seat {seat} are not open: the cell has not started it")
    return writer


class _OneWorld:
    """The Gymnasium env in the shape of the PettingZoo parallel env the loop drives, for one seat.

    A seat that leaves is only marked out: the world stays as the agent left it (its checkpoint and
    final state are those of the one-agent env)."""

    def __init__(self, env: Any, agent_id: str):
        self.env, self.id = env, agent_id
        self.agents: list[str] = []

    @property
    def engine(self) -> Any:
        return self.env.engine

    def reset(self, seed: int) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        obs, info = self.env.reset(seed=seed)
        self.agents = [self.id]
        return {self.id: obs}, {self.id: info}

    def step(self, actions: Mapping[str, str]) -> tuple[dict, None, dict, dict, dict]:
        aid = self.id
        obs, _, terminated, _, info = self.env.step(actions[aid])
        if terminated:
            self.agents = []
        return {aid: obs}, None, {aid: terminated}, {aid: False}, {aid: info}

    def retire(self, agent_id: str) -> None:
        self.agents = []

    def valid_actions(self, agent_id: str) -> dict[str, list[str]]:
        return self.env.valid_actions()

    def save_state(self) -> dict[str, Any]:
        return self.env.save_state()

    def load_state(self, data: Mapping[str, Any]) -> dict[str, str]:
        self.agents = [self.id]
        return {self.id: self.env.load_state(data)}

    def verbs(self) -> list[str]:
        return self.env.verbs()

    def dependency_graph(self) -> dict[str, Any]:
        return self.env.dependency_graph()


class Cell:
    """A cell being played. Make one with :meth:`open`; see the module docstring for the loop."""

    def __init__(self, rd: RunDir, log: Callable[[str], None]):
        self.rd, self.log = rd, log
        #: Set once the cell is over: finished now, or skipped because it had finished before.
        self.outcome: CellOutcome | None = None
        self.seats: dict[str, Seat] = {}
        self.steps = 0  # steps of the world (each live seat acted once in each)
        self._lock: contextlib.ExitStack | None = None
        self._playing = False
        self._progress: NullProgress | None = None
        self._waiting = False  # on a slow seat's agent (a model call, a person): see ``urgent``
        self._between = False  # the world stands between two steps: a checkpoint may be written now
        self._asked_model = False  # a slow model answered a QA round since the step began

    @property
    def urgent(self) -> bool:
        """Whether the cell waits on a model (or a person) right now: a stop cannot wait for the step to
        end (:class:`odyssey_eval.stopping.StopSignals`), and loses only the step in progress."""
        return self._waiting

    # ------------------------------------------------------------ open
    @classmethod
    def open(
        cls,
        cfg: dict[str, Any],
        key: dict[str, Any],
        rd: RunDir,
        *,
        team: bool,
        config_yaml: str | None = None,
        log: Callable[[str], None] = print,
        opened: Callable[[Cell], None] | None = None,
    ) -> Cell:
        """The cell of a checked config (:func:`odyssey_eval.lifecycle.checked`) with its identity ``key``
        and run directory ``rd``: skipped (``outcome`` set) if it finished before, else built (a mistake
        in its game or agents leaves no trace on disk), its lock taken (a second process is refused in
        one line), and started or resumed from its newest checkpoint. ``team``: the layout of a cell
        of several agents (``agents=``) rather than of one (``agent=``). ``opened`` is called with the cell
        as soon as it exists, before it starts (the pre-play QA): what watches :attr:`urgent` for a stop."""
        overwrite = cfg["eval"]["overwrite"]
        if not overwrite:  # reading needs no lock: cell.json and results.json are replaced whole, never edited
            rd.check_cell(key)
            if rd.finished:
                return cls._skipped(rd, log)
        cell = cls(rd, log)
        if opened is not None:
            opened(cell)
        cell._build(cfg, key, _Team() if team else _Solo(), config_yaml)
        cell._lock = contextlib.ExitStack()
        cell._lock.enter_context(rd.lock())
        try:
            if overwrite:
                rd.wipe()
            else:
                rd.check_cell(key)
                if rd.finished:  # by a process that held the lock until a moment ago
                    cell._release()
                    return cls._skipped(rd, log)
            cell._begin()
        except BaseException as exc:
            cell._fail(exc)
        return cell

    @classmethod
    def _skipped(cls, rd: RunDir, log: Callable[[str], None]) -> Cell:
        cell = cls(rd, log)
        results = rd.results()  # a damaged results.json is an error here, not a "finished" cell
        log(f"skip (finished): {rd.path}")
        cell.outcome = CellOutcome(rd.path, "skipped", results)
        return cell

    def _build(self, cfg: dict[str, Any], key: dict[str, Any], layout: _Layout, config_yaml: str | None) -> None:
        self.cfg, self.key, self.layout, self.config_yaml = cfg, key, layout, config_yaml
        self.ev = cfg["eval"]
        self.qa = self.ev["qa"]
        self.seed, self.max_steps = key["seed"], key["max_steps"]
        self.spent = protocol.budget_counter(protocol.of(key))  # the seat counter max_steps bounds
        self.game, self.content, self.facts = lifecycle.open_game(
            cfg["game"], self.rd, overwrite=self.ev["overwrite"], seed=self.seed, log=self.log
        )
        self.world = layout.build(self)
        # a price table that cannot be read, or lacks a model a seat calls: one line before any call
        self.prices = load_prices(self.ev.get("prices"))
        if self.prices is not None:
            for seat in self.seats.values():
                if seat.uses_model:
                    self.prices.of(seat.llm)
        agents = [s.agent for s in self.seats.values()]
        self.checkpoint_every, self.progress_setting, self.kill_after = lifecycle.cadence(
            self.ev, any(getattr(a, "interactive", False) for a in agents)
        )
        self.elapsed = 0.0
        self.wk_questions: list[Question] = []
        self._episodic = bool(self.qa["enabled"]) and int(self.qa["episodic"]) > 0
        self._privileged = {aid for aid, s in self.seats.items() if s.agent.privileged}
        self._checkpointed_at = -1  # the step of the newest checkpoint this process wrote or resumed from

    # ------------------------------------------------------------ start / resume
    def _begin(self) -> None:
        ckpt = self.rd.latest_checkpoint() if self.rd.started else None
        self._t0 = time.perf_counter()
        if ckpt is not None:
            self._resume(ckpt)
        else:
            self._start()
        ev = self.ev
        self._max_tutorial = int(ev["max_tutorial_steps"])
        self._min_gap = 0.0 if self.checkpoint_every == 1 else float(ev["checkpoint_min_seconds"])
        self._max_gap = float("inf") if ev["checkpoint_max_seconds"] is None else float(ev["checkpoint_max_seconds"])
        self._qa_every = int(self.qa["every"]) if self.qa["enabled"] else 0
        self._last_checkpoint = time.perf_counter()
        self._progress = make_progress(self.progress_setting, self.layout.label(self), self.max_steps)
        self._show = None if type(self._progress) is NullProgress else self._progress.update
        self._playing = True
        self._between = True

    def _start(self) -> None:
        lifecycle.begin(self.rd, self.key, self.config_yaml, self.content, self.facts)
        obs, infos = self.world.reset(seed=self.seed)
        for aid, seat in self.seats.items():
            seat.agent.reset(seat.task)
            seat.reset_line = self.layout.reset_line(
                seat, reset_record(self.game.name, self.seed, obs[aid], infos[aid])
            )
            seat.writer, seat.qa_writer = lifecycle.open_files(seat.rd, seat.reset_line)
            seat.track([], self.facts, self._episodic)
            seat.obs, seat.info = obs[aid], infos[aid]
        if self.qa["enabled"]:
            self.wk_questions = self._world_knowledge()
            self.rd.write_questions([q.to_dict() for q in self.wk_questions])
            for seat in self.seats.values():
                self._ask(seat, "before")
            if any(seat.calls_model for seat in self.seats.values()):
                self._checkpoint()  # step 0: an interrupted run never asks its pre-play questions again
        self.log(self.layout.started(self))

    def _resume(self, ckpt: Checkpoint) -> None:
        saved = self.layout.saved(self, ckpt.runner)
        obs = self.world.load_state(ckpt.env_state)
        for aid, seat in self.seats.items():
            mine = saved[aid]
            seat.agent.reset(seat.task)
            seat.agent.load(self.layout.agent_dir(ckpt.agent_dir, aid))
            if aid in obs and obs[aid] != mine["observation"]:
                raise RunDirError(self.layout.changed(ckpt.path, aid))
            seat.obs, seat.info = mine["observation"], dict(mine["info"])
            seat.reset_line, seen, seat.writer, seat.qa_writer = lifecycle.reopen_files(seat.rd, mine, ckpt.path.name)
            seat.track(seen, self.facts, self._episodic)
            for name in ("total", "play", "tutorial_steps", "tokens"):  # rewards: from the lines seen
                setattr(seat, name, mine[name])
            seat.end = mine["end"]
            if seat.end is not None and aid in self.world.agents:
                self.world.retire(aid)
            if aid in self.world.agents and seat.agent.needs_valid_actions:
                seat.info["valid_actions"] = self.world.valid_actions(aid)
        self.steps, self.elapsed = ckpt.runner[self.layout.counter], ckpt.runner["elapsed"]
        self._checkpointed_at = self.steps
        if self.qa["enabled"]:
            self.wk_questions = lifecycle.stored_questions(
                self.rd, self._world_knowledge, [s.rd for s in self.seats.values()], self.log
            )
        self.log(f"resume from step {self.steps}: {self.rd.path}")

    def _world_knowledge(self) -> list[Question]:
        """The cell's World-Knowledge questions: every seat is asked the same ones."""
        return lifecycle.draw_questions(self.game, self.seed, self.key["tutorial"], self.qa, self.log)

    # ------------------------------------------------------------ one step
    @property
    def playing(self) -> bool:
        """Whether play goes on: a live seat is left and the cell is open."""
        return self._playing

    def step(self) -> bool:
        """Play one step of the world: every live seat's agent acts on what it last saw, then the world
        applies their commands (in seat order) and the step rules run once. Returns whether play goes
        on; once it does not, :meth:`finish` writes the results. Checkpoints as the cadence says."""
        if not self._playing:
            return False
        try:
            return self._step()
        except BaseException as exc:
            self._stop(exc)

    def interrupt(self) -> None:
        """Stop between two steps, as asked (a signal, a sweep that stops): write a checkpoint of the step
        just played, close the cell and raise :class:`odyssey_eval.lifecycle.RunInterrupted`, whose one
        line names the step the same command resumes from (this one: nothing is played again)."""
        if self.outcome is not None or self._lock is None:
            raise RunError(f"cell {self.rd.path} is not open: nothing to interrupt")
        self._stop(KeyboardInterrupt())

    def _stop(self, exc: BaseException) -> NoReturn:
        """``_fail``, keeping the step just played when a stop comes between two steps (Ctrl-C in a step
        of an agent that calls no model, or a sweep's board stopping the cell at its step report)."""
        if isinstance(exc, KeyboardInterrupt) and self._between and self._checkpointed_at != self.steps:
            try:
                self._checkpoint()
            except BaseException as failed:  # a disk that cannot take it: that is the one line
                exc = failed
        self._fail(exc)

    def _step(self) -> bool:
        world, seats, max_steps = self.world, self.seats, self.max_steps
        perf = time.perf_counter
        decisions: dict[str, tuple[Decision, float, bool]] = {}
        self._between = False
        self._asked_model = False  # whether a slow model answered a QA round in this step
        called = False  # whether a seat of a slow model called it in this step
        for aid in list(world.agents):
            seat = seats[aid]
            info = seat.info
            tutorial = bool(info.get("in_tutorial"))
            if tutorial and seat.tutorial_steps >= self._max_tutorial:
                raise RunError(self.layout.stuck_in_tutorial(seat, self._max_tutorial))
            if aid in self._privileged:
                info = {**info, "engine": world.engine}
            start = perf()
            self._waiting = seat.slow
            decision = seat.agent.act(seat.obs, info)
            self._waiting = False
            seconds = perf() - start
            if not isinstance(decision, Decision):
                raise RunError(f"{type(seat.agent).__name__}.act returned {type(decision).__name__}, not a Decision")
            if decision.stop:  # it leaves; no step is taken, but the calls made deciding to stop still cost tokens
                seat.tokens += decision.usage.total_tokens
                seat.stop_usage = decision.usage
                self._retire(seat, "agent_stopped")
                continue
            decisions[aid] = (decision, seconds, tutorial)
        if not decisions:
            return self._end_play()
        quests = {aid: seats[aid].info.get("quest") for aid in decisions}
        obs, _, terms, truncs, infos = world.step({aid: d.action for aid, (d, _, _) in decisions.items()})
        self.steps += 1
        qa_every = self._qa_every
        any_tutorial = False
        for aid, (decision, seconds, tutorial) in decisions.items():
            seat = seats[aid]
            info = infos[aid]
            record = step_record(decision, tutorial, None, terms[aid], info, seconds, info.get("quest") != quests[aid])
            seat.trajectory.write(record, obs[aid])  # the observation goes to disk only
            seat.tally.add(record)
            if seat.episode is not None:
                seat.episode.add(record)
            seat.obs, seat.info = obs[aid], info
            seat.total += 1
            if tutorial:
                seat.tutorial_steps += 1
                any_tutorial = True
            else:
                seat.play += 1
            if decision.usage.calls:
                seat.tokens += decision.usage.total_tokens
                called |= seat.calls_model
            if terms[aid] or truncs[aid]:
                seat.end = "terminated" if terms[aid] else "truncated"
            elif getattr(seat, self.spent) >= max_steps:
                self._retire(seat, "max_steps")
            elif qa_every and not tutorial and seat.play % qa_every == 0:
                self._ask(seat, "during")
        if self.steps == self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
        self._between = True
        now = perf()
        since = now - self._last_checkpoint
        if (
            called  # a model call takes seconds and may cost money: never played twice for want of a checkpoint
            or self._asked_model
            or (self.steps % self.checkpoint_every == 0 and since >= self._min_gap)
            or since >= self._max_gap
        ):
            self._checkpoint()
            self._last_checkpoint = perf()
        if self._show is not None:
            self._show(*self._totals(), "tutorial" if any_tutorial else "")
        if not world.agents:
            return self._end_play()
        return True

    def _retire(self, seat: Seat, reason: str) -> None:
        seat.end = reason
        if seat.id in self.world.agents:
            self.world.retire(seat.id)

    def _totals(self) -> tuple[int, int, int, int]:
        """(play steps of the seat furthest on, main reward, supplementary reward, tokens) of all seats."""
        seats = self.seats.values()
        return (
            max(s.play for s in seats),
            sum(s.tally.main_reward for s in seats),
            sum(s.tally.supplementary_reward for s in seats),
            sum(s.tokens for s in seats),
        )

    def _end_play(self) -> bool:
        self._playing = False
        progress = self._progress  # set by start(), which comes before any step
        try:
            if progress is not None:
                progress.update(*self._totals(), force=True)
            if self.layout.final_checkpoint and self._checkpointed_at != self.steps:
                self._checkpoint()  # the final state too: what a learning agent ends with is kept
        finally:
            if progress is not None:
                progress.close()
            self._progress = None
        return False

    # ------------------------------------------------------------ checkpoints
    def checkpoint(self) -> None:
        """Write a checkpoint of the cell as it stands between two steps (what the cadence does by
        itself; for an outer loop that must stop now, on a signal say). The cell plays on."""
        if self.outcome is not None or self._lock is None:
            raise RunError(f"cell {self.rd.path} is not open: nothing to checkpoint")
        try:
            self._checkpoint()
        except BaseException as exc:
            self._fail(exc)

    def _checkpoint(self) -> None:
        runner = self.layout.runner_state(self, self.elapsed + time.perf_counter() - self._t0)
        self._checkpointed_at = self.steps
        self.rd.write_checkpoint(
            self.steps,
            self.world.save_state(),
            runner,
            lambda directory: self.layout.save_agents(self, directory),
            keep=int(self.ev["keep_checkpoints"]),
        )

    # ------------------------------------------------------------ QA
    def _ask(self, seat: Seat, phase: str) -> None:
        self._waiting = seat.slow
        try:
            self._ask_rounds(seat, phase)
        finally:
            self._waiting = False
        self._asked_model = self._asked_model or seat.calls_model

    def _ask_rounds(self, seat: Seat, phase: str) -> None:
        start = time.perf_counter()
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
                salt=self.layout.salt(seat),
            )
            if em:
                rounds.append(ask_questions(seat.agent, em, phase=phase, step=seat.play, kind="episodic"))
        extra = self.layout.qa_keys(seat)
        for r in rounds:
            seat.qa_file.write({"game": self.game.name, **extra, **r.to_dict()})
        seconds = time.perf_counter() - start
        if seconds >= 1.0 and self.progress_setting not in (False, "false", "off", "no"):
            # a model's QA round takes a while: say so, or a log looks hung (a fast agent's stays quiet)
            asked = sum(len(r.answers) for r in rounds)
            self.log(f"qa {phase}{self.layout.who(seat)} step {seat.play}: {asked} questions in {seconds:.0f} s")

    # ------------------------------------------------------------ finish and close
    def finish(self) -> CellOutcome:
        """Play on to the end if need be, ask the after-play QA rounds, write every ``results.json``
        (the cell's last) and release the lock. Returns the results (a skipped cell's as found)."""
        if self.outcome is not None:
            return self.outcome
        if self._lock is None:
            raise RunError(f"cell {self.rd.path} was closed before it finished: open it again to resume")
        while self.step():
            pass
        try:
            if self.qa["enabled"]:
                for seat in self.seats.values():
                    self._ask(seat, "after")
            for seat in self.seats.values():
                seat.close()
            self.outcome = CellOutcome(self.rd.path, "finished", self.layout.results(self))
        except BaseException as exc:
            self._fail(exc)
        self._release()
        return self.outcome

    def _metrics(self, seat: Seat) -> dict[str, Any]:
        stop = seat.stop_usage if seat.stop_usage is not None and seat.stop_usage.calls else None
        return seat.tally.metrics(
            stop_tokens=(stop.input_tokens, stop.output_tokens) if stop is not None else None,
            stop_calls=stop.by_purpose() if stop is not None else None,
        )

    def _cost(self, seat: Seat, results: Mapping[str, Any]) -> dict[str, Any] | None:
        """What the seat's model calls cost (``results.json``'s ``cost``), or None: no price table, an
        agent that uses no model, or a local model the table does not list."""
        if self.prices is None or not seat.uses_model:
            return None
        return cell_cost(results, self.prices)

    def _wall_time(self) -> float:
        return round(self.elapsed + time.perf_counter() - self._t0, 3)

    def close(self) -> None:
        """Stop here: close the files and release the lock. An unfinished cell stays resumable from its
        newest checkpoint (what came after it is played again, identically)."""
        self._playing = False
        progress, self._progress = self._progress, None
        if progress is not None:
            progress.close()
        for seat in self.seats.values():
            seat.close()
        self._release()

    def _release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.close()

    def _fail(self, exc: BaseException) -> NoReturn:
        """Leave the cell resumable and raise: one line for Ctrl-C or an unreachable model (and for a
        run directory that cannot be written), ``exc`` itself otherwise."""
        self._playing = False
        try:
            if isinstance(exc, STOPPING):
                writers = [w for s in self.seats.values() for w in (s.writer, s.qa_writer)]
                lifecycle.stopped(exc, self.rd, self.steps, writers, self.layout.counter)
            if isinstance(exc, OSError):  # a run directory that became read-only or a full disk: one line
                raise (cannot_write(exc) or exc) from None
            raise exc
        finally:
            self.close()

    def __enter__(self) -> Cell:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# ---------------------------------------------------------------------- the two layouts
class _Layout(ABC):
    """How the files of a cell are laid out and what its records say: what a cell of one agent and a
    cell of several differ in (the formats earlier versions wrote, kept byte for byte)."""

    #: The checkpoint's step counter in ``runner.json``.
    counter: str
    #: Whether the state after the last step is checkpointed too, for a learning agent's memory.
    #: Multi-agent cells never did; doing so would change their checkpoints.
    final_checkpoint: bool

    @abstractmethod
    def build(self, cell: Cell) -> Any:
        """Build the cell's seats (``cell.seats``) and return its world."""

    @abstractmethod
    def label(self, cell: Cell) -> str:
        """The progress display's name of the cell."""

    @abstractmethod
    def reset_line(self, seat: Seat, line: dict[str, Any]) -> dict[str, Any]:
        """A seat's first trajectory line."""

    @abstractmethod
    def qa_keys(self, seat: Seat) -> dict[str, Any]:
        """What a seat's QA lines say of it besides the round."""

    @abstractmethod
    def salt(self, seat: Seat) -> str:
        """What makes a seat's episodic questions differ from round to round (and from the other seats')."""

    @abstractmethod
    def who(self, seat: Seat) -> str:
        """How log lines name a seat."""

    @abstractmethod
    def stuck_in_tutorial(self, seat: Seat, steps: int) -> str:
        """The error for a seat still in the tutorial after ``steps`` steps."""

    @abstractmethod
    def changed(self, checkpoint: Path, aid: str) -> str:
        """The error for a checkpoint that no longer reproduces a seat's observation."""

    @abstractmethod
    def started(self, cell: Cell) -> str:
        """The log line of a started cell."""

    @abstractmethod
    def runner_state(self, cell: Cell, elapsed: float) -> dict[str, Any]:
        """``runner.json`` of a checkpoint."""

    @abstractmethod
    def saved(self, cell: Cell, runner: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        """Each seat's counters, files and last view, from a checkpoint's ``runner.json``."""

    @abstractmethod
    def agent_dir(self, directory: Path, aid: str) -> Path:
        """Where a checkpoint keeps a seat's agent memory."""

    @abstractmethod
    def save_agents(self, cell: Cell, directory: Path) -> None:
        """Save every seat's agent memory into a checkpoint's agent folder."""

    @abstractmethod
    def results(self, cell: Cell) -> dict[str, Any]:
        """Write every ``results.json`` (and the dependency graph) and return the cell's results."""

    @staticmethod
    def _seat_state(seat: Seat) -> dict[str, Any]:
        return {"observation": seat.obs, "info": sanitize(seat.info)}


class _Solo(_Layout):
    """One agent (``agent=``): its files at the top of the run directory, its agent id ``player``."""

    counter = "total"
    final_checkpoint = True

    def build(self, cell: Cell) -> _OneWorld:
        from odyssey_env.env import PLAYER, OdysseyEnv

        agent = build_agent(cell.cfg["agent"], cell.cfg.get("llm"), seed=cell.seed)
        env = OdysseyEnv(
            cell.game,
            valid_actions=bool(agent.needs_valid_actions),
            tutorial=cell.key["tutorial"],
            provenance=bool(cell.ev["dependency_graph"]),
        )
        task = Task(cell.game.name, cell.game.title, tuple(env.verbs()), cell.seed, cell.max_steps)
        cell.seats[PLAYER] = Seat(PLAYER, cell.key["agent"], agent, cell.rd, cell.key["llm"], task)
        return _OneWorld(env, PLAYER)

    def label(self, cell: Cell) -> str:
        return f"{cell.game.name} {cell.cfg['agent']['name']} seed {cell.seed}"

    def reset_line(self, seat: Seat, line: dict[str, Any]) -> dict[str, Any]:
        return line

    def qa_keys(self, seat: Seat) -> dict[str, Any]:
        return {}

    def salt(self, seat: Seat) -> str:
        return str(seat.play)

    def who(self, seat: Seat) -> str:
        return ""

    def stuck_in_tutorial(self, seat: Seat, steps: int) -> str:
        return f"still in the tutorial after {steps} steps (eval.max_tutorial_steps)"

    def changed(self, checkpoint: Path, aid: str) -> str:
        return (
            f"checkpoint {checkpoint} does not reproduce its observation: the game or the "
            "engine changed since it was written; rerun with eval.overwrite=true"
        )

    def started(self, cell: Cell) -> str:
        return f"start: {cell.rd.path}"

    def runner_state(self, cell: Cell, elapsed: float) -> dict[str, Any]:
        (seat,) = cell.seats.values()
        return {
            "total": seat.total,
            "play": seat.play,
            "tutorial_steps": seat.tutorial_steps,
            "main": seat.tally.main_reward,
            "sup": seat.tally.supplementary_reward,
            "tokens": seat.tokens,
            "terminated": seat.end == "terminated",
            "elapsed": elapsed,
            **seat.files(),
            **self._seat_state(seat),
        }

    def saved(self, cell: Cell, runner: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        # the seat's end is not recorded: it follows from the counters (a decision to stop is asked again)
        (aid,) = cell.seats
        spent = runner[cell.spent] >= cell.max_steps
        end = "terminated" if runner["terminated"] else "max_steps" if spent else None
        return {aid: {**runner, "end": end}}

    def agent_dir(self, directory: Path, aid: str) -> Path:
        return directory

    def save_agents(self, cell: Cell, directory: Path) -> None:
        (seat,) = cell.seats.values()
        seat.agent.save(directory)

    def results(self, cell: Cell) -> dict[str, Any]:
        (seat,) = cell.seats.values()
        metrics = cell._metrics(seat)
        rounds = cell.rd.qa_rounds()  # from the file: a resumed run asked its earlier rounds in another process
        end = seat.end if seat.end in ("terminated", "agent_stopped") else "max_steps"
        key = cell.key
        results = {
            "format": RESULTS_FORMAT,
            "game": cell.game.name,
            "game_title": cell.game.title,
            "game_origin": origin(cell.game.path),  # odyssey's own, or the paper's imported from which release
            "agent": seat.agent.describe(),
            "agent_stats": seat.agent.stats(),
            "agent_name": key["agent"]["name"],
            "agent_config": key["agent"],
            "llm": key["llm"],
            "seed": cell.seed,
            "max_steps": cell.max_steps,
            "protocol": protocol.of(key),
            "tutorial": key["tutorial"],
            "tag": key["tag"],
            "end_reason": end,
            "steps": seat.total,
            "play_steps": metrics["play_steps"],
            "tutorial_steps": metrics["tutorial"]["steps"],
            "main_reward": metrics["main_reward"],
            "supplementary_reward": metrics["supplementary_reward"],
            "metrics": metrics,
            "qa": lifecycle.qa_summary(rounds),
            "wall_time": cell._wall_time(),
            "versions": lifecycle.versions(),
        }
        cost = cell._cost(seat, results)
        if cost is not None:  # only with a price table (eval.prices): never zeros in place of "not priced"
            results["cost"] = cost
        if cell.world.engine.provenance is not None:  # decided when the run started (it is in the saved state)
            cell.rd.write_dependency_graph(cell.world.dependency_graph())
            results["dependency_graph"] = DEPENDENCY_GRAPH
        cell.rd.write_results(results)
        cell.log(
            f"done ({end}, {metrics['play_steps']} play steps, main {metrics['main_reward']}, "
            f"sup {metrics['supplementary_reward']}): {cell.rd.path}"
        )
        return results


class _Team(_Layout):
    """Several agents in one world (``agents=``): agent i is ``player_i``, its files under
    ``agents/player_i/``; the cell's own ``results.json`` gathers theirs."""

    counter = "cycles"
    final_checkpoint = False

    def build(self, cell: Cell) -> Any:
        from odyssey_agents.options import keyword_options
        from odyssey_agents.registry import agent_class

        try:
            from odyssey_env.multiagent import parallel_env
        except ModuleNotFoundError as exc:
            if exc.name != "pettingzoo":
                raise
            raise ConfigError(str(exc)) from None

        key = cell.key
        llm = dict(cell.cfg.get("llm") or {"name": "none"})
        built = []
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
            agent = build_agent(params, seat_llm, seed=cell.seed + AGENT_SEED_STRIDE * i)
            built.append((aid, agent_cfg, agent, {k: v for k, v in seat_llm.items() if v is not None}))
        if llm.get("name", "none") != "none" and not uses_model:
            raise ConfigError(
                f"no agent of agents={[a['name'] for a in key['agents']]} uses a language model; "
                f"drop llm={llm.get('name')} (or use llm=none)"
            )
        ma = key["multiagent"]
        try:
            world = parallel_env(
                cell.game,
                agents=[aid for aid, *_ in built],
                episode_end=ma["episode_end"],
                supplies=ma["supplies"],
                tutorial=key["tutorial"],
                valid_actions=any(agent.needs_valid_actions for _, _, agent, _ in built),
                provenance=bool(cell.ev.get("dependency_graph")),
            )
        except ValueError as exc:
            raise ConfigError(f"multiagent: {exc}") from None
        verbs = tuple(world.verbs())
        for i, (aid, agent_cfg, agent, seat_llm) in enumerate(built):
            task = Task(cell.game.name, cell.game.title, verbs, cell.seed + AGENT_SEED_STRIDE * i, cell.max_steps)
            cell.seats[aid] = Seat(aid, agent_cfg, agent, RunDir(cell.rd.path / AGENTS_DIR / aid), seat_llm, task)
        return world

    def label(self, cell: Cell) -> str:
        names = ",".join(s.config["name"] for s in cell.seats.values())
        return f"{cell.game.name} [{names}] seed {cell.seed}"

    def reset_line(self, seat: Seat, line: dict[str, Any]) -> dict[str, Any]:
        return {**line, "agent": seat.id}

    def qa_keys(self, seat: Seat) -> dict[str, Any]:
        return {"agent": seat.id}

    def salt(self, seat: Seat) -> str:
        return f"{seat.id}:{seat.play}"

    def who(self, seat: Seat) -> str:
        return f" {seat.id}"

    def stuck_in_tutorial(self, seat: Seat, steps: int) -> str:
        return (
            f"{seat.id} ({seat.config['name']}) is still in the tutorial after {steps} steps (eval.max_tutorial_steps)"
        )

    def changed(self, checkpoint: Path, aid: str) -> str:
        return (
            f"checkpoint {checkpoint} does not reproduce {aid}'s observation: the game or "
            "the engine changed since it was written; rerun with eval.overwrite=true"
        )

    def started(self, cell: Cell) -> str:
        return f"start: {cell.rd.path} ({len(cell.seats)} agents)"

    def runner_state(self, cell: Cell, elapsed: float) -> dict[str, Any]:
        return {
            "cycles": cell.steps,
            "elapsed": elapsed,
            "agents": {
                aid: {
                    "total": seat.total,
                    "play": seat.play,
                    "tutorial_steps": seat.tutorial_steps,
                    "main": seat.tally.main_reward,
                    "sup": seat.tally.supplementary_reward,
                    "tokens": seat.tokens,
                    "end": seat.end,
                    **seat.files(),
                    **self._seat_state(seat),
                }
                for aid, seat in cell.seats.items()
            },
        }

    def saved(self, cell: Cell, runner: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        return runner["agents"]

    def agent_dir(self, directory: Path, aid: str) -> Path:
        return directory / aid

    def save_agents(self, cell: Cell, directory: Path) -> None:
        for aid, seat in cell.seats.items():
            (directory / aid).mkdir()
            seat.agent.save(directory / aid)

    def results(self, cell: Cell) -> dict[str, Any]:
        key = cell.key
        wall = cell._wall_time()
        common = {
            "format": RESULTS_FORMAT,
            "game": cell.game.name,
            "game_title": cell.game.title,
            "game_origin": origin(cell.game.path),  # odyssey's own, or the paper's imported from which release
            "seed": cell.seed,
            "max_steps": cell.max_steps,
            "protocol": protocol.of(key),
            "tutorial": key["tutorial"],
            "tag": key["tag"],
            "llm": key["llm"],
            "versions": lifecycle.versions(),
        }
        per_agent: dict[str, dict[str, Any]] = {}
        for aid, seat in cell.seats.items():
            metrics = cell._metrics(seat)
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
                "qa": lifecycle.qa_summary(seat.rd.qa_rounds()),
                "multiagent": {"agents": [s.config["name"] for s in cell.seats.values()], **key["multiagent"]},
                "wall_time": wall,
            }
            cost = cell._cost(seat, results)
            if cost is not None:
                results["cost"] = cost
            seat.rd.write_results(results)
            per_agent[aid] = results
        graph = None
        if cell.world.engine.provenance is not None:  # every agent's actions in one graph
            cell.rd.write_dependency_graph(cell.world.dependency_graph())
            graph = DEPENDENCY_GRAPH
        results = {
            **common,
            "multiagent": {**key["multiagent"], "agents": key["agents"]},
            "steps": cell.steps,
            "agents": per_agent,
            "dependency_graph": graph,
            "wall_time": wall,
        }
        total = sweep_cost([r["cost"] for r in per_agent.values() if "cost" in r])
        if total is not None:  # the agents' costs added up (each agent's is in its own results)
            results["cost"] = {"agents": total.pop("cells"), **total}
        cell.rd.write_results(results)
        summary = ", ".join(
            f"{aid} {r['agent_name']} main {r['main_reward']} ({r['end_reason']})" for aid, r in per_agent.items()
        )
        cell.log(f"done ({cell.steps} steps; {summary}): {cell.rd.path}")
        return results
