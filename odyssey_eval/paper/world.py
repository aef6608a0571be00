"""One reference game's world definition and quest entities -> odyssey's ``world.json`` (as a dict).

Identifiers: the reference names entities ``obj_<name>``, ``npc_<name>``, ``area_<place>_<name>``
and shows players their ``name``; odyssey's content is named by those names (they are unique and
lower_snake_case in every reference game, which :func:`convert_world` checks). Every place where the
reference's data says something odyssey's format says differently is recorded in ``notes`` (with the
entity), so that the game's provenance and ``docs/fidelity.md`` can list it.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass, field
from typing import Any

from odyssey_agents.errors import OdysseyError
from odyssey_env.content import AMOUNT_STEPS

__all__ = ["ConvertError", "Entities", "convert_world", "enemies_per_level"]

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_CATEGORIES = {"material", "tool", "weapon", "armor", "container", "food", "station", "currency"}
_USES = {"write", "lockpick", "unlock", "light"}
#: Armor slots read from the object's name; the reference has no slots (every armor piece may be worn).
_SLOTS = (
    ("head", ("helm", "hood", "cap", "hat", "crown", "mask", "visor", "circlet")),
    ("feet", ("boot", "shoe", "sandal", "greave")),
    ("hands", ("glove", "gauntlet", "bracer", "wrap")),
    ("shield", ("shield", "buckler", "ward")),
    ("legs", ("leg", "trouser", "pants", "kilt")),
)
#: The reference's NPC defaults when a definition leaves a stat out (``World._parse_npc``).
_ENEMY_DEFAULTS = {"base_hp": 60, "base_attack_power": 15, "slope_hp": 20, "slope_attack_power": 15}
_FRIEND_DEFAULTS = {"base_hp": 1000, "base_attack_power": 10, "slope_hp": 50, "slope_attack_power": 5}
_DEFAULT_PATTERN = ["attack", "attack", "wait", "defend"]


_ASCII = {
    "\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": "-", "\u2013": "-", "\u2026": "...",
    "\u00e9": "e", "\u00e8": "e", "\u00e0": "a", "\u00f6": "o", "\u00fc": "u", "\u00d7": "x", "\u2192": "->",
}  # fmt: skip


def ascii_text(text: str) -> str:
    """Odyssey's game text is printable ASCII: typographic quotes and dashes become their ASCII forms."""
    return "".join(ch if (32 <= ord(ch) < 127 or ch == "\n") else _ASCII.get(ch, "") for ch in str(text)).strip()


class ConvertError(OdysseyError):
    """The release's data cannot be expressed in odyssey's format; names the game, entity and field."""


@dataclass
class Entities:
    """Id -> name maps of one game, and the differences met while converting it."""

    objects: dict[str, str] = field(default_factory=dict)
    npcs: dict[str, str] = field(default_factory=dict)
    areas: dict[str, str] = field(default_factory=dict)
    area_display: dict[str, str] = field(default_factory=dict)  # area id -> "Place, area"
    roles: dict[str, str] = field(default_factory=dict)  # NPC id -> the reference's role word
    notes: list[dict[str, str]] = field(default_factory=list)

    def note(self, where: str, what: str) -> None:
        self.notes.append({"where": where, "difference": what})

    def obj(self, ref_id: str | None, where: str) -> str:
        if ref_id is None or ref_id not in self.objects:
            raise ConvertError(f"{where}: unknown object {ref_id!r}")
        return self.objects[ref_id]

    def npc(self, ref_id: str | None, where: str) -> str:
        if ref_id is None or ref_id not in self.npcs:
            raise ConvertError(f"{where}: unknown NPC {ref_id!r}")
        return self.npcs[ref_id]

    def area(self, ref_id: str | None, where: str) -> str:
        if ref_id is None or ref_id not in self.areas:
            raise ConvertError(f"{where}: unknown area {ref_id!r}")
        return self.areas[ref_id]


