"""Validating a candidate game folder: each check is a function from the folder to its problems.

The checks, in the order they run (each needs the ones before it):

1. ``static``: the allow-list over ``rules.py``'s syntax tree (:mod:`.static`); nothing runs.
2. ``load``: schema and references, and rules that document themselves.
3. ``execution``: a random agent with valid actions over several seeds; exceptions, broken state,
   unsound valid actions and runaway growth are problems.
4. ``reachability``: every new verb is listed and succeeds, every new step rule fires.
5. ``solvability``: the oracle completes every main-quest stage on every seed within the budget.

Checks 2-5 run together: the game plays in an isolated worker (:mod:`.worker`, under bubblewrap when
the folder has code) and this process judges (:mod:`.sandbox`); a data-only folder is loaded in this
process first as well, which is safe (no code) and gives its problems without starting a process.
Check 1 is a filter for the repair loop, not a security boundary (docs/security.md). Every problem
names its check and the generation stage that owns it (``entities``, ``rules`` or ``quest``), which is
the stage the repair loop asks again.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from odyssey_gen.spec import ValidationSettings
from odyssey_gen.validate.sandbox import run_checks
from odyssey_gen.validate.static import check_source

__all__ = ["CHECKS", "Problem", "Validation", "check_static", "validate"]

CHECKS = ("static", "load", "execution", "reachability", "solvability")


@dataclass(frozen=True)
class Problem:
    """One finding: the check that made it, a one-line message, details, and the stage that owns it."""

    check: str
    message: str
    detail: str = ""
    owner: str = "entities"  # entities | rules | quest

    def __str__(self) -> str:
        return f"[{self.check}] {self.message}"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Validation:
    """The outcome of :func:`validate`: problems by check, what ran, statistics from the sandbox."""

    problems: list[Problem] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def by_check(self) -> dict[str, list[dict[str, str]]]:
        out: dict[str, list[dict[str, str]]] = {c: [] for c in self.ran}
        for p in self.problems:
            out.setdefault(p.check, []).append(p.to_dict())
        return out

    def owners(self) -> list[str]:
        return sorted({p.owner for p in self.problems}, key=["entities", "rules", "quest"].index)


def check_static(folder: str | Path) -> list[Problem]:
    """The allow-list over ``rules.py`` (no problems for a data-only folder)."""
    from odyssey_env.safeio import entry_kind, read_regular
    from odyssey_env.trust import MAX_CODE_BYTES

    rules = Path(folder) / "rules.py"
    if entry_kind(rules) is None:
        return []
    try:  # a regular file only (a link to /dev/zero would never end), bounded
        source = read_regular(rules, MAX_CODE_BYTES).decode("utf-8")
    except (OSError, ValueError) as exc:
        return [Problem("static", f"rules.py cannot be read: {exc}", owner="rules")]
    return [Problem("static", str(r), owner="rules") for r in check_source(source)]


def _load_data_only(folder: Path) -> list[Problem]:
    """Schema and references of a folder without code, checked here (loading data runs nothing)."""
    from odyssey_env.game import GameError, load_game

    try:
        load_game(folder, cache=False)
    except GameError as exc:
        owners = {"world.json": "entities", "quest.json": "quest", "rules.json": "rules"}
        return [Problem("load", str(p), owner=owners.get(p.file, "entities")) for p in exc.problems]
    return []


def validate(
    folder: str | Path, settings: ValidationSettings | None = None, checks: Iterable[str] = CHECKS
) -> Validation:
    """Run ``checks`` (in :data:`CHECKS` order) on the folder, stopping at the first that fails."""
    folder = Path(folder)
    settings = settings or ValidationSettings()
    wanted = [c for c in CHECKS if c in set(checks)]
    result = Validation()
    started = time.perf_counter()
    try:
        if "static" in wanted:
            result.ran.append("static")
            result.problems += check_static(folder)
            if result.problems:
                return result
        if "load" in wanted and not (folder / "rules.py").is_file():
            result.problems += _load_data_only(folder)
            if result.problems:
                result.ran.append("load")
                return result
        sandboxed = [c for c in wanted if c != "static"]
        if sandboxed and "load" not in sandboxed:
            sandboxed.insert(0, "load")  # the worker needs the game loaded
        if "reachability" in sandboxed and "execution" not in sandboxed:
            sandboxed.insert(sandboxed.index("reachability"), "execution")
        if not sandboxed:
            return result
        found = run_checks(folder, sandboxed, settings)
        result.stats = dict(found.get("_stats", {}))
        error = found.get("_error")
        for check in sandboxed:
            if check in found:
                result.ran.append(check)
                result.problems += [Problem(**p) for p in found[check]]
        if error is not None:
            if error["check"] not in result.ran:
                result.ran.append(error["check"])
            owner = "rules" if (folder / "rules.py").is_file() else "entities"
            result.problems.append(Problem(error["check"], error["message"], error["detail"], owner))
        return result
    finally:
        result.seconds = round(time.perf_counter() - started, 3)
