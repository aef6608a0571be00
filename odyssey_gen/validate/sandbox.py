"""Running a candidate game's checks: the untrusted game plays in an isolated process, this one judges.

Generated rule code has passed the static allow-list by the time it gets here, but that list is a
filter, not a boundary: the code is still untrusted. :func:`run_checks` copies the candidate's
content files into a fresh temporary directory and starts ``python -m odyssey_gen.validate.worker``
on the copy. That worker only *plays* (it loads the game, runs its rules, answers requests over a
pipe); this process, which never runs the game's code, drives it and computes every verdict itself:
it picks the random agent's commands with its own RNG, counts steps and budgets, loads each
returned state as data and checks it against the world's invariants. The worker's replies are
untrusted data: each is bounded in size, must parse and have the expected shape, or it is a problem.

**Isolation.** A candidate with a ``rules.py`` (model-written code) runs only under bubblewrap
(``bwrap``): new user, PID, network, IPC, UTS and cgroup namespaces (no network at all, its own PID
namespace so every child dies with it, no view of this process or its ``/proc``), all capabilities
dropped, a read-only view of only what Python needs (``/usr``, the libraries, this interpreter and
the installed packages), the copied game read-only, one writable ``/tmp`` (a tmpfs, gone afterwards),
an empty environment, a new session (no terminal to inject into), and ``--die-with-parent``. Where
bubblewrap is missing or cannot create its namespaces, model-written code is **not run**:
:class:`SandboxUnavailable` says in one line what to install. A data-only candidate runs no code of
its own, so it is checked in a plain child process with the same limits.

**Limits**, set before the interpreter starts: CPU seconds (``RLIMIT_CPU``), address space
(``RLIMIT_AS``), the largest file it may write (``RLIMIT_FSIZE``), no core dumps, a process count
(``RLIMIT_NPROC``: the user's current processes plus a few); a wall-clock deadline over the whole
run, after which the whole process group is killed; at most :data:`MAX_REPLY_BYTES` per reply and
:data:`MAX_TOTAL_BYTES` in all read from it; its stderr goes to a file in the temporary directory
(bounded by ``RLIMIT_FSIZE``), of which only the tail is read.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from odyssey_gen.spec import ValidationSettings

if TYPE_CHECKING:
    from odyssey_env.content import NpcType, ObjectType, WorldSpec
    from odyssey_env.state import WorldState

__all__ = ["BWRAP_ENV", "MAX_REPLY_BYTES", "SandboxResult", "SandboxUnavailable", "require_sandbox", "run_checks"]

CONTENT = ("world.json", "quest.json", "rules.json", "rules.py")
#: The package root that holds odyssey_env, odyssey_agents and odyssey_gen (for PYTHONPATH).
ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("odyssey_env", "odyssey_agents", "odyssey_gen")
#: Override of the ``bwrap`` executable (default: found on PATH).
BWRAP_ENV = "ODYSSEY_BWRAP"
INSTALL = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; "
    "Arch: pacman -S bubblewrap)"
)
MAX_REPLY_BYTES = 8 * 2**20
MAX_TOTAL_BYTES = 256 * 2**20
STDERR_TAIL = 64 * 1024
PLAYER = "player"
SANDBOX_GAME = "/sandbox/game"


class SandboxResult(dict):
    """``{check: [problem dicts]}`` plus ``_error`` (a failure of the process itself) and ``_stats``."""


class SandboxUnavailable(RuntimeError):
    """No OS isolation to run model-written code in; the message is one line naming what to install."""


# ---------------------------------------------------------------------------- bubblewrap
def _bwrap_path() -> str | None:
    override = os.environ.get(BWRAP_ENV)
    if override is not None:
        return override if os.path.isfile(override) and os.access(override, os.X_OK) else None
    return shutil.which("bwrap")


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot isolate a process here (None: it can)."""
    try:
        done = subprocess.run(
            [bwrap, *_isolation(), "--ro-bind", "/", "/", "true"],
            capture_output=True,
            text=True,
            timeout=30,
            env={"PATH": os.defpath},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return None


def require_sandbox() -> str:
    """The ``bwrap`` to run model-written code under, or :class:`SandboxUnavailable` (one line)."""
    bwrap = _bwrap_path()
    if bwrap is None:
        raise SandboxUnavailable(
            f"model-written rules.py runs only under OS isolation, and bubblewrap (bwrap) is not installed: "
            f"{INSTALL}; nothing was executed"
        )
    why = _probe(bwrap)
    if why is not None:
        raise SandboxUnavailable(
            f"model-written rules.py runs only under OS isolation, and bubblewrap cannot isolate a process here "
            f"({why}); allow unprivileged user namespaces or {INSTALL}; nothing was executed"
        )
    return bwrap


def _isolation() -> list[str]:
    return [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--clearenv",
    ]


def _bwrap_command(bwrap: str, game: Path, env: dict[str, str]) -> list[str]:
    # /tmp first: a tmpfs mounted after the binds would hide a checkout or a venv that lives under /tmp
    cmd = [bwrap, *_isolation(), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        cmd += ["--ro-bind-try", path, path]
    for path in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"):
        cmd += ["--ro-bind-try", path, path]
    python = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        str(Path(sys.executable).parent),
        str(Path(sys.executable).resolve().parent.parent),
    }
    for path in sorted(python):
        cmd += ["--ro-bind-try", path, path]
    for name in PACKAGES:
        cmd += ["--ro-bind-try", str(ROOT / name), str(ROOT / name)]
    cmd += ["--ro-bind", str(game), SANDBOX_GAME]
    for key, value in env.items():
        cmd += ["--setenv", key, value]
    cmd += ["--chdir", "/tmp", sys.executable, "-s", "-B", "-m", "odyssey_gen.validate.worker", SANDBOX_GAME]
    return cmd


def _processes_of_this_user() -> int:
    uid, n = os.getuid(), 0
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    n += entry.stat().st_uid == uid
    return n


def _limits(settings: ValidationSettings, nproc: int):
    def apply() -> None:  # runs in the child between fork and exec
        import resource

        cpu = int(settings.cpu_seconds)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
        mem = int(settings.memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024 * 1024, 16 * 1024 * 1024))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    return apply


