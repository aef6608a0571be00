"""One reference main quest (``QUEST_CONFIG`` + its code-decided bindings) -> odyssey's ``quest.json`` ``main``.

Structure: linear chapters stay linear (each stage follows the previous one); DAG chapters (any stage with
``requires``) keep their goal tree, every node a stage, so the number of stages, and the maximum main-quest
reward, is the reference's (one ``quest_stage_advanced`` per node). A DAG chapter's roots wait for the
previous chapter's last stage. Conditions are translated into odyssey's vocabulary; the translation of each
reference condition type is in :data:`TRANSLATIONS` (what it means there, what it becomes here), and every
case that is not exact is recorded as a note naming the stage.
"""

from __future__ import annotations

import ast
import string
from typing import Any

from odyssey_eval.paper.bootstrap import Bindings
from odyssey_eval.paper.world import ConvertError, Entities, ascii_text

__all__ = ["TRANSLATIONS", "condition_code", "condition_defaults", "convert_main_quest", "rewards_in_code"]

#: Reference condition type -> how odyssey says it (for docs/fidelity.md and the provenance file).
TRANSLATIONS: dict[str, str] = {
    "npc_killed": "npc_defeated of the NPC's type",
    "boss_already_defeated": "defeated_n of the boss's type (count 1)",
    "object_bought": "object_bought of the object (the seller is not checked; such stages also ask to be with it)",
    "in_area": "in_area (a list of areas: any_of)",
    "in_area_with_npc": "in_area of the area the NPC is placed in (quest NPCs do not move)",
    "visited_k_of_area_set": "visited_k_of",
    "has_any_of": "any_of has_item_count",
    "has_item_count": "has_item_count",
    "has_category": "any_of has_item_count over the category's objects",
    "equipped_any_of": "equipped_any_of",
    "paper_text_equals_in_area": "text_equals_in the area the stage also asks to be in",
    "writable_text_equals_in_area": "text_equals_in the area the stage also asks to be in",
    "paper_text_equals_in_hands": "text_equals_in, carried (hands or containers)",
    "writable_text_equals_in_inventory": "text_equals_in, carried",
    "paper_text_in_possession": "text_equals_in, carried",
    "killed_n_enemies": "defeated_n (count)",
    "killed_one_of_each": "all_of any_of defeated_n over the NPC types of each role",
    "lit_k_dark_areas": "visited_k_of the game's dark areas",
    "talked_to_npc": "talked_to",
    "talked_to_npc_in_area": "talked_to (quest NPCs do not move)",
    "object_in_area": "object_in_area",
    "has_all_materials": "all_of has_item_count",
    "amended_charter_written_in_area": "text_equals_in the area, on the named writable",
    "paper_with_text_dropped_in_area": "text_equals_in the area",
    "has_quest_item_by_base_or_instance": "has_item_count",
    "serum_deployed_in_reactor": "object_in_area",
    "talked_to_npc_with_item": "all_of text_equals_in (carried) and talked_to",
    "npc_has_coins": "in_area of the NPC (odyssey has no giving of coins)",
    "area_cleared": "in_area (odyssey has no area-cleared state)",
    "player_has_crafted_specific": "has_item_count",
    "equipped_armor_level": "equipped_any_of the armor at or above the level",
    "bought_from_merchant": "any_of object_bought over the merchant's stock",
}
#: Translations that say the same as the reference; the others are noted on each stage that uses them.
_EXACT = {
    "npc_killed",
    "boss_already_defeated",
    "in_area",
    "visited_k_of_area_set",
    "has_any_of",
    "has_item_count",
    "has_category",
    "equipped_any_of",
    "talked_to_npc",
    "object_in_area",
    "has_all_materials",
    "has_quest_item_by_base_or_instance",
    "paper_text_equals_in_area",
    "writable_text_equals_in_area",
    "paper_with_text_dropped_in_area",
    "amended_charter_written_in_area",
}


