"""Looking past the goals at hand: what the main quest's later stages will want.

Selling for coins what a later stage needs, or walking past a thing a later stage wants carried
somewhere, costs a trip back later. So once per step the open goals and the stages not done yet are
read for the object types they name (with their recipes' ingredients, transitively: never sold) and
the objects they want carried (taken along when they lie at my feet).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from odyssey_agents.oracle.core import Focus
    from odyssey_env.engine import Engine
    from odyssey_env.quests.spec import Condition

#: Condition types that need an object carried (to have it, or to put it down, sell or eat it).
CARRIED_CONDITIONS = frozenset({"has_item_count", "object_in_area", "object_dropped", "object_sold", "object_eaten"})


class Foresight:
    """What later stages want, recomputed only when the stages or goals change.

    It writes ``focus.protect`` (what supply must not sell) and owns :attr:`wanted_later` (read by
    opportunism). Its cache outlives a step: it is keyed by the identity of the quest's conditions,
    which are frozen parts of the loaded game, and by how many stages are done.
    """

    def __init__(self, agent_id: str, focus: Focus) -> None:
        self.agent_id = agent_id
        self.focus = focus
        #: Objects later stages want carried somewhere and the open goals do not: type -> (count, area
        #: where it must end up, if any).
        self.wanted_later: dict[str, tuple[int, str | None]] = {}
        #: NPC types the stages not done yet name to defeat (each once): the fights to
        #: come, which a weapon or armor fetched now shortens too (read by tactics).
        self.foes_later: tuple[str, ...] = ()
        #: Object types the stages not done yet name themselves (to have, wear, hold...): fetched
        #: early, they cost only the detour (read by tactics when it weighs gear).
        self.named_later: frozenset[str] = frozenset()
        self._memo: dict[tuple[Any, ...], Any] = {}

    def look_ahead(self, engine: Engine, goals: list[Condition]) -> None:
        """Read the open ``goals`` and the stages not done yet, for this step."""
        later = self._later_stages(engine)
        self.focus.protect = self._closure(engine, [*goals, *later])
        # a purchase a later stage asks for must still be possible then (Base seed 2 bought the only
        # heart of the ocean for a sword while preparing a fight, and its trade stage could never be done)
        buying_now = {c.object for c in _nested(goals) if c.type == "object_bought"}
        self.focus.unbought = frozenset(
            c.object for c in _required(later) if c.type == "object_bought" and c.object and c.object not in buying_now
        )
        self.foes_later = self._foes(engine, later)
        self.named_later = self._named(engine, later)
        now = self._carry_list(goals)
        self.wanted_later = {t: w for t, w in self._carry_list(later).items() if t not in now}

    def _later_stages(self, engine: Engine) -> list[Condition]:
        """Conditions of the main-quest stages not done yet (what they need is not sold early)."""
        main = engine.game.quest.main
        data = engine.state.rule_data.get("main_quest")
        if main is None or not data:
            return []
        done = set(data["agents"][self.agent_id]["done"])
        key = ("later", len(done))
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = [s.done for ch in main.chapters for s in ch.stages if s.id not in done]
        return hit

    def _foes(self, engine: Engine, conds: list[Condition]) -> tuple[str, ...]:
        """NPC types named by the defeat conditions among ``conds`` (any branch), each once."""
        key = ("foes", *map(id, conds))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        seen: dict[str, None] = {}
        for c in _nested(conds):
            if c.type in ("npc_defeated", "defeated_n"):
                for t in ((c.npc,) if c.npc else ()) + c.npcs:
                    if t in engine.game.npcs:
                        seen[t] = None
        out = self._memo[key] = tuple(seen)
        return out

    def _named(self, engine: Engine, conds: list[Condition]) -> frozenset[str]:
        """Object types that the conditions every one of ``conds`` needs name (not their ingredients)."""
        key = ("named", *map(id, conds))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        objects = engine.game.objects
        out = self._memo[key] = frozenset(
            t for c in _required(conds) for t in ((c.object,) if c.object else ()) + c.objects if t in objects
        )
        return out

    def _carry_list(self, conds: list[Condition]) -> dict[str, tuple[int, str | None]]:
        """Objects that remaining stages want carried somewhere (type -> (count, area where it must
        end up, if any)): when one lies at my feet, taking it along saves a trip back."""
        key = ("carry", *map(id, conds))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        out: dict[str, tuple[int, str | None]] = {}
        for c in _nested(conds):
            if c.object and c.type in CARRIED_CONDITIONS:
                area = c.area if c.type == "object_in_area" else None
                out[c.object] = (max(c.count, out.get(c.object, (0, None))[0]), area)
        self._memo[key] = out
        return out

    def _closure(self, engine: Engine, goals: list[Condition]) -> frozenset[str]:
        """Object types the goals name, with everything their recipes need (transitively): the
        things a goal may need, which are never sold for coins."""
        key = ("closure", *map(id, goals))  # conditions are frozen parts of the loaded game
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        objects = engine.game.objects
        todo = [t for c in _nested(goals) for t in ((c.object,) if c.object else ()) + c.objects if t in objects]
        seen: set[str] = set()
        while todo:
            t = todo.pop()
            if t in seen:
                continue
            seen.add(t)
            recipe = objects[t].recipe
            if recipe is not None:
                todo.extend(recipe.ingredients)
        if len(self._memo) > 256:
            self._memo.clear()
        out = self._memo[key] = frozenset(seen)
        return out


def _required(conds: Iterable[Condition]) -> Iterator[Condition]:
    """``conds`` and the conditions every one of them needs: ``all_of`` parts, not ``any_of`` branches
    (a purchase that is one of several ways to a stage does not have to stay possible)."""
    stack = list(conds)
    while stack:
        c = stack.pop()
        if c.type != "any_of":
            stack.extend(c.conditions)
        yield c


def _nested(conds: Iterable[Condition]) -> Iterator[Condition]:
    """``conds`` and every condition inside them (``any_of``/``all_of`` branches), depth first."""
    stack = list(conds)
    while stack:
        c = stack.pop()
        stack.extend(c.conditions)
        stack.extend(c.plan)
        yield c
