"""``generation.json``: what was asked, what each stage tried, what validation found, what came out.

The report is written into the game folder (or the rejected candidate's folder) as the last file. It
is data about the generation, not part of the game: nothing loads it to decide anything, and in
particular it grants no trust (a hash inside the folder proves nothing; see ``odyssey_env.trust``).
Its ``files`` digests say which content the report describes.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from odyssey_env.trust import content_digest
from odyssey_gen.spec import GameSpec, ValidationSettings

__all__ = ["REPORT_FILE", "Attempt", "Report", "entity_statistics"]

REPORT_FILE = "generation.json"
FORMAT = 1


@dataclass
class Attempt:
    """One try of one stage: how long, what it cost, what was wrong with it."""

    attempt: int
    seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    problems: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "seconds": round(self.seconds, 3),
            "calls": self.calls,
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
            "problems": self.problems,
        }


class Report:
    """Collects the record of one generation and writes it as ``generation.json``."""

    def __init__(self, spec: GameSpec, settings: ValidationSettings, author: str, model: dict[str, Any] | None):
        self.spec = spec
        self.settings = settings
        self.author = author
        self.model = model
        self.started = time.perf_counter()
        self.stages: dict[str, list[Attempt]] = {}
        self.notes: list[str] = []
        self.validation: dict[str, Any] = {}
        self.status = "running"
        self.reason = ""
        self.trust: dict[str, Any] = {}
        self.describe: dict[str, Any] | None = None

    def attempt(self, stage: str) -> Attempt:
        tries = self.stages.setdefault(stage, [])
        tries.append(Attempt(len(tries) + 1))
        return tries[-1]

    def tokens(self) -> dict[str, dict[str, int]]:
        out = {
            stage: {
                "input": sum(a.input_tokens for a in tries),
                "output": sum(a.output_tokens for a in tries),
                "calls": sum(a.calls for a in tries),
            }
            for stage, tries in self.stages.items()
        }
        if self.describe:
            out["describe"] = dict(self.describe.get("tokens", {}))
        out["total"] = {k: sum(v.get(k, 0) for v in out.values()) for k in ("input", "output", "calls")}
        return out

    def to_dict(self, folder: Path) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": FORMAT,
            "status": self.status,
            "reason": self.reason,
            "spec": self.spec.to_dict(),
            "author": self.author,
            "model": self.model,
            "seed": self.spec.seed,
            "stages": {stage: [a.to_dict() for a in tries] for stage, tries in self.stages.items()},
            "tokens": self.tokens(),
            "validation": self.validation,
            "statistics": entity_statistics(folder),
            "files": content_digest(folder),
            "notes": self.notes,
            "seconds": round(time.perf_counter() - self.started, 3),
        }
        if self.describe is not None:
            data["describe"] = self.describe
        if self.trust:
            data["trust"] = self.trust
        return data

    def write(self, folder: Path) -> Path:
        path = folder / REPORT_FILE
        path.write_text(json.dumps(self.to_dict(folder), indent=2) + "\n", encoding="utf-8")
        return path


def rule_file_counts(folder: Path) -> dict[str, list[str]]:
    """The verbs, step rules and predicates a folder's ``rules.json`` declares (read as data; empty without one)."""
    try:
        rules = json.loads((folder / "rules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        rules = {}
    if not isinstance(rules, dict):
        rules = {}

    def names(key: str, field: str) -> list[str]:
        listed = rules.get(key)
        items = listed if isinstance(listed, list) else []
        return [str(i.get(field)) for i in items if isinstance(i, dict)]

    return {
        "verbs": names("verbs", "verb"),
        "step_rules": names("step_rules", "name"),
        "predicates": names("predicates", "name"),
    }


def entity_statistics(folder: Path) -> dict[str, Any]:
    """The entity distribution of a game folder, read from its JSON (never from its code)."""
    try:
        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(world, dict):
        return {}
    objects = [o for o in world.get("objects", []) if isinstance(o, dict)]
    npcs = [n for n in world.get("npcs", []) if isinstance(n, dict)]
    areas = [
        a for p in world.get("places", []) if isinstance(p, dict) for a in p.get("areas", []) if isinstance(a, dict)
    ]
    by_name = {o.get("name"): o for o in objects}

    def depth(name: str, seen: frozenset[str] = frozenset()) -> int:
        o = by_name.get(name)
        if o is None or not isinstance(o.get("recipe"), dict) or name in seen:
            return 0
        ings = o["recipe"].get("ingredients") or {}
        return 1 + max((depth(i, seen | {name}) for i in ings), default=0)

    out: dict[str, Any] = {
        "places": len(world.get("places", [])),
        "areas": len(areas),
        "areas_by_level": dict(sorted(Counter(str(a.get("level", 1)) for a in areas).items())),
        "object_types": len(objects),
        "objects_by_category": dict(sorted(Counter(str(o.get("category")) for o in objects).items())),
        "objects_by_level": dict(sorted(Counter(str(o.get("level", 1)) for o in objects).items())),
        "craftable": sum(1 for o in objects if o.get("recipe")),
        "deepest_recipe": max((depth(str(o.get("name"))) for o in objects), default=0),
        "npc_types": len(npcs),
        "npcs_by_role": dict(sorted(Counter(f"{n.get('kind')}/{n.get('role', 'fighter')}" for n in npcs).items())),
        "connections": len((world.get("graph") or {}).get("connections", [])),
        "locked": sum(1 for c in (world.get("graph") or {}).get("connections", []) if c.get("locked")),
        "verbs": list((world.get("game") or {}).get("verbs", [])),
        "dynamics": list((world.get("game") or {}).get("step_rules", [])),
    }
    out["rule_file"] = rule_file_counts(folder)
    try:
        quest = json.loads((folder / "quest.json").read_text(encoding="utf-8"))
        chapters = ((quest.get("main") or {}).get("chapters") or []) if isinstance(quest, dict) else []
        stages = [s for ch in chapters for s in ch.get("stages", [])]
        out["chapters"] = len(chapters)
        out["stages"] = len(stages)
        out["stage_types"] = dict(sorted(Counter(str((s.get("done") or {}).get("type")) for s in stages).items()))
        out["dag"] = any("requires" in s for s in stages)
    except (OSError, ValueError, AttributeError):
        pass
    return out
