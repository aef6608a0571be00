"""The offline procedural author: a complete game folder from a spec and a seed, with no model.

:meth:`ProceduralAuthor.files` runs the builders in order over one seeded
:class:`~odyssey_gen.procedural.draft.Draft` (rules to switch on, layout, objects, NPCs, quest) and
returns the files' text; the repair loop's stages write them. The RNG is seeded
from a string (``random.Random`` hashes strings with SHA-512), so the same spec gives the same bytes
in any process, whatever ``PYTHONHASHSEED`` is.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

from odyssey_env.rules import OPTIONAL_VERBS
from odyssey_gen.procedural.draft import Draft, NpcDraft, ObjDraft
from odyssey_gen.procedural.items import ObjectBuilder, ensure_supply
from odyssey_gen.procedural.layout import lay_out
from odyssey_gen.procedural.mechanics import invent, weave
from odyssey_gen.procedural.names import Namer
from odyssey_gen.procedural.npcs import build_npcs
from odyssey_gen.procedural.quest import QuestBuilder
from odyssey_gen.spec import DYNAMICS, RESPAWN_STYLES, GameSpec

__all__ = ["ProceduralAuthor", "draft", "dumps"]

OBJECT_KEYS = (
    "level",
    "value",
    "size",
    "attack",
    "defense",
    "slot",
    "capacity",
    "hp_restore",
    "max_text",
    "uses",
    "recipe",
    "spawn_weight",
    "areas",
)
NPC_KEYS = (
    "kind",
    "role",
    "level",
    "hp",
    "attack",
    "defense",
    "pattern",
    "drops",
    "stock",
    "coins",
    "dialogue",
    "unique",
    "spawn_weight",
)


def dumps(data: Any) -> str:
    """The one JSON layout every generated file uses (stable bytes: insertion order, 2-space indent)."""
    return json.dumps(data, indent=2, ensure_ascii=True) + "\n"


def _choose_rules(d: Draft) -> None:
    spec, rng = d.spec, d.rng
    if spec.verbs is not None:
        d.verbs = tuple(v for v in OPTIONAL_VERBS if v in spec.verbs)
    else:
        roomy = spec.objects >= spec.min_objects() + 2  # eat and lockpick each need an object type of their own
        allowed = [v for v in OPTIONAL_VERBS if roomy or v not in ("eat", "lockpick")]
        picked = rng.sample(allowed, min(spec.action_rules, len(allowed)))
        d.verbs = tuple(v for v in OPTIONAL_VERBS if v in picked)
    if spec.dynamics is not None:
        d.dynamics = tuple(r for r in DYNAMICS if r in spec.dynamics)
    else:
        picked = rng.sample(list(DYNAMICS), min(spec.step_rules, len(DYNAMICS)))
        d.dynamics = tuple(r for r in DYNAMICS if r in picked)


def _object_json(o: ObjDraft) -> dict[str, Any]:
    out: dict[str, Any] = {"name": o.name, "category": o.category, "description": o.description}
    fields = {"level": o.level, **o.fields}
    for key in OBJECT_KEYS:
        if key in fields and not (key == "level" and fields[key] == 1):
            out[key] = fields[key]
    return out


def _npc_json(n: NpcDraft) -> dict[str, Any]:
    out: dict[str, Any] = {"name": n.name, "description": n.description}
    for key in NPC_KEYS:
        if key in n.fields:
            out[key] = n.fields[key]
    return {"name": out.pop("name"), "kind": out.pop("kind"), **out}


def world_json(d: Draft) -> dict[str, Any]:
    spec = d.spec
    game: dict[str, Any] = {
        "name": spec.name,
        "title": d.title,
        "description": d.description,
        "intro": d.intro,
        "start_time": "08:00",
        "minutes_per_step": 10,
    }
    if d.verbs:
        game["verbs"] = list(d.verbs)
    rules = [r for r in d.dynamics if r not in RESPAWN_STYLES]
    if rules:
        game["step_rules"] = rules
    params = {rule: dict(values) for rule, values in spec.params.items()}
    styled: dict[str, Any] = {}
    for style in d.dynamics:
        styled.update(RESPAWN_STYLES.get(style, {}))
    if styled:
        params["respawn"] = {**styled, **params.get("respawn", {})}  # the spec's own values win
    if params:
        game["params"] = params
    connections: list[dict[str, Any]] = [{"a": a, "b": b} for a, b in d.links]
    connections += [{"a": lock.a, "b": lock.b, "locked": True, "key": lock.key} for lock in d.locks]
    return {
        "format": 1,
        "game": game,
        "spawn": d.spawn.name,
        "places": [
            {
                "name": p.title,
                "description": p.description,
                "areas": [
                    {
                        "name": a.name,
                        "level": a.level,
                        "description": a.description,
                        **({"objects": a.objects} if a.objects else {}),
                        **({"npcs": a.npcs} if a.npcs else {}),
                    }
                    for a in p.areas
                ],
            }
            for p in d.places
        ],
        "graph": {"mode": "fixed", "connections": connections},
        "placement": {"objects_per_area": [1, 3], "npcs_per_area": [0, 2], "level_decay": 0.35, "max_level_above": 0},
        "objects": [_object_json(o) for o in d.objects.values()],
        "npcs": [_npc_json(n) for n in d.npcs.values()],
    }


def _demands(d: Draft) -> dict[str, int]:
    """What the main quest and the locks consume, summed over the whole quest (object -> count)."""
    out: dict[str, int] = {lock.key: 1 for lock in d.locks}

    def walk(c: dict[str, Any]) -> None:
        t = c["type"]
        if t in ("object_crafted", "object_sold", "object_eaten", "has_item_count", "object_in_area"):
            if d.objects[c["object"]].category != "quest":
                out[c["object"]] = out.get(c["object"], 0) + c.get("count", 1)
        elif t == "equipped_any_of":
            out[c["objects"][0]] = out.get(c["objects"][0], 0) + 1
        for sub in c.get("conditions", ()):
            walk(sub)

    for chapter in d.quest["main"]["chapters"]:
        for stage in chapter["stages"]:
            walk(stage["done"])
    return out


def draft(spec: GameSpec, attempt: int = 1) -> Draft:
    """Run every builder; the draft keeps the facts behind the files (tests read them)."""
    spec.check()
    stream = "" if attempt == 1 else f":attempt{attempt}"
    rng = random.Random(f"odyssey-gen:procedural:{spec.seed}:{spec.theme}{stream}")
    d = Draft(spec, rng, Namer(spec.theme, rng))
    _choose_rules(d)
    lay_out(d)
    ObjectBuilder(d).build()
    build_npcs(d)
    builder = QuestBuilder(d)
    d.quest = builder.build()
    d.plot, d.structure = builder.plot.name, builder.structure
    ensure_supply(d, _demands(d))
    d.mechanics = invent(d, attempt)  # after the supply: what the new verbs use up comes on top
    weave(d, d.mechanics)
    d.description = f"A generated world of {spec.places} place(s) and {spec.areas} areas: {spec.theme.strip()}."
    first, second = d.rng.sample(d.namer.lexicon.motifs(), 2)
    d.intro = f"I wake in {d.spawn.name}. Around me: {first}, and {second}."
    return d


class ProceduralAuthor:
    """The repair loop's view of the procedural builders: three stages over one seeded draft.

    ``entities`` builds the whole draft and writes ``world.json``; ``rules`` writes ``rules.json``, the
    mechanics it invented in the rule language (:mod:`odyssey_gen.procedural.mechanics`; this author writes
    no code), and reports them with the optional verbs and dynamics it switched on; ``quest`` writes
    ``quest.json``. Any
    validation problem sends the loop back to ``entities``, which rebuilds from the next stream of
    the same seed.
    """

    name: str = "procedural"
    stages: tuple[str, ...] = ("entities", "rules", "quest")

    def __init__(self, spec: GameSpec):
        self.spec = spec
        self.draft: Draft | None = None
        self._files: dict[str, str] = {}

    def files(self, attempt: int = 1) -> dict[str, str]:
        """The game folder's files (name -> text): ``world.json`` and ``quest.json``, from a new draft.

        ``attempt`` > 1 draws from another stream of the same seed (the repair loop's retry): the result
        is still a function of the spec alone.
        """
        self.draft = d = draft(self.spec, attempt)
        files = {"world.json": dumps(world_json(d)), "quest.json": dumps(d.quest)}
        if d.mechanics.verbs or d.mechanics.step_rules:
            files["rules.json"] = dumps(d.mechanics.rules)
        return files

    def run_stage(self, stage: str, folder: Path, feedback: list, attempt: Any) -> list:
        if stage == "entities":
            self._files = self.files(attempt.attempt)
            (folder / "world.json").write_text(self._files["world.json"], encoding="utf-8")
        elif stage == "rules":
            (folder / "rules.json").unlink(missing_ok=True)
            if "rules.json" in self._files:
                (folder / "rules.json").write_text(self._files["rules.json"], encoding="utf-8")
        elif stage == "quest":
            assert self.draft is not None
            (folder / "quest.json").write_text(self._files["quest.json"], encoding="utf-8")
        return []

    def owner(self, problem: Any) -> str:
        return "entities"

    def summary(self, stage: str, folder: Path) -> str:
        d = self.draft
        assert d is not None
        if stage == "entities":
            roles = Counter(n.role for n in d.npcs.values())
            return (
                f"{len(d.places)} place(s), {len(d.areas)} areas (levels 1-{d.spec.max_level}), "
                f"{len(d.objects)} object types ({sum(1 for o in d.objects.values() if o.recipe)} craftable), "
                f"{len(d.npcs)} NPC types ({roles['enemy']} enemies, {roles['merchant']} merchant(s), a boss), "
                f"{len(d.locks)} locked path(s)"
            )
        if stage == "rules":
            verbs = ", ".join(d.verbs) or "none"
            dynamics = ", ".join(d.dynamics) or "none"
            m = d.mechanics
            invented = (
                f"rules.json invents verb(s) {', '.join(m.verbs) or 'none'} and step rule(s) "
                f"{', '.join(m.step_rules) or 'none'}"
            )
            return f"no code; {invented}; optional verbs switched on: {verbs}; dynamics: {dynamics}"
        main = d.quest["main"]
        stages = sum(len(ch["stages"]) for ch in main["chapters"])
        shape = (
            f"a DAG forking {d.spec.branching} ways per chapter, {d.structure.replace('_', '-')}"
            if d.spec.branching > 1
            else "linear"
        )
        extra = [k for k in ("tutorial",) if k in d.quest]
        return (
            f"'{main['title']}': a {d.plot} plot, {len(main['chapters'])} chapter(s), {stages} stages ({shape})"
            + (f", {', '.join(extra)}" if extra else "")
            + (", side quests" if d.quest["side_quests"]["enabled"] else "")
        )
