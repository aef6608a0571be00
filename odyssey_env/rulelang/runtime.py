"""What interpreted rules read and keep while an episode runs: the context of one firing, the variables,
the delayed effects, and the templates.

Compiled rules hold no episode state; everything they keep lives in ``state.rule_data["rulelang"]``
(JSON-ready, so saving, loading and determinism across processes need nothing new):

* ``vars``: variable -> scope key (``"*"``, an agent id, an area name, an object handle, a way ``"a|b"``,
  an agent and a held thing ``"<agent>/<handle>"``)
  -> value (bool, int, or a list for a set);
* ``timers``: ``[due step, timer id, agent id or null, area, bindings]`` of delayed effects, oldest first;
* ``spawned``: spawn effect id -> handles of the NPCs it made that may still live;
* ``was``: step rule -> scope keys for which its ``becomes`` condition held last step.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from odyssey_env.verbs.common import carried_handles
from odyssey_env.world import carried_count, held_containers, type_of

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.state import Agent

KEY = "rulelang"
#: Delayed effects waiting at once (a new one past this is dropped, deterministically).
MAX_TIMERS = 256
#: The most a count read from a reference, or a tally's count, may be.
MAX_COUNT = 1_000_000
#: Keys one per-object or per-exit variable may hold at once (a new key past this is not written).
MAX_KEYS = 10_000
_TEMPLATE = re.compile(r"\{([^{}]*)\}")


#: A firing's notes before its first ``note`` (shared, never changed: most firings take none).
NO_NOTES: list[Any] = []


class Ctx:
    """One firing of a rule: who acts (``agent``, may be None in a step rule about areas or NPCs), where
    (``here``), and what it is about (``b``: slot values, ``npc``, ``object``, ``event``); ``received`` is
    where the firing's last ``produce`` put things (the ``{received}`` of a template), ``salvaged`` what its
    last ``salvage`` made (``{salvaged}``), ``spawned`` the NPC its last ``spawn_npc`` made (``{spawned}``)."""

    __slots__ = ("agent", "b", "engine", "here", "notes", "received", "removed", "salvaged", "spawned", "turn")

    def __init__(self, engine: Engine, agent: Agent | None, here: str, b: dict[str, Any], turn: Any = None):
        self.engine = engine
        self.agent = agent
        self.here = here
        self.b = b
        self.turn = turn
        self.received = ""
        self.salvaged = ""
        self.spawned = ""
        #: the parts a ``note`` took (``{notes}``): a list once one is taken; a named list's as (list, part)
        self.notes: list[Any] = NO_NOTES
        self.removed = 0  # what the firing's last remove took off the ground (``$removed``, ``{removed}``)


def rebind(ctx: Ctx, here: str, key: str, value: Any) -> Ctx:
    """``ctx`` made ready for the next item of a loop, as a fresh context would be: a loop that hands its
    items out one by one, each finished with before the next is asked for, reuses one context (a fresh one
    per item was most of the cost of a rule over many areas, NPCs or things; a delayed effect copies what
    it keeps, :func:`bindings_for_timer`)."""
    ctx.here, ctx.removed, ctx.notes, ctx.received, ctx.salvaged, ctx.spawned = here, 0, NO_NOTES, "", "", ""
    ctx.b[key] = value
    return ctx


def within(ctx: Ctx, key: str, value: Any) -> Ctx:
    """A context inside ``ctx``'s firing with one more binding: its notes are the firing's, so that what it
    notes lands in the firing's one line."""
    sub = Ctx(ctx.engine, ctx.agent, ctx.here, {**ctx.b, key: value}, ctx.turn)
    if ctx.notes is NO_NOTES:
        ctx.notes = []
    sub.notes = ctx.notes
    return sub


def data(engine: Engine) -> dict[str, Any]:
    """The language's memory in this episode (made on first use: a loaded state brings its own)."""
    rd = engine.state.rule_data
    mine = rd.get(KEY)
    if mine is None:
        mine = rd[KEY] = {"vars": {}, "timers": [], "spawned": {}, "was": {}}
    return mine


