"""A run directory -> the data the viewer page embeds (plain JSON, compact).

Everything comes from the run's files as data: ``cell.json`` (identity and the game facts recorded at
the start), each agent's ``trajectory.jsonl``, ``qa.jsonl`` and ``results.json``, the cell's
``qa_questions.json``. No file of a run is executed and no game folder is loaded (see
:mod:`odyssey_eval.viewer.worldmap` for the one thing a *shipped* game adds). Unfinished runs can be
viewed too (the trajectory so far).

Per agent the steps are stored by column, one list per field with one entry per trajectory line (line 0
is the reset), so a 5,000-step run is a few arrays rather than 5,000 objects; fields most steps do not
have (reasoning, rewards, events, quest changes, tokens) are sparse maps from line index to value, and
repeated texts (inventory lines, the engine's usual replies) are indices into one shared string table.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from odyssey_env.rewards import COMPONENTS, SUPPLEMENTARY
from odyssey_env.safeio import MAX_JSON_DEPTH, parse_json, read_regular
from odyssey_eval.gameorigin import origin_text
from odyssey_eval.rundir import CELL, MAX_JSON_BYTES, QA, RESULTS, TRAJECTORY, RunDir, RunDirError
from odyssey_eval.trajectory import Trajectory, TrajectoryError, read_trajectory
from odyssey_eval.viewer.observation import STATS, parse_observation
from odyssey_eval.viewer.worldmap import WorldMap, layout

__all__ = ["FLAGS", "FORMAT", "ViewError", "resolve_run", "view_data"]

FORMAT = 1
#: Bits of a step's ``fl`` entry (the viewer's filters and timeline marks).
FLAGS: dict[str, int] = {
    "tutorial": 1,
    "invalid": 2,
    "failed": 4,
    "terminated": 8,
    "malformed": 16,
    "died": 32,
    "quest": 64,
    "reward": 128,
    "moved": 256,
    "level_up": 512,
    "qa": 1024,
}
AGENTS_DIR = "agents"  # as odyssey_eval.cell.AGENTS_DIR (not imported: it pulls in the runner)


class ViewError(RunDirError):
    """A path that is not a run directory the viewer can read (one line for the command line)."""


def resolve_run(path: str | Path) -> tuple[Path, str | None]:
    """``(cell directory, agent id)`` for a run directory, a multi-agent cell, or one agent's folder of it."""
    p = Path(path)
    if not p.exists():
        raise ViewError(f"{p} does not exist")
    if not p.is_dir():
        raise ViewError(f"{p} is not a run directory (a folder with a {CELL})")
    if (p / CELL).is_file():
        return p, None
    if p.parent.name == AGENTS_DIR and (p.parent.parent / CELL).is_file():
        return p.parent.parent, p.name
    found = sorted(c.parent for c in p.rglob(CELL) if not any(s.startswith(".") for s in c.relative_to(p).parts))
    if found:
        raise ViewError(
            f"{p} is not a run directory but holds {len(found)} of them; view one, e.g. odyssey view "
            f"{found[0]} (odyssey report links a viewer for each)"
        )
    raise ViewError(f"{p} is not a run directory (it has no {CELL})")


