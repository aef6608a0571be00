"""The quest format (``quest.json``): main quest, side quests, tutorial and online expansion.

Quests are data. A stage's ``done`` condition is written in a closed, documented vocabulary (see
:mod:`odyssey_env.quests.conditions` and ``docs/quests.md``) plus predicates a game registers in its
``rules.py``; loading checks every reference, so a quest cannot name an object, NPC, area or stage
that does not exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from odyssey_env.content import Connection
from odyssey_env.schema import Problem

if TYPE_CHECKING:
    from odyssey_env.game import Game


@dataclass(frozen=True)
class Condition:
    """One node of a condition tree; which fields matter depends on ``type`` (docs/quests.md)."""

    type: str
    object: str | None = None
    objects: tuple[str, ...] = ()
    npc: str | None = None
    npcs: tuple[str, ...] = ()
    area: str | None = None
    areas: tuple[str, ...] = ()
    category: str | None = None
    count: int = 1
    text: str | None = None
    stage: str | None = None
    name: str | None = None  # predicate name
    args: dict[str, Any] = field(default_factory=dict)
    conditions: tuple[Condition, ...] = ()
    #: ``predicate`` only: a sequence of vocabulary conditions that, done in order, makes the predicate
    #: hold. The oracle follows it (it cannot read a predicate's code), so a game's own predicates stay
    #: plannable and its quests provably solvable.
    plan: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class Spawn:
    """An NPC placed in an area (bosses when a stage opens, tutorial sparring partners)."""

    npc: str
    area: str


@dataclass(frozen=True)
class Placement:
    """Objects placed in an area."""

    object: str
    area: str
    amount: int = 1


@dataclass(frozen=True)
class Stage:
    """One step of the main quest. Linear chapters need no ``requires``: each stage follows the previous."""

    id: str
    title: str
    hint: str
    done: Condition
    requires: tuple[str, ...] | None = None  # None: the previous stage (the last of the previous chapter)
    spawn: tuple[Spawn, ...] = ()  # introduced when the stage opens
    place: tuple[Placement, ...] = ()
    on_open: str = ""
    on_complete: str = ""


@dataclass(frozen=True)
class Chapter:
    id: str
    title: str
    stages: tuple[Stage, ...]
    intro: str = ""


@dataclass(frozen=True)
class Guide:
    """The NPC who gives the current stage's hint when talked to."""

    npc: str
    area: str | None = None  # None: the spawn area


@dataclass(frozen=True)
class MainQuest:
    title: str
    chapters: tuple[Chapter, ...]
    intro: str = ""
    outro: str = "I have completed the main quest."
    guide: Guide | None = None


@dataclass(frozen=True)
class SideQuests:
    """Seeded side quests that each newly explored area may unlock (collect, talk, craft, trade)."""

    enabled: bool = True
    kinds: tuple[str, ...] = ("collect", "talk", "craft", "trade")
    unlock_after: int = 2  # areas explored (besides the spawn) before side quests begin
    reward: tuple[int, int] = (1, 6)  # coins
    collect_amount: tuple[int, int] = (1, 3)


@dataclass(frozen=True)
class TutorialStep:
    id: str
    say: str
    done: Condition
    place: dict[str, int] = field(default_factory=dict)  # objects put in the first room when the step begins
    npcs: tuple[str, ...] = ()  # NPC types put in the first room when the step begins


@dataclass(frozen=True)
class TutorialRoom:
    name: str
    description: str


@dataclass(frozen=True)
class Tutorial:
    """An isolated set of rooms with a gated sequence of steps; removed when finished (paper A3.4)."""

    rooms: tuple[TutorialRoom, ...]
    steps: tuple[TutorialStep, ...]
    links: tuple[Connection, ...] = ()
    intro: str = ""
    outro: str = "The tutorial is over. The real journey begins."
    max_steps: int = 150  # the tutorial ends by itself after this many steps


@dataclass(frozen=True)
class Expansion:
    """Online expansion: once every reachable area is explored, new places appear."""

    enabled: bool = False
    max_expansions: int = 2
    places: tuple[int, int] = (1, 2)
    areas_per_place: tuple[int, int] = (2, 3)