# ---------------------------------------------------------------------------- references
Getter = Callable[[Ctx], Any]


def getter(ref: str) -> Getter:
    """A function reading the value ``ref`` names: a literal, ``$here``, ``$<binding>``, ``$event.<field>``."""
    if not ref.startswith("$"):
        return lambda ctx: ref
    name = ref[1:]
    if name == "here":
        return lambda ctx: ctx.here
    if name == "removed":
        return lambda ctx: ctx.removed
    if name == "spawned":
        return lambda ctx: ctx.spawned
    if name.startswith("event."):
        field = name[6:]
        return lambda ctx: ctx.b["event"].get(field)
    if name.endswith(".type"):
        return _kind_of(name[:-5])
    if name.endswith(".stance"):
        return _stance_of(name[:-7])
    return lambda ctx: ctx.b.get(name)


def _stance_of(name: str) -> Getter:
    """``$<npc>.stance``: what an enemy will do next ("attack", "defend", "wait"; its pattern's next move, as
    combat reads it), None for a peaceful NPC or one gone (``{<npc>.stance}``: empty)."""
    from odyssey_env.verbs.combat import stance

    def read(ctx: Ctx) -> Any:
        value = ctx.b.get(name)
        npc = ctx.engine.state.npcs.get(value) if isinstance(value, str) else None
        if npc is None or not ctx.engine.game.npcs[npc.type].hostile:
            return None
        return stance(ctx.engine, npc)

    return read


def _npc_coins(binding: str) -> Getter:
    """``{<npc>.coins}``: the coins an NPC carries (0 once it is gone)."""

    def read(ctx: Ctx) -> int:
        value = ctx.b.get(binding)
        npc = ctx.engine.state.npcs.get(value) if isinstance(value, str) else None
        return npc.coins if npc is not None else 0

    return read


def npc_kinds_in(binding: str) -> Callable[[Ctx], dict[str, int]]:
    """``{<area>.npc_kinds}``: the NPCs in an area counted by kind, in the order each kind first stands there
    (as an event datum of its own, the count by kind: ``{"glass_stalker": 2}``)."""
    where = getter("$" + binding)

    def counted(ctx: Ctx) -> dict[str, int]:
        area = where(ctx)
        found = ctx.engine.state.areas.get(area) if isinstance(area, str) else None
        kinds: dict[str, int] = {}
        if found is not None:
            npcs = ctx.engine.state.npcs
            for h in found.npcs:
                t = npcs[h].type
                kinds[t] = kinds.get(t, 0) + 1
        return kinds

    return counted


def _kinds_text(counted: Callable[[Ctx], dict[str, int]]) -> Getter:
    return lambda ctx: ", ".join(f"{n} {t}" for t, n in counted(ctx).items())


#: How ``{notes...}`` joins its parts.
_JOINS = {"": "; ", "comma": ", ", "space": " ", "and": " and "}


def notes_text(name: str) -> Getter:
    """``{notes}`` (``.comma``, ``.space``, ``.and``): the parts this firing's notes took, joined; and
    ``{notes.<list>}`` (with a join after it): those of a named list, which the firing's notes keep as
    ``(list, part)`` pairs beside its own parts, so that they are shared wherever the notes are."""
    parts = name.split(".")[1:]
    if not parts or parts[0] in _JOINS:
        joiner = _JOINS[parts[0] if parts else ""]
        return lambda ctx: joiner.join([n for n in ctx.notes if n.__class__ is str])
    listed, joiner = parts[0], _JOINS[parts[1] if len(parts) > 1 else ""]
    return lambda ctx: joiner.join([n[1] for n in ctx.notes if n.__class__ is tuple and n[0] == listed])


