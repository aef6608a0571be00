"""``python -m odyssey_gen.validate.worker``: the checks that run a candidate game, inside the sandbox.

Reads one JSON request on stdin (``folder``, ``checks``, ``settings``) and writes one result line on
stdout (after :data:`~odyssey_gen.validate.sandbox.MARKER`): for each check run, its problems, each a
dict with ``check``, ``message`` (one line), ``detail`` (a traceback, the feedback...) and ``owner``
(the generation stage that must repair it: ``entities``, ``rules`` or ``quest``). Checks run in order
and stop at the first that fails, since each needs the ones before:

* ``load``: schema and references (``load_game(trust=True)``: this process *is* the sandbox), and
  that every new rule documents itself;
* ``execution``: a random agent with valid actions (a uniformly random verb, then one of its
  commands) for ``random_steps`` steps on each seed: any exception, broken state invariant, valid
  action that fails when sent, or runaway growth of the world is a problem;
* ``reachability``: every verb ``rules.py`` defines was listed and succeeded during the execution
  test, and every step rule it defines changed something at least once;
* ``solvability``: the oracle completes every main-quest stage on every seed within the budget.

Never imported by the generator's own process except for its constants; it runs only as a script.
"""

from __future__ import annotations

import json
import pickle
import random
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from odyssey_gen.spec import ValidationSettings
from odyssey_gen.validate.sandbox import CHECK_MARKER, MARKER

PLAYER = "player"
RULES_MODULE_PREFIX = "odyssey_game_rules_"


def problem(check: str, message: str, detail: str = "", owner: str = "entities") -> dict[str, str]:
    return {"check": check, "message": message, "detail": detail, "owner": owner}


class Context:
    def __init__(self, folder: Path, settings: ValidationSettings):
        self.folder = folder
        self.settings = settings
        self.game: Any = None
        self.stats: dict[str, Any] = {}
        self.new_verbs: list[str] = []
        self.new_steps: list[str] = []
        self.new_predicates: list[str] = []
        self.listed: set[str] = set()
        self.succeeded: set[str] = set()
        self.fired: dict[str, int] = {}

    @property
    def has_rules(self) -> bool:
        return (self.folder / "rules.py").is_file()

    def owner_of(self, tb: str) -> str:
        """Who must repair a crash: the rules if their file is in the traceback, else the data."""
        return "rules" if self.has_rules and "rules.py" in tb else "entities"


# ---------------------------------------------------------------------------- load
def check_load(ctx: Context) -> list[dict[str, str]]:
    from odyssey_env.game import GameError, load_game

    try:
        game = load_game(ctx.folder, cache=False, trust=True)
    except GameError as exc:
        owners = {"world.json": "entities", "quest.json": "quest", "rules.py": "rules"}
        return [
            problem("load", str(p), owner=owners.get(p.file, "rules" if "params of rule" in p.file else "entities"))
            for p in exc.problems
        ]
    ctx.game = game
    out = []
    for verb, rule in game.rules.actions.items():
        if type(rule).__module__.startswith(RULES_MODULE_PREFIX):
            ctx.new_verbs.append(verb)
            if not rule.description.strip():
                out.append(problem("load", f"the verb {verb!r} has no description (agents read it)", owner="rules"))
    for rule in game.rules.steps:
        if type(rule).__module__.startswith(RULES_MODULE_PREFIX):
            ctx.new_steps.append(rule.name)
            if not rule.description.strip():
                out.append(problem("load", f"the step rule {rule.name!r} has no description", owner="rules"))
    for name, fn in game.rules.predicates.items():
        if getattr(fn, "__module__", "").startswith(RULES_MODULE_PREFIX):
            ctx.new_predicates.append(name)
    ctx.stats["summary"] = game.summary()
    ctx.stats["new_rules"] = {"verbs": ctx.new_verbs, "step_rules": ctx.new_steps, "predicates": ctx.new_predicates}
    return out