class _Strings:
    """A string table: repeated texts are stored once."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        i = self._index.get(text)
        if i is None:
            i = self._index[text] = len(self.items)
            self.items.append(text)
        return i


def _read_json(path: Path) -> Any:
    try:
        return parse_json(read_regular(path, MAX_JSON_BYTES), path, MAX_JSON_DEPTH)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ViewError(f"{path} is damaged ({str(exc).replace(f'{path}: ', '')})") from None


def _agents(cell: Mapping[str, Any], root: Path) -> list[tuple[str, Path, dict[str, Any]]]:
    """``(id, folder, agent config)`` of every agent of the cell, in the order their commands apply."""
    if isinstance(cell.get("agents"), list):  # a multi-agent cell: player_0, player_1, ...
        out = []
        for i, cfg in enumerate(cell["agents"]):
            aid = f"player_{i}"
            out.append((aid, root / AGENTS_DIR / aid, cfg if isinstance(cfg, dict) else {"name": str(cfg)}))
        return out
    agent = cell.get("agent")
    return [("agent", root, agent if isinstance(agent, dict) else {"name": "?"})]


def _label(agent: Mapping[str, Any]) -> str:
    return "+".join([str(agent.get("name", "?")), *sorted(map(str, agent.get("addons") or []))])


def _read(path: Path) -> Trajectory:
    if not path.is_file():
        raise ViewError(f"{path} does not exist: the run has not started playing (or its directory is damaged)")
    try:
        return read_trajectory(path)
    except TrajectoryError as exc:
        raise ViewError(f"{exc}; the run directory is damaged") from None


def _facts(rd: RunDir) -> Any:
    from odyssey_eval.collect import game_facts

    return game_facts(rd)


def _metrics(traj: Trajectory, facts: Any, results: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if facts is not None:
        from odyssey_eval.metrics import compute_metrics

        return compute_metrics(traj, facts)
    return dict(results["metrics"]) if results and isinstance(results.get("metrics"), dict) else None


def _columns(traj: Trajectory, strings: _Strings, world: WorldMap, facts: Any, qa_steps: set[int]) -> dict[str, Any]:
    """The agent's steps by column (see the module docstring), and the areas and exits it saw into ``world``."""
    lines = [traj.reset, *traj.steps]
    col: dict[str, Any] = {
        k: [] for k in ("a", "ar", "fl", "tm", "ob", "fb", "hd", "eq", "gd", "nb", "vb", "dt", *(s for s, _ in STATS))
    }
    sparse: dict[str, dict[int, Any]] = {k: {} for k in ("rw", "qs", "ev", "rs", "raw", "tk", "calls")}
    verbs = list(facts.verbs) if facts is not None else []
    verb_index = {v: i for i, v in enumerate(verbs)}
    play = 0
    prev_area = None
    for i, line in enumerate(lines):
        seen = line.get("observation")
        obs = seen if isinstance(seen, str) else ""
        parsed = parse_observation(obs)
        area = str(line.get("area", parsed.area if parsed else ""))
        world.area(area, parsed.place if parsed and parsed.area == area else None)
        if parsed is not None:
            for other, locked in parsed.exits:
                world.exit(parsed.area, other, locked, i)
        flags = 0
        if i > 0:
            if line.get("tutorial"):
                flags |= FLAGS["tutorial"]
            else:
                play += 1
                if play in qa_steps:
                    flags |= FLAGS["qa"]
            for key in ("invalid", "failed", "terminated", "malformed"):
                if line.get(key):
                    flags |= FLAGS[key]
            kinds = {e.get("kind") for e in line.get("events") or () if isinstance(e, dict)}
            if "agent_died" in kinds:
                flags |= FLAGS["died"]
            if "quest_stage_completed" in kinds:
                flags |= FLAGS["quest"]
            if "level_up" in kinds:
                flags |= FLAGS["level_up"]
            if line.get("reward"):
                flags |= FLAGS["reward"]
            if area != prev_area:
                flags |= FLAGS["moved"]
        prev_area = area
        action = line.get("action") if i > 0 else None
        col["a"].append(action if isinstance(action, str) else "")
        verb = facts.verb_of(action) if facts is not None and i > 0 else None
        col["vb"].append(verb_index.get(verb, -1))
        col["ar"].append(area)
        col["fl"].append(flags)
        col["tm"].append(str(line.get("time", "")))
        col["ob"].append(obs)
        col["dt"].append(line.get("decision_time") if i > 0 else None)
        for key, value in (
            ("fb", parsed.feedback if parsed else None),
            ("hd", parsed.holding if parsed else None),
            ("eq", parsed.equipped if parsed else None),
            ("gd", parsed.ground if parsed else None),
            ("nb", parsed.beings if parsed else None),
        ):
            col[key].append(-1 if value is None else strings(value))
        for (name, _), stat in zip(STATS, parsed.stats if parsed else (None,) * len(STATS), strict=True):
            col[name].append(stat)
        for src, dst in (
            ("reward", "rw"),
            ("quest", "qs"),
            ("events", "ev"),
            ("reasoning", "rs"),
            ("raw", "raw"),
            ("tokens", "tk"),
            ("calls", "calls"),
        ):
            value = line.get(src)
            if value or (src == "raw" and isinstance(value, str)):  # an empty reply is worth showing
                sparse[dst][i] = value
    col.update(sparse)
    col["verbs"] = verbs
    return col


def _questions(root: Path) -> dict[str, Any]:
    data = _read_json(root / "qa_questions.json")
    out: dict[str, Any] = {}
    for q in data if isinstance(data, list) else ():
        if isinstance(q, dict) and isinstance(q.get("id"), str):
            out[q["id"]] = {"text": str(q.get("text", "")), "choices": [str(c) for c in q.get("choices") or ()]}
    return out


