"""The tutorial: isolated rooms with a gated sequence of steps, removed when done (paper A3.4).

It removes the confound of not knowing the controls: object handling, inventory, trading, combat,
crafting and navigation are each practised once, while some verbs are deliberately left untaught.
Nothing in it is rewarded or counted as progress (``agent.in_tutorial``), the runner reports its
steps separately, and it ends by itself after ``max_steps`` so a weak agent still gets to play.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from odyssey_env.quests.conditions import holds
from odyssey_env.quests.spec import Tutorial
from odyssey_env.rules import StepRule, step_rule
from odyssey_env.state import Area
from odyssey_env.world import add, make_objects
from odyssey_env.worldgen import link, spawn_npc

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent

NAME = "tutorial"


def _tutorial(game: Game) -> Tutorial:
    """The game's tutorial; this rule is active only in games that have one."""
    spec = game.quest.tutorial
    assert spec is not None, "the tutorial rule runs only in a game with a tutorial"
    return spec


PLACE = "Tutorial"


def progress(engine: Engine, agent_id: str) -> dict[str, Any] | None:
    data = engine.state.rule_data.get(NAME)
    if not data or agent_id not in data["agents"]:
        return None
    mine = data["agents"][agent_id]
    steps = _tutorial(engine.game).steps
    return {
        "step": mine["step"],
        "total": len(steps),
        "finished": mine["finished"],
        "current": steps[mine["step"]].id if not mine["finished"] else None,
    }


@step_rule
class TutorialRule(StepRule):
    name = NAME
    description = "Runs the tutorial rooms: one instruction at a time, each gated on doing it."

    def active(self, game: Game) -> bool:
        return game.quest.tutorial is not None

    def start(self, engine: Engine) -> None:
        spec = engine.game.quest.tutorial
        if spec is None or not engine.options.get("tutorial"):
            return
        state = engine.state
        for room in spec.rooms:
            state.areas[room.name] = Area(name=room.name, place=PLACE, level=1, description=room.description)
        for c in spec.links:
            link(state, c.a, c.b, locked=c.locked, key=c.key, pickable=c.pickable)
        first = spec.rooms[0].name
        state.rule_data[NAME] = {"agents": {}}
        for agent in state.agents.values():
            agent.area = agent.home = first
            agent.in_tutorial = True
            state.rule_data[NAME]["agents"][agent.id] = {"step": 0, "started": state.step, "finished": False}
            if spec.intro:
                engine.say(agent.id, spec.intro)
        for agent in state.agents.values():
            self._setup(engine, 0)  # each agent gets its own things to practise with
            self._instruct(engine, agent, 0)

    def apply(self, engine: Engine) -> None:
        data = engine.state.rule_data.get(NAME)
        if not data:
            return
        spec = _tutorial(engine.game)
        for agent in engine.state.agents.values():
            if not agent.in_tutorial:
                continue
            mine = data["agents"][agent.id]
            i = mine["step"]
            if holds(engine, agent, spec.steps[i].done):
                i = mine["step"] = i + 1
                engine.emit("tutorial_step_completed", agent.id, step=spec.steps[i - 1].id, index=i)
                if i == len(spec.steps):
                    self._finish(engine, agent, completed=True)
                    continue
                engine.say(agent.id, "Well done.")
                self._setup(engine, i)
            elif spec.steps[i].npcs:
                self._summon(engine, i)  # another agent may have defeated the one this step needs
            if engine.state.step - mine["started"] >= spec.max_steps:
                engine.say(agent.id, "The tutorial has run long; it ends here.")
                self._finish(engine, agent, completed=False)
                continue
            self._instruct(engine, agent, i)

    # ------------------------------------------------------------------ internals
    def _instruct(self, engine: Engine, agent: Agent, i: int) -> None:
        steps = _tutorial(engine.game).steps
        engine.say(agent.id, f"[Tutorial {i + 1}/{len(steps)}] {steps[i].say}")

    def _setup(self, engine: Engine, i: int) -> None:
        """Lay out step ``i`` for one agent reaching it. Several agents share the room, so each gets its
        own set: the step's objects, and its NPCs (a merchant already there restocks instead)."""
        spec, state = _tutorial(engine.game), engine.state
        room = spec.rooms[0].name
        for obj, n in spec.steps[i].place.items():
            for handle, k in make_objects(engine.game, state, obj, n):
                add(state.areas[room].objects, handle, k)
        for npc_type in spec.steps[i].npcs:
            t = engine.game.npcs[npc_type]
            there = next((state.npcs[h] for h in state.areas[room].npcs if state.npcs[h].type == npc_type), None)
            if there is not None and t.merchant:
                for obj, n in t.stock.items():
                    add(there.inventory, obj, n)
        self._summon(engine, i)

    def _summon(self, engine: Engine, i: int) -> None:
        """Bring step ``i``'s NPCs into the room where none of their kind is left."""
        spec, state = _tutorial(engine.game), engine.state
        room = spec.rooms[0].name
        here = state.areas[room].npcs
        for npc in spec.steps[i].npcs:
            t = engine.game.npcs[npc]
            if (t.unique and npc in state.npcs) or any(state.npcs[h].type == npc for h in here):
                continue
            spawn_npc(engine.game, state, t, room, origin="tutorial")

    def _finish(self, engine: Engine, agent: Agent, completed: bool) -> None:
        spec, state = _tutorial(engine.game), engine.state
        mine = state.rule_data[NAME]["agents"][agent.id]
        mine["finished"] = True
        # Tutorial things stay in the tutorial: the agent starts the game empty-handed.
        for handle in [*agent.hands, *agent.equipment.values()]:
            _forget(engine, handle)
        agent.hands.clear()
        agent.equipment.clear()
        agent.attack, agent.defense = agent.base_attack, engine.game.spec.agent.defense  # nothing held or worn
        for handle in [h for h, npc in state.npcs.items() if npc.engaged == agent.id]:
            state.npcs[handle].engaged = None
        agent.combat = None
        agent.area = agent.home = state.spawn
        agent.hp = agent.max_hp
        agent.stamina = 1.0
        agent.in_tutorial = False
        engine.say(agent.id, spec.outro)
        engine.emit("tutorial_completed", agent.id, completed=completed, steps=state.step - mine["started"])
        if all(a["finished"] for a in state.rule_data[NAME]["agents"].values()):
            self._remove_rooms(engine)

    def _remove_rooms(self, engine: Engine) -> None:
        spec, state = _tutorial(engine.game), engine.state
        for room in spec.rooms:
            area = state.areas.pop(room.name)
            for handle in area.npcs:
                del state.npcs[handle]
            for handle in area.objects:
                _forget(engine, handle)


def _forget(engine: Engine, handle: str) -> None:
    """Delete an instance and everything inside it."""
    inst = engine.state.instances.pop(handle, None)
    if inst is not None:
        for inner in inst.contents:
            _forget(engine, inner)