def _name(entity: dict[str, Any], game: str, what: str) -> str:
    name = entity.get("name")
    if not isinstance(name, str) or not _NAME.match(name) or re.search(r"_\d+$", name):
        raise ConvertError(f"{game}: {what} {entity.get('id')!r} has name {name!r}, not a usable lower_snake_case name")
    return name


def _slot(name: str) -> str:
    for slot, words in _SLOTS:
        if any(w in name for w in words):
            return slot
    return "body"


def _int(value: Any, default: int = 0) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return int(value)


def _amount(value: Any) -> int | float | None:
    """A reference recipe amount in odyssey's terms: whole units as an int, a fraction kept as it is (the
    engine crafts ``n`` batches of 0.5 iron_bar from ``ceil(0.5 n)`` bars, as the reference does), rounded
    up to hundredths, the finest step odyssey's recipes count in. None: no positive number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or not math.isfinite(value):
        return None
    if float(value).is_integer():
        return int(value)
    return max(1, math.ceil(value * AMOUNT_STEPS - 1e-9)) / AMOUNT_STEPS


def convert_world(
    game: str,
    definition: dict[str, Any],
    quest_objects: list[dict[str, Any]],
    quest_npcs: list[dict[str, Any]],
    *,
    title: str,
    description: str,
) -> tuple[dict[str, Any], Entities]:
    """``world.json`` for ``game`` from its reference ``default.json`` plus the quest's own entities."""
    try:
        entities_def = definition["entities"]
        places_def = entities_def["places"]
        spawn_ref = definition["initializations"]["spawn"]["area"]
    except (KeyError, TypeError) as exc:
        raise ConvertError(f"{game}: default.json lacks {exc}") from None
    ent = Entities()
    # ------------------------------------------------------------------ names first (references need them)
    for p in places_def:
        for a in p.get("areas", []):
            ent.areas[a["id"]] = _name(a, game, "area")
            ent.area_display[a["id"]] = f"{p.get('name', p['id'])}, {a['name']}"
    objects_def = list(entities_def.get("objects", []))
    known = {o["id"] for o in objects_def}
    quest_obj_ids = set()
    for o in quest_objects:
        if o.get("id") and o["id"] not in known:
            objects_def.append(o)
            known.add(o["id"])
            quest_obj_ids.add(o["id"])
    for o in objects_def:
        ent.objects[o["id"]] = _name(o, game, "object")
    npcs_def = list(entities_def.get("npcs", []))
    known_npcs = {n["id"] for n in npcs_def}
    quest_npc_ids = set()
    for n in quest_npcs:
        if n.get("id") and n["id"] not in known_npcs:
            npcs_def.append(n)
            known_npcs.add(n["id"])
            quest_npc_ids.add(n["id"])
    for n in npcs_def:
        ent.npcs[n["id"]] = _name(n, game, "NPC")
        ent.roles[n["id"]] = str(n.get("role", ""))
    seen: dict[str, str] = {}
    quest_ids = quest_obj_ids | quest_npc_ids
    for what, table in (("area", ent.areas), ("object", ent.objects), ("NPC", ent.npcs)):
        for ref_id, name in table.items():
            if name in seen and ref_id in quest_ids:
                renamed = f"{name}_of_the_quest"
                for letter in "bcdefghijklmnopqrstuvwxyz":
                    if renamed not in seen:
                        break
                    renamed = f"{name}_of_the_quest_{letter}"
                ent.note(f"{what} {ref_id}", f"named {renamed}: the reference gives it the same name as {seen[name]}")
                table[ref_id] = name = renamed
            if name in seen:
                raise ConvertError(f"{game}: the name {name!r} is used by both {seen[name]} and {what} {ref_id}")
            seen[name] = f"{what} {ref_id}"
    undistributable = set(definition["initializations"].get("undistributable_objects", [])) | quest_obj_ids
    instanced: set[str] = set()

    # ------------------------------------------------------------------ objects
    objects: list[dict[str, Any]] = []
    for o in objects_def:
        name = ent.objects[o["id"]]
        where = f"objects.{name}"
        cat, usage = o.get("category", "misc"), o.get("usage", "")
        out: dict[str, Any] = {"name": name}
        uses: list[str] = []
        if usage == "writable":
            category = "writable"
            out["max_text"] = max(1, _int(o.get("max_text_length"), 200))
            if o.get("text"):
                ent.note(where, "a writable written in advance starts blank (odyssey places no pre-written text)")
        elif cat in _CATEGORIES:
            category = cat
        elif cat == "consumable" and _int(o.get("hp_restore")) > 0:
            category = "food"
        else:
            category = "misc"
            ent.note(where, f"category {cat!r} (usage {usage!r}) has no counterpart; it is a misc object")
        if usage in _USES:
            uses.append(usage)
        if category == "tool" and usage == "unlock":
            pass  # a key: odyssey keys are objects with the unlock use, whatever their category
        if category == "armor" and _int(o.get("defense")) <= 0:
            category = "misc"
            ent.note(where, "armor without defense is a misc object")
        if category == "food" and _int(o.get("hp_restore")) <= 0:
            category = "misc"
            ent.note(where, "food without hp_restore is a misc object")
        if category == "container" and _int(o.get("capacity")) <= 0:
            category = "misc"
            ent.note(where, "a container without capacity is a misc object")
        if category in ("container", "writable"):
            instanced.add(o["id"])
        out["category"] = category
        out["description"] = ascii_text(o.get("description") or name.replace("_", " "))
        out["level"] = max(1, _int(o.get("level"), 1))
        out["value"] = max(0, _int(o.get("value")))
        out["size"] = max(0, _int(o.get("size"), 1))
        if _int(o.get("attack")) > 0:
            out["attack"] = _int(o["attack"])
        if category == "armor":
            out["defense"] = _int(o["defense"])
            out["slot"] = _slot(name)
        if category == "container":
            out["capacity"] = _int(o["capacity"])
        if category == "food":
            out["hp_restore"] = _int(o["hp_restore"])
        if uses:
            out["uses"] = uses
        if o.get("areas"):
            out["areas"] = [ent.area(a, f"{game} {where}.areas") for a in o["areas"] if a in ent.areas]
        if o["id"] in undistributable:
            out["spawn_weight"] = 0
        if o["id"] in quest_obj_ids:
            out["quest"] = True
        objects.append(out)
    by_name = {o["name"]: o for o in objects}
    for o in objects_def:  # recipes, once every category is known
        craft = o.get("craft") or {}
        name = ent.objects[o["id"]]
        where = f"objects.{name}"
        ingredients: dict[str, int | float] = {}
        for ing, amount in (craft.get("ingredients") or {}).items():
            if ing not in ent.objects:
                ent.note(where, f"recipe ingredient {ing!r} does not exist; left out")
                continue
            if ing in instanced:
                ent.note(where, f"recipe ingredient {ent.objects[ing]} is a container or writable; left out")
                continue
            if ing == o["id"]:
                continue
            need = _amount(amount)
            if need is None:
                continue
            if need != float(amount):
                ent.note(
                    where,
                    f"needs {amount} {ent.objects[ing]}: odyssey counts fractions in hundredths, so it needs {need}",
                )
            ingredients[ent.objects[ing]] = need
        stations = []
        for dep in craft.get("dependencies") or []:
            dep_name = ent.objects.get(dep)
            if dep_name is None:
                ent.note(where, f"recipe station {dep!r} does not exist; left out")
            elif by_name[dep_name]["category"] != "station":
                ent.note(where, f"recipe needs {dep_name} in the area, which odyssey only allows of stations; left out")
            else:
                stations.append(dep_name)
        if ingredients:
            recipe: dict[str, Any] = {"ingredients": ingredients}
            if stations:
                recipe["stations"] = stations
            by_name[name]["recipe"] = recipe
    # ------------------------------------------------------------------ NPCs
    npcs: list[dict[str, Any]] = []
    for n in npcs_def:
        name = ent.npcs[n["id"]]
        where = f"npcs.{name}"
        enemy = bool(n.get("enemy", False))
        defaults = _ENEMY_DEFAULTS if enemy else _FRIEND_DEFAULTS
        role_word = str(n.get("role", ""))
        if role_word == "merchant" and not enemy:
            role = "merchant"
        elif role_word == "guide":
            role = "guide"
        elif role_word.startswith("boss"):
            role = "boss"
        else:
            role = "fighter" if enemy else "villager"
        out = {
            "name": name,
            "kind": "enemy" if enemy else "friendly",
            "description": ascii_text(n.get("description") or name.replace("_", " ")),
            "role": role,
        }
        hp = _int(n.get("base_hp", n.get("hp")), defaults["base_hp"])
        attack = _int(n.get("base_attack_power", n.get("attack_power")), defaults["base_attack_power"])
        out["hp"] = max(1, min(hp, 1_000_000))
        out["attack"] = max(0, min(attack, 1_000_000))
        if hp > 1_000_000 or attack > 1_000_000:
            ent.note(where, f"hp {hp} / attack {attack} capped at 1,000,000 (odyssey's bound; unbeatable either way)")
        out["hp_per_level"] = max(0, _int(n.get("slope_hp"), defaults["slope_hp"]))
        out["attack_per_level"] = max(0, _int(n.get("slope_attack_power"), defaults["slope_attack_power"]))
        out["level_with_area"] = n["id"] not in quest_npc_ids
        if enemy:
            out["pattern"] = [
                s for s in (n.get("combat_pattern") or _DEFAULT_PATTERN) if s in ("attack", "defend", "wait")
            ]
        carried = []
        for i in n.get("objects") or []:
            if i not in ent.objects:
                continue
            if by_name[ent.objects[i]]["category"] == "station":
                ent.note(where, f"carries {ent.objects[i]}, a station: odyssey NPCs cannot carry stations; left out")
                continue
            carried.append(ent.objects[i])
        if carried:
            out["stock" if role == "merchant" else "drops"] = {c: 1 for c in carried}
        if n.get("dialogue"):
            out["dialogue"] = [ascii_text(n["dialogue"])]
        out["unique"] = bool(n.get("unique", True))
        if n["id"] in quest_npc_ids:
            out["quest"] = True
            out["spawn_weight"] = 0
        npcs.append(out)
    # ------------------------------------------------------------------ places, spawn, graph
    spawn = definition["initializations"]["spawn"]
    spawn_objects = {}
    for oid, count in (spawn.get("objects") or {}).items():
        if oid in ent.objects and _int(count) > 0:
            spawn_objects[ent.objects[oid]] = _int(count)
    spawn_npcs = [ent.npcs[i] for i, k in (spawn.get("npcs") or {}).items() if i in ent.npcs for _ in range(_int(k))]
    places = []
    for p in places_def:
        areas = []
        for a in p.get("areas", []):
            area: dict[str, Any] = {
                "name": ent.areas[a["id"]],
                "description": ascii_text(f"{p.get('name', p['id'])}, {a['name']}"),
                "level": 1 if a["id"] == spawn_ref else max(1, _int(a.get("level"), 1)),
            }
            if a.get("light") is False:
                area["dark"] = True
            if a["id"] == spawn_ref:
                area["objects"] = spawn_objects
                if spawn_npcs:
                    area["npcs"] = spawn_npcs
            areas.append(area)
        places.append(
            {
                "name": ascii_text(p.get("name", p["id"])),
                "description": ascii_text(p.get("name", p["id"])),
                "areas": areas,
                **({"locked": True} if p.get("unlocked") is False else {}),
            }
        )
    graph_def = definition.get("graph")
    # The reference's enter rule opens every locked path with obj_key held in a hand (and uses it up),
    # whatever key the path names; so the imported locks all take that object.
    if "obj_key" in ent.objects:
        unlockables = [ent.objects["obj_key"]]
    else:
        unlockables = [
            ent.objects[o["id"]] for o in objects_def if o.get("usage") == "unlock" and o["id"] not in quest_obj_ids
        ]
        if unlockables:
            ent.note("graph", f"the game has no obj_key, which the reference's locks need; they take {unlockables[0]}")
    if graph_def and graph_def.get("connections"):
        connections = []
        for c in graph_def["connections"]:
            edge: dict[str, Any] = {"a": ent.area(c["from"], f"{game} graph"), "b": ent.area(c["to"], f"{game} graph")}
            if c.get("locked"):
                edge["locked"] = True
                key = c.get("key")
                if key and key != "obj_key" and unlockables:
                    ent.note(
                        f"graph.{edge['a']}-{edge['b']}", f"names {key} as its key; the reference opens it with obj_key"
                    )
                edge["key"] = unlockables[0] if unlockables else (ent.obj(key, f"{game} graph") if key else None)
            connections.append(edge)
        graph: dict[str, Any] = {"mode": "fixed", "connections": connections}
    else:
        graph = {"mode": "agentodyssey"}
        if unlockables:
            graph["lock_keys"] = unlockables
    if spawn_ref not in ent.areas:
        raise ConvertError(f"{game}: spawn area {spawn_ref!r} is not an area")
    world = {
        "format": 1,
        "game": {
            "name": game,
            "title": title,
            "description": description,
            "intro": (
                "I awake in a world unknown. There's a paper written in an ancient script, and my memories are "
                "blurry as the mist."
            ),
            "start_time": "08:00",
            "minutes_per_step": 10,
        },
        "spawn": ent.areas[spawn_ref],
        "places": places,
        "objects": objects,
        "npcs": npcs,
        "graph": graph,
        "placement": {"style": "agentodyssey"},
    }
    return world, ent


