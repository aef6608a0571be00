"""Object provenance: which action produced each object unit, and which later action moved, used or
consumed it (the action-dependency graph of paper §3.2, Fig. 4).

Switched on per episode (``Engine(..., options={"provenance": True})``, ``OdysseyEnv(provenance=True)``,
``parallel_env(..., provenance=True)``, ``eval.dependency_graph=true`` in the runner); when it is off
nothing of this module runs: the engine steps exactly as it does without it.

How it works. Every unit of every object lies somewhere: on the ground of an area, in an agent's
hands, worn, in a container, or in an NPC's inventory. The tracker keeps, for every such place and
handle, a stack of *tokens*: the node (the action or rule application) that last touched each unit.
It wraps the engine's rules so that each action and each step-rule application is a *node*; after a
node ran it compares the holdings with what it saw before (a dict comparison per place, in C) and
reads what changed:

* units that left one place and arrived in another were **moved** by the node (edge last toucher ->
  node; the node becomes their last toucher);
* units that left and arrived nowhere were **consumed** (edge last toucher -> node);
* units that arrived from nowhere were **created** by the node (no edge; the node is their origin);
* units a node read without moving them were **used**: the weapon of an attack, the stations of a
  craft, the tool of a lockpick or of writing, the armor hit by an enemy (edge, toucher unchanged);
  the writable written on is **modified** (edge, and the writer becomes its last toucher).

So the pick-up of an ore, the craft that smelts it, the equip of the armor made from it and the
blows it takes are linked, however many steps apart. Node 0 is the world as generated.

Units of one handle in one place are interchangeable: the one that leaves first is the one that
came last (a stack), which is what "the last action that touched it" means for a pile of coins.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, cast

from odyssey_env.world import held_for

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.rules import ActionRule, RuleBook, StepRule
    from odyssey_env.turn import Turn

__all__ = ["FORMAT", "ProvenanceTracker", "edges_by_pair"]

FORMAT = 1
#: Where units can be: area ground, hands, worn (equipment), NPC inventory, inside an instance.
_KINDS = ("a", "h", "w", "n", "i")


class ProvenanceTracker:
    """Builds the dependency graph of one engine's episode; see the module docstring."""

    def __init__(self, engine: Engine, data: Mapping[str, Any] | None = None):
        self.engine = engine
        self.nodes: list[dict[str, Any]] = []
        self.edges: dict[tuple[int, int, str, str], int] = {}  # (src, dst, object type, how) -> units
        self.tokens: dict[tuple[str, str, str], list[list[int]]] = {}  # place -> [[node, units], ...]
        self.types: dict[str, str] = {}  # instance handle -> object type, kept after the instance is gone
        self._snap: dict[str, dict[str, dict[str, int]]] = {k: {} for k in _KINDS}
        self._node: dict[str, Any] | None = None
        self._event_mark = 0
        if data is None:
            self.nodes.append({"id": 0, "step": engine.state.step, "agent": None, "kind": "world", "name": "world"})
            self._sync(0, initial=True)
        else:
            self._load(data)
        engine.rules = _traced(engine.game.rules, self)

    # ------------------------------------------------------------------ nodes
    def begin(self, kind: str, name: str, agent: str | None, command: str | None = None) -> None:
        state = self.engine.state
        node: dict[str, Any] = {"id": len(self.nodes), "step": state.step, "agent": agent, "kind": kind, "name": name}
        if command is not None:
            node["command"] = command
        if agent is not None and agent in state.agents and state.agents[agent].in_tutorial:
            node["tutorial"] = True
        self._node = node
        self._event_mark = len(self.engine.events)

    def end(self) -> None:
        node, self._node = self._node, None
        assert node is not None, "end() without begin()"
        events = self.engine.events[self._event_mark :]
        if node["agent"] is None:  # a rule acting on one agent's behalf (death, an ambush...) names it
            agents = {e.agent for e in events if e.agent is not None}
            if len(agents) == 1:
                node["agent"] = aid = agents.pop()
                body = self.engine.state.agents.get(aid)
                if body is not None and body.in_tutorial:
                    node["tutorial"] = True
        nid = node["id"]
        touched = self._sync(nid)
        touched |= self._uses(nid, events)
        if touched:
            self.nodes.append(node)

    # ------------------------------------------------------------------ diffing
    def _places(self) -> Iterator[tuple[str, str, dict[str, int]]]:
        """Every place units can be, as ``(kind, name, {handle: units})``."""
        state = self.engine.state
        for name, area in state.areas.items():
            yield "a", name, area.objects
        for aid, agent in state.agents.items():
            yield "h", aid, agent.hands
            yield "w", aid, _worn(agent.equipment)
        for handle, npc in state.npcs.items():
            yield "n", handle, npc.inventory
        for handle, inst in state.instances.items():
            yield "i", handle, inst.contents

    def _sync(self, nid: int, initial: bool = False) -> bool:
        """Compare holdings with the last snapshot; turn the differences into tokens and edges.

        This runs after every action and every step rule, so the common case (nothing moved) is a
        dict comparison per place in tight loops, one per kind of place.
        """
        state, snap = self.engine.state, self._snap
        left: list[tuple[str, str, str, int]] = []
        arrived: list[tuple[str, str, str, int]] = []
        diff = self._diff
        snap_a, snap_h, snap_w, snap_n, snap_i = snap["a"], snap["h"], snap["w"], snap["n"], snap["i"]
        for name, area in state.areas.items():
            old = snap_a.get(name)
            if old is None or area.objects != old:
                diff("a", name, area.objects, old, left, arrived)
        for aid, agent in state.agents.items():
            old = snap_h.get(aid)
            if old is None or agent.hands != old:
                diff("h", aid, agent.hands, old, left, arrived)
            worn = agent.equipment
            old = snap_w.get(aid)
            if old is None or len(worn) != len(old) or any(h not in old for h in worn.values()):
                diff("w", aid, _worn(worn), old, left, arrived)
        for handle, npc in state.npcs.items():
            old = snap_n.get(handle)
            if old is None or npc.inventory != old:
                diff("n", handle, npc.inventory, old, left, arrived)
        for handle, inst in state.instances.items():
            old = snap_i.get(handle)
            if old is None or inst.contents != old:
                diff("i", handle, inst.contents, old, left, arrived)
        if (
            len(snap_a) != len(state.areas)
            or len(snap_h) != len(state.agents)
            or len(snap_n) != len(state.npcs)
            or len(snap_i) != len(state.instances)
        ):
            left.extend(self._gone_places())
        if not left and not arrived:
            return False
        if initial:
            for kind, loc, h, n in arrived:
                self._push((kind, loc, h), nid, n)
            return True
        # units leave first (their tokens say who touched them last), then arrive as moved or created
        leaving: dict[str, list[list[int]]] = {}
        for kind, loc, h, n in left:
            leaving.setdefault(h, []).extend(self._pop((kind, loc, h), n))
        for kind, loc, h, n in arrived:
            pool = leaving.get(h)
            k = n
            while pool and k:
                src, units = pool[-1]
                take = min(units, k)
                self._edge(src, nid, h, "move", take)
                if take == units:
                    pool.pop()
                else:
                    pool[-1][1] = units - take
                k -= take
            self._push((kind, loc, h), nid, n)
        for h, pool in leaving.items():
            for src, units in pool:
                self._edge(src, nid, h, "consume", units)
        return True

    def _diff(
        self,
        kind: str,
        loc: str,
        holding: dict[str, int],
        old: dict[str, int] | None,
        left: list[tuple[str, str, str, int]],
        arrived: list[tuple[str, str, str, int]],
    ) -> None:
        """Record how one place changed and take a new snapshot of it."""
        old = old or {}
        for h, n in holding.items():
            before = old.get(h, 0)
            if n > before:
                arrived.append((kind, loc, h, n - before))
            elif n < before:
                left.append((kind, loc, h, before - n))
        for h, before in old.items():
            if h not in holding:
                left.append((kind, loc, h, before))
        self._snap[kind][loc] = dict(holding)

    def _gone_places(self) -> list[tuple[str, str, str, int]]:
        """Places that no longer exist (a defeated NPC, a forgotten instance, a removed room)."""
        state = self.engine.state
        live: dict[str, Mapping[str, object]] = {
            "a": state.areas,
            "h": state.agents,
            "w": state.agents,
            "n": state.npcs,
            "i": state.instances,
        }
        out: list[tuple[str, str, str, int]] = []
        for kind, places in self._snap.items():
            for loc in [loc for loc in places if loc not in live[kind]]:
                out.extend((kind, loc, h, n) for h, n in places.pop(loc).items())
        return out

    # ------------------------------------------------------------------ tokens
    def _push(self, place: tuple[str, str, str], nid: int, n: int) -> None:
        handle = place[2]
        if handle not in self.types:
            inst = self.engine.state.instances.get(handle)
            if inst is not None:
                self.types[handle] = inst.type
        stack = self.tokens.setdefault(place, [])
        if stack and stack[-1][0] == nid:
            stack[-1][1] += n
        else:
            stack.append([nid, n])

    def _pop(self, place: tuple[str, str, str], n: int) -> list[list[int]]:
        """Take ``n`` units off a place's stack, last arrived first; returns ``[[node, units], ...]``."""
        stack = self.tokens.get(place)
        out: list[list[int]] = []
        while n and stack:
            nid, units = stack[-1]
            take = min(units, n)
            out.append([nid, take])
            if take == units:
                stack.pop()
            else:
                stack[-1][1] = units - take
            n -= take
        if n:  # units the tracker never saw arrive (cannot happen unless state was edited by hand)
            out.append([0, n])
        if stack is not None and not stack:
            del self.tokens[place]
        return out

    def _top(self, place: tuple[str, str, str]) -> int | None:
        stack = self.tokens.get(place)
        return stack[-1][0] if stack else None

    def _edge(self, src: int, dst: int, handle: str, how: str, units: int) -> None:
        if src == dst:
            return
        key = (src, dst, self._type(handle), how)
        self.edges[key] = self.edges.get(key, 0) + units

    def _type(self, handle: str) -> str:
        inst = self.engine.state.instances.get(handle)
        return inst.type if inst is not None else self.types.get(handle, handle)

    # ------------------------------------------------------------------ uses
    def _uses(self, nid: int, events: list[Any]) -> bool:
        """Edges for objects a node relied on without moving them (see the module docstring)."""
        if not events:
            return False
        engine = self.engine
        game, state = engine.game, engine.state
        used = False
        for ev in events:
            aid = ev.agent
            agent = state.agents.get(aid) if aid is not None else None
            if agent is None:
                continue
            kind = ev.kind
            if kind == "npc_attacked":
                weapon = _best_weapon(engine, agent.hands)
                used |= self._use(nid, ("h", aid, weapon)) if weapon else False
            elif kind == "object_crafted":
                recipe = game.objects[ev.data["object"]].recipe
                for station in recipe.stations if recipe else ():
                    used |= self._use(nid, ("a", ev.data["area"], station))
            elif kind == "text_written":
                tool = held_for(game, state, agent, "write")
                used |= self._use(nid, ("h", aid, tool)) if tool else False
                place = ("h", aid, ev.data["writable"])
                src = self._top(place)
                if src is not None and src != nid:
                    self._edge(src, nid, ev.data["writable"], "modify", 1)
                    self._pop(place, 1)
                    self._push(place, nid, 1)
                    used = True
            elif kind == "path_unlocked" and ev.data.get("by") == "lockpick":
                tool = held_for(game, state, agent, "lockpick")
                used |= self._use(nid, ("h", aid, tool)) if tool else False
            elif kind in ("agent_hit", "agent_ambushed"):
                for slot, handle in agent.equipment.items():
                    if slot != "pack" and game.objects[self._type(handle)].defense:
                        used |= self._use(nid, ("w", aid, handle))
        return used

    def _use(self, nid: int, place: tuple[str, str, str]) -> bool:
        src = self._top(place)
        if src is None or src == nid:
            return False
        self._edge(src, nid, place[2], "use", 1)
        return True

    # ------------------------------------------------------------------ export and persistence
    def graph(self, *, include_world: bool = True, include_tutorial: bool = False) -> dict[str, Any]:
        """The dependency graph as JSON-ready data: ``nodes`` (id, step, agent, kind, name, command?,
        tutorial?) and ``edges`` (src, dst, object, how, units), ordered by source then destination.

        Nodes with no edge left after filtering are dropped; ``include_world`` keeps the edges from the
        generated world (node 0); tutorial nodes are left out unless asked for.
        """
        keep = {
            n["id"]: n
            for n in self.nodes
            if (include_world or n["id"] != 0) and (include_tutorial or not n.get("tutorial"))
        }
        edges: list[dict[str, Any]] = [
            {"src": s, "dst": d, "object": o, "how": how, "units": u}
            for (s, d, o, how), u in sorted(self.edges.items())
            if s in keep and d in keep
        ]
        used = {e["src"] for e in edges} | {e["dst"] for e in edges}
        nodes = [keep[i] for i in sorted(used)]
        return {"format": FORMAT, "game": self.engine.game.name, "nodes": nodes, "edges": edges}

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to continue tracking after ``Engine.load_state`` (JSON-ready)."""
        return {
            "format": FORMAT,
            "nodes": [dict(n) for n in self.nodes],  # flat dicts of scalars
            "edges": [[s, d, o, how, u] for (s, d, o, how), u in self.edges.items()],
            "tokens": [[*place, [list(t) for t in stack]] for place, stack in self.tokens.items()],
            "types": dict(self.types),
        }

    def _load(self, data: Mapping[str, Any]) -> None:
        if data.get("format") != FORMAT:
            raise ValueError(f"unsupported provenance format {data.get('format')!r} (expected {FORMAT})")
        self.nodes = [dict(n) for n in data["nodes"]]
        self.edges = {(s, d, o, how): u for s, d, o, how, u in data["edges"]}
        self.tokens = {(k, loc, h): [list(t) for t in stack] for k, loc, h, stack in data["tokens"]}
        self.types = dict(data["types"])
        for kind, loc, holding in self._places():  # saved between steps: the snapshot is the state
            self._snap[kind][loc] = dict(holding)


def _worn(equipment: Mapping[str, str]) -> dict[str, int]:
    return {h: 1 for h in equipment.values()}


def _best_weapon(engine: Engine, hands: Mapping[str, int]) -> str | None:
    """The held object whose attack counts (as ``world.attack_of`` picks it)."""
    best, found = 0, None
    objects, instances = engine.game.objects, engine.state.instances
    for handle in hands:
        inst = instances.get(handle)
        a = objects[inst.type if inst is not None else handle].attack
        if a > best:
            best, found = a, handle
    return found


def edges_by_pair(graph: Mapping[str, Any]) -> dict[str, list[list[int]]]:
    """``{"pick up -> craft": [[src_step, dst_step], ...]}``: the graph grouped by (source, target) name."""
    names = {n["id"]: n for n in graph["nodes"]}
    out: dict[str, list[list[int]]] = {}
    for e in graph["edges"]:
        src, dst = names[e["src"]], names[e["dst"]]
        out.setdefault(f"{src['name']} -> {dst['name']}", []).append([src["step"], dst["step"]])
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------- rule wrappers
class _TracedAction:
    """An action rule whose ``apply`` is a node; everything else is the rule's own."""

    __slots__ = ("rule", "tracker")

    def __init__(self, rule: ActionRule, tracker: ProvenanceTracker):
        self.rule = rule
        self.tracker = tracker

    def apply(self, turn: Turn, *args: Any) -> None:
        rule = self.rule
        command = " ".join(
            [
                rule.verb,
                *(f'"{a}"' if kind == "text" else str(a) for a, (_, kind) in zip(args, rule.params, strict=False)),
            ]
        )
        self.tracker.begin("action", rule.verb, turn.agent.id, command)
        try:
            rule.apply(turn, *args)
        finally:
            self.tracker.end()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rule, name)


class _TracedStep:
    """A step rule whose ``apply`` is a node."""

    __slots__ = ("rule", "tracker")

    def __init__(self, rule: StepRule, tracker: ProvenanceTracker):
        self.rule = rule
        self.tracker = tracker

    def apply(self, engine: Engine) -> None:
        self.tracker.begin("rule", self.rule.name, None)
        try:
            self.rule.apply(engine)
        finally:
            self.tracker.end()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rule, name)


def _traced(rules: RuleBook, tracker: ProvenanceTracker) -> RuleBook:
    """A per-engine copy of a game's rule book whose rules report to ``tracker`` (the game's stays as is)."""
    traced = copy.copy(rules)
    # the proxies stand in for the rules they wrap: every other attribute is the rule's (__getattr__)
    traced.actions = cast(
        "dict[str, ActionRule]", {verb: _TracedAction(rule, tracker) for verb, rule in rules.actions.items()}
    )
    traced.steps = cast("list[StepRule]", [_TracedStep(rule, tracker) for rule in rules.steps])
    return traced