# ---------------------------------------------------------------------------- execution
def _watch_steps(ctx: Context, engine: Any) -> None:
    """Count, for each new step rule, the steps on which it changed anything (events, feedback, state)."""
    for rule in engine.rules.steps:
        if rule.name not in ctx.new_steps:
            continue
        original = type(rule).apply

        def watched(eng: Any, _rule: Any = rule, _apply: Any = original) -> None:
            name = _rule.name
            if ctx.fired.get(name, 0) >= 3:  # proven; stop paying for the comparison
                _apply(_rule, eng)
                return
            events = len(eng.events)
            said = sum(len(v) for v in eng.state.feedback.values())
            blob = pickle.dumps(eng.state, protocol=pickle.HIGHEST_PROTOCOL)
            _apply(_rule, eng)
            if (
                len(eng.events) != events
                or sum(len(v) for v in eng.state.feedback.values()) != said
                or pickle.dumps(eng.state, protocol=pickle.HIGHEST_PROTOCOL) != blob
            ):
                ctx.fired[name] = ctx.fired.get(name, 0) + 1

        rule.apply = watched  # an instance attribute: only this process's copy of the rule is watched


def check_execution(ctx: Context) -> list[dict[str, str]]:
    from odyssey_env.engine import Engine
    from odyssey_gen.validate.invariants import state_problems, world_size

    game, st = ctx.game, ctx.settings
    out: list[dict[str, str]] = []
    ctx.fired = dict.fromkeys(ctx.new_steps, 0)
    started = time.perf_counter()
    steps_done = 0
    for seed in range(st.seeds):
        tutorial = seed == 0 and game.quest.tutorial is not None
        where = f"seed {seed}, before the first step"
        try:
            engine = Engine(game, seed, options={"tutorial": tutorial, "expansion": True})
            _watch_steps(ctx, engine)
            rng = random.Random(f"odyssey-gen:execution:{seed}")
            limit = st.growth_factor * world_size(engine) + 200
            for i in range(st.random_steps):
                where = f"seed {seed}, step {i}"
                valid = engine.valid_actions(PLAYER)
                ctx.listed.update(valid)
                verb = rng.choice(sorted(valid))
                command = rng.choice(valid[verb])
                where = f"seed {seed}, step {i}, command {command!r}"
                outcome = engine.step({PLAYER: command})[PLAYER]
                steps_done += 1
                if outcome.invalid or outcome.failed:
                    fb = " ".join(engine.state.feedback[PLAYER])
                    owner = "rules" if verb in ctx.new_verbs else "entities"
                    out.append(
                        problem(
                            "execution",
                            f"unsound valid action ({where}): {command!r} was listed as valid but was refused",
                            fb,
                            owner,
                        )
                    )
                    break
                ctx.succeeded.add(verb)
                if i % 20 == 0 or i == st.random_steps - 1:
                    broken = state_problems(engine)
                    if broken:
                        out.append(
                            problem(
                                "execution",
                                f"invalid state ({where}): {broken[0]}",
                                "\n".join(broken),
                                "rules" if ctx.has_rules else "entities",
                            )
                        )
                        break
                    size = world_size(engine)
                    if size > limit:
                        out.append(
                            problem(
                                "execution",
                                f"runaway world growth ({where}): {size} things, more than {limit:.0f}",
                                owner="rules" if ctx.has_rules else "entities",
                            )
                        )
                        break
                if engine.state.done:
                    break
        except MemoryError:
            raise
        except RecursionError as exc:
            out.append(
                problem(
                    "execution",
                    f"{where}: RecursionError: {exc}",
                    traceback.format_exc(limit=-8),
                    "rules" if ctx.has_rules else "entities",
                )
            )
        except Exception as exc:
            tb = traceback.format_exc()
            out.append(problem("execution", f"{where}: {type(exc).__name__}: {exc}", tb, ctx.owner_of(tb)))
    ctx.stats["execution"] = {
        "seeds": st.seeds,
        "steps": steps_done,
        "verbs_listed": sorted(ctx.listed),
        "seconds": round(time.perf_counter() - started, 3),
        "new_step_rules_fired": dict(ctx.fired),
    }
    return out


def check_reachability(ctx: Context) -> list[dict[str, str]]:
    st = ctx.settings
    span = f"{st.random_steps} random steps on {st.seeds} seed(s)"
    out = []
    for verb in ctx.new_verbs:
        if verb not in ctx.listed:
            out.append(
                problem(
                    "reachability",
                    f"the new verb {verb!r} never appeared among the valid actions in "
                    f"{span}: make its candidates() list it when it applies",
                    owner="rules",
                )
            )
        elif verb not in ctx.succeeded:
            out.append(
                problem(
                    "reachability", f"the new verb {verb!r} was listed but never succeeded in {span}", owner="rules"
                )
            )
    for name in ctx.new_steps:
        if not ctx.fired.get(name):
            out.append(
                problem(
                    "reachability",
                    f"the new step rule {name!r} never changed anything in {span}: it must fire in ordinary play",
                    owner="rules",
                )
            )
    return out


