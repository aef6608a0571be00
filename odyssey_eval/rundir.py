"""Run directories: where one (game, agent, llm, seed) cell lives, and how it is resumed.

Layout of a run directory::

    .lock                held (an OS file lock) by the process working on the cell
    cell.json            what the cell is (game, agent, llm, seed, budget, QA settings): its identity,
                         plus what was recorded of the game at the start: the digests of its files
                         (``content``) and the facts metrics need (``facts``: verbs, carryable objects)
    config.yaml          the fully resolved Hydra config, for the record
    trajectory.jsonl     one line per step, appended and flushed (see odyssey_eval.trajectory)
    qa.jsonl             QA diagnostics, one line per round of questions
    qa_questions.json    the World-Knowledge questions of this cell (generated once, before play)
    checkpoints/         step_<N>/{env.json, runner.json, agent/}; LATEST names the newest complete one
    results.json         written last: its presence means the cell is finished
    dependency_graph.json the action-dependency graph (with eval.dependency_graph=true)

The path is a pure function of the cell, so rerunning a sweep finds its own directories: finished
cells are skipped, unfinished ones resume from their newest checkpoint (the trajectory and QA
files are cut back to what that checkpoint had seen), and a directory that holds a different cell
is refused rather than silently mixed; so is resuming against game files that changed since the
start. One process at a time works on a cell: :meth:`RunDir.lock` takes an OS file lock (``flock``),
which the OS releases when the process ends, however it ends; a second process is refused at once
rather than left waiting on a run that may take hours. Everything here reads and writes data; nothing
in a run directory is ever executed. A run directory may come from someone else: every file is read as
a regular file only (a planted link, folder or FIFO is refused), bounded in size (:data:`MAX_JSON_BYTES`)
and in nesting (:data:`~odyssey_env.safeio.MAX_JSON_DEPTH`), and files are written through a temporary
file made with ``mkstemp`` and renamed, never through a planted link (:func:`odyssey_env.safeio.write_atomic`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odyssey_agents.errors import OdysseyError
from odyssey_agents.llm.factory import identity as llm_identity
from odyssey_env.safeio import MAX_JSON_DEPTH, UnsafeFile, parse_json, read_regular, write_atomic
from odyssey_eval import protocol
from odyssey_eval.trajectory import json_bytes

# The platforms whose Python has no fcntl (its documented availability), by name so that a type checker
# knows which branch it is checking: there a cell is not locked.
if sys.platform == "win32" or sys.platform == "emscripten" or sys.platform == "wasi":
    fcntl = None
else:
    import fcntl

__all__ = ["Checkpoint", "RunDir", "RunDirError", "cell_key", "run_path", "slug"]

CELL = "cell.json"
CONFIG = "config.yaml"
TRAJECTORY = "trajectory.jsonl"
QA = "qa.jsonl"
QA_QUESTIONS = "qa_questions.json"
RESULTS = "results.json"
DEPENDENCY_GRAPH = "dependency_graph.json"
CHECKPOINTS = "checkpoints"
LATEST = "LATEST"
LOCK = ".lock"
#: The largest JSON file read from a run directory (checkpoints of big worlds are a few MB).
MAX_JSON_BYTES = 256 * 2**20
#: What ``cell.json`` records besides the cell's identity (see the module docstring).
RECORDED = ("content", "facts")
#: Keys a ``results.json`` must have, with their types, to be read as a finished run.
RESULT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "game": str,
    "seed": int,
    "max_steps": int,
    "agent": dict,
    "metrics": dict,
    "steps": int,
    "main_reward": (int, float),
    "supplementary_reward": (int, float),
}
#: The same for a multi-agent cell's own ``results.json`` (each agent's folder has a run's results, above):
#: ``agents`` maps each agent's id, which names its folder, to its results.
MULTI_RESULT_FIELDS: dict[str, type | tuple[type, ...]] = {
    "game": str,
    "seed": int,
    "max_steps": int,
    "steps": int,
    "agents": dict,
    "multiagent": dict,
}
_UNWRITABLE = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}

_SLUG_BAD = re.compile(r"[^A-Za-z0-9._=+-]+")


class RunDirError(OdysseyError, RuntimeError):
    """A run directory that cannot be used as asked (another cell's, or damaged)."""


def slug(text: str) -> str:
    """A path-safe rendering of a name: ``Qwen/Qwen3-4B`` -> ``Qwen_Qwen3-4B``."""
    out = _SLUG_BAD.sub("_", str(text)).strip("._")
    return out or "_"


def cell_key(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The settings that make a cell what it is; two configs with equal keys produce equal runs.

    Output locations, checkpoint frequency and display options are left out: they change where and
    how a run is written, not what it is; so are the llm settings that say how the model is reached
    (timeout, retries, rate limits: ``odyssey_agents.llm.factory.TRANSPORT_SETTINGS``). Settings that
    are null are left out too (null means "the default"), so ``{"name": "random"}`` from Python and
    ``{name: random, seed: null}`` from a config file name the same cell.
    """
    ev = cfg.get("eval", {}) or {}
    key = {
        # whether a folder's rules may run is the user's permission, not part of what the cell is
        "game": {k: v for k, v in _without_nulls(cfg["game"]).items() if k != "trust"},
        "agent": _without_nulls(cfg["agent"]),
        "llm": llm_identity(_without_nulls(cfg.get("llm") or {"name": "none"})),
        "seed": int(cfg["seed"]),
        "max_steps": int(cfg["max_steps"]),
        "tutorial": bool(cfg.get("tutorial", True)),
        "qa": dict(ev.get("qa") or {}),
        "tag": str(ev.get("tag") or ""),
    }
    # the default protocol is left out, as null settings are, so the cells recorded before protocols
    # existed (all of them the default's) are still the same cells
    if protocol.check(cfg.get("protocol")) != protocol.DEFAULT:
        key["protocol"] = cfg["protocol"]
    return key


def _without_nulls(group: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in dict(group).items() if v is not None}


#: Settings that change what a paradigm is rather than how it is tuned, with the paradigm's default: a
#: cell that sets another value names it in its run directory and in the report's label
#: (``lora_sft+target=reply``), so a variant never shares a folder, nor an average, with the paradigm
#: the paper describes.
VARIANT_SETTINGS: dict[str, dict[str, Any]] = {"lora_sft": {"target": "step"}}


def agent_variant(agent: Mapping[str, Any]) -> list[str]:
    """``setting=value`` for each variant setting of ``agent`` that is not its paradigm's default."""
    defaults = VARIANT_SETTINGS.get(str(agent.get("name")), {})
    return [f"{k}={agent[k]}" for k, d in defaults.items() if agent.get(k) is not None and agent[k] != d]


def run_path(cfg: Mapping[str, Any]) -> Path:
    """``<output_dir>/<game>/<agent[+add-on...][+variant...]>/<llm[-model]>/seed_<seed>[_no_tutorial]
    [_protocol=<protocol>][_<tag>]`` (the protocol where it is not the default, ``odyssey_eval.protocol``).

    Other agent and llm parameters are part of the cell's identity (``cell.json``) but not of the
    path: a rerun with different ones is refused with a message, and ``eval.tag`` names a variant.
    The settings of :data:`VARIANT_SETTINGS` are in the path when they differ from the default.
    """
    key = cell_key(cfg)
    agent = key["agent"]
    addons = agent.get("addons") or []
    agent_part = "+".join(
        [slug(agent["name"]), *(slug(a) for a in sorted(addons)), *(slug(v) for v in agent_variant(agent))]
    )
    llm = dict(key["llm"])
    llm_name = llm.pop("name", "none")
    model = llm.pop("model", None)
    llm_part = slug(llm_name) + (f"-{slug(model)}" if model else "")
    seed_part = (
        f"seed_{key['seed']}"
        + ("" if key["tutorial"] else "_no_tutorial")
        + (f"_protocol={key['protocol']}" if "protocol" in key else "")
        + (f"_{slug(key['tag'])}" if key["tag"] else "")
    )
    output_dir = Path((cfg.get("eval") or {}).get("output_dir") or "runs")
    return output_dir / slug(key["game"]["name"]) / agent_part / llm_part / seed_part


@dataclass
class Checkpoint:
    """A complete checkpoint: env state, the runner's counters, and the agent's memory folder."""

    path: Path
    env_state: dict[str, Any]
    runner: dict[str, Any]

    @property
    def agent_dir(self) -> Path:
        return self.path / "agent"


def _write_json(path: Path, data: Any) -> None:
    """Write atomically: a reader never sees half a file, even if the process is killed.

    (No fsync: the guarantee is against killed processes, which is what resuming is for; a power
    cut may lose the last seconds of a run, and the next run resumes from an older checkpoint.)
    """
    try:
        write_atomic(path, json_bytes(data))  # json.dumps's compact ASCII text, as UTF-8 bytes
    except UnsafeFile as exc:
        raise RunDirError(str(exc)) from None


def _read_json(path: Path) -> Any:
    """A JSON file of a run directory: regular, bounded, not too deep; otherwise one line naming it."""
    try:
        return parse_json(read_regular(path, MAX_JSON_BYTES), path, MAX_JSON_DEPTH)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:  # UnsafeFile, bad JSON, bytes that are not UTF-8
        raise _damaged(path, exc) from None


def _damaged(path: Path, why: Any) -> RunDirError:
    why = str(why).replace(f"{path}: ", "").replace(f"{path} ", "")  # the path is said once
    return RunDirError(f"{path} is damaged ({why}); remove the run directory or rerun with eval.overwrite=true")


def cannot_write(exc: OSError) -> RunDirError | None:
    """One line for a place runs cannot be written to (read-only, full, not a folder), else None."""
    if exc.errno in _UNWRITABLE or isinstance(exc, (NotADirectoryError, FileExistsError)):
        return RunDirError(
            f"cannot write {exc.filename}: {exc.strerror or exc}; choose another eval.output_dir or fix the permissions"
        )
    return None


class RunDir:
    """One cell's directory. Cheap to create; touches the disk only when asked."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.trajectory = self.path / TRAJECTORY
        self.qa = self.path / QA
        self.qa_questions = self.path / QA_QUESTIONS
        self.results_file = self.path / RESULTS
        self.checkpoints = self.path / CHECKPOINTS

    # ------------------------------------------------------------ state
    @property
    def finished(self) -> bool:
        return self.results_file.is_file()

    @property
    def started(self) -> bool:
        return (self.path / CELL).is_file()

    def cell(self) -> dict[str, Any]:
        data = _read_json(self.path / CELL)
        if not isinstance(data, dict):
            raise _damaged(self.path / CELL, f"expected a JSON object, found {type(data).__name__}")
        return data

    def results(self) -> dict[str, Any]:
        """The finished run's results; anything that is not a results object is a damaged directory,
        said in one line, rather than a "finished" cell that later crashes a report."""
        if not self.finished:
            raise RunDirError(f"{self.path} has no results.json: the run has not finished")
        data = _read_json(self.results_file)
        if not isinstance(data, dict):
            raise _damaged(self.results_file, f"expected a JSON object, found {type(data).__name__}")
        multi = "agents" in data
        for key, kind in (MULTI_RESULT_FIELDS if multi else RESULT_FIELDS).items():
            value = data.get(key)
            if not isinstance(value, kind) or isinstance(value, bool):
                raise _damaged(self.results_file, f"{key} is missing or not a {getattr(kind, '__name__', 'number')}")
        if multi:
            if not data["agents"]:
                raise _damaged(self.results_file, "agents is empty")
            for agent_id, agent in data["agents"].items():  # an id names a folder: never a path elsewhere
                if slug(agent_id) != agent_id or not isinstance(agent, dict):
                    raise _damaged(self.results_file, f"agents has an entry {agent_id!r} that is not an agent's")
        return data

    def recorded_facts(self) -> dict[str, Any] | None:
        """The game facts the run recorded at its start (None for a run directory from before they were)."""
        return self.cell().get("facts")

    def questions(self) -> list[dict[str, Any]]:
        """The World-Knowledge questions :meth:`write_questions` wrote (none if it never did)."""
        try:
            data = _read_json(self.qa_questions)
        except FileNotFoundError:
            return []
        if not isinstance(data, list):
            raise _damaged(self.qa_questions, f"expected a JSON list, found {type(data).__name__}")
        return data

    def qa_rounds(self) -> list[dict[str, Any]]:
        """The rounds recorded in ``qa.jsonl``, in order (none when there is no such file)."""
        try:
            data = read_regular(self.qa, MAX_JSON_BYTES)
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise _damaged(self.qa, exc) from None
        try:
            rounds = [parse_json(line, self.qa) for line in data.splitlines() if line.strip()]
        except ValueError as exc:
            raise _damaged(self.qa, exc) from None
        if not all(isinstance(r, dict) for r in rounds):
            raise _damaged(self.qa, "a line is not a JSON object")
        return rounds

    def check_cell(self, key: Mapping[str, Any]) -> None:
        """Refuse to continue a directory that belongs to a different cell."""
        if not self.started:
            if self.trajectory.exists() or self.checkpoints.exists():
                raise RunDirError(
                    f"{self.path} has run files but no {CELL}: it is damaged; remove it or "
                    "rerun with eval.overwrite=true"
                )
            return
        have = {k: v for k, v in self.cell().items() if k not in RECORDED}
        if isinstance(have.get("llm"), dict):  # a directory written when the timeout was part of the identity
            have["llm"] = llm_identity(have["llm"])
        if have != dict(key):
            diff = [
                f"{k}: {have.get(k)!r} here, {key.get(k)!r} asked"
                for k in sorted(set(have) | set(key))
                if have.get(k) != key.get(k)
            ]
            raise RunDirError(
                f"{self.path} holds a different run ({'; '.join(diff)}). Use another "
                "eval.output_dir or eval.tag, or eval.overwrite=true to replace it"
            )

    def check_content(self, digest: Mapping[str, str], ignore: tuple[str, ...] = ()) -> None:
        """Refuse to resume against game files that differ from those the run started with: the
        checkpoint would continue one game with another's rules or data. ``ignore``: entries not
        compared this time (content that is checked once it is known, such as expansion packs)."""
        have = self.cell().get("content")
        if not isinstance(have, dict):
            return  # a run directory from before digests were recorded: nothing to compare
        have = {k: v for k, v in have.items() if k not in ignore}
        changed = sorted(name for name in set(have) | set(digest) if have.get(name) != digest.get(name))
        if changed:
            what = ", ".join(
                f"{n} ({'added' if n not in have else 'removed' if n not in digest else 'changed'})" for n in changed
            )
            raise RunDirError(
                f"the game's files changed since {self.path} started: {what}; resuming would mix "
                "two versions of the game. Restore them, or start over with eval.overwrite=true "
                "(or keep both runs apart with eval.tag=...)"
            )

    # ------------------------------------------------------------ lifecycle
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the cell's lock while the block runs, or refuse at once if another process holds it.

        ``flock`` locks belong to the open file: the OS drops them when the process exits or is killed,
        so a crashed run never leaves a stale lock behind (the ``.lock`` file itself may stay; it is
        the lock, not a sign of one)."""
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise (cannot_write(exc) or exc) from None
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
                    raise RunDirError(
                        f"{self.path} is being run by another process{f' (pid {holder})' if holder else ''}: "
                        "one process at a time works on a cell; wait for it or stop it, then run the "
                        "command again"
                    ) from None
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            yield
        finally:
            os.close(fd)  # releases the lock

    def start(
        self,
        key: Mapping[str, Any],
        config_yaml: str | None = None,
        *,
        content: Mapping[str, str] | None = None,
        facts: Mapping[str, Any] | None = None,
    ) -> None:
        """Write ``cell.json`` (the key, plus the game's file digests and facts) and ``config.yaml``."""
        self.path.mkdir(parents=True, exist_ok=True)
        record = dict(key)
        if content is not None:
            record["content"] = dict(content)
        if facts is not None:
            record["facts"] = dict(facts)
        _write_json(self.path / CELL, record)
        if config_yaml is not None:
            try:
                write_atomic(self.path / CONFIG, config_yaml)
            except UnsafeFile as exc:
                raise RunDirError(str(exc)) from None

    def wipe(self) -> None:
        """Delete the run's files (not the lock file, which the caller may hold)."""
        if not self.path.exists():
            return
        for child in self.path.iterdir():
            if child.name == LOCK:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()

    def write_results(self, results: Mapping[str, Any]) -> None:
        _write_json(self.results_file, dict(results))

    def write_questions(self, data: Any) -> None:
        _write_json(self.qa_questions, data)

    def write_dependency_graph(self, graph: Mapping[str, Any]) -> None:
        _write_json(self.path / DEPENDENCY_GRAPH, dict(graph))

    def dependency_graph(self) -> dict[str, Any] | None:
        """The saved action-dependency graph, or None when the run did not track one."""
        try:
            return _read_json(self.path / DEPENDENCY_GRAPH)
        except FileNotFoundError:
            return None

    # ------------------------------------------------------------ checkpoints
    def latest_checkpoint(self) -> Checkpoint | None:
        pointer = self.checkpoints / LATEST
        if not pointer.is_file():
            return None
        try:
            name = read_regular(pointer, 4096).decode("ascii", "replace").strip()
        except (OSError, ValueError) as exc:
            raise _damaged(pointer, exc) from None
        path = self.checkpoints / name
        if not re.fullmatch(r"step_\d+", name) or not path.is_dir():
            raise RunDirError(
                f"{pointer} points to {name!r}, which is not a checkpoint; the run directory "
                "is damaged (rerun with eval.overwrite=true to start over)"
            )
        try:
            env_state = _read_json(path / "env.json")
            runner = _read_json(path / "runner.json")
        except FileNotFoundError as exc:
            raise RunDirError(f"checkpoint {path} is incomplete ({exc.filename} missing)") from None
        return Checkpoint(path, env_state, runner)

    def write_checkpoint(
        self,
        step: int,
        env_state: Mapping[str, Any],
        runner: Mapping[str, Any],
        save_agent: Callable[[Path], None],
        keep: int = 2,
    ) -> Path:
        """Write ``checkpoints/step_<step>`` completely, then point LATEST at it, then prune old ones."""
        name = f"step_{step:06d}"
        final = self.checkpoints / name
        tmp = self.checkpoints / f".{name}.tmp"
        if tmp.exists():
            shutil.rmtree(tmp)
        (tmp / "agent").mkdir(parents=True)
        # json.dumps, not json.dump: dump streams through the pure-Python encoder, ~5x slower.
        (tmp / "env.json").write_text(json.dumps(env_state, separators=(",", ":")), encoding="utf-8")
        (tmp / "runner.json").write_text(json.dumps(runner, separators=(",", ":")), encoding="utf-8")
        save_agent(tmp / "agent")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
        pointer_tmp = self.checkpoints / (LATEST + ".tmp")
        pointer_tmp.write_text(name, encoding="utf-8")
        os.replace(pointer_tmp, self.checkpoints / LATEST)
        if keep > 0:
            older = sorted(p for p in self.checkpoints.glob("step_*") if p.name < name)
            for p in older[: max(0, len(older) - (keep - 1))]:
                shutil.rmtree(p, ignore_errors=True)
        return final