#: What the reference's enemy-count bounds may be made of (``rng.randint(math.floor(home.level / 2),
#: home.level)``): numbers, the area's level, arithmetic, and these calls.
_BOUND_OPS: dict[type, Any] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}
_BOUND_CALLS: dict[str, Any] = {"floor": math.floor, "ceil": math.ceil, "max": max, "min": min, "int": int}


def _bound(node: ast.AST, level: int, where: str) -> float:
    """One bound of the reference's draw for an area of ``level``, evaluated from its syntax tree (never run)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Attribute) and node.attr == "level" and isinstance(node.value, ast.Name):
        return level
    if isinstance(node, ast.BinOp) and type(node.op) in _BOUND_OPS:
        left, right = _bound(node.left, level, where), _bound(node.right, level, where)
        if isinstance(node.op, ast.Div | ast.FloorDiv) and right == 0:
            raise ConvertError(f"{where}: the enemy count divides by zero")
        return _BOUND_OPS[type(node.op)](left, right)
    if isinstance(node, ast.Call) and not node.keywords:
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        if name in _BOUND_CALLS:
            return _BOUND_CALLS[name](*(_bound(a, level, where) for a in node.args))
    raise ConvertError(f"{where}: the enemy count's bound {ast.unparse(node)!r} is not a formula of the area's level")


def enemies_per_level(tree: ast.Module, levels: int, where: str) -> list[list[int]] | None:
    """``placement.enemies_per_level`` for levels 1 to ``levels``: the bounds of the reference's
    ``enemy_count = rng.randint(LOW, HIGH)`` in ``World._assign_npcs_to_areas`` (each game writes its own:
    Mark ``1, home.level``, Remnant ``math.floor(home.level / 2), math.ceil(home.level / 1.5)``), read from
    ``world.py``'s syntax tree; None where there is no such assignment (the importer notes it). Bounds that
    are not a formula of the level are an error, not a guess."""
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "_assign_npcs_to_areas"):
            continue
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == "enemy_count"
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "randint"
                and len(node.value.args) == 2
            ):
                low, high = node.value.args
                out = []
                for level in range(1, levels + 1):
                    lo, hi = int(_bound(low, level, where)), int(_bound(high, level, where))
                    if not 0 <= lo <= hi:
                        raise ConvertError(f"{where}: the enemy count of level {level} is {lo} to {hi}")
                    out.append([lo, hi])
                return out
    return None
