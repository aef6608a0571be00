"""The closed vocabulary of quest conditions, with their argument checks and their tests.

Two families (paper §3.2, A3.2):

* **event** conditions hold on the step an event happens (``npc_defeated``, ``object_crafted``...).
  A stage only listens while it is open, so nothing done before its prerequisites counts for it.
* **state** conditions hold while the world is in some state (``in_area``, ``has_item_count``...).

``any_of`` / ``all_of`` combine conditions, and ``predicate`` calls a function a game registered with
:func:`odyssey_env.rules.predicate`. Adding a type here is the only way to extend the vocabulary, so
quest generators, the oracle and the docs all see the same list (:data:`VOCABULARY`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, get_args

from odyssey_env.content import Category
from odyssey_env.quests.spec import Condition
from odyssey_env.schema import Problem
from odyssey_env.weakcache import IdentityCache
from odyssey_env.world import held_containers, type_of

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent

Test = Callable[["Engine", "Agent", Condition], bool]
CATEGORIES = frozenset(get_args(Category))
#: How a condition holds: on the step of an event, while the state says so, through other conditions, or by a
#: game's own predicate.
Family = Literal["event", "state", "combinator", "predicate"]


@dataclass(frozen=True)
class ConditionType:
    name: str
    family: Family
    required: tuple[str, ...]
    optional: tuple[str, ...]
    doc: str
    test: Test


VOCABULARY: dict[str, ConditionType] = {}


def _register(
    name: str, family: Family, required: tuple[str, ...] = (), optional: tuple[str, ...] = (), doc: str = ""
) -> Callable[[Test], Test]:
    def add(test: Test) -> Test:
        VOCABULARY[name] = ConditionType(name, family, required, optional, doc, test)
        return test

    return add


def holds(engine: Engine, agent: Agent, cond: Condition) -> bool:
    """Whether ``cond`` holds for ``agent`` now (events: during the current step)."""
    hit = _triggers.entries.get(id(cond))  # triggers(), its cache read inline: quests ask at every step
    wanted = hit[1] if hit is not None else _triggers(cond)
    if wanted is not None and wanted.isdisjoint(engine.kinds):
        return False  # an event condition cannot hold on a step without its event
    return VOCABULARY[cond.type].test(engine, agent, cond)


def triggers(cond: Condition) -> frozenset[str] | None:
    """Event kinds without which ``cond`` cannot hold, or None when some state could make it hold
    (worked out once per condition object)."""
    return _triggers(cond)


def _find_triggers(cond: Condition) -> frozenset[str] | None:
    family = VOCABULARY[cond.type].family
    result: frozenset[str] | None = None
    if family == "event":
        result = frozenset({cond.type})  # event condition types are named after their event
    elif cond.type == "any_of":
        parts = [triggers(c) for c in cond.conditions]
        known = [p for p in parts if p is not None]
        result = frozenset().union(*known) if len(known) == len(parts) else None
    elif cond.type == "all_of":
        result = next((t for t in map(triggers, cond.conditions) if t is not None), None)
    return result


_triggers: IdentityCache[Condition, frozenset[str] | None] = IdentityCache(_find_triggers)


def normalize_text(text: str) -> str:
    return " ".join(text.lower().split())


def _events(engine: Engine, agent: Agent, kind: str) -> Iterator[dict[str, Any]]:
    for ev in engine.events:
        if ev.kind == kind and ev.agent == agent.id:
            yield ev.data


# ----------------------------------------------------------------------------- counting helpers
def owned(engine: Engine, agent: Agent, type_name: str) -> int:
    """Units of an object type the agent has: in hands, in its containers, or worn."""
    # type_of and held_containers inlined, one pass over the hands: quests ask this at every step
    instances = engine.state.instances
    get, objects = instances.get, engine.game.objects
    n = 0
    for handle, k in agent.hands.items():
        inst = get(handle)
        if inst is None:
            if handle == type_name:
                n += k
            continue
        if inst.type == type_name:
            n += k
        if objects[inst.type].category == "container":
            n += _owned_in(instances, inst.contents, type_name)
    equipment = agent.equipment
    pack = equipment.get("pack")
    if pack is not None:
        n += _owned_in(instances, instances[pack].contents, type_name)
    for handle in equipment.values():
        inst = get(handle)
        if (handle if inst is None else inst.type) == type_name:
            n += 1
    return n


def owned_counts(engine: Engine, agent: Agent) -> dict[str, int]:
    """Units of every object type the agent has, counted as :func:`owned` counts one type, in one pass
    (an ``any_of`` of many ``has_item_count``, a DAG quest's "arm yourself", asks them all at every step)."""
    instances = engine.state.instances
    get, objects = instances.get, engine.game.objects
    counts: dict[str, int] = {}
    for handle, k in agent.hands.items():
        inst = get(handle)
        if inst is None:
            counts[handle] = counts.get(handle, 0) + k
            continue
        kind = inst.type
        counts[kind] = counts.get(kind, 0) + k
        if objects[kind].category == "container":
            _count_in(instances, inst.contents, counts)
    equipment = agent.equipment
    pack = equipment.get("pack")
    if pack is not None:
        _count_in(instances, instances[pack].contents, counts)
    for handle in equipment.values():
        inst = get(handle)
        kind = handle if inst is None else inst.type
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def _count_in(instances: dict[str, Any], contents: dict[str, int], counts: dict[str, int]) -> None:
    for handle, k in contents.items():
        inst = instances.get(handle)
        kind = handle if inst is None else inst.type
        counts[kind] = counts.get(kind, 0) + k


def _owned_in(instances: dict[str, Any], contents: dict[str, int], type_name: str) -> int:
    n = 0
    for handle, k in contents.items():
        inst = instances.get(handle)
        if (handle if inst is None else inst.type) == type_name:
            n += k
    return n


def lying_in(engine: Engine, area: str, type_name: str) -> int:
    # type_of inlined, no generator: an open stage's object_in_area asks this at every step
    state = engine.state
    get = state.instances.get
    n = 0
    for handle, k in state.areas[area].objects.items():
        inst = get(handle)
        if (handle if inst is None else inst.type) == type_name:
            n += k
    return n


def written_handles(engine: Engine, agent: Agent, area: str | None) -> Iterable[str]:
    """Writables to look at for text conditions: those lying in ``area``, or those the agent carries."""
    state = engine.state
    if area is not None:
        yield from state.areas[area].objects if area in state.areas else ()
        return
    yield from agent.hands
    for c in held_containers(engine.game, state, agent):
        yield from state.instances[c].contents


# ----------------------------------------------------------------------------- events
@_register(
    "npc_defeated",
    "event",
    optional=("npc", "npcs"),
    doc="An NPC of type `npc` (or any of `npcs`; any NPC if neither) is defeated this step.",
)
def _npc_defeated(engine: Engine, agent: Agent, c: Condition) -> bool:
    wanted = (c.npc,) if c.npc else c.npcs
    return any(not wanted or d["type"] in wanted for d in _events(engine, agent, "npc_defeated"))


@_register("object_crafted", "event", ("object",), doc="The agent crafts `object` this step.")
def _object_crafted(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(d["object"] == c.object for d in _events(engine, agent, "object_crafted"))


@_register("object_bought", "event", ("object",), doc="The agent buys `object` this step.")
def _object_bought(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(d["object"] == c.object for d in _events(engine, agent, "object_bought"))


@_register("object_sold", "event", ("object",), doc="The agent sells `object` this step.")
def _object_sold(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(d["object"] == c.object for d in _events(engine, agent, "object_sold"))


@_register("area_entered", "event", ("area",), doc="The agent walks into `area` this step.")
def _area_entered(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(d["area"] == c.area for d in _events(engine, agent, "area_entered"))


@_register("talked_to", "event", ("npc",), doc="The agent talks to an NPC of type `npc` this step.")
def _talked_to(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(d["type"] == c.npc for d in _events(engine, agent, "talked_to"))


@_register(
    "text_written",
    "event",
    optional=("text", "object"),
    doc="The agent writes (optionally exactly `text`, on a writable of type `object`) this step.",
)
def _text_written(engine: Engine, agent: Agent, c: Condition) -> bool:
    for d in _events(engine, agent, "text_written"):
        if (c.text is None or normalize_text(d["text"]) == normalize_text(c.text)) and (
            c.object is None or d["object"] == c.object
        ):
            return True
    return False


@_register("object_eaten", "event", ("object",), doc="The agent eats `object` this step.")
def _object_eaten(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(d["object"] == c.object for d in _events(engine, agent, "object_eaten"))


@_register(
    "object_dropped", "event", ("object",), ("area",), doc="The agent drops `object` (optionally in `area`) this step."
)
def _object_dropped(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(
        d["object"] == c.object and (c.area is None or d["area"] == c.area)
        for d in _events(engine, agent, "object_dropped")
    )


# ----------------------------------------------------------------------------- states
@_register("in_area", "state", ("area",), doc="The agent is in `area`.")
def _in_area(engine: Engine, agent: Agent, c: Condition) -> bool:
    return agent.area == c.area


@_register(
    "has_item_count",
    "state",
    ("object",),
    ("count",),
    doc="The agent has at least `count` (default 1) of `object` in hands, containers or worn.",
)
def _has_item_count(engine: Engine, agent: Agent, c: Condition) -> bool:
    assert c.object is not None  # required: checked when the quest loads
    return owned(engine, agent, c.object) >= c.count


@_register("equipped_any_of", "state", ("objects",), doc="The agent wears one of `objects`.")
def _equipped_any_of(engine: Engine, agent: Agent, c: Condition) -> bool:
    return any(type_of(engine.state, h) in c.objects for h in agent.equipment.values())


@_register("holds_category", "state", ("category",), doc="The agent holds an object of `category` in a hand.")
def _holds_category(engine: Engine, agent: Agent, c: Condition) -> bool:
    objects, state = engine.game.objects, engine.state
    return any(objects[type_of(state, h)].category == c.category for h in agent.hands)


@_register(
    "visited_k_of",
    "state",
    (),
    ("areas", "count"),
    doc="The agent has explored at least `count` of `areas` (all world areas if empty).",
)
def _visited_k_of(engine: Engine, agent: Agent, c: Condition) -> bool:
    areas = c.areas or tuple(engine.game.areas)
    return sum(1 for a in areas if a in agent.visited) >= c.count


@_register(
    "defeated_n",
    "state",
    (),
    ("npc", "count"),
    doc="The agent has defeated at least `count` NPCs (of type `npc`, if given) in the episode.",
)
def _defeated_n(engine: Engine, agent: Agent, c: Condition) -> bool:
    if c.npc is None:
        return sum(agent.kills.values()) >= c.count
    return agent.kills.get(c.npc, 0) >= c.count


@_register(
    "text_equals_in",
    "state",
    ("text",),
    ("area", "object"),
    doc="A writable (of type `object`, if given) reading `text` lies in `area`, or is carried if no area.",
)
def _text_equals_in(engine: Engine, agent: Agent, c: Condition) -> bool:
    assert c.text is not None  # required: checked when the quest loads
    state = engine.state
    instances = state.instances
    if c.area is not None:  # written_handles' two cases inlined: quests ask this at every step
        area = state.areas.get(c.area)
        holdings = [area.objects] if area is not None else []
    else:
        holdings = [agent.hands]
        holdings += [instances[h].contents for h in held_containers(engine.game, state, agent)]
    want = None
    for holding in holdings:
        for handle in holding:
            inst = instances.get(handle)
            if inst is None or not inst.text:
                continue
            if want is None:
                want = _normalized(c)
            if normalize_text(inst.text) == want and (c.object is None or inst.type == c.object):
                return True
    return False


#: A text condition's text as :func:`normalize_text` makes it (once per condition).
_normalized: IdentityCache[Condition, str] = IdentityCache(lambda c: normalize_text(c.text or ""))


@_register(
    "object_in_area",
    "state",
    ("object", "area"),
    ("count",),
    doc="At least `count` of `object` lie on the ground of `area`.",
)
def _object_in_area(engine: Engine, agent: Agent, c: Condition) -> bool:
    assert c.area is not None and c.object is not None  # required: checked when the quest loads
    return c.area in engine.state.areas and lying_in(engine, c.area, c.object) >= c.count


@_register("level_at_least", "state", ("count",), doc="The agent's level is at least `count`.")
def _level_at_least(engine: Engine, agent: Agent, c: Condition) -> bool:
    return agent.level >= c.count


@_register("stage_completed", "state", ("stage",), doc="The agent has completed main-quest stage `stage`.")
def _stage_completed(engine: Engine, agent: Agent, c: Condition) -> bool:
    data = engine.state.rule_data.get("main_quest")
    if not data:
        return False
    return c.stage in data["agents"][agent.id]["done"]


# ----------------------------------------------------------------------------- combinators
@_register("any_of", "combinator", ("conditions",), doc="At least one of `conditions` holds.")
def _any_of(engine: Engine, agent: Agent, c: Condition) -> bool:
    hit = _item_counts.entries.get(id(c))  # the cache read inline: quests ask at every step
    wanted = hit[1] if hit is not None else _item_counts(c)
    if wanted is not None:  # only has_item_count: everything owned counted once, not once per part
        if wanted is _ALWAYS:
            return True
        for kind, k in owned_counts(engine, agent).items():  # what is owned: fewer than the parts, as a rule
            n = wanted.get(kind)
            if n is not None and k >= n:
                return True
        return False
    return any(holds(engine, agent, sub) for sub in c.conditions)


#: What :func:`_find_item_counts` gives for an ``any_of`` with a part that asks for no unit at all.
_ALWAYS: dict[str, int] = {}


def _find_item_counts(cond: Condition) -> dict[str, int] | None:
    """An ``any_of`` made of ``has_item_count`` parts only, as the fewest units of each object that make one
    hold (:data:`_ALWAYS` when a part asks for none); None for any other."""
    parts = cond.conditions
    if not parts or any(sub.type != "has_item_count" or sub.object is None for sub in parts):
        return None
    least: dict[str, int] = {}
    for sub in parts:
        if sub.count <= 0:
            return _ALWAYS
        assert sub.object is not None
        least[sub.object] = min(sub.count, least.get(sub.object, sub.count))
    return least


_item_counts: IdentityCache[Condition, dict[str, int] | None] = IdentityCache(_find_item_counts)


@_register("all_of", "combinator", ("conditions",), doc="All of `conditions` hold (events in the same step).")
def _all_of(engine: Engine, agent: Agent, c: Condition) -> bool:
    return all(holds(engine, agent, sub) for sub in c.conditions)


@_register(
    "predicate",
    "predicate",
    ("name",),
    ("args", "plan"),
    doc="The game's registered predicate `name(engine, agent, **args)` returns true; `plan` lists "
    "vocabulary conditions (or `did` events) that, done in order, make it hold.",
)
def _predicate(engine: Engine, agent: Agent, c: Condition) -> bool:
    assert c.name is not None  # required: checked when the quest loads
    return bool(engine.game.rules.predicates[c.name](engine, agent, **c.args))


# ----------------------------------------------------------------------------- checking
#: The fields a condition type must declare to be given: all but ``type`` and ``count`` (whose default is
#: 1, not empty, so it is checked on its own). Derived, so that a new field is checked from the start.
_FIELDS = tuple(f.name for f in fields(Condition) if f.name not in ("type", "count"))


def check_condition(
    game: Game, cond: Condition, file: str, path: str, extra_areas: tuple[str, ...] = ()
) -> list[Problem]:
    """Problems with one condition tree: unknown type, missing or stray fields, dangling references."""
    out: list[Problem] = []

    def bad(where: str, message: str) -> None:
        out.append(Problem(file, where, message))

    kind = VOCABULARY.get(cond.type)
    if kind is None:
        bad(f"{path}.type", f"unknown condition type {cond.type!r}; known: {', '.join(VOCABULARY)}")
        return out
    allowed = set(kind.required) | set(kind.optional)
    for f in _FIELDS:
        if getattr(cond, f) and f not in allowed:
            bad(f"{path}.{f}", f"not used by condition type {cond.type!r} (it takes {', '.join(sorted(allowed))})")
    if cond.count != 1 and "count" not in allowed:
        bad(f"{path}.count", f"not used by condition type {cond.type!r} (it takes {', '.join(sorted(allowed))})")
    for f in kind.required:
        if not getattr(cond, f) and getattr(cond, f) != 0:
            bad(f"{path}.{f}", f"condition type {cond.type!r} needs {f!r}")
    if not 1 <= cond.count <= 1_000_000:
        bad(f"{path}.count", "must lie between 1 and 1000000")
    for name in ((cond.object,) if cond.object else ()) + cond.objects:
        if name not in game.objects:
            bad(path, f"unknown object {name!r}")
    for name in ((cond.npc,) if cond.npc else ()) + cond.npcs:
        if name not in game.npcs:
            bad(path, f"unknown NPC {name!r}")
    for name in ((cond.area,) if cond.area else ()) + cond.areas:
        if name not in game.areas and name not in extra_areas:
            bad(path, f"unknown area {name!r}")
    if cond.category is not None and cond.category not in CATEGORIES:
        bad(f"{path}.category", f"unknown category {cond.category!r}")
    if cond.type == "predicate" and cond.name not in game.rules.predicates:
        known = ", ".join(sorted(game.rules.predicates)) or "none"
        bad(f"{path}.name", f"no predicate {cond.name!r} is registered by the game's rules.py (known: {known})")
    for i, sub in enumerate(cond.conditions):
        out += check_condition(game, sub, file, f"{path}.conditions[{i}]", extra_areas)
    for i, sub in enumerate(cond.plan):
        where = f"{path}.plan[{i}]"
        if sub.type == "predicate" and sub.name != "did":
            bad(
                f"{where}.type",
                "a plan is made of vocabulary conditions (and the engine's 'did'), not the game's own predicates",
            )
        else:
            out += check_condition(game, sub, file, where, extra_areas)
    return out


def describe_vocabulary() -> str:
    """A Markdown table of the vocabulary (used by docs and by generator prompts)."""
    rows = ["| type | family | fields | meaning |", "|---|---|---|---|"]
    for c in VOCABULARY.values():
        fields = ", ".join([*c.required, *(f"[{o}]" for o in c.optional)])
        rows.append(f"| `{c.name}` | {c.family} | {fields} | {c.doc} |")
    return "\n".join(rows)