class _Fmt(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


class _Ctx:
    def __init__(self, game: str, b: Bindings, ent: Entities, world: dict[str, Any], npc_area: dict[str, str]):
        self.game, self.b, self.ent, self.world = game, b, ent, world
        self.npc_area = npc_area  # our NPC name -> our area name (static quest NPCs)
        self.stage = ""
        self.objects = {o["name"]: o for o in world["objects"]}
        self.npcs = {n["name"]: n for n in world["npcs"]}
        self.defaults: dict[tuple[str, str], Any] = {}
        self.code: dict[str, str] = {}

    def where(self) -> str:
        return f"{self.game} quest stage {self.stage}"

    def value(self, key: str | None) -> Any:
        if key is None:
            raise ConvertError(f"{self.where()}: a condition names no key")
        if key in self.b.values:
            return self.b.values[key]
        raise ConvertError(f"{self.where()}: the quest key {key!r} is decided by code this importer cannot read")

    def npc_of(self, key: str) -> str:
        if key in self.b.npcs:
            return self.ent.npc(self.b.npcs[key][0], self.where())
        if key in self.b.bosses:
            return self.ent.npc(self.b.bosses[key].npc, self.where())
        raise ConvertError(f"{self.where()}: the quest NPC {key!r} is decided by code this importer cannot read")

    def area_of_npc(self, key: str) -> str:
        if key in self.b.npcs and (area := self.b.npcs[key][1]):
            return self.ent.area(area, self.where())
        if key in self.b.bosses and (area := self.b.bosses[key].area):
            return self.ent.area(area, self.where())
        raise ConvertError(f"{self.where()}: where {key!r} stands is decided by code this importer cannot read")

    def area(self, ref: str | None) -> str:
        """``ref`` is read from the reference's data: None (a key it leaves out) is unknown too."""
        return self.ent.area(ref, self.where())

    def obj(self, ref: str | None) -> str:
        return self.ent.obj(ref, self.where())


def _any(conds: list[dict[str, Any]]) -> dict[str, Any]:
    return conds[0] if len(conds) == 1 else {"type": "any_of", "conditions": conds}


def _all(conds: list[dict[str, Any]]) -> dict[str, Any]:
    return conds[0] if len(conds) == 1 else {"type": "all_of", "conditions": conds}


def _text(ctx: _Ctx, cond: dict[str, Any]) -> str:
    text = ctx.value(cond.get("text_key")) if cond.get("text_key") else cond.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ConvertError(f"{ctx.where()}: a text condition without text")
    return text.strip().lower()


def _translate(ctx: _Ctx, cond: dict[str, Any], siblings: list[dict[str, Any]], notes: list[str]) -> dict[str, Any]:
    kind, t = cond.get("kind"), cond.get("type")
    if kind == "any_of" or t == "any_of":
        subs = cond.get("conditions") or cond.get("any_of") or []
        return _any([_translate(ctx, c, subs, notes) for c in subs])
    if t not in TRANSLATIONS:
        raise ConvertError(f"{ctx.where()}: condition type {t!r} has no translation")
    if t not in _EXACT:
        notes.append(f"{t} -> {TRANSLATIONS[t]}")
    if t == "npc_killed":
        return {"type": "npc_defeated", "npc": ctx.npc_of(cond["npc_key"])}
    if t == "boss_already_defeated":
        return {"type": "defeated_n", "npc": ctx.npc_of(cond.get("boss_key") or cond["npc_key"]), "count": 1}
    if t == "object_bought":
        return {"type": "object_bought", "object": ctx.obj(cond["obj_id"])}
    if t in ("in_area", "area_cleared"):
        got = ctx.value(cond["area_key"])
        areas = got if isinstance(got, list) else [got]
        return _any([{"type": "in_area", "area": ctx.area(a)} for a in areas])
    if t in ("in_area_with_npc", "npc_has_coins"):
        return {"type": "in_area", "area": ctx.area_of_npc(cond["npc_key"])}
    if t == "visited_k_of_area_set":
        areas = ctx.value(cond["area_set_key"])
        k_key = cond.get("k_key")
        k = cond.get("k", 1)  # the reference's own default when the key is unset
        k = ctx.b.values.get(k_key, k) if isinstance(k_key, str) else k
        return {"type": "visited_k_of", "areas": [ctx.area(a) for a in areas], "count": int(k)}
    if t in ("has_any_of",):
        return _any([{"type": "has_item_count", "object": ctx.obj(o)} for o in cond["base_objs"]])
    if t == "has_item_count":
        obj = (
            ctx.value(cond["base_obj_key"]) if cond.get("base_obj_key") else cond.get("base_obj") or cond.get("obj_id")
        )
        count = ctx.value(cond["count_key"]) if cond.get("count_key") else cond.get("count", 1)
        return {"type": "has_item_count", "object": ctx.obj(obj), "count": int(count)}
    if t in ("has_quest_item_by_base_or_instance", "player_has_crafted_specific"):
        obj = cond.get("obj_id") or (
            ctx.value(cond["obj_key"]) if cond.get("obj_key") else ctx.defaults.get((t, "obj_id"))
        )
        if not obj:
            raise ConvertError(f"{ctx.where()}: {t} names no object")
        return {"type": "has_item_count", "object": ctx.obj(obj)}
    if t == "has_category":
        names = [n for n, o in ctx.objects.items() if o["category"] == cond["category"] and not o.get("quest")]
        return _any([{"type": "has_item_count", "object": n} for n in names])
    if t == "equipped_any_of":
        objs = [ctx.obj(o) for o in cond["base_objs"]]
        worn = {"type": "equipped_any_of", "objects": objs}
        if "items_in_hands" not in ctx.code.get(t, ""):
            return worn
        # this game's check also counts what is held in a hand (weapons are held, not worn)
        notes.append("equipped_any_of (worn or in hand) -> equipped_any_of, or carried for what cannot be worn")
        held = [o for o in objs if ctx.objects[o]["category"] not in ("armor", "container")]
        return _any(([worn] if len(held) < len(objs) else []) + [{"type": "has_item_count", "object": o} for o in held])
    if t == "equipped_armor_level":
        level = int(cond.get("min_level", 1))
        names = [n for n, o in ctx.objects.items() if o["category"] == "armor" and o["level"] >= level]
        return {"type": "equipped_any_of", "objects": names}
    if t in ("paper_text_equals_in_area", "writable_text_equals_in_area"):
        text = _text(ctx, cond)
        here = [s for s in siblings if s.get("type") == "in_area" and s.get("area_key")]
        if here:
            return {"type": "text_equals_in", "text": text, "area": ctx.area(ctx.value(here[0]["area_key"]))}
        return _any(
            [
                {
                    "type": "all_of",
                    "conditions": [{"type": "in_area", "area": a}, {"type": "text_equals_in", "text": text, "area": a}],
                }
                for a in ctx.ent.areas.values()
            ]
        )
    if t in ("paper_text_equals_in_hands", "writable_text_equals_in_inventory", "paper_text_in_possession"):
        return {"type": "text_equals_in", "text": _text(ctx, cond)}
    if t in ("paper_with_text_dropped_in_area", "amended_charter_written_in_area"):
        out: dict[str, Any] = {
            "type": "text_equals_in",
            "text": _text(ctx, cond),
            "area": ctx.area(ctx.value(cond["area_key"])),
        }
        if cond.get("obj_id") and ctx.objects.get(ctx.obj(cond["obj_id"]), {}).get("category") == "writable":
            out["object"] = ctx.obj(cond["obj_id"])
        return out
    if t == "killed_n_enemies":
        return {"type": "defeated_n", "count": int(cond.get("n", 1))}
    if t == "killed_one_of_each":
        parts = []
        for role in cond["roles"]:
            types = [ctx.ent.npcs[i] for i, r in ctx.ent.roles.items() if r == role]
            if not types:
                raise ConvertError(f"{ctx.where()}: no NPC has the role {role!r}")
            parts.append(_any([{"type": "defeated_n", "npc": n, "count": 1} for n in types]))
        return _all(parts)
    if t == "lit_k_dark_areas":
        dark = [a["name"] for p in ctx.world["places"] for a in p["areas"] if a.get("dark")]
        return {"type": "visited_k_of", "areas": dark, "count": int(cond.get("k", 1))}
    if t in ("talked_to_npc", "talked_to_npc_in_area"):
        return {"type": "talked_to", "npc": ctx.npc_of(cond["npc_key"])}
    if t == "talked_to_npc_with_item":
        return _all(
            [
                {"type": "text_equals_in", "text": _text(ctx, cond)},
                {"type": "talked_to", "npc": ctx.npc_of(cond["npc_key"])},
            ]
        )
    if t in ("object_in_area", "serum_deployed_in_reactor"):
        area = ctx.area(ctx.value(cond["area_key"]))
        refs: list[str | None]  # read from the data; None where it names no object
        if cond.get("target_objs"):
            refs = list(cond["target_objs"])
        else:
            refs = [ctx.value(cond["obj_key"]) if cond.get("obj_key") else cond.get("obj_id")]
        return _any([{"type": "object_in_area", "object": ctx.obj(o), "area": area} for o in refs])
    if t == "has_all_materials":
        return _all(
            [{"type": "has_item_count", "object": ctx.obj(o), "count": int(n)} for o, n in cond["materials"].items()]
        )
    if t == "bought_from_merchant":
        stock = ctx.npcs[ctx.npc_of(cond["npc_key"])].get("stock", {})
        if not stock:
            raise ConvertError(f"{ctx.where()}: the merchant sells nothing")
        return _any([{"type": "object_bought", "object": o} for o in stock])
    raise ConvertError(f"{ctx.where()}: condition type {t!r} has no translation")  # pragma: no cover


def condition_defaults(cls: ast.ClassDef) -> dict[tuple[str, str], Any]:
    """``if ctype == "T": ... cond.get("F") or "literal"``: what a condition's code uses when its data leaves F out."""
    out: dict[tuple[str, str], Any] = {}
    for node in ast.walk(cls):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
            continue
        left, right = node.test.left, node.test.comparators[0]
        if not (
            isinstance(left, ast.Name) and left.id in ("ctype", "stype", "etype") and isinstance(right, ast.Constant)
        ):
            continue
        for sub in ast.walk(ast.Module(body=node.body, type_ignores=[])):
            if isinstance(sub, ast.BoolOp) and isinstance(sub.op, ast.Or) and len(sub.values) == 2:
                call, default = sub.values
                if (
                    isinstance(call, ast.Call)
                    and getattr(call.func, "attr", "") == "get"
                    and call.args
                    and isinstance(named := call.args[0], ast.Constant)
                    and isinstance(default, ast.Constant)
                    and isinstance(right.value, str)
                    and isinstance(named.value, str)
                ):
                    out.setdefault((right.value, named.value), default.value)
    return out


def condition_code(cls: ast.ClassDef) -> dict[str, str]:
    """The source of each ``if stype/ctype/etype == "T":`` branch of the quest class (to read what T checks)."""
    out: dict[str, str] = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1:
            left, right = node.test.left, node.test.comparators[0]
            if (
                isinstance(left, ast.Name)
                and left.id in ("ctype", "stype", "etype")
                and isinstance(right, ast.Constant)
            ):
                out.setdefault(str(right.value), ast.unparse(ast.Module(body=node.body, type_ignores=[])))
    return out


def rewards_in_code(cls: ast.ClassDef) -> dict[str, list[str]]:
    """``if sid == "S": self._ensure_reward_available(..., "obj_X", res)`` in ``apply``: stage -> objects given."""
    out: dict[str, list[str]] = {}
    for node in ast.walk(cls):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1):
            continue
        test = node.test
        if not (isinstance(test.left, ast.Name) and test.left.id == "sid" and isinstance(test.ops[0], ast.Eq)):
            continue
        stage = test.comparators[0]
        if not (isinstance(stage, ast.Constant) and isinstance(stage.value, str)):
            continue
        for stmt in node.body:
            call = getattr(stmt, "value", None)
            if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "_ensure_reward_available":
                # (agent_id, world, area_id, obj_id, res): the object is the fourth argument
                obj = call.args[3] if len(call.args) > 3 else None
                objs = [obj.value] if isinstance(obj, ast.Constant) and isinstance(obj.value, str) else []
                out.setdefault(stage.value, []).extend(objs)
    return out


