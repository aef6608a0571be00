"""The checks of ``quest.json`` against its game: every reference resolves, the stages form a plan.

Run once when a game loads (after :mod:`odyssey_env.checks.world`), with the world's objects, NPCs and
areas at hand; each problem names its file and field.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from odyssey_env.limits import (
    MAX_AREAS,
    MAX_EXPANSION_AREAS_PER_PLACE,
    MAX_EXPANSION_PLACES,
    MAX_EXPANSIONS,
    MAX_INSTANCES,
    MAX_STAT,
    MAX_TUTORIAL_STEPS,
)
from odyssey_env.quests.conditions import check_condition
from odyssey_env.quests.main_quest import plan
from odyssey_env.quests.spec import Condition
from odyssey_env.schema import Problem

if TYPE_CHECKING:
    from odyssey_env.game import Game

__all__ = ["check_bounds", "check_quest"]


def check_quest(game: Game) -> list[Problem]:
    """Every reference in quest.json must resolve, and the stage graph must be acyclic and complete."""
    q = game.quest
    out: list[Problem] = []
    F = "quest.json"

    def bad(path: str, message: str) -> None:
        out.append(Problem(F, path, message))

    def area_ok(name: str | None, path: str, extra: tuple[str, ...] = ()) -> None:
        if name is not None and name not in game.areas and name not in extra:
            bad(path, f"unknown area {name!r}")

    if q.main is not None:
        m = q.main
        if m.guide is not None:
            t = game.npcs.get(m.guide.npc)
            if t is None:
                bad("main.guide.npc", f"unknown NPC {m.guide.npc!r}")
            elif t.hostile:
                bad("main.guide.npc", "the guide must be friendly")
            area_ok(m.guide.area, "main.guide.area")
            if not 0 <= m.guide.reminder <= 100_000:
                bad("main.guide.reminder", "steps between reminders: 0 (never) to 100000")
        ids: dict[str, str] = {}
        order: list[str] = []
        if not m.chapters:
            bad("main.chapters", "a main quest needs at least one chapter")
        for i, ch in enumerate(m.chapters):
            if not ch.stages:
                bad(f"main.chapters[{i}].stages", "a chapter needs at least one stage")
            for j, st in enumerate(ch.stages):
                p = f"main.chapters[{i}].stages[{j}]"
                if st.id in ids:
                    bad(f"{p}.id", f"stage id {st.id!r} is already used at {ids[st.id]}")
                ids[st.id] = p
                order.append(st.id)
                out.extend(check_condition(game, st.done, F, f"{p}.done"))
                for k, sp in enumerate(st.spawn):
                    if sp.npc not in game.npcs:
                        bad(f"{p}.spawn[{k}].npc", f"unknown NPC {sp.npc!r}")
                    area_ok(sp.area, f"{p}.spawn[{k}].area")
                for k, pl in enumerate(st.place):
                    if pl.object not in game.objects:
                        bad(f"{p}.place[{k}].object", f"unknown object {pl.object!r}")
                    area_ok(pl.area, f"{p}.place[{k}].area")
                    if pl.amount < 1:
                        bad(f"{p}.place[{k}].amount", "must be at least 1")
        for i, ch in enumerate(m.chapters):
            for j, st in enumerate(ch.stages):
                for r in st.requires or ():
                    if r not in ids:
                        bad(f"main.chapters[{i}].stages[{j}].requires", f"unknown stage {r!r}")
                    elif r == st.id:
                        bad(f"main.chapters[{i}].stages[{j}].requires", "a stage cannot require itself")
        if not out:
            try:
                plan(q.main)
            except ValueError as exc:
                bad("main", str(exc))
        # stage references inside conditions
        for st in q.stages():
            for cond in _walk(st.done):
                if cond.type == "stage_completed" and cond.stage not in ids:
                    bad(ids[st.id] + ".done", f"unknown stage {cond.stage!r}")
    if q.tutorial is not None:
        tutorial = q.tutorial
        rooms = tuple(r.name for r in tutorial.rooms)
        if not rooms:
            bad("tutorial.rooms", "the tutorial needs at least one room")
        for i, room in enumerate(tutorial.rooms):
            if room.name in game.areas or room.name in game.objects or room.name in game.npcs:
                bad(f"tutorial.rooms[{i}].name", f"{room.name!r} is already a name in the world")
        for i, link in enumerate(tutorial.links):
            for end in (link.a, link.b):
                if end not in rooms:
                    bad(f"tutorial.links[{i}]", f"{end!r} is not a tutorial room")
            if link.key is not None and link.key not in game.objects:
                bad(f"tutorial.links[{i}].key", f"unknown object {link.key!r}")
        if not tutorial.steps:
            bad("tutorial.steps", "the tutorial needs at least one step")
        for i, s in enumerate(tutorial.steps):
            p = f"tutorial.steps[{i}]"
            out.extend(check_condition(game, s.done, F, f"{p}.done", extra_areas=rooms))
            for obj in s.place:
                if obj not in game.objects:
                    bad(f"{p}.place.{obj}", f"unknown object {obj!r}")
            for n in s.npcs:
                if n not in game.npcs:
                    bad(f"{p}.npcs", f"unknown NPC {n!r}")
    sq = q.side_quests
    unknown_kinds = set(sq.kinds) - {"collect", "talk", "craft", "trade"}
    if unknown_kinds:
        bad("side_quests.kinds", f"unknown kind(s) {sorted(unknown_kinds)}; known: collect, talk, craft, trade")
    if sq.enabled and game.currency is None:
        bad("side_quests", "side quests pay coins: the game needs a currency object")
    out += check_bounds(game)
    return out


def check_bounds(game: Game) -> list[Problem]:
    """Numbers a playable quest never needs (:mod:`odyssey_env.limits`): each names its field."""
    q = game.quest
    out: list[Problem] = []

    def within(path: str, value: float, lo: float, hi: float) -> None:
        if not lo <= value <= hi:
            out.append(Problem("quest.json", path, f"{value!r} is out of range: expected {lo:g} to {hi:g}"))

    def span(path: str, pair: tuple[int, int], lo: int, hi: int) -> None:
        if not lo <= pair[0] <= pair[1] <= hi:
            out.append(
                Problem("quest.json", path, f"expected [min, max] with {lo} <= min <= max <= {hi}, got {list(pair)}")
            )

    def amount(path: str, obj: str, n: int) -> None:
        t = game.objects.get(obj)
        within(path, n, 1, MAX_INSTANCES if t is not None and t.instanced else MAX_STAT)

    for i, ch in enumerate(q.main.chapters if q.main else ()):
        for j, st in enumerate(ch.stages):
            for k, pl in enumerate(st.place):
                if pl.amount >= 1:  # below 1 has its own message
                    amount(f"main.chapters[{i}].stages[{j}].place[{k}].amount", pl.object, pl.amount)
    if q.tutorial is not None:
        within("tutorial.max_steps", q.tutorial.max_steps, 1, MAX_TUTORIAL_STEPS)
        for i, step in enumerate(q.tutorial.steps):
            for obj, n in step.place.items():
                amount(f"tutorial.steps[{i}].place.{obj}", obj, n)
            within(f"tutorial.steps[{i}].npcs", len(step.npcs), 0, MAX_INSTANCES)
    sq = q.side_quests
    within("side_quests.unlock_after", sq.unlock_after, 0, MAX_AREAS)
    span("side_quests.reward", sq.reward, 0, MAX_STAT)
    span("side_quests.collect_amount", sq.collect_amount, 1, MAX_INSTANCES)
    ex = q.expansion
    within("expansion.max_expansions", ex.max_expansions, 0, MAX_EXPANSIONS)
    span("expansion.places", ex.places, 1, MAX_EXPANSION_PLACES)
    span("expansion.areas_per_place", ex.areas_per_place, 1, MAX_EXPANSION_AREAS_PER_PLACE)
    return out


def _walk(cond: Condition) -> Iterator[Condition]:
    yield cond
    for c in cond.conditions:
        yield from _walk(c)