# ---------------------------------------------------------------------------- the channel
class WorkerFailed(Exception):
    """The worker gave no usable reply: it died, ran out of time, or said something that is not a reply."""


class Channel:
    """JSON lines to and from the worker, every read bounded in size and by the run's deadline."""

    def __init__(self, proc: subprocess.Popen, deadline: float, settings: ValidationSettings, stderr: Path):
        self.proc = proc
        self.deadline = deadline
        self.settings = settings
        self.stderr = stderr
        self.buffer = bytearray()
        self.total = 0

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerFailed(self._death()) from None
        line = self._line()
        try:
            reply = json.loads(line)
        except ValueError:
            raise WorkerFailed(
                f"the validation process replied with something that is not JSON: {line[:80]!r}"
            ) from None
        if not isinstance(reply, dict):
            raise WorkerFailed(f"the validation process replied with a {type(reply).__name__}, not an object")
        return reply

    def _line(self) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            end = self.buffer.find(b"\n")
            if end >= 0:
                line = bytes(self.buffer[:end])
                del self.buffer[: end + 1]
                return line
            if len(self.buffer) > MAX_REPLY_BYTES:
                raise WorkerFailed(f"the validation process wrote a reply longer than {MAX_REPLY_BYTES:,} bytes")
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise WorkerFailed(
                    f"the validation process ran past its wall-clock limit of {self.settings.timeout:g} s "
                    "(an endless loop in the game's rules?) and was killed"
                )
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise WorkerFailed(self._death())
            self.total += len(chunk)
            if self.total > MAX_TOTAL_BYTES:
                raise WorkerFailed(f"the validation process wrote more than {MAX_TOTAL_BYTES:,} bytes in all")
            self.buffer += chunk

    def _death(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "the validation process stopped answering"
        sig = -code if code < 0 else code - 128 if code > 128 else 0  # bwrap exits 128 + the signal
        if sig == signal.SIGXCPU:
            return f"the validation process used up its CPU-time limit of {self.settings.cpu_seconds} s and was stopped"
        if "MemoryError" in self.tail():
            return f"the validation process ran out of its {self.settings.memory_mb} MB memory limit"
        if sig == signal.SIGKILL:
            return "the validation process was killed (out of memory?)"
        return f"the validation process died (exit status {code}) without a reply"

    def tail(self) -> str:
        try:
            with open(self.stderr, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - STDERR_TAIL))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""


