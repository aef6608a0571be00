"""The reference tutorial (``TutorialRoomStepRule.STEPS``, read with :mod:`ast`) -> odyssey's ``tutorial``.

The reference builds one temporary room joined to the spawn by a locked door and walks the agent through
its steps; leaving through the door ends it. Here the room is ``tutorial_room`` and the door leads to
``tutorial_door`` (odyssey's tutorial rooms are isolated from the world), the steps keep their order and
instruction text, each condition becomes the vocabulary condition that says the same (:data:`EVENTS`),
and each step's setup places what it asks for. The tutorial's own NPCs (a merchant and a raider) become
NPC types of the game marked ``quest`` (they are not part of the world's own content).
"""

from __future__ import annotations

import re
from typing import Any

from odyssey_eval.paper.literals import class_data, find_class, parse
from odyssey_eval.paper.world import Entities, ascii_text

__all__ = ["convert"]

ROOM, DOOR = "tutorial_room", "tutorial_door"


def _did(kind: str, **match: Any) -> dict[str, Any]:
    return {"type": "predicate", "name": "did", "args": {"kind": kind, **match}}


def _cond(c: dict[str, Any], ent: Entities, npc_names: dict[str, str], key: str | None) -> dict[str, Any] | None:
    t = c.get("type")
    obj = ent.objects.get(c.get("base_obj", "")) if c.get("base_obj") else None
    if t in ("object_picked_up", "in_hands_base", "inventory_has_base", "held_containers_have_base") and obj:
        return {"type": "has_item_count", "object": obj}
    if t == "base_count_at_least" and obj:
        return {"type": "has_item_count", "object": obj, "count": int(c.get("count", c.get("n", 1)))}
    if t in ("item_equipped", "inventory_container_is_base") and obj:
        return {"type": "equipped_any_of", "objects": [obj]}
    if t in ("item_unequipped", "bag_in_hand_and_no_inventory"):
        return {"type": "holds_category", "category": "container"}
    if t == "inventory_inspected" or t == "container_inspected":
        return _did("object_inspected")
    if t == "object_inspected":
        return _did("object_inspected", **({"object": obj} if obj else {}))
    if t == "object_stored" and obj:
        return _did("object_stored", object=obj)
    if t == "object_taken_out" and obj:
        return _did("object_taken_out", object=obj)
    if t == "object_discarded" and obj:
        return _did("object_dropped", object=obj)
    if t == "object_dropped" and obj:
        return {"type": "object_dropped", "object": obj}
    if t == "writable_written":
        return {"type": "text_written"}
    if t == "npc_talked_to":
        return {"type": "talked_to", "npc": npc_names["merchant"]}
    if t == "object_bought" and obj:
        return {"type": "object_bought", "object": obj}
    if t == "object_sold" and obj:
        return {"type": "object_sold", "object": obj}
    if t == "object_crafted" and obj:
        return {"type": "object_crafted", "object": obj}
    if t == "npc_killed":
        return {"type": "npc_defeated", "npc": npc_names["enemy"]}
    if t in ("area_entered", "area_changed_from_spawn"):
        return {"type": "area_entered", "area": DOOR}
    return None


def _merchant_stock(steps: list[dict[str, Any]], ent: Entities) -> dict[str, int]:
    """What the tutorial merchant sells: the stock the first step that sets it up gives it.

    The reference appends each step's ``stock`` to the merchant's inventory when the step begins; odyssey
    gives a merchant type's stock when it is summoned and again when a step lists it while it is there.
    """
    for st in steps:
        for spec in (st.get("setup") or {}).get("ensure_npcs", []):
            if spec.get("kind") == "merchant" and isinstance(spec.get("stock"), dict):
                stock = {ent.objects[o]: int(n) for o, n in spec["stock"].items() if o in ent.objects and int(n) > 0}
                if stock:
                    return stock
    return {}


def _placeholder(name: str, ent: Entities) -> str:
    """An instruction's ``{wood_log}``: the object's name, as the reference's ``_render_instruction`` fills it
    (its exit is odyssey's door room); a placeholder naming nothing odyssey has reads "it"."""
    if name == "exit":
        return DOOR
    return ent.objects.get(f"obj_{name}", "it")


