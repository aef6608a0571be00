"""What the user asked for: the theme, the sizes and the mechanics of a game to generate.

A :class:`GameSpec` is plain data, checked once (:meth:`GameSpec.problems`) before any author runs,
so that a request that cannot be met ("3 areas for 5 levels", "a branching factor wider than the
chapter") is refused with one line instead of failing deep inside a builder. Both authors read the
same spec, and the report (``generation.json``) records it verbatim.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from odyssey_env.rules import BASE_RULE_MODULES, OPTIONAL_VERBS, step_order
from odyssey_env.steprules.order import ENGINE_STEP_ORDER
from odyssey_env.steprules.spawning import QUIET_ENEMIES, QUIET_FOOD

__all__ = ["DEFAULTS", "DYNAMICS", "OPTIONAL_DYNAMICS", "RESPAWN_STYLES", "GameSpec", "SpecError", "ValidationSettings"]


def _optional_dynamics() -> tuple[str, ...]:
    """The engine's library of optional step rules, in run order (read from the rules, never listed by hand)."""
    found = []
    for module in BASE_RULE_MODULES:
        for value in vars(importlib.import_module(module)).values():
            if getattr(value, "__odyssey_rule__", None) == "step" and value.optional and value.__module__ == module:
                found.append(value)
    return tuple(cls.name for cls in step_order(found))


#: The engine's library of optional world dynamics (``docs/dynamics.md``), switched on per game.
OPTIONAL_DYNAMICS: tuple[str, ...] = _optional_dynamics()

#: Styles of the engine's one ``respawn`` rule (always on) that a spec may choose like a dynamic: each
#: is a set of that rule's parameters for one half of it (``odyssey_env.steprules.spawning``).
RESPAWN_STYLES: dict[str, dict[str, Any]] = {"quiet_enemies": QUIET_ENEMIES, "quiet_food": QUIET_FOOD}


def _dynamics() -> tuple[str, ...]:
    """What a spec's ``dynamics`` may name: the optional rules and the respawn styles, in run order (the
    styles where ``respawn`` runs), so that a seeded choice reads the same list whatever is added later."""
    order = {name: i for i, name in enumerate(ENGINE_STEP_ORDER)}
    at = order["respawn"]
    before = [r for r in OPTIONAL_DYNAMICS if order.get(r, at) < at]
    return (*before, *RESPAWN_STYLES, *(r for r in OPTIONAL_DYNAMICS if r not in before))


#: The generator's menu of world dynamics: :data:`OPTIONAL_DYNAMICS` and :data:`RESPAWN_STYLES`.
DYNAMICS: tuple[str, ...] = _dynamics()
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class SpecError(ValueError):
    """A generation request that cannot be met; the message says which setting and why."""


@dataclass(frozen=True)
class ValidationSettings:
    """How hard a candidate game is tested before it is accepted (docs/generation.md, "Validation").

    The defaults: a random agent for 1,000 steps on 3 seeds, and the oracle must finish
    the main quest on 3 seeds within 500 play steps. Tests use fewer steps and seeds.
    """

    seeds: int = 3  # seeds for both the execution test and the solvability test
    random_steps: int = 1000  # steps of the random agent per seed
    oracle_budget: int = 500  # play steps the oracle may use per seed (after the tutorial)
    growth_factor: float = 4.0  # the world may hold at most this many times its starting things (plus 200)
    cpu_seconds: int = 120  # CPU-time limit of the sandboxed validation process
    memory_mb: int = 1024  # address-space limit of the sandboxed validation process
    timeout: float = 300.0  # wall-clock limit of the sandboxed validation process, in seconds

    def problems(self) -> list[str]:
        out = []
        if self.seeds < 1:
            out.append("validation seeds must be at least 1")
        if self.random_steps < 0 or self.oracle_budget < 1:
            out.append("validation steps must be >= 0 and the oracle budget >= 1")
        if self.cpu_seconds < 1 or self.memory_mb < 128 or self.timeout <= 0:
            out.append("sandbox limits: cpu_seconds >= 1, memory_mb >= 128, timeout > 0")
        return out


