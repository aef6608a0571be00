"""``python -m odyssey_gen.validate.worker FOLDER``: the untrusted half of validation, run inside the sandbox.

This process loads the candidate game (``load_game(trust=True)``: its ``rules.py`` runs here, and only
here) and then *only plays*: it answers one JSON request per line on stdin with one JSON reply per line
on stdout, nothing else. It decides nothing. The trusted parent (:mod:`odyssey_gen.validate.sandbox`)
picks every command of the random agent, counts steps, checks each returned state against the
world's invariants and computes every verdict itself, so a payload that takes over this process can
lie about what it saw but cannot write "validated" anywhere.

Requests (``op``) and what they answer:

* ``load``: the game's problems, or what its rules add (new verbs, step rules, predicates, from its
  ``rules.py`` and its ``rules.json``; those without a description) and the game's summary;
* ``reset`` (``seed``, ``tutorial``): a fresh engine; its valid actions and its state;
* ``step`` (``command``, ``state``): the outcome (``invalid``, ``failed``, the feedback), the new step
  rules that changed anything on this step, ``done``, the next valid actions, and the state when asked;
* ``oracle_reset`` (``seed``) / ``oracle_step`` / ``oracle_goals``: the oracle's episode, one step at a
  time (the parent counts the steps and the budget; each step names the verb that succeeded and the new
  step rules that changed anything, since the oracle's play also reaches new rules), and its open goals
  at the end.

An exception becomes ``{"error": {...}}`` with its traceback; what the rules print goes to stderr.
Never imported by the generator's own process.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import traceback
from pathlib import Path
from typing import Any

PLAYER = "player"
#: The module names the rule language gives what it compiles from a folder's ``rules.json``
#: (odyssey_env.rulelang.compiler): those rules are the game's own, new rules, like ``rules.py``'s.
RULE_FILE_PREFIX = "odyssey_rulelang_"


class Player:
    """The game under test, its engine and its oracle: what the parent's requests act on."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.game: Any = None
        self.engine: Any = None
        self.new_steps: set[str] = set()
        self.fired: set[str] = set()
        self.env: Any = None
        self.agent: Any = None
        self.obs = ""
        self.info: dict[str, Any] = {}

    # ------------------------------------------------------------------ load
    def load(self, _request: dict[str, Any]) -> dict[str, Any]:
        from odyssey_env.game import RULES_MODULE_PREFIX, GameError, load_game

        try:
            game = load_game(self.folder, cache=False, trust=True)
        except GameError as exc:
            return {"problems": [{"file": p.file, "text": str(p)} for p in exc.problems]}
        self.game = game

        def new(obj: Any) -> bool:
            return str(getattr(obj, "__module__", "")).startswith((RULES_MODULE_PREFIX, RULE_FILE_PREFIX))

        verbs = [v for v, rule in game.rules.actions.items() if new(type(rule))]
        steps = [rule.name for rule in game.rules.steps if new(type(rule))]
        self.new_steps = set(steps)
        return {
            "new_verbs": verbs,
            "new_steps": steps,
            "new_predicates": [n for n, fn in game.rules.predicates.items() if new(fn)],
            "undescribed_verbs": [v for v in verbs if not game.rules.actions[v].description.strip()],
            "undescribed_steps": [r.name for r in game.rules.steps if r.name in steps and not r.description.strip()],
            "summary": game.summary(),
            "tutorial": game.quest.tutorial is not None,
        }

    # ------------------------------------------------------------------ the random agent's episode
    def _watch_steps(self, engine: Any) -> None:
        """Note, for each new step rule, whether it changed anything (events, feedback, state) on this step."""
        for rule in engine.rules.steps:
            if rule.name not in self.new_steps:
                continue
            original = type(rule).apply

            def watched(eng: Any, _rule: Any = rule, _apply: Any = original) -> None:
                events = len(eng.events)
                said = sum(len(v) for v in eng.state.feedback.values())
                blob = pickle.dumps(eng.state, protocol=pickle.HIGHEST_PROTOCOL)
                _apply(_rule, eng)
                if (
                    len(eng.events) != events
                    or sum(len(v) for v in eng.state.feedback.values()) != said
                    or pickle.dumps(eng.state, protocol=pickle.HIGHEST_PROTOCOL) != blob
                ):
                    self.fired.add(_rule.name)

            rule.apply = watched  # an instance attribute: only this engine's copy of the rule is watched

    def reset(self, request: dict[str, Any]) -> dict[str, Any]:
        from odyssey_env.engine import Engine

        self.engine = Engine(
            self.game, int(request["seed"]), options={"tutorial": bool(request["tutorial"]), "expansion": True}
        )
        self._watch_steps(self.engine)
        return {"valid": self.engine.valid_actions(PLAYER), "state": self.engine.state.to_dict()}

    def step(self, request: dict[str, Any]) -> dict[str, Any]:
        self.fired = set()
        outcome = self.engine.step({PLAYER: str(request["command"])})[PLAYER]
        done = bool(self.engine.state.done)
        reply = {
            "invalid": bool(outcome.invalid),
            "failed": bool(outcome.failed),
            "feedback": " ".join(self.engine.state.feedback[PLAYER]),
            "fired": sorted(self.fired),
            "done": done,
        }
        if request.get("state"):
            reply["state"] = self.engine.state.to_dict()
        try:  # the next step's valid actions: a failure belongs to the next step, after the state is checked
            reply["valid"] = {} if done else self.engine.valid_actions(PLAYER)
        except MemoryError:
            raise
        except Exception as exc:
            reply["valid_error"] = {"message": f"{type(exc).__name__}: {exc}", "detail": traceback.format_exc()}
        return reply

    # ------------------------------------------------------------------ the oracle's episode
    def oracle_reset(self, request: dict[str, Any]) -> dict[str, Any]:
        from odyssey_agents.base import Task
        from odyssey_agents.oracle import OracleAgent
        from odyssey_env.env import OdysseyEnv

        game, seed = self.game, int(request["seed"])
        self.env = OdysseyEnv(game, tutorial=game.quest.tutorial is not None)
        self.obs, self.info = self.env.reset(seed=seed)
        self._watch_steps(self.env.engine)  # the oracle's play counts toward reaching the new rules too
        self.agent = OracleAgent(self.env)
        self.agent.reset(
            Task(
                game=game.name,
                title=game.title,
                verbs=tuple(self.env.verbs()),
                seed=seed,
                max_steps=int(request["budget"]),
            )
        )
        return {"in_tutorial": bool(self.info.get("in_tutorial"))}

    def oracle_step(self, _request: dict[str, Any]) -> dict[str, Any]:
        in_tutorial = bool(self.info.get("in_tutorial"))
        decision = self.agent.act(self.obs, {**self.info, "engine": self.env.engine})
        self.fired = set()
        self.obs, _, terminated, _, self.info = self.env.step(decision.action)
        ok = not (self.info.get("invalid_action") or self.info.get("action_failed"))
        quest = self.info.get("quest") or {"completed": 0, "total": 0, "current": []}
        return {
            "in_tutorial": in_tutorial,
            "reason": decision.reasoning or "",
            "terminated": bool(terminated),
            "tutorial_completed": any(
                e.get("kind") == "tutorial_completed" and e.get("completed") for e in self.info["events"]
            ),
            "quest": {
                "completed": quest["completed"],
                "total": quest["total"],
                "current": [{"id": s["id"], "title": s["title"]} for s in quest.get("current", [])],
            },
            "deaths": self.env.engine.state.agents[PLAYER].deaths,
            "verb": _verb_of(str(decision.action), self.game.rules.actions) if ok else None,
            "fired": sorted(self.fired),
        }

    def oracle_goals(self, _request: dict[str, Any]) -> dict[str, Any]:
        from odyssey_agents.oracle import current_goals

        return {"goals": [json.dumps(_plain(c), sort_keys=True) for c in current_goals(self.env.engine, PLAYER)]}