def convert(
    text: str, path: str, ent: Entities, world: dict[str, Any]
) -> tuple[dict[str, Any] | None, list[dict[str, str]]]:
    notes: list[dict[str, str]] = []
    cls = find_class(parse(text, path), "TutorialRoomStepRule")
    if cls is None:
        return None, [{"where": "tutorial", "difference": f"{path} has no TutorialRoomStepRule: no tutorial"}]
    data = class_data(cls)
    steps = data.get("STEPS") or []
    npc_names: dict[str, str] = {}
    existing = {n["name"] for n in world["npcs"]} | {o["name"] for o in world["objects"]} | set(ent.areas.values())
    for n in data.get("required_npcs") or []:
        name = str(n.get("name", ""))
        kind = "enemy" if n.get("enemy") else "merchant"
        if not re.match(r"^[a-z][a-z0-9_]*$", name) or name in existing:
            name = f"tutorial_{kind}"
        npc_names[kind] = name
        entry: dict[str, Any] = {
            "name": name,
            "kind": "enemy" if n.get("enemy") else "friendly",
            "description": ascii_text(n.get("description") or name.replace("_", " ")),
            "role": "fighter" if n.get("enemy") else "merchant",
            "hp": max(1, int(n.get("hp", 1) or 1)),
            "attack": max(0, int(n.get("attack_power", 0) or 0)),
            "coins": max(0, int(n.get("coins", 0) or 0)),
            "quest": True,
            "spawn_weight": 0,
            "unique": bool(n.get("unique", True)),
        }
        if n.get("enemy"):
            entry["pattern"] = ["attack", "defend", "attack", "wait"]
        else:
            stock = _merchant_stock(steps, ent)
            if stock:
                entry["stock"] = stock
        world["npcs"].append(entry)
        existing.add(name)
    if "merchant" not in npc_names or "enemy" not in npc_names:
        return None, [{"where": "tutorial", "difference": "the tutorial's merchant or raider is missing: no tutorial"}]
    # the reference's bag and writable are the tutorial's first container and first writable object
    # (``small_bag`` in most games, ``small_pouch`` in Mark), instanced when the tutorial begins
    names: dict[str, str | None] = {"bag": None, "writable": None}
    category = {o["name"]: o.get("category") for o in world["objects"]}
    for o in data.get("required_objects") or []:
        got = ent.objects.get(o.get("id", ""))
        if got and names["bag"] is None and category.get(got) == "container":
            names["bag"] = got
        if got and names["writable"] is None and category.get(got) == "writable":
            names["writable"] = got
    key = next(
        (
            ent.objects[o["id"]]
            for o in data.get("required_objects") or []
            if o.get("id") == "obj_key" and o["id"] in ent.objects
        ),
        None,
    )
    out_steps: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for st in steps:
        sid = str(st.get("id"))
        seen[sid] = seen.get(sid, 0) + 1
        if seen[sid] > 1:
            notes.append(
                {
                    "where": f"tutorial.{sid}",
                    "difference": f"the id is repeated in the reference; this is {sid}_{seen[sid]}",
                }
            )
            sid = f"{sid}_{seen[sid]}"
        conds = [
            x for x in (_cond(c, ent, npc_names, key) for c in (st.get("done_any") or st.get("done_all") or [])) if x
        ]
        if not conds:
            notes.append(
                {"where": f"tutorial.{sid}", "difference": "no condition odyssey can test: the step is left out"}
            )
            continue
        done = (
            conds[0] if len(conds) == 1 else {"type": "any_of" if st.get("done_any") else "all_of", "conditions": conds}
        )
        place: dict[str, int] = {}
        setup = st.get("setup") or {}
        for what in setup.get("instances_on_ground_if_missing", []):
            obj = names.get(what)
            if obj:
                place[obj] = place.get(obj, 0) + 1
        for field_name in (
            "ensure_ground_base_if_agent_missing",
            "ensure_ground_base",
            "ensure_ground_base_if_agent_base_count_lt",
        ):
            for oid, n in (setup.get(field_name) or {}).items():
                if oid in ent.objects:
                    place[ent.objects[oid]] = max(place.get(ent.objects[oid], 0), int(n))
        npcs = []
        for spec in setup.get("ensure_npcs", []):
            kind = spec.get("kind")
            if kind not in npc_names or npc_names[kind] in npcs:
                continue
            # a step that restocks the merchant lists it again (odyssey's tutorial then adds its stock,
            # as the reference appends the step's stock); other NPCs are summoned once
            restocks = kind == "merchant" and bool(spec.get("stock"))
            if restocks or not any(npc_names[kind] in s.get("npcs", []) for s in out_steps):
                npcs.append(npc_names[kind])
        say = ascii_text(st.get("instruction", ""))
        for k, v in (
            ("bag", names["bag"]),
            ("writable", names["writable"]),
            ("merchant", npc_names["merchant"]),
            ("enemy", npc_names["enemy"]),
        ):
            if v:
                say = say.replace("{" + k + "}", f"{v}_<number>" if k in ("bag", "writable") else v)
        say = re.sub(r"\{([a-z_]+)\}", lambda m: _placeholder(m.group(1), ent), say)
        step: dict[str, Any] = {
            "id": sid,
            "say": "".join(ch for ch in say if 32 <= ord(ch) < 127 or ch == "\n").strip(),
            "done": done,
        }
        if place:
            step["place"] = place
        if npcs:
            step["npcs"] = npcs
        out_steps.append(step)
    links = (
        [{"a": ROOM, "b": DOOR, "locked": True, **({"key": key} if key else {})}] if key else [{"a": ROOM, "b": DOOR}]
    )
    tutorial = {
        "rooms": [
            {"name": ROOM, "description": "Tutorial, room"},
            {"name": DOOR, "description": "The way out of the tutorial, to where the journey begins."},
        ],
        "links": links,
        "max_steps": 150,
        "steps": out_steps,
    }
    notes.append({"where": "tutorial", "difference": "the tutorial room is isolated and its exit is a second room; the "
                  "reference joins its room to the spawn area"})  # fmt: skip
    return tutorial, notes
