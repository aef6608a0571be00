"""What every cell does around its play loop, whether one agent plays it or several share its world.

:class:`odyssey_eval.cell.Cell` plays both with one loop; everything around the loop is here:

* the config is checked before anything is written (:func:`checked`): whole numbers, no key in ``llm``,
  a game folder filed under its own name;
* one process at a time works on a cell (``Cell.open`` takes :meth:`RunDir.lock`); a finished cell is
  skipped, and a damaged ``results.json`` is an error, never a skip;
* resuming against game files that changed since the start is refused before any of their code runs
  (:func:`open_game`);
* ``cell.json`` records the game's file digests and the facts metrics need (:func:`begin`), so reading
  results never loads the game;
* a lost ``qa_questions.json`` is drawn again identically, or refused (:func:`stored_questions`);
* run files are cut back to what the checkpoint had seen (:func:`reopen_files`);
* Ctrl-C or a model that cannot be reached leaves the directory resumable and says from where
  (:func:`stopped`).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from odyssey_agents.errors import ConfigError, OdysseyError
from odyssey_agents.llm.factory import refuse_secrets
from odyssey_agents.llm.protocol import LLMError
from odyssey_env import __version__ as odyssey_env_version
from odyssey_env.trust import content_digest
from odyssey_eval import protocol
from odyssey_eval.metrics import GameFacts
from odyssey_eval.qa.questions import Question
from odyssey_eval.rundir import RunDir, RunDirError
from odyssey_eval.trajectory import JsonlWriter, TrajectoryError, read_trajectory

if TYPE_CHECKING:
    from odyssey_env.game import Game

__all__ = [
    "KILL_AFTER_ENV",
    "RESULTS_FORMAT",
    "STOPPING",
    "CellOutcome",
    "RunError",
    "RunInterrupted",
    "begin",
    "cadence",
    "checked",
    "draw_questions",
    "eval_settings",
    "open_files",
    "open_game",
    "qa_summary",
    "reopen_files",
    "sanitize",
    "stopped",
    "stored_questions",
    "versions",
]

#: Test hook: a process that has written this many steps kills itself with SIGKILL (no cleanup), so
#: tests can prove that resuming after a real kill ends where an uninterrupted run ends.
KILL_AFTER_ENV = "ODYSSEY_KILL_AFTER_STEP"
RESULTS_FORMAT = 1


class RunError(OdysseyError, RuntimeError):
    """A run that cannot go on (an agent that returns no Decision, a tutorial that never ends...)."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: the run directory is left resumable; the message says from where."""

    #: The signal that stopped the run (SIGINT unless told otherwise): ``odyssey run`` exits with 128 + it.
    signum: int = 2


@dataclass
class CellOutcome:
    path: Path
    status: str  # finished | skipped
    results: dict[str, Any]


#: ``conf/eval/default.yaml`` as a dict: cells take plain dicts without Hydra (Python, tests, benchmarks),
#: and fill in what they leave out from here. A test keeps the two equal.
_DEFAULT_EVAL: dict[str, Any] = {
    "output_dir": "runs",
    "checkpoint_every": 25,
    "checkpoint_min_seconds": 5.0,
    "checkpoint_max_seconds": 60.0,
    "keep_checkpoints": 2,
    "overwrite": False,
    "progress": "auto",
    "tag": "",
    "max_tutorial_steps": 1000,
    "dependency_graph": False,
    "prices": None,
    "qa": {
        "enabled": True,
        "every": 0,
        "world_knowledge": 5,
        "episodic": 3,
        "choices": 4,
        "world_dynamics": 0,
        "writer": None,
        "writer_seed": 0,
    },
}


def eval_settings(cfg: Mapping[str, Any]) -> dict[str, Any]:
    ev = {**_DEFAULT_EVAL, **dict(cfg.get("eval") or {})}
    ev["qa"] = {**_DEFAULT_EVAL["qa"], **dict(ev.get("qa") or {})}
    return ev


def sanitize(info: Mapping[str, Any]) -> dict[str, Any]:
    """An ``info`` as a checkpoint keeps it: without what is rebuilt on resume (valid actions, the engine)."""
    return {k: v for k, v in info.items() if k not in ("valid_actions", "engine")}