def _verb_of(command: str, verbs: Any) -> str | None:
    """The verb a command starts with (the longest that fits: ``take out`` before ``take``)."""
    words = command.strip().split()
    for n in range(min(3, len(words)), 0, -1):
        verb = " ".join(words[:n])
        if verb in verbs:
            return verb
    return None


def _plain(cond: Any) -> dict[str, Any]:
    from dataclasses import fields

    out: dict[str, Any] = {}
    for f in fields(cond):
        value = getattr(cond, f.name)
        if f.name in ("conditions", "plan"):
            if value:
                out[f.name] = [_plain(c) for c in value]
        elif value not in (None, (), {}) and not (f.name == "count" and value == 1):
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


OPS = ("load", "reset", "step", "oracle_reset", "oracle_step", "oracle_goals")


def main() -> int:
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")  # the reply channel; fd 1 becomes stderr
    os.dup2(2, 1)
    sys.stdout = sys.stderr  # what the rules print is not a reply
    player = Player(Path(sys.argv[1]))
    for line in sys.stdin:
        request = json.loads(line)
        op = request.get("op")
        try:
            if op not in OPS:
                raise ValueError(f"unknown request {op!r}")
            reply = getattr(player, op)(request)
        except MemoryError:
            player.game = player.engine = player.env = player.agent = None  # let go of what we can first
            reply = {"error": {"memory": True, "message": "MemoryError", "detail": ""}}
        except RecursionError as exc:
            reply = {"error": {"message": f"RecursionError: {exc}", "detail": traceback.format_exc(limit=-8)}}
        except Exception as exc:
            reply = {"error": {"message": f"{type(exc).__name__}: {exc}", "detail": traceback.format_exc()}}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