@dataclass(frozen=True)
class GameSpec:
    """A generation request. Sizes count what ``odyssey games`` counts.

    ``action_rules`` / ``step_rules`` mean *new* rules: the LLM author has the model write that many
    into ``rules.json`` in the rule language (into ``rules.py`` with ``code``); the procedural author,
    which writes no code, invents that many in ``rules.json`` from the theme
    (:mod:`odyssey_gen.procedural.mechanics`) and also switches on that many of the engine's optional
    verbs and dynamics (chosen by the seed), unless ``verbs`` / ``dynamics`` name them. ``npcs`` counts
    the world's NPC types; a tutorial adds two of its own (a trainer and a sparring dummy).
    """

    theme: str
    name: str
    title: str = ""
    places: int = 2
    areas_per_place: int = 3
    area_count: int | None = None  # total areas, spread over the places as evenly as possible (overrides the above)
    objects: int = 30
    npcs: int = 6
    max_level: int = 3
    chapters: int = 1
    stages: int = 5  # stages per chapter
    branching: int = 1  # 1: linear chapters; k > 1: each chapter forks into k parallel chains that join
    locks: int | None = None  # locked paths between parts of the world (None: one per extra place, at most 2)
    craft_depth: int = 3  # longest chain of recipes, raw material to finished object
    action_rules: int = 0
    step_rules: int = 0
    verbs: tuple[str, ...] | None = None  # optional verbs to switch on (None: chosen by the seed)
    dynamics: tuple[str, ...] | None = None  # optional step rules / respawn styles (DYNAMICS; None: by the seed)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-rule parameter overrides
    plot: str | None = None  # the main quest's plot shape (None: chosen by the seed; procedural author only)
    tutorial: bool = True
    side_quests: bool = True
    expansion: bool = True
    seed: int = 0
    author: Literal["procedural", "llm"] = "procedural"
    #: LLM author only: ask the model for Python (``rules.py``, for human review; never trusted or run in
    #: this process without ``odyssey trust``) instead of ``rules.json`` in the rule language.
    code: bool = False

    # ------------------------------------------------------------------ derived
    @property
    def areas(self) -> int:
        return self.area_count if self.area_count is not None else self.places * self.areas_per_place

    @property
    def place_sizes(self) -> list[int]:
        """Areas per place, in place order (earlier places get one more when they do not divide evenly)."""
        base, extra = divmod(self.areas, self.places)
        return [base + (p < extra) for p in range(self.places)]

    @property
    def lock_count(self) -> int:
        if self.locks is not None:
            return self.locks
        return min(2, self.places - 1)

    @property
    def display_title(self) -> str:
        return self.title or " ".join(w.capitalize() for w in self.name.split("_"))

    # ------------------------------------------------------------------ checks
    def problems(self) -> list[str]:
        """Everything wrong with the request, one line each (empty: it can be generated)."""
        out: list[str] = []
        if not self.theme.strip():
            out.append("theme: say in a line what the world is about")
        if not NAME_RE.match(self.name):
            out.append(f"name: {self.name!r} must be lower_snake_case (it names the folder and the game)")
        elif re.search(r"_\d+$", self.name):
            out.append(f"name: {self.name!r} must not end in _<number>")
        if set(self.theme) - set(map(chr, range(32, 127))):
            out.append("theme: use printable ASCII only (the engine prints ASCII)")
        for label, value, lo, hi in (
            ("places", self.places, 1, 20),
            ("areas_per_place", self.areas_per_place, 1, 20),
            ("max_level", self.max_level, 1, 10),
            ("chapters", self.chapters, 1, 10),
            ("stages", self.stages, 1, 40),
            ("branching", self.branching, 1, 8),
            ("craft_depth", self.craft_depth, 1, 6),
            ("npcs", self.npcs, 4, 200),
            ("objects", self.objects, 1, 5000),
            ("action_rules", self.action_rules, 0, 10),
            ("step_rules", self.step_rules, 0, 20),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                why = " (a guide, a merchant, a boss and one kind of enemy)" if label == "npcs" else ""
                out.append(f"{label}: expected a whole number from {lo} to {hi}{why}, got {value!r}")
        if self.area_count is not None and (
            not isinstance(self.area_count, int)
            or isinstance(self.area_count, bool)
            or not self.places <= self.area_count <= 400
        ):
            out.append(
                f"area_count: expected a whole number from {self.places} (one per place) to 400, "
                f"got {self.area_count!r}"
            )
        if out:
            return out
        if self.areas < self.max_level:
            out.append(f"max_level: {self.max_level} levels need at least {self.max_level} areas (got {self.areas})")
        if not 0 <= self.lock_count <= max(0, self.areas - 1):
            out.append(f"locks: expected 0 to {self.areas - 1} (one locked path needs an area on each side)")
        minimum = self.min_objects()
        if self.objects < minimum:
            out.append(
                f"objects: at least {minimum} object types are needed for this request (currency, a "
                "station, a container, a writable and a writing tool, a weapon, armor, materials, "
                f"one key per lock, the boss's trophy{', food' if 'eat' in self.wanted_verbs() else ''}"
                f"{', a lockpick' if 'lockpick' in self.wanted_verbs() else ''}), got {self.objects}"
            )
        if self.branching > 1 and self.stages < self.branching + 2:
            out.append(
                f"stages: a chapter that forks into {self.branching} chains needs at least "
                f"{self.branching + 2} stages (a start, one per chain, a join), got {self.stages}"
            )
        required = 1 + self.lock_count  # the boss, and crossing each lock
        if self.chapters * self.stages < required + 1:
            out.append(
                f"stages: {self.chapters} chapter(s) of {self.stages} stage(s) leave no room for the "
                f"{required} stages this world needs (crossing {self.lock_count} lock(s), the boss) "
                "and a first stage"
            )
        if self.verbs is not None:
            unknown = sorted(set(self.verbs) - set(OPTIONAL_VERBS))
            if unknown:
                out.append(f"verbs: unknown optional verb(s) {', '.join(unknown)}; known: {', '.join(OPTIONAL_VERBS)}")
        if self.dynamics is not None:
            unknown = sorted(set(self.dynamics) - set(DYNAMICS))
            if unknown:
                out.append(f"dynamics: unknown step rule(s) {', '.join(unknown)}; known: {', '.join(DYNAMICS)}")
        if self.author == "procedural":
            if self.verbs is None and self.action_rules > len(OPTIONAL_VERBS):
                out.append(
                    f"action_rules: the procedural author switches on optional verbs and there are only "
                    f"{len(OPTIONAL_VERBS)}"
                )
            if self.dynamics is None and self.step_rules > len(DYNAMICS):
                out.append(
                    f"step_rules: the procedural author switches on optional dynamics and there are only "
                    f"{len(DYNAMICS)}"
                )
        if self.plot is not None:
            from odyssey_gen.procedural.plots import PLOTS

            if self.plot not in PLOTS:
                out.append(f"plot: unknown plot {self.plot!r}; known: {', '.join(PLOTS)}")
        if self.author not in ("procedural", "llm"):
            out.append(f"author: expected procedural or llm, got {self.author!r}")
        return out

    def check(self) -> GameSpec:
        problems = self.problems()
        if problems:
            raise SpecError("; ".join(problems))
        return self

    def wanted_verbs(self) -> tuple[str, ...]:
        """The optional verbs named explicitly (the seeded choice is the builder's)."""
        return tuple(self.verbs or ())

    def min_objects(self) -> int:
        verbs = self.wanted_verbs()
        # currency, station, container, writable, write tool, weapon, armor, 2 raw + 1 crafted material, trophy
        return 11 + self.lock_count + ("eat" in verbs) + ("lockpick" in verbs)

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        for key in ("verbs", "dynamics"):
            if out[key] is not None:
                out[key] = list(out[key])
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameSpec:
        """A spec from JSON-like data (a ``--spec`` file); unknown keys are an error naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            renamed = "".join(f" ({old} is now called {RENAMED[old]})" for old in unknown if old in RENAMED)
            raise SpecError(f"unknown spec field(s) {', '.join(unknown)}{renamed}; known: {', '.join(sorted(known))}")
        values = dict(data)
        for key in ("verbs", "dynamics"):
            if values.get(key) is not None:
                if not isinstance(values[key], list | tuple) or not all(isinstance(v, str) for v in values[key]):
                    raise SpecError(f"{key}: expected a list of names")
                values[key] = tuple(values[key])
        if "params" in values and not isinstance(values["params"], dict):
            raise SpecError("params: expected {rule name: {parameter: value}}")
        try:
            return cls(**values)
        except TypeError as exc:
            raise SpecError(str(exc)) from None

    @classmethod
    def from_file(cls, path: str | Path, **overrides: Any) -> GameSpec:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SpecError(f"cannot read spec file {path}: {exc}") from None
        if not isinstance(data, dict):
            raise SpecError(f"spec file {path}: expected a JSON object")
        data.update({k: v for k, v in overrides.items() if v is not None})
        return cls.from_dict(data)


#: Spec fields that had another name before (a spec file written then gets a one-line pointer to the new one).
RENAMED = {"backend": "author"}

#: The defaults as data (docs and ``odyssey generate --help`` show them).
DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in dataclasses.fields(GameSpec) if f.default is not dataclasses.MISSING
}