def _kind_of(name: str) -> Getter:
    """``$<slot>.type``: the type of the NPC or object a binding names (None once it is gone)."""

    def read(ctx: Ctx) -> Any:
        value = ctx.b.get(name)
        if not isinstance(value, str):
            return None
        state = ctx.engine.state
        npc = state.npcs.get(value)
        return npc.type if npc is not None else type_of(state, value)

    return read


def type_getter(ref: str) -> Getter:
    """Like :func:`getter` for an object: the object *type* (a slot holds a handle such as ``bag_0``)."""
    if not ref.startswith("$"):
        return lambda ctx: ref
    raw = getter(ref)

    def read(ctx: Ctx) -> Any:
        value = raw(ctx)
        if not isinstance(value, str):
            return None
        return type_of(ctx.engine.state, value)

    return read


# ---------------------------------------------------------------------------- templates
def template(text: str, var_reader: Callable[[str], Getter]) -> Callable[[Ctx], str]:
    """A function filling ``text``'s ``{...}`` from a context (names were checked at load time)."""
    parts: list[str | Getter] = []
    pos = 0
    for m in _TEMPLATE.finditer(text):
        if m.start() > pos:
            parts.append(text[pos : m.start()])
        name = m.group(1)
        if name == "step":
            parts.append(lambda ctx: ctx.engine.state.step)
        elif name == "received":
            parts.append(lambda ctx: ctx.received)
        elif name == "salvaged":
            parts.append(lambda ctx: ctx.salvaged)
        elif name.startswith("var."):
            parts.append(var_reader(name[4:]))
        elif name.startswith(("wield.", "param.")):  # the rule's wield or params, which the reader knows ("#")
            parts.append(var_reader("#" + name))
        elif name == "stations":
            parts.append(stations_here)
        elif name == "removed":
            parts.append(lambda ctx: ctx.removed)
        elif name.startswith("tally."):
            parts.append(tally_text(var_reader(name[6:])))
        elif name == "agent.foe":
            parts.append(foe)
        elif name == "notes" or name.startswith("notes."):
            parts.append(notes_text(name))
        elif name == "currency":
            parts.append(lambda ctx: ctx.engine.game.currency or "coins")
        elif name.endswith(".says"):
            parts.append(says(name[:-5]))
        elif name.endswith(".npcs"):
            parts.append(_joined(npcs_in(name[:-5])))
        elif name.endswith(".npc_kinds"):
            parts.append(_kinds_text(npc_kinds_in(name[: -len(".npc_kinds")])))
        elif name.endswith(".stance"):
            parts.append(getter("$" + name))
        elif name.endswith(".coins"):
            parts.append(_npc_coins(name[: -len(".coins")]))
        elif name.startswith("carried.") and not name.endswith(".type"):  # {<slot>.type} of a slot "carried"
            parts.append(_carried(name[8:]))
        else:
            parts.append(getter("$" + name))
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
    if not any(callable(p) for p in parts):
        return lambda ctx: text
    if len(parts) == 1:
        only = parts[0]
        assert not isinstance(only, str), "a one-part template with a field is that field"
        return lambda ctx: _text(only(ctx))
    # filled by position into a copy of the parts: no generator, and a text field (the usual one) as it is
    fields = tuple((i, p) for i, p in enumerate(parts) if not isinstance(p, str))
    if len(parts) == 2:
        first, second = parts
        if isinstance(first, str):
            assert not isinstance(second, str), "two texts in a row are one"
            return lambda ctx: first + (v if (v := second(ctx)).__class__ is str else _text(v))
        if isinstance(second, str):
            return lambda ctx: (v if (v := first(ctx)).__class__ is str else _text(v)) + second

    def fill(ctx: Ctx) -> str:
        out = parts[:]
        for i, read in fields:
            v = read(ctx)
            out[i] = v if v.__class__ is str else _text(v)
        return "".join(out)  # type: ignore[arg-type]

    return fill