# ---------------------------------------------------------------------------- the config
def checked(cfg: Mapping[str, Any], players: str = "agent") -> dict[str, Any]:
    """The config with its eval settings filled in and its cell settings checked and normalised, before
    anything is written or compared (a key in ``llm`` must not reach ``cell.json``, ``config.yaml`` or a
    "different run" message). ``players`` is the setting that names who plays: ``agent`` or ``agents``."""
    cfg = {**dict(cfg), "eval": eval_settings(cfg)}
    for required in ("game", players, "seed", "max_steps"):
        if required not in cfg or cfg[required] is None:
            raise RunError(f"the config has no {required!r}")
    refuse_secrets(cfg.get("llm") or {})
    refuse_secrets(cfg["eval"]["qa"].get("writer") or {}, "eval.qa.writer")  # the other model groups of a cell
    if isinstance(cfg.get("game"), Mapping):
        refuse_secrets(cfg["game"].get("expander_llm") or {}, "game.expander_llm")
    cfg["seed"] = _whole("seed", cfg["seed"])
    cfg["max_steps"] = _whole("max_steps", cfg["max_steps"])
    if cfg["max_steps"] < 1:
        raise ConfigError(f"max_steps must be at least 1, got {cfg['max_steps']}")
    cfg["protocol"] = protocol.check(cfg.get("protocol"))
    if not isinstance(cfg.get("tutorial", True), bool):
        raise ConfigError(f"tutorial must be true or false, got {cfg['tutorial']!r}")
    if not isinstance(cfg["game"], Mapping):
        raise ConfigError(f"game must be a config with a name or a path, got {cfg['game']!r}")
    game = dict(cfg["game"])
    if game.get("path"):  # a folder is filed under its own name, whatever game group it was given in
        game["name"] = _own_name(game["path"], bool(game.get("trust")))
    cfg["game"] = game
    return cfg