class BadReply(Exception):
    """A reply of the wrong shape."""


def _get(reply: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = reply.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float))):
        raise BadReply(f"the validation process replied without a proper {key!r}")
    return value


def _names(reply: dict[str, Any], key: str) -> list[str]:
    value = _get(reply, key, list)
    if not all(isinstance(v, str) for v in value):
        raise BadReply(f"the validation process replied with a {key!r} that is not a list of names")
    return value


def _valid(reply: dict[str, Any]) -> dict[str, list[str]]:
    value = _get(reply, "valid", dict)
    for verb, commands in value.items():
        if not (isinstance(commands, list) and commands and all(isinstance(c, str) and c for c in commands)):
            raise BadReply(f"the validation process listed valid actions of {verb!r} that are not commands")
    return value


def problem(check: str, message: str, detail: str = "", owner: str = "entities") -> dict[str, str]:
    return {"check": check, "message": message, "detail": detail, "owner": owner}


# ---------------------------------------------------------------------------- the judge
class Judge:
    """The trusted side of the checks: drives the worker and decides."""

    def __init__(self, channel: Channel, folder: Path, settings: ValidationSettings):
        self.ch = channel
        self.settings = settings
        self.has_rules = (folder / "rules.py").is_file()
        try:
            self.world: GameData | None = _data_game(folder)
        except Exception:  # the worker's load reports what is wrong with it, with file and field
            self.world = None
        self.stats: dict[str, Any] = {}
        self.new_verbs: list[str] = []
        self.new_steps: list[str] = []
        self.listed: set[str] = set()
        self.succeeded: set[str] = set()
        self.fired: dict[str, int] = {}
        self.oracle_verbs: set[str] = set()  # new verbs that succeeded in the oracle's play
        self.oracle_fired: set[str] = set()  # new step rules that changed something in the oracle's play
        self._oracle: list[dict[str, str]] | None = None  # the oracle's problems, once played
        self.tutorial = False

    def owner(self, error: dict[str, Any]) -> str:
        detail = str(error.get("detail", ""))
        return "rules" if self.has_rules and "rules.py" in detail else "entities"

    def code_owner(self) -> str:
        return "rules" if self.has_rules else "entities"

    def error(self, reply: dict[str, Any]) -> dict[str, Any] | None:
        err = reply.get("error")
        if err is None:
            return None
        if not isinstance(err, dict):
            raise BadReply("the validation process replied with an error that is not one")
        return {
            "message": str(err.get("message", ""))[:2000],
            "detail": str(err.get("detail", ""))[-20000:],
            "memory": bool(err.get("memory")),
        }

    # ------------------------------------------------------------ load
    def load(self) -> list[dict[str, str]]:
        reply = self.ch.ask({"op": "load"})
        err = self.error(reply)
        if err is not None:
            return [problem("load", err["message"], err["detail"], self.owner(err))]
        if "problems" in reply:
            owners = {"world.json": "entities", "quest.json": "quest", "rules.py": "rules", "rules.json": "rules"}
            found = _get(reply, "problems", list)
            out = []
            for p in found:
                if not isinstance(p, dict):
                    raise BadReply("the validation process replied with a problem that is not one")
                file, text = str(p.get("file", "")), str(p.get("text", ""))
                out.append(
                    problem("load", text, owner=owners.get(file, "rules" if "params of rule" in file else "entities"))
                )
            return out or [problem("load", "the game did not load (no reason given)", owner=self.code_owner())]
        self.new_verbs = _names(reply, "new_verbs")
        self.new_steps = _names(reply, "new_steps")
        predicates = _names(reply, "new_predicates")
        self.tutorial = bool(reply.get("tutorial"))
        out = [
            problem("load", f"the verb {v!r} has no description (agents read it)", owner="rules")
            for v in _names(reply, "undescribed_verbs")
        ]
        out += [
            problem("load", f"the step rule {s!r} has no description", owner="rules")
            for s in _names(reply, "undescribed_steps")
        ]
        self.stats["summary"] = _get(reply, "summary", dict)
        self.stats["new_rules"] = {"verbs": self.new_verbs, "step_rules": self.new_steps, "predicates": predicates}
        return out

    # ------------------------------------------------------------ execution
    def _state(self, reply: dict[str, Any]) -> WorldState:
        from odyssey_env.schema import FormatError
        from odyssey_env.state import WorldState

        try:
            return WorldState.from_dict(_get(reply, "state", dict))
        except FormatError as exc:
            raise BadReply(f"the validation process returned a state that is not one ({exc.problems[0]})") from None

    def _check_state(self, world: GameData, state: WorldState, where: str) -> tuple[list[str], int]:
        from odyssey_gen.validate.invariants import state_problems, world_size

        view = _View(world, state)
        try:
            return state_problems(view), world_size(view)
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            return [f"the state cannot be checked ({type(exc).__name__}: {exc})"], 0

    def execution(self) -> list[dict[str, str]]:
        st = self.settings
        world = self.world
        if world is None:
            return [problem("execution", "world.json cannot be read as data by the validator")]
        out: list[dict[str, str]] = []
        self.fired = dict.fromkeys(self.new_steps, 0)
        started = time.perf_counter()
        steps_done = 0
        for seed in range(st.seeds):
            tutorial = seed == 0 and self.tutorial
            where = f"seed {seed}, before the first step"
            reply = self.ch.ask({"op": "reset", "seed": seed, "tutorial": tutorial})
            err = self.error(reply)
            if err is not None:
                out.append(problem("execution", f"{where}: {err['message']}", err["detail"], self.owner(err)))
                continue
            valid = _valid(reply)
            broken, size = self._check_state(world, self._state(reply), where)
            if broken:
                out.append(
                    problem("execution", f"invalid state ({where}): {broken[0]}", "\n".join(broken), self.code_owner())
                )
                break
            limit = st.growth_factor * size + 200
            rng = random.Random(f"odyssey-gen:execution:{seed}")
            for i in range(st.random_steps):
                where = f"seed {seed}, step {i}"
                if not valid:
                    out.append(problem("execution", f"{where}: no valid action at all", owner=self.code_owner()))
                    break
                self.listed.update(valid)
                verb = rng.choice(sorted(valid))
                command = rng.choice(valid[verb])
                where = f"seed {seed}, step {i}, command {command!r}"
                check_now = i % 20 == 0 or i == st.random_steps - 1
                reply = self.ch.ask({"op": "step", "command": command, "state": check_now})
                err = self.error(reply)
                if err is not None:
                    if err["memory"]:
                        raise WorkerFailed(
                            f"the validation process ran out of its memory limit of {st.memory_mb} MB "
                            "(a memory bomb in the game's rules?)"
                        )
                    out.append(problem("execution", f"{where}: {err['message']}", err["detail"], self.owner(err)))
                    break
                steps_done += 1
                for name in _names(reply, "fired"):
                    if name in self.fired:
                        self.fired[name] += 1
                if reply.get("invalid") or reply.get("failed"):
                    owner = "rules" if verb in self.new_verbs else "entities"
                    out.append(
                        problem(
                            "execution",
                            f"unsound valid action ({where}): {command!r} was listed as valid but was refused",
                            str(reply.get("feedback", ""))[:2000],
                            owner,
                        )
                    )
                    break
                self.succeeded.add(verb)
                if check_now:
                    broken, size = self._check_state(world, self._state(reply), where)
                    if broken:
                        out.append(
                            problem(
                                "execution",
                                f"invalid state ({where}): {broken[0]}",
                                "\n".join(broken),
                                self.code_owner(),
                            )
                        )
                        break
                    if size > limit:
                        out.append(
                            problem(
                                "execution",
                                f"runaway world growth ({where}): {size} things, more than {limit:.0f}",
                                owner=self.code_owner(),
                            )
                        )
                        break
                if reply.get("done") is True:
                    break
                late = self.error({"error": reply["valid_error"]}) if "valid_error" in reply else None
                if late is not None:
                    where = f"seed {seed}, step {i + 1}"
                    out.append(problem("execution", f"{where}: {late['message']}", late["detail"], self.owner(late)))
                    break
                valid = _valid(reply)
        self.stats["execution"] = {
            "seeds": st.seeds,
            "steps": steps_done,
            "verbs_listed": sorted(self.listed),
            "seconds": round(time.perf_counter() - started, 3),
            "new_step_rules_fired": dict(self.fired),
        }
        return out

    def reachability(self) -> list[dict[str, str]]:
        """Each new verb listed and succeeding, each new step rule changing something, in the random
        agent's play or, for what that missed, in the oracle's (a verb a quest stage asks for may need a
        tool and a place that random play seldom brings together; the oracle's episodes are the ones the
        solvability check judges, played once)."""
        st = self.settings
        span = f"{st.random_steps} random steps on {st.seeds} seed(s)"
        out = []
        missed = [v for v in self.new_verbs if v not in self.succeeded]
        missed += [n for n in self.new_steps if not self.fired.get(n)]
        if missed:
            self._oracle_play()
            span += " or the oracle's episodes"
        for verb in self.new_verbs:
            if verb in self.oracle_verbs:
                continue
            if verb not in self.listed:
                out.append(
                    problem(
                        "reachability",
                        f"the new verb {verb!r} never appeared among the valid actions in "
                        f"{span}: make its candidates() list it when it applies",
                        owner="rules",
                    )
                )
            elif verb not in self.succeeded:
                out.append(
                    problem(
                        "reachability", f"the new verb {verb!r} was listed but never succeeded in {span}", owner="rules"
                    )
                )
        for name in self.new_steps:
            if not self.fired.get(name) and name not in self.oracle_fired:
                out.append(
                    problem(
                        "reachability",
                        f"the new step rule {name!r} never changed anything in {span}: it must fire in ordinary play",
                        owner="rules",
                    )
                )
        return out

    # ------------------------------------------------------------ solvability
    def solvability(self) -> list[dict[str, str]]:
        return list(self._oracle_play())

    def _oracle_play(self) -> list[dict[str, str]]:
        """The oracle's episodes (once: reachability may have asked for them first) and their problems."""
        if self._oracle is not None:
            return self._oracle
        st = self.settings
        out: list[dict[str, str]] = []
        runs = []
        for seed in range(st.seeds):
            reply = self.ch.ask({"op": "oracle_reset", "seed": seed, "budget": st.oracle_budget})
            err = self.error(reply)
            steps = tutorial_steps = 0
            reason = ""
            terminated = False
            tutorial_done = not self.tutorial
            quest: dict[str, Any] = {"completed": 0, "total": 0, "current": []}
            deaths = 0
            while err is None and not terminated and steps < st.oracle_budget and tutorial_steps < 300:
                reply = self.ch.ask({"op": "oracle_step"})
                err = self.error(reply)
                if err is not None:
                    break
                in_tutorial = bool(reply.get("in_tutorial"))
                reason = str(reply.get("reason", ""))[:2000]
                terminated = reply.get("terminated") is True
                tutorial_steps += in_tutorial
                steps += not in_tutorial
                tutorial_done = tutorial_done or reply.get("tutorial_completed") is True
                quest = _quest(reply, quest)
                died = reply.get("deaths")
                deaths = died if isinstance(died, int) else deaths
                if reply.get("verb") in self.new_verbs:
                    self.oracle_verbs.add(reply["verb"])
                self.oracle_fired.update(n for n in _names(reply, "fired") if n in self.new_steps)
            if err is not None:
                if err["memory"]:
                    raise WorkerFailed(f"the validation process ran out of its memory limit of {st.memory_mb} MB")
                out.append(
                    problem(
                        "solvability",
                        f"seed {seed}: the oracle's episode crashed: {err['message']}",
                        err["detail"],
                        self.owner(err),
                    )
                )
                continue
            runs.append(
                {
                    "seed": seed,
                    "stages": quest["completed"],
                    "total": quest["total"],
                    "steps": steps,
                    "tutorial_steps": tutorial_steps,
                    "tutorial_completed": tutorial_done,
                    "deaths": deaths,
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
            if not (terminated and quest["total"] > 0 and quest["completed"] == quest["total"]):
                goals = self.ch.ask({"op": "oracle_goals"}).get("goals")
                goals = [str(g)[:500] for g in goals] if isinstance(goals, list) else []
                stuck = ", ".join(f"{s['id']} ({s['title']})" for s in quest["current"])
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
        self.stats["solvability"] = {"budget": st.oracle_budget, "runs": runs}
        self._oracle = out
        return out


def _quest(reply: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """The quest progress the worker reports, checked for shape and consistency: it never goes back, and
    never exceeds the quest's size (which the parent reads from the game's data)."""
    quest = _get(reply, "quest", dict)
    completed, total = quest.get("completed"), quest.get("total")
    if not (isinstance(completed, int) and isinstance(total, int) and 0 <= completed <= total):
        raise BadReply("the validation process reported quest progress that is not progress")
    if completed < before["completed"] or (before["total"] and total != before["total"]):
        raise BadReply("the validation process reported quest progress that went back or changed size")
    current = quest.get("current")
    if not isinstance(current, list) or not all(
        isinstance(s, dict) and isinstance(s.get("id"), str) and isinstance(s.get("title"), str) for s in current
    ):
        raise BadReply("the validation process reported open stages that are not stages")
    return {"completed": completed, "total": total, "current": current}


@dataclass(frozen=True)
class GameData:
    """What the invariants need of the game, from its data alone (no rules: this process runs no game code).
    An :class:`odyssey_gen.validate.invariants.GameFacts`, as a loaded Game is."""

    spec: WorldSpec
    objects: dict[str, ObjectType]
    npcs: dict[str, NpcType]
    currency: str | None


@dataclass(frozen=True)
class _View:
    """The checked state with the game's data: what the invariants read of an engine."""

    game: GameData
    state: WorldState


def _data_game(folder: Path) -> GameData:
    """What the invariants need of the game, read from ``world.json``."""
    from odyssey_env.content import WorldSpec
    from odyssey_env.limits import LIMITS, MAX_FILE_BYTES
    from odyssey_env.safeio import read_json
    from odyssey_env.schema import load

    spec = load(
        WorldSpec, read_json(folder / "world.json", MAX_FILE_BYTES, LIMITS.max_depth), file="world.json", limits=LIMITS
    )
    return GameData(
        spec=spec,
        objects={o.name: o for o in spec.objects},
        npcs={n.name: n for n in spec.npcs},
        currency=next((o.name for o in spec.objects if o.category == "currency"), None),
    )


# ---------------------------------------------------------------------------- run
def run_checks(
    folder: str | Path, checks: list[str], settings: ValidationSettings, extra: dict[str, Any] | None = None
) -> SandboxResult:
    """Run the named checks (``load`` first) on a copy of ``folder``: the game plays in a limited, isolated
    child (see the module docstring); the verdicts are computed here. Raises :class:`SandboxUnavailable`
    for a folder with a ``rules.py`` where no isolation is available."""
    del extra  # kept for callers of the older signature
    folder = Path(folder)
    has_code = (folder / "rules.py").is_file()
    bwrap = require_sandbox() if has_code else None
    with tempfile.TemporaryDirectory(prefix="odyssey-sandbox-") as tmp:
        work = Path(tmp)
        game = work / folder.name
        game.mkdir()
        for name in CONTENT:
            if (folder / name).is_file() and not (folder / name).is_symlink():
                shutil.copyfile(folder / name, game / name)
        home = work / "home"
        home.mkdir()
        env = {
            "PATH": os.defpath,
            "PYTHONPATH": str(ROOT),
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": "/tmp" if bwrap else str(home),
            "ODYSSEY_TRUST_FILE": "/tmp/no-trust-store.json" if bwrap else str(work / "no-trust-store.json"),
            "LANG": "C.UTF-8",
        }
        if bwrap:
            cmd = _bwrap_command(bwrap, game, env)
        else:
            cmd = [sys.executable, "-s", "-B", "-m", "odyssey_gen.validate.worker", str(game)]
        errors = work / "stderr.txt"
        with open(errors, "wb") as err_file:
            proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err_file,
                cwd=work,
                env=env,
                preexec_fn=_limits(settings, _processes_of_this_user() + 32),
                start_new_session=True,
            )
        channel = Channel(proc, time.monotonic() + settings.timeout, settings, errors)
        result = SandboxResult()
        judge = None
        check = checks[0] if checks else "load"
        try:
            judge = Judge(channel, game, settings)
            for check in checks:
                found = getattr(judge, check)()
                result[check] = found
                if found:
                    break
        except (WorkerFailed, BadReply) as exc:
            tail = channel.tail().strip().splitlines()
            result["_error"] = {"check": check, "message": str(exc), "detail": "\n".join(tail[-15:])}
        finally:
            _stop(proc)
        if judge is not None:
            result["_stats"] = judge.stats
        return result


def _stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        if proc.stdin:
            proc.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=2)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever it left behind in its session
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    if proc.stdout:
        proc.stdout.close()