def constant(text: str) -> str | None:
    """``text`` itself when it has no ``{...}`` to fill (the line is the same at every firing), else None."""
    return None if _TEMPLATE.search(text) else text


def binding(ref: str) -> str | None:
    """The name of the plain binding ``ref`` reads (``$npc``: ``"npc"``, what :func:`getter` reads as
    ``ctx.b.get(name)``), else None (a literal, ``$here``, an event field, a type...)."""
    if not ref.startswith("$"):
        return None
    name = ref[1:]
    if name in ("here", "removed", "spawned") or name.startswith("event.") or name.endswith(".type"):
        return None
    return name


def stations_here(ctx: Ctx) -> str:
    """``{stations}``: the stations lying here, in the order they lie, joined with "and" (empty: none)."""
    engine = ctx.engine
    area = engine.state.areas.get(ctx.here)
    if area is None:
        return ""
    objects = engine.game.objects
    return " and ".join(h for h in area.objects if h in objects and objects[h].category == "station")


# ---------------------------------------------------------------------------- tallies (Mirror Salt's salt_sink)
def tally_text(read: Getter) -> Getter:
    """``{tally.<name>}`` from the variable's reader: the tally here (or the agent's, or the world's) as
    "2 rock_salt, 1 glass_knife", in the order the names came (empty: nothing counted)."""
    return lambda ctx: ", ".join(f"{n} {item}" for item, n in (read(ctx) or {}).items())


def add_to_tally(engine: Engine, name: str, key: str | None, item: Any, n: int, most: int) -> None:
    """Count ``n`` more of ``item`` in a tally (at most ``most`` names per key; a new one past that is not
    counted, an old one still is; each count stays within ``MAX_COUNT``)."""
    if key is None or not isinstance(item, str) or not item or n <= 0:
        return
    counts = data(engine)["vars"].setdefault(name, {}).setdefault(key, {})
    if item in counts or len(counts) < most:
        counts[item] = min(MAX_COUNT, counts.get(item, 0) + n)