@dataclass(frozen=True)
class QuestSpec:
    """Everything in ``quest.json``. Every part is optional."""

    main: MainQuest | None = None
    side_quests: SideQuests = field(default_factory=lambda: SideQuests(enabled=False))
    tutorial: Tutorial | None = None
    expansion: Expansion = field(default_factory=Expansion)

    def stages(self) -> list[Stage]:
        return [s for ch in self.main.chapters for s in ch.stages] if self.main else []


# ----------------------------------------------------------------------------- checks
def check_quest(game: Game) -> list[Problem]:
    """Every reference in quest.json must resolve, and the stage graph must be acyclic and complete."""
    from odyssey_env.quests.conditions import check_condition

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
            from odyssey_env.quests.main_quest import plan

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
        t = q.tutorial
        rooms = tuple(r.name for r in t.rooms)
        if not rooms:
            bad("tutorial.rooms", "the tutorial needs at least one room")
        for i, r in enumerate(t.rooms):
            if r.name in game.areas or r.name in game.objects or r.name in game.npcs:
                bad(f"tutorial.rooms[{i}].name", f"{r.name!r} is already a name in the world")
        for i, link in enumerate(t.links):
            for end in (link.a, link.b):
                if end not in rooms:
                    bad(f"tutorial.links[{i}]", f"{end!r} is not a tutorial room")
            if link.key is not None and link.key not in game.objects:
                bad(f"tutorial.links[{i}].key", f"unknown object {link.key!r}")
        if not t.steps:
            bad("tutorial.steps", "the tutorial needs at least one step")
        for i, s in enumerate(t.steps):
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
    out += _check_bounds(game)
    return out


def _check_bounds(game: Game) -> list[Problem]:
    """Numbers a playable quest never needs (the limits of odyssey_env.game): each names its field."""
    from odyssey_env.game import MAX_AREAS, MAX_INSTANCES, MAX_STAT

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
        within("tutorial.max_steps", q.tutorial.max_steps, 1, 10_000)
        for i, step in enumerate(q.tutorial.steps):
            for obj, n in step.place.items():
                amount(f"tutorial.steps[{i}].place.{obj}", obj, n)
            within(f"tutorial.steps[{i}].npcs", len(step.npcs), 0, MAX_INSTANCES)
    sq = q.side_quests
    within("side_quests.unlock_after", sq.unlock_after, 0, MAX_AREAS)
    span("side_quests.reward", sq.reward, 0, MAX_STAT)
    span("side_quests.collect_amount", sq.collect_amount, 1, MAX_INSTANCES)
    ex = q.expansion
    within("expansion.max_expansions", ex.max_expansions, 0, 100)
    span("expansion.places", ex.places, 1, 10)
    span("expansion.areas_per_place", ex.areas_per_place, 1, 20)
    return out


def _walk(cond: Condition):
    yield cond
    for c in cond.conditions:
        yield from _walk(c)


def quest_summary(quest: QuestSpec) -> dict[str, Any]:
    m = quest.main
    return {
        "quest": m.title if m else None,
        "chapters": len(m.chapters) if m else 0,
        "stages": len(quest.stages()),
        "leaves": len(leaf_stages(m)) if m else 0,
        "dag": _is_dag(m),
        "side_quests": quest.side_quests.enabled,
        "side_quest_kinds": list(quest.side_quests.kinds) if quest.side_quests.enabled else [],
        "tutorial_steps": len(quest.tutorial.steps) if quest.tutorial else 0,
        "expansion": quest.expansion.enabled,
    }


def _requires(m: MainQuest) -> Iterator[tuple[Chapter, Stage, tuple[str, ...]]]:
    """Every stage with the stages it requires (a stage without ``requires`` follows the previous one)."""
    previous: str | None = None
    for ch in m.chapters:
        for st in ch.stages:
            yield ch, st, st.requires if st.requires is not None else ((previous,) if previous else ())
            previous = st.id


def _is_dag(m: MainQuest | None) -> bool:
    """Whether some stage opens on other prerequisites than the one stage before it (a goal tree)."""
    if m is None:
        return False
    order = [st.id for ch in m.chapters for st in ch.stages]
    return any(req != ((order[i - 1],) if i else ()) for i, (_, _, req) in enumerate(_requires(m)))


def leaf_stages(main: MainQuest) -> list[str]:
    """Stages that need no other stage of their own chapter: the leaves of each chapter's goal tree,
    the tasks its later stages are built on (a linear chapter has one, its first stage)."""
    return [st.id for ch, st, requires in _requires(main) if not {s.id for s in ch.stages}.intersection(requires)]