# ---------------------------------------------------------------------------- solvability
def check_solvability(ctx: Context) -> list[dict[str, str]]:
    from odyssey_agents.base import Task
    from odyssey_agents.oracle import OracleAgent, current_goals
    from odyssey_env.env import OdysseyEnv

    game, st = ctx.game, ctx.settings
    out: list[dict[str, str]] = []
    runs = []
    for seed in range(st.seeds):
        env = OdysseyEnv(game, tutorial=game.quest.tutorial is not None)
        obs, info = env.reset(seed=seed)
        agent = OracleAgent(env)
        agent.reset(
            Task(game=game.name, title=game.title, verbs=tuple(env.verbs()), seed=seed, max_steps=st.oracle_budget)
        )
        steps = tutorial_steps = 0
        reason = ""
        terminated = False
        tutorial_done = game.quest.tutorial is None
        try:
            while not terminated and steps < st.oracle_budget and tutorial_steps < 300:
                in_tutorial = bool(info.get("in_tutorial"))
                decision = agent.act(obs, {**info, "engine": env.engine})
                reason = decision.reasoning or ""
                obs, _, terminated, _, info = env.step(decision.action)
                tutorial_steps += in_tutorial
                steps += not in_tutorial
                tutorial_done = tutorial_done or any(
                    e["kind"] == "tutorial_completed" and e.get("completed") for e in info["events"]
                )
        except Exception as exc:
            tb = traceback.format_exc()
            out.append(
                problem(
                    "solvability",
                    f"seed {seed}: the oracle's episode crashed: {type(exc).__name__}: {exc}",
                    tb,
                    ctx.owner_of(tb),
                )
            )
            continue
        quest = info.get("quest") or {"completed": 0, "total": 0, "current": []}
        runs.append(
            {
                "seed": seed,
                "stages": quest["completed"],
                "total": quest["total"],
                "steps": steps,
                "tutorial_steps": tutorial_steps,
                "tutorial_completed": tutorial_done,
                "deaths": env.engine.state.agents[PLAYER].deaths,
            }
        )
        if not tutorial_done:
            out.append(
                problem(
                    "solvability",
                    f"seed {seed}: the oracle could not finish the tutorial in {tutorial_steps} steps",
                    reason,
                    "quest",
                )
            )
        if not (terminated and quest["completed"] == quest["total"]):
            goals = [json.dumps(_plain(c), sort_keys=True) for c in current_goals(env.engine, PLAYER)]
            stuck = ", ".join(f"{s['id']} ({s['title']})" for s in quest.get("current", []))
            done = f"{quest['completed']}/{quest['total']}"
            out.append(
                problem(
                    "solvability",
                    f"seed {seed}: the oracle completed {done} main-quest stages in "
                    f"{steps} steps; still open: {stuck or 'none'}",
                    f"open conditions: {'; '.join(goals)}\nthe oracle's last reason: {reason}",
                    "quest",
                )
            )
    ctx.stats["solvability"] = {"budget": st.oracle_budget, "runs": runs}
    return out


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


CHECKS = {
    "load": check_load,
    "execution": check_execution,
    "reachability": check_reachability,
    "solvability": check_solvability,
}


def main() -> int:
    request = json.loads(sys.stdin.read())
    ctx = Context(Path(request["folder"]), ValidationSettings(**request["settings"]))
    result: dict[str, Any] = {}
    for check in request["checks"]:
        print(CHECK_MARKER + check, file=sys.stderr, flush=True)
        try:
            found = CHECKS[check](ctx)
        except MemoryError:
            ctx.game = None  # let go of what we can before reporting
            found = [
                problem(
                    check,
                    f"ran out of its memory limit of {ctx.settings.memory_mb} MB (a memory bomb in the game's rules?)",
                    owner="rules" if ctx.has_rules else "entities",
                )
            ]
        except Exception as exc:
            tb = traceback.format_exc()
            found = [problem(check, f"{type(exc).__name__}: {exc}", tb, ctx.owner_of(tb))]
        result[check] = found
        if found:
            break
    result["_stats"] = ctx.stats
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
