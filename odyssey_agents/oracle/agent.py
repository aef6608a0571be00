"""The oracle agent: a privileged planner that reads the true state and plays the main quest.

It proves that a game is solvable (CI runs it on every shipped game and seed) and is the upper-bound
baseline of the agent zoo. It never sees anything an honest agent could not *do*: every command it
sends is checked against the engine's valid actions before it is sent. What it *knows* is the whole
state: ``info["engine"]`` from the evaluation runner, or the engine of the env it was built with.

Each step it takes its goals from the quest rules' own data (the tutorial's current step, else the
open main-quest stages), asks :class:`~odyssey_agents.oracle.planner.Planner` for a command, and watches
its progress: when the quest has not advanced for ``PATIENCE`` steps, the way the planner leaned on
most is banned for a while and opportunism is paused, so it tries something else instead of looping.
Its memory (bans, choices, the progress watch) is saved with checkpoints, so a resumed run decides
exactly as an uninterrupted one.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from odyssey_agents.base import Agent, Decision, Task
from odyssey_agents.oracle.planner import Planner
from odyssey_env.limits import TEXT_CHARS
from odyssey_env.parsing import parse
from odyssey_env.quests.main_quest import open_stages, plan
from odyssey_env.turn import Turn

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.quests.spec import Condition

__all__ = ["OracleAgent", "current_goals", "is_valid"]

PATIENCE = 60  # steps without quest progress before the planner's most used way is banned
BAN_STEPS = 80  # how long such a ban (and the pause of opportunism) lasts


def current_goals(engine: Engine, agent_id: str) -> list[Condition]:
    """The conditions the agent should work on now: the tutorial step, else the open main stages."""
    agent = engine.state.agents[agent_id]
    quest = engine.game.quest
    if agent.in_tutorial:
        data = engine.state.rule_data.get("tutorial")
        if data and agent_id in data["agents"] and quest.tutorial is not None:
            mine = data["agents"][agent_id]
            if not mine["finished"]:
                return [quest.tutorial.steps[mine["step"]].done]
        return []
    if quest.main is None:
        return []
    done = engine.state.rule_data["main_quest"]["agents"][agent_id]["done"]
    return [s.done for s in open_stages(plan(quest.main), done)]


def _progress(engine: Engine, agent_id: str) -> tuple[int, int]:
    tut = engine.state.rule_data.get("tutorial", {}).get("agents", {}).get(agent_id)
    tut_step = (tut["step"] + 100 * tut["finished"]) if tut else 0
    main = engine.state.rule_data.get("main_quest", {}).get("agents", {}).get(agent_id)
    return tut_step, len(main["done"]) if main else 0


def is_valid(engine: Engine, agent_id: str, command: str) -> bool:
    """Whether ``command`` parses and its verb lists it among the commands applicable now.

    Amount verbs list only the smallest and largest feasible amount, so any amount in between is
    accepted; ``write`` lists a placeholder text, so any text that fits is accepted for a listed
    writable.
    """

    parsed = parse(engine.rules, command)
    if isinstance(parsed, str):
        return False
    rule, args = parsed
    listed = list(rule.candidates(Turn(engine, engine.state.agents[agent_id])))
    if command in listed:
        return True
    kinds = [k for _, k in rule.params]
    if "amount" in kinds:
        i = kinds.index("amount")
        tail = " ".join(str(a) for j, a in enumerate(args) if j != i)
        amounts = []
        for cand in listed:
            p = parse(engine.rules, cand)
            if isinstance(p, str):
                continue
            if " ".join(str(a) for j, a in enumerate(p[1]) if j != i) == tail:
                amounts.append(p[1][i])
        return bool(amounts) and min(amounts) <= args[i] <= max(amounts)
    if "text" in kinds:
        i = kinds.index("text")
        rest = [a for j, a in enumerate(args) if j != i]
        if not _text_fits(engine, args[i], rest):
            return False
        for cand in listed:
            p = parse(engine.rules, cand)
            if not isinstance(p, str) and [a for j, a in enumerate(p[1]) if j != i] == rest:
                return True
    return False


def _text_fits(engine: Engine, text: str, targets: list[Any]) -> bool:
    """Whether ``text`` is writable at all (printable, one line) and fits every writable named."""
    if not text or "\n" in text or set(text) - TEXT_CHARS:
        return False
    for handle in targets:
        inst = engine.state.instances.get(handle)
        if inst is not None and len(text) > engine.game.objects[inst.type].max_text:
            return False
    return True


class OracleAgent(Agent):
    """Privileged planner agent (``agent=oracle``): completes the main quest from the true state."""

    name = "oracle"
    privileged = True

    def __init__(self, env: Any = None, *, agent_id: str = "player", check_valid: bool = True):
        """``env``: optionally the env it plays, whose engine it reads when ``info`` carries none."""
        self.env = env
        self.agent_id = agent_id
        self.check_valid = check_valid
        self._reset_episode()

    def _reset_episode(self) -> None:
        self.planner = Planner(self.agent_id)
        self.counters: dict[str, int] = {"steps": 0, "tutorial_steps": 0, "corrected": 0, "stalls": 0}
        self._progress: tuple[int, int] | None = None
        self._since = 0
        self._window: dict[tuple[Any, ...], int] = {}
        self._engine_id: int | None = None
        self._last_step = -1

    def reset(self, task: Task) -> None:
        super().reset(task)
        self._reset_episode()

    def _engine(self, info: dict[str, Any]) -> Engine:
        engine = info.get("engine") if info else None
        if engine is None and self.env is not None:
            engine = getattr(getattr(self.env, "unwrapped", self.env), "engine", None)
        if engine is None:
            raise RuntimeError("OracleAgent is privileged: pass info['engine'] or build it with the env")
        return engine

    def act(self, observation: str, info: dict[str, Any]) -> Decision:
        engine = self._engine(info)
        # a new episode (env.reset) without agent.reset: another engine, or time running backwards
        if (self._engine_id is not None and self._engine_id != id(engine)) or engine.state.step < self._last_step:
            self._reset_episode()
        self._engine_id = id(engine)
        self._last_step = engine.state.step
        command, reason = self.decide(engine)
        return Decision(command, reasoning=reason)

    def decide(self, engine: Engine) -> tuple[str, str]:
        """The next command for the agent in ``engine`` (also usable without a Gymnasium env)."""
        agent = engine.state.agents[self.agent_id]
        self.counters["steps"] += 1
        if agent.in_tutorial:
            self.counters["tutorial_steps"] += 1
        self._watch(engine)
        command, reason = self.planner.decide(engine, current_goals(engine, self.agent_id))
        if self.check_valid and not is_valid(engine, self.agent_id, command):
            self.counters["corrected"] += 1
            self.planner.memory.banned[("cmd", command)] = engine.state.step + 3
            reason = f"planned {command!r}, not valid now ({reason})"
            command = "defend" if self.planner.view.engaged_foes() else "wait"
        for key in self.planner.focus.used:
            self._window[key] = self._window.get(key, 0) + 1
        return command, reason

    def _watch(self, engine: Engine) -> None:
        """Ban what the planner leaned on when the quest stops advancing, so it tries other ways."""
        now = _progress(engine, self.agent_id)
        if now != self._progress:
            self._progress = now
            self._since = 0
            self._window = {}
            return
        self._since += 1
        if self._since < PATIENCE:
            return
        self.counters["stalls"] += 1
        self._since = 0
        self.planner.memory.calm_until = engine.state.step + BAN_STEPS  # opportunism may be what undoes the plan
        if self._window:
            worst = max(self._window.items(), key=lambda kv: (kv[1], repr(kv[0])))[0]
            self.planner.memory.banned[worst] = engine.state.step + BAN_STEPS
        self._window = {}

    def save(self, directory: Path) -> None:
        """Write what the oracle remembers (its planner's memory and its progress watch), so that a
        resumed run decides exactly as an uninterrupted one."""
        data = {
            "planner": self.planner.memory.to_json(),
            "counters": self.counters,
            "progress": list(self._progress) if self._progress is not None else None,
            "since": self._since,
            "window": [[repr(k), n] for k, n in self._window.items()],
            "last_step": self._last_step,
        }
        (Path(directory) / "oracle.json").write_text(json.dumps(data), encoding="utf-8")

    def load(self, directory: Path) -> None:
        data = json.loads((Path(directory) / "oracle.json").read_text(encoding="utf-8"))
        self._reset_episode()
        self.planner.memory.restore(data["planner"])
        self.counters = dict(data["counters"])
        self._progress = tuple(data["progress"]) if data["progress"] is not None else None
        self._since = int(data["since"])
        self._window = {ast.literal_eval(k): n for k, n in data["window"]}
        self._last_step = int(data["last_step"])

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "check_valid": self.check_valid}

    def stats(self) -> dict[str, Any]:
        """Steps decided (and how many in the tutorial), commands corrected, stalls broken."""
        return dict(self.counters)