def amount_of(value: Any) -> int:
    """A count read from a reference (an event's amount, ``$removed``): a whole number within 0..MAX_COUNT."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(0, min(MAX_COUNT, value))


def foe(ctx: Ctx) -> str | None:
    """``{agent.foe}``: the enemy here fighting the agent (None: nobody)."""
    agent = ctx.agent
    if agent is None or agent.combat is None:
        return None
    state = ctx.engine.state
    for h in state.areas[agent.area].npcs:
        if state.npcs[h].engaged == agent.id:
            return h
    return None


def says(binding: str) -> Getter:
    """``{<npc>.says}``: the line the NPC's kind says at this step (its dialogue, one line a step in turn;
    empty when it has none or is gone)."""

    def line(ctx: Ctx) -> str:
        handle = ctx.b.get(binding)
        npc = ctx.engine.state.npcs.get(handle) if isinstance(handle, str) else None
        if npc is None:
            return ""
        dialogue = ctx.engine.game.npcs[npc.type].dialogue
        return dialogue[ctx.engine.state.step % len(dialogue)] if dialogue else ""

    return line


def npcs_in(binding: str) -> Callable[[Ctx], list[str]]:
    """``{<area>.npcs}``: the handles of the NPCs in an area, as they stand."""
    where = getter("$" + binding)

    def listed(ctx: Ctx) -> list[str]:
        area = where(ctx)
        found = ctx.engine.state.areas.get(area) if isinstance(area, str) else None
        return list(found.npcs) if found is not None else []

    return listed


def _joined(listed: Callable[[Ctx], list[str]]) -> Getter:
    return lambda ctx: ", ".join(listed(ctx))


def _carried(kind: str) -> Getter:
    """``{carried.<object>}``: units of an object type the agent carries (hands, held bags, pack)."""
    return lambda ctx: carried_of(ctx, kind)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | str):
        return str(value)
    return str(value)[:200]


def value_of(text: str, var_reader: Callable[[str], Getter]) -> Getter:
    """A value written as a ``$reference`` or as a template (sets, ``same``)."""
    return getter(text) if text.startswith("$") else template(text, var_reader)


# ---------------------------------------------------------------------------- variables
def way_key(a: str, b: str) -> str:
    """The key of the way between two areas, the same from either side."""
    return f"{a}|{b}" if a < b else f"{b}|{a}"


def keyer(scope: str, of: str | None) -> Callable[[Ctx], str | None]:
    """The scope key a variable's condition or effect means, compiled once: ``"*"``, the agent's id, the
    area, or, for a per-object / per-exit variable, the object ``of`` names / the way from here to the area
    ``of`` names, for a per-held one the agent and the thing ``of`` names (``"<agent>/<handle>"``) (None when
    there is none: a read gives the default, a write does nothing)."""
    if scope == "global":
        return lambda ctx: "*"
    if scope == "area":
        return lambda ctx: ctx.here
    if scope == "agent":
        return lambda ctx: ctx.agent.id if ctx.agent is not None else None
    read = getter(of or "")
    if scope == "held":

        def of_held(ctx: Ctx) -> str | None:
            value = read(ctx)
            agent = ctx.agent
            return f"{agent.id}/{value}" if agent is not None and isinstance(value, str) and value else None

        return of_held
    if scope == "object":

        def of_object(ctx: Ctx) -> str | None:
            value = read(ctx)
            return value if isinstance(value, str) and value else None

        return of_object

    def of_exit(ctx: Ctx) -> str | None:
        other = read(ctx)
        return way_key(ctx.here, other) if isinstance(other, str) and other and other != ctx.here else None

    return of_exit


def read_var(engine: Engine, name: str, key: str | None, default: Any) -> Any:
    if key is None:
        return default
    mine = engine.state.rule_data.get(KEY)  # never made here: listing valid actions must change nothing
    table = mine["vars"].get(name) if mine is not None else None
    if table is None:
        return default
    return table.get(key, default)


def write_var(engine: Engine, name: str, key: str | None, value: Any, default: Any = None) -> None:
    """Set one value; with a ``default`` (per-object and per-exit variables), a value equal to it is dropped
    from the table instead, and a new key past :data:`MAX_KEYS` is not written."""
    if key is None:
        return
    table = data(engine)["vars"].setdefault(name, {})
    if default is None:
        table[key] = value
    elif value == default:
        table.pop(key, None)
    elif key in table or len(table) < MAX_KEYS:
        table[key] = value


def bindings_for_timer(ctx: Ctx) -> dict[str, Any]:
    """What a delayed effect keeps of its context: plain values only (an event's scalar fields)."""
    out: dict[str, Any] = {}
    for k, v in ctx.b.items():
        if k == "event":
            out[k] = {f: x for f, x in v.items() if isinstance(x, str | int | float | bool) or x is None}
        elif isinstance(v, str | int | float | bool) or v is None:
            out[k] = v
    return out


def carried_of(ctx: Ctx, kind: str | None) -> int:
    """Units of an object type in the agent's hands and held containers (what consume takes from)."""
    agent = ctx.agent
    if agent is None or kind is None:
        return 0
    engine = ctx.engine
    state, game = engine.state, engine.game
    turn = ctx.turn
    if turn is not None and turn.memo is not None and turn.agent is agent:
        # a listing: what is carried was counted once for every verb (odyssey_env.verbs.common)
        carried = carried_handles(turn)
        t = game.objects.get(kind)
        if t is not None and t.instanced:
            return sum(1 for h in carried if type_of(state, h) == kind)
        return carried.get(kind, 0)
    if kind in game.objects and game.objects[kind].instanced:
        n = sum(1 for h in agent.hands if type_of(state, h) == kind)
        for c in held_containers(game, state, agent):
            n += sum(1 for h in state.instances[c].contents if type_of(state, h) == kind)
        return n
    return carried_count(game, state, agent, kind)