def _whole(name: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise ConfigError(f"{name} must be a whole number, got {value!r}")


def _game_folder(game: Mapping[str, Any]) -> Path:
    """The folder a game config names, found without loading it."""
    from odyssey_env.game import GAMES_DIR

    if not game.get("path"):
        shipped = GAMES_DIR / str(game["name"])
        return shipped if (shipped / "world.json").is_file() else Path(str(game["name"]))
    folder = Path(game["path"])
    return folder.parent if folder.name == "world.json" else folder


def _own_name(path: str, trust: bool) -> str:
    """``game.name`` from a folder's ``world.json``, read as data (nothing of the folder runs here)."""
    folder = Path(path)
    world = folder if folder.name == "world.json" else folder / "world.json"
    from odyssey_env.limits import MAX_FILE_BYTES
    from odyssey_env.safeio import read_json

    try:  # a regular file only, bounded: a link, a FIFO or a huge file is left to load_game to refuse
        name = read_json(world, MAX_FILE_BYTES)["game"]["name"]
    except (OSError, ValueError, LookupError, TypeError):
        name = None
    if isinstance(name, str) and name:
        return name
    from odyssey_env.game import load_game

    return load_game(folder, trust=trust).name  # raises the GameError that says what is wrong


def cadence(ev: Mapping[str, Any], interactive: bool) -> tuple[int, Any, int]:
    """(checkpoint every N steps, progress setting, step to be killed after or -1). A person at the
    keyboard gets a checkpoint after every step and no progress bar over the game's text."""
    kill = os.environ.get(KILL_AFTER_ENV)
    return (
        1 if interactive else max(1, int(ev["checkpoint_every"])),
        False if interactive else ev["progress"],
        int(kill) if kill else -1,
    )


# ---------------------------------------------------------------------------- start and resume
#: ``game.expander``: who writes the online expansions (paper A3.4).
EXPANDERS = ("procedural", "llm")
PACKS = "expansion_packs"  # the content entry of the written expansion packs


def open_game(
    game_cfg: Mapping[str, Any],
    rd: RunDir,
    *,
    overwrite: bool,
    seed: int = 0,
    log: Callable[[str], None] = lambda _: None,
) -> tuple[Game, dict[str, str], GameFacts]:
    """The cell's game, its files' digests and its facts. A run being resumed is first checked against
    the digests it recorded: before edited rules run, or a model loads for nothing.

    With ``game.expander=llm`` the game carries the expansion packs its writer wrote for this seed
    (:mod:`odyssey_eval.expansion`, cached), and their digest joins the content a resume is checked
    against. The facts are the game's own: written types exist only once an expansion brings them."""
    from odyssey_env.game import load_game

    expander = game_cfg.get("expander") or "procedural"
    if expander not in EXPANDERS:
        raise ConfigError(f"game.expander must be one of {', '.join(EXPANDERS)}, got {expander!r}")
    folder = _game_folder(game_cfg)
    resuming = rd.started and not overwrite and (folder / "world.json").is_file()
    if resuming:
        rd.check_content(content_digest(folder), ignore=(PACKS,))
    game = load_game(game_cfg.get("path") or game_cfg["name"], trust=bool(game_cfg.get("trust")))
    content, facts = content_digest(game.path), GameFacts.of(game)
    if expander == "llm":
        import hashlib

        from odyssey_env.quests.expansion import with_packs
        from odyssey_eval.expansion import write_packs

        writer_seed = game_cfg.get("expander_seed")
        data = write_packs(
            game, game_cfg.get("expander_llm"), seed=seed if writer_seed is None else int(writer_seed), log=log
        )
        game = with_packs(game, data["packs"])
        content[PACKS] = hashlib.sha256(json.dumps(data["packs"], sort_keys=True).encode()).hexdigest()
        if resuming:
            rd.check_content(content)
    return game, content, facts


def begin(
    rd: RunDir, key: Mapping[str, Any], config_yaml: str | None, content: Mapping[str, str], facts: GameFacts
) -> None:
    """Write ``cell.json`` (with what reading the results will need of the game) and ``config.yaml``."""
    rd.start(key, config_yaml, content=content, facts=facts.to_dict())
    if rd.checkpoints.exists():  # left by a run killed before its first checkpoint completed
        shutil.rmtree(rd.checkpoints)


def open_files(rd: RunDir, reset_line: Mapping[str, Any]) -> tuple[JsonlWriter, JsonlWriter]:
    """A new run's trajectory (its reset line written) and QA files."""
    rd.path.mkdir(parents=True, exist_ok=True)
    writer = JsonlWriter(rd.trajectory)
    writer.write(reset_line)
    return writer, JsonlWriter(rd.qa)


def reopen_files(
    rd: RunDir, saved: Mapping[str, Any], checkpoint: str
) -> tuple[dict[str, Any], list[dict[str, Any]], JsonlWriter, JsonlWriter]:
    """The reset line and the step lines (without observations, as the loop keeps them) that checkpoint
    ``checkpoint`` had seen, and the trajectory and QA files cut back to its byte counts (``saved``)."""
    _check_length(rd.trajectory, saved["trajectory_bytes"], checkpoint)
    _check_length(rd.qa, saved["qa_bytes"], checkpoint)
    try:
        seen = read_trajectory(rd.trajectory, limit_bytes=saved["trajectory_bytes"])
    except TrajectoryError as exc:
        raise RunDirError(f"{exc}: the run directory is damaged (rerun with eval.overwrite=true)") from None
    for step in seen.steps:
        del step["observation"]
    return (
        seen.reset,
        seen.steps,
        JsonlWriter(rd.trajectory, truncate_to=saved["trajectory_bytes"]),
        JsonlWriter(rd.qa, truncate_to=saved["qa_bytes"]),
    )


def _check_length(path: Path, size: int, checkpoint: str) -> None:
    """A run file must still hold the ``size`` bytes checkpoint ``checkpoint`` had seen before it is
    cut back to them: a shorter one lost lines the checkpoint counts on (and truncating would pad it
    with zero bytes). Saying so now beats a run that fails at its end."""
    have = path.stat().st_size if path.exists() else 0
    if have < size:
        raise RunDirError(
            f"{path} is shorter than checkpoint {checkpoint} recorded; the run directory is "
            "damaged (rerun with eval.overwrite=true)"
        )


# ---------------------------------------------------------------------------- questions
def draw_questions(
    game: Game, seed: int, tutorial: bool, qa: Mapping[str, Any], log: Callable[[str], None] = lambda _: None
) -> list[Question]:
    """A cell's World-Knowledge questions: a function of the game, the seed and the QA settings (with
    ``world_dynamics``, also of the questions its writer wrote once for the game, cached)."""
    from odyssey_eval.qa.world_knowledge import initial_world, verify_world_knowledge, world_knowledge_questions

    world = initial_world(game, seed, tutorial)
    questions = world_knowledge_questions(
        game, world, seed, per_template=int(qa["world_knowledge"]), n_choices=int(qa["choices"])
    )
    written = int(qa.get("world_dynamics") or 0)
    if written:
        from odyssey_eval.qa.written import dynamics_questions, written_questions

        stored = written_questions(game, qa.get("writer"), seed=int(qa.get("writer_seed") or 0), log=log)
        for q in dynamics_questions(game, stored, seed, per_template=written, n_choices=int(qa["choices"])):
            verify_world_knowledge(q, game, world)
            questions.append(q)
    return questions


def stored_questions(
    rd: RunDir, draw: Callable[[], list[Question]], asked_in: Iterable[RunDir], log: Callable[[str], None]
) -> list[Question]:
    """The questions written at the start; if the file was lost, the same ones drawn again (they are
    seeded), checked against what the before-play rounds recorded (``asked_in``: the run directories
    whose ``qa.jsonl`` holds them), and written back. Never none: that would silently drop the
    after-play round."""
    path = rd.qa_questions
    if path.exists():
        try:
            return [Question.from_dict(d) for d in rd.questions()]
        except (TypeError, KeyError, AttributeError) as exc:
            raise RunDirError(
                f"{path} is damaged ({type(exc).__name__}: {exc}); remove the run directory "
                "or rerun with eval.overwrite=true"
            ) from None
    questions = draw()
    drawn = [(q.id, q.answer) for q in questions]
    for where in asked_in:
        asked = next((r for r in where.qa_rounds() if r.get("kind") == "world_knowledge"), None)
        if asked is not None and [(a.get("id"), a.get("answer")) for a in asked.get("answers", [])] != drawn:
            raise RunDirError(
                f"{path} is missing and the questions drawn again differ from those asked before "
                "play; rerun with eval.overwrite=true to start over"
            )
    rd.write_questions([q.to_dict() for q in questions])
    log(f"{path.name} was missing: drew the same {len(questions)} questions again (they are seeded)")
    return questions


# ---------------------------------------------------------------------------- stopping and finishing
def stopped(exc: BaseException, rd: RunDir, step: int, writers: Iterable[JsonlWriter | None], counter: str) -> NoReturn:
    """Close the run files and raise the one line for a run stopped by Ctrl-C or its model
    (:class:`RunInterrupted`, :class:`RunError`), naming the step the same command resumes from.
    ``counter`` is the checkpoint's step counter (``total`` for one agent, ``cycles`` for several)."""
    for writer in writers:
        if writer is not None:
            writer.close()
    ckpt = rd.latest_checkpoint()
    resume = ckpt.runner[counter] if ckpt is not None else 0
    again = f"run the same command again to resume from step {resume} ({rd.path})"
    if isinstance(exc, LLMError):
        raise RunError(f"{exc}; stopped after step {step}: {again}") from None
    raise RunInterrupted(f"interrupted after step {step}: {again}") from None


#: What stops a run while leaving its directory resumable (see :func:`stopped`).
STOPPING = (KeyboardInterrupt, LLMError)


def versions() -> dict[str, str]:
    return {"odyssey_env": odyssey_env_version, "python": platform.python_version()}


def qa_summary(rounds: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The QA rounds as ``results.json`` lists them: without the individual answers."""
    return [{k: v for k, v in r.items() if k != "answers"} for r in rounds]