def _render(text: str, ctx: _Ctx, guide: str) -> str:
    fmt = _Fmt(mq_guide_name=guide)
    for key, value in ctx.b.values.items():
        if isinstance(value, str) and value in ctx.ent.areas:
            fmt[key] = ctx.ent.area_display[value]
        elif isinstance(value, list) and value and all(isinstance(v, str) and v in ctx.ent.areas for v in value):
            fmt[key] = "; ".join(ctx.ent.area_display[v] for v in value)
            if key.endswith("_candidate_areas"):
                fmt[key[: -len("_candidate_areas")] + "_candidates"] = fmt[key]
        elif isinstance(value, (str, int)):
            fmt[key] = str(value)
    for key in list(ctx.b.npcs) + list(ctx.b.bosses):
        try:
            name = ctx.npc_of(key)
        except ConvertError:
            continue
        stem = key[: -len("_npc")] if key.endswith("_npc") else key
        fmt[f"{stem}_name"] = name
        fmt.setdefault(f"{key}_name", name)
    try:
        return string.Formatter().vformat(text, (), fmt)
    except (ValueError, IndexError, AttributeError):
        return text


def _clean(text: str) -> str:
    return ascii_text(text)


def convert_main_quest(
    game: str,
    config: dict[str, Any],
    b: Bindings,
    ent: Entities,
    world: dict[str, Any],
    guide: str,
    rewards: dict[str, list[str]],
    defaults: dict[tuple[str, str], Any] | None = None,
    code: dict[str, str] | None = None,
) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """The ``main`` part of ``quest.json`` and the per-stage notes."""
    npc_area = {}
    for ref, area in b.npcs.values():
        if area and ref in ent.npcs and area in ent.areas:
            npc_area[ent.npcs[ref]] = ent.areas[area]
    ctx = _Ctx(game, b, ent, world, npc_area)
    ctx.defaults = dict(defaults or {})
    ctx.code = dict(code or {})
    notes: list[dict[str, str]] = []
    chapters = []
    previous_last: str | None = None
    boss_stage: dict[str, str] = {}
    all_stages: list[dict[str, Any]] = []
    for chapter in config.get("chapters", []):
        stages_def = chapter.get("stages", [])
        dag = any("requires" in s for s in stages_def)
        ids = [s["id"] for s in stages_def]
        out_stages = []
        for s in stages_def:
            ctx.stage = s["id"]
            stage_notes: list[str] = []
            done_any, done_all = s.get("done_any") or [], s.get("done_all") or []
            if done_any or done_all:
                parts = []
                if done_all:
                    parts.append(_all([_translate(ctx, c, done_all, stage_notes) for c in done_all]))
                if done_any:
                    parts.append(_any([_translate(ctx, c, done_any, stage_notes) for c in done_any]))
                done = _all(parts)
            elif s.get("requires"):
                done = _all([{"type": "stage_completed", "stage": r} for r in s["requires"]])
            else:
                raise ConvertError(f"{game} quest stage {s['id']}: no condition and no sub-goals")
            title = _clean(_render(s.get("objective") or s["id"], ctx, guide))
            stage: dict[str, Any] = {
                "id": s["id"],
                "title": title.splitlines()[0][:200] if title else s["id"],
                "hint": _clean(_render(s.get("hint") or s.get("objective") or "", ctx, guide)) or title,
                "done": done,
            }
            if dag:
                reqs = [r for r in s.get("requires", []) if r in ids]
                if not reqs and previous_last is not None:
                    reqs = [previous_last]
                stage["requires"] = reqs
            if s.get("on_complete_feedback"):
                stage["on_complete"] = _clean(_render(s["on_complete_feedback"], ctx, guide))
            for note in dict.fromkeys(stage_notes):
                notes.append({"where": f"quest.{s['id']}", "difference": note})
            if s.get("spawns_boss_key"):
                boss_stage[s["id"]] = s["spawns_boss_key"]
            out_stages.append(stage)
            all_stages.append(stage)
            stage["_def"] = s
        if out_stages:
            if dag:
                roots = [s for s in stages_def if s.get("chapter_complete") or s.get("quest_complete")]
                previous_last = roots[0]["id"] if roots else out_stages[-1]["id"]
            else:
                previous_last = out_stages[-1]["id"]
        intro = _clean(_render(chapter.get("intro", ""), ctx, guide))
        chapters.append(
            {
                "id": chapter["id"],
                "title": _clean(chapter.get("title", chapter["id"])),
                "intro": intro,
                "stages": out_stages,
            }
        )
    # bosses appear when the stage that wakes them is done: on the stage that fights them (it opens then)
    by_id = {s["id"]: s for s in all_stages}
    order = [s["id"] for s in all_stages]
    for spawner, key in boss_stage.items():
        if key in b.npcs:
            continue  # created at the start (_ensure_static_quest_npcs): it already stands in its area
        spec = b.bosses.get(key)
        if spec is None or spec.area is None:
            raise ConvertError(
                f"{game} quest stage {spawner}: the boss {key!r} is decided by code this importer cannot read"
            )
        npc, area = ctx.npc_of(key), ctx.area(spec.area)
        target = next((s for s in all_stages if s is not by_id[spawner] and _names_npc(s["done"], npc)), None)
        if target is None:
            i = order.index(spawner)
            target = by_id[order[i + 1]] if i + 1 < len(order) else by_id[spawner]
        target.setdefault("spawn", []).append({"npc": npc, "area": area})
    # bosses the reference spawns from code by quest progress (_ensure_bosses_for_progress) with no
    # spawns_boss_key: they appear when the stage that fights them opens
    woken = set(boss_stage.values())
    for key, spec in b.bosses.items():
        if key in b.npcs or key in woken or spec.area is None or spec.npc not in ent.npcs:
            continue
        npc = ent.npcs[spec.npc]
        target = next((s for s in all_stages if _names_npc(s["done"], npc)), None)
        if target is not None:
            target.setdefault("spawn", []).append({"npc": npc, "area": ctx.area(spec.area)})

    def following(sid: str) -> dict[str, Any] | None:
        """The stage that opens when ``sid`` completes: the first that requires it, else the next one in order."""
        after = next((s for s in all_stages if sid in (s.get("requires") or ())), None)
        if after is not None:
            return after
        i = order.index(sid)
        return by_id[order[i + 1]] if i + 1 < len(order) else None

    for sid, objs in rewards.items():
        if sid not in by_id:
            continue
        nxt = following(sid)
        spawn_area = _stage_area(by_id[sid]) or world["spawn"]
        if nxt is not None:
            for o in objs:
                nxt.setdefault("place", []).append({"object": ctx.obj(o), "area": spawn_area, "amount": 1})
            notes.append(
                {
                    "where": f"quest.{sid}",
                    "difference": "the reward the reference puts where the agent stands on completion lies in "
                    f"{spawn_area} (where the stage is done) when the next stage opens",
                }
            )
    coin = next((o["name"] for o in world["objects"] if o["category"] == "currency"), None)
    for s in all_stages:
        coins = int(s["_def"].get("gives_coins") or 0)
        nxt = following(s["id"])
        if coins and coin and nxt is not None:
            nxt.setdefault("place", []).append(
                {"object": coin, "area": _stage_area(s) or world["spawn"], "amount": coins}
            )
    for s in all_stages:
        del s["_def"]
    main = {
        "title": _clean(config.get("title", game)),
        "intro": _clean(_render(config.get("intro", ""), ctx, guide)),
        "guide": {"npc": guide, "area": world["spawn"]},
        "chapters": chapters,
    }
    return main, notes


def _names_npc(cond: dict[str, Any], npc: str) -> bool:
    if cond.get("npc") == npc:
        return True
    return any(_names_npc(c, npc) for c in cond.get("conditions", []))


def _stage_area(stage: dict[str, Any]) -> str | None:
    for s in stage.get("spawn", []):
        return s["area"]
    return None