def _game_areas(cell: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The initial world's areas of a shipped game whose files are those the run recorded, else None."""
    game = cell.get("game")
    if not isinstance(game, dict) or game.get("path") or not isinstance(game.get("name"), str):
        return None
    if not isinstance(cell.get("content"), dict) or not isinstance(cell.get("seed"), int):
        return None
    from odyssey_env.game import available_games, load_game
    from odyssey_env.trust import content_digest

    if game["name"] not in available_games():
        return None
    loaded = load_game(game["name"])
    if content_digest(loaded.path) != cell["content"]:
        return None  # the game changed since the run: its world would not be the run's
    from odyssey_eval.qa.world_knowledge import initial_world

    return initial_world(loaded, cell["seed"], bool(cell.get("tutorial", True))).areas


def _cell_results(rd: RunDir, *, multi: bool) -> dict[str, Any] | None:
    """The cell's results when it finished (a multi-agent cell's hold each agent's under ``agents``)."""
    if not rd.finished:
        return None
    if not multi:
        return rd.results()
    data = _read_json(rd.results_file)
    if not isinstance(data, dict):
        raise ViewError(f"{rd.results_file} is damaged (expected a JSON object)")
    return data


def _summary(results: Mapping[str, Any] | None, metrics: Mapping[str, Any] | None) -> dict[str, Any]:
    keys = (
        "play_steps",
        "main_reward",
        "supplementary_reward",
        "object_exploration",
        "action_exploration",
        "action_diversity",
        "invalid_action_rate",
        "failed_action_rate",
        "malformed_replies",
        "total_tokens",
        "tokens_per_step",
        "decision_time_mean",
    )
    out: dict[str, Any] = {k: metrics.get(k) for k in keys} if metrics else {}
    if results:
        out["end_reason"] = results.get("end_reason")
        out["wall_time"] = results.get("wall_time")
    return out


def view_data(path: str | Path) -> dict[str, Any]:
    """Everything the page shows about the run at ``path`` (see :func:`resolve_run` for what it may be).

    A run directory is data someone may have handed over: a field of the wrong type anywhere is one
    line naming the run directory, never a traceback."""
    try:
        return _view_data(path)
    except RunDirError:
        raise
    except (TypeError, KeyError, AttributeError, IndexError, ValueError) as exc:
        raise ViewError(f"{path} is damaged ({type(exc).__name__}: {str(exc)[:200]})") from None


def _view_data(path: str | Path) -> dict[str, Any]:
    root, selected = resolve_run(path)
    rd = RunDir(root)
    cell = rd.cell()
    agents = _agents(cell, root)
    if selected is not None and selected not in [a for a, _, _ in agents]:
        raise ViewError(f"{path}: the cell has no agent {selected!r}")
    llm = cell.get("llm") if isinstance(cell.get("llm"), dict) else {"name": "none"}
    tag = str(cell.get("tag") or "")
    facts = _facts(rd)
    cell_results = _cell_results(rd, multi=isinstance(cell.get("agents"), list))
    strings = _Strings()
    world = WorldMap()
    out_agents: list[dict[str, Any]] = []  # the page's JSON, one object per agent
    for aid, folder, cfg in agents:
        ard = RunDir(folder)
        traj = _read(folder / TRAJECTORY)
        results = (ard.results() if (folder / RESULTS).is_file() else None) if folder != root else cell_results
        rounds = ard.qa_rounds() if (folder / QA).is_file() else []
        qa_steps = {step for r in rounds if r.get("phase") == "during" and isinstance(step := r.get("step"), int)}
        out_agents.append(
            {
                "first": int(traj.reset.get("step", 0)) if isinstance(traj.reset.get("step"), int) else 0,
                "id": aid,
                "name": str(cfg.get("name", "?")),
                "label": _label(cfg),
                "steps": _columns(traj, strings, world, facts, qa_steps),
                "summary": _summary(results, _metrics(traj, facts, results)),
                "finished": results is not None,
                "title": (results or {}).get("game_title"),
                "origin": origin_text((results or {}).get("game_origin")),
                "qa": [{k: v for k, v in r.items() if k != "game"} for r in rounds],
            }
        )
    game_areas = _game_areas(cell)
    if game_areas is not None:
        world.add_world(game_areas)
    names = list(world.places)
    positions = layout(names, world.places, world.unlocked, seed=0)
    area_index = {n: i for i, n in enumerate(names)}
    titles, origins = [], []
    for a in out_agents:
        a["steps"]["ar"] = [area_index[name] for name in a["steps"]["ar"]]
        titles.append(a.pop("title"))
        origins.append(a.pop("origin"))
    named = cell.get("game")
    game = named if isinstance(named, dict) else {}
    run = {
        "path": str(root),
        "game": str(game.get("name", "?")),
        "game_path": game.get("path"),
        "title": next((t for t in titles if t), None) or str(game.get("name", "?")),
        # what the game is relative to the paper (results.json's game_origin), None for runs made before it
        "origin": next((o for o in origins if o), None) or origin_text((cell_results or {}).get("game_origin")),
        "seed": cell.get("seed"),
        "max_steps": cell.get("max_steps"),
        "tutorial": cell.get("tutorial"),
        "tag": tag,
        "llm": llm,
        "multi": isinstance(cell.get("agents"), list),
        "multiagent": cell.get("multiagent"),
        "finished": cell_results is not None,
        "end_reason": (cell_results or {}).get("end_reason"),
        "qa_settings": cell.get("qa"),
        "map_source": "game" if game_areas is not None else "observed",
    }
    return {
        "format": FORMAT,
        "run": run,
        "map": world.to_json(positions),
        "strings": strings.items,
        "agents": out_agents,
        "questions": _questions(root),
        "selected": selected,
        "flags": FLAGS,
        "rewards": {"components": list(COMPONENTS), "main": ["quest"], "supplementary": list(SUPPLEMENTARY)},
    }
