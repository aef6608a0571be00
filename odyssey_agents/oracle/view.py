"""A read-only snapshot of the true world, indexed the way the oracle's planner asks questions.

The planner re-plans from scratch every step, so it asks the same questions many times per step
("where does iron_ore lie?", "how far is the furnace?", "how many coins do I carry?"). Building these
indexes once per step keeps a decision well under a millisecond on the shipped games. Every index is
built by iterating the state's dicts in insertion order, so the oracle is deterministic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from odyssey_env.world import breadth_first, container_room, type_of, unlocked

if TYPE_CHECKING:
    from odyssey_env.content import ObjectType
    from odyssey_env.engine import Engine
    from odyssey_env.state import Agent, Npc


class View:
    """The world as one agent's planner sees it at one step (it never changes anything)."""

    def __init__(self, engine: Engine, agent_id: str):
        self.engine = engine
        self.game = engine.game
        self.state = engine.state
        self.agent: Agent = engine.state.agents[agent_id]
        self.here: str = self.agent.area
        self.currency = self.game.currency
        self.verbs = engine.rules.actions
        self._dist: dict[str, dict[str, tuple[int, str]]] = {}
        self._ground: dict[str, list[tuple[str, str, int]]] | None = None
        self._boxed: dict[str, list[tuple[str, str, str, int]]] | None = None
        self._npcs: dict[str, list[Npc]] | None = None
        self._carried: dict[str, int] | None = None
        self._phantoms: dict[tuple[str, str], int] | None = None

    # ------------------------------------------------------------------ objects
    def otype(self, handle: str) -> ObjectType:
        return self.game.objects[type_of(self.state, handle)]

    def tname(self, handle: str) -> str:
        return type_of(self.state, handle)

    @property
    def phantoms(self) -> dict[tuple[str, str], int]:
        """``(area, handle)`` -> units lying there that are not real (mirages the game's rules report)."""
        if self._phantoms is None:
            out: dict[tuple[str, str], int] = {}
            for rule in self.engine.rules.steps:
                for area, handle, n in rule.phantoms(self.engine):
                    out[(area, handle)] = out.get((area, handle), 0) + n
            self._phantoms = out
        return self._phantoms

    def objects_at(self, area: str) -> dict[str, int]:
        """What really lies on the ground of ``area``: handle -> units, mirages left out."""
        objects = self.state.areas[area].objects
        fake = self.phantoms
        if not fake:
            return objects
        real = {h: n - fake.get((area, h), 0) for h, n in objects.items()}
        return {h: n for h, n in real.items() if n > 0}

    @property
    def ground(self) -> dict[str, list[tuple[str, str, int]]]:
        """Object type -> ``(area, handle, count)`` for everything really lying on the ground anywhere."""
        if self._ground is None:
            index: dict[str, list[tuple[str, str, int]]] = {}
            instances = self.state.instances
            for name in self.state.areas:
                for handle, n in self.objects_at(name).items():
                    inst = instances.get(handle)
                    index.setdefault(inst.type if inst is not None else handle, []).append((name, handle, n))
            self._ground = index
        return self._ground

    @property
    def boxed(self) -> dict[str, list[tuple[str, str, str, int]]]:
        """Object type -> ``(area, container, handle, count)`` for things inside containers on the ground."""
        if self._boxed is None:
            index: dict[str, list[tuple[str, str, str, int]]] = {}
            instances = self.state.instances
            for name in self.state.areas:
                for handle in self.objects_at(name):
                    inst = instances.get(handle)
                    if inst is None or not inst.contents:
                        continue
                    for inner, n in inst.contents.items():
                        index.setdefault(type_of(self.state, inner), []).append((name, handle, inner, n))
            self._boxed = index
        return self._boxed

    def lying(self, area: str, type_name: str) -> list[tuple[str, int]]:
        """``(handle, count)`` of a type on the ground of one area."""
        return [(h, n) for a, h, n in self.ground.get(type_name, ()) if a == area]

    def written(self, handle: str) -> bool:
        """Whether ``handle`` is a writable carrying text. One lying about is somebody's document (a note
        left as a quest asked, a posted notice): taking it as paper to write on would destroy it."""
        inst = self.state.instances.get(handle)
        return inst is not None and bool(inst.text)

    def lying_count(self, area: str, type_name: str) -> int:
        return sum(n for _, n in self.lying(area, type_name))

    # ------------------------------------------------------------------ the body
    @property
    def pack(self) -> str | None:
        return self.agent.equipment.get("pack")

    def containers(self) -> list[str]:
        """Containers I can store into or take out of: held ones, then the worn pack (engine order)."""
        out = [h for h in self.agent.hands if h in self.state.instances and self.otype(h).category == "container"]
        if self.pack is not None:
            out.append(self.pack)
        return out

    @property
    def carried(self) -> dict[str, int]:
        """Type -> units in hands and reachable containers (what crafting, trade and eating use)."""
        if self._carried is None:
            out: dict[str, int] = {}
            for h, n in self.agent.hands.items():
                t = self.tname(h)
                out[t] = out.get(t, 0) + n
            for c in self.containers():
                for h, n in self.state.instances[c].contents.items():
                    t = self.tname(h)
                    out[t] = out.get(t, 0) + n
            self._carried = out
        return self._carried

    def owned(self, type_name: str) -> int:
        """Units carried or worn (what ``has_item_count`` counts)."""
        n = self.carried.get(type_name, 0)
        for h in self.agent.equipment.values():
            if self.tname(h) == type_name:
                n += 1
        return n

    def in_hands(self, type_name: str) -> str | None:
        for h in self.agent.hands:
            if self.tname(h) == type_name:
                return h
        return None

    def where_carried(self, type_name: str) -> tuple[str, str] | None:
        """``(handle, container)`` of a unit of a type inside a reachable container."""
        for c in self.containers():
            for h in self.state.instances[c].contents:
                if self.tname(h) == type_name:
                    return h, c
        return None

    def worn(self, type_name: str) -> str | None:
        for h in self.agent.equipment.values():
            if self.tname(h) == type_name:
                return h
        return None

    def hands_used(self) -> int:
        used = 0
        for h, n in self.agent.hands.items():
            used += 1 if h == self.currency else n
        return used

    def hands_free(self) -> int:
        return self.game.spec.agent.hands - self.hands_used()

    def fits_hands(self, handle: str) -> bool:
        if handle == self.currency and handle in self.agent.hands:
            return True
        return self.hands_free() >= 1

    def pack_room(self) -> int:
        return container_room(self.game, self.state, self.pack) if self.pack is not None else -1

    def room_in(self, container: str) -> int:
        return container_room(self.game, self.state, container)

    def coins(self) -> int:
        return self.carried.get(self.currency, 0) if self.currency else 0

    # ------------------------------------------------------------------ NPCs
    @property
    def npcs(self) -> dict[str, list[Npc]]:
        """NPC type -> live instances (state order)."""
        if self._npcs is None:
            index: dict[str, list[Npc]] = {}
            for npc in self.state.npcs.values():
                index.setdefault(npc.type, []).append(npc)
            self._npcs = index
        return self._npcs

    def hostile(self, npc: Npc) -> bool:
        return self.game.npcs[npc.type].hostile

    def engaged_foes(self) -> list[Npc]:
        npcs = self.state.npcs
        return [npcs[h] for h in self.state.areas[self.here].npcs if npcs[h].engaged == self.agent.id]

    # ------------------------------------------------------------------ distances
    def dist_from(self, src: str) -> dict[str, tuple[int, str]]:
        """Area -> ``(steps, previous area)`` over open paths from ``src`` (the engine's breadth-first
        search, so the oracle and the rules agree on which way is shortest)."""
        hit = self._dist.get(src)
        if hit is not None:
            return hit
        out: dict[str, tuple[int, str]] = {}
        for area, prev in breadth_first(self.state, src, unlocked).items():
            out[area] = (0, src) if prev is None else (out[prev][0] + 1, prev)
        self._dist[src] = out
        return out

    def dist(self, dst: str, src: str | None = None) -> int | None:
        hit = self.dist_from(src or self.here).get(dst)
        return None if hit is None else hit[0]
