"""Side quests: short seeded tasks that newly explored areas unlock (paper A3.2).

Four kinds, one active quest per kind at a time: *collect* (carry some amount of an object found in
the area), *talk* (speak with someone), *craft* (make something whose ingredients the area offers) and
*trade* (sell or buy something with a merchant). They pay coins and force goal switching away from
the main quest. A free slot is refilled only when a new area is explored, so side quests cannot be
farmed by standing still.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from odyssey_env.quests.conditions import owned
from odyssey_env.rules import StepRule, step_rule
from odyssey_env.steprules.living import pick
from odyssey_env.world import give, type_of

if TYPE_CHECKING:
    from odyssey_env.engine import Engine
    from odyssey_env.game import Game
    from odyssey_env.state import Agent

NAME = "side_quests"
#: The event that completes a talk or craft quest (a trade quest names its own).
_AWAITED = {"talk": "talked_to", "craft": "object_crafted"}


class SideQuest(TypedDict, total=False):
    """One offered quest as kept in ``rule_data``: what the maker sets (object, count, npc, event, title)
    plus what offering adds (kind, id, reward)."""

    kind: str  # collect, talk, craft or trade
    id: str
    reward: int  # coins paid on completion
    title: str
    object: str  # collect, craft, trade: the object type
    count: int  # collect: units to carry
    npc: str  # talk: the NPC's handle
    event: str  # trade: object_sold or object_bought


def progress(engine: Engine, agent_id: str) -> dict[str, Any]:
    data = engine.state.rule_data.get(NAME)
    data = data.get(agent_id) if data else None
    if not data:
        return {"completed": 0, "active": []}
    return {
        "completed": data["completed"],
        "active": [{"kind": q["kind"], "title": q["title"]} for q in data["active"].values()],
    }


@step_rule
class SideQuestRule(StepRule):
    name = NAME
    description = "Newly explored areas unlock collect/talk/craft/trade side quests that pay coins."

    def active(self, game: Game) -> bool:
        return game.quest.side_quests.enabled

    def start(self, engine: Engine) -> None:
        if not engine.game.quest.side_quests.enabled:
            return
        engine.state.rule_data[NAME] = {
            a: {"active": {}, "completed": 0, "counter": 0, "unlocked": False} for a in engine.state.agents
        }

    def apply(self, engine: Engine) -> None:
        spec = engine.game.quest.side_quests
        if not spec.enabled:
            return
        state = engine.state
        for agent in state.agents.values():
            if agent.in_tutorial:
                continue
            mine = state.rule_data[NAME][agent.id]
            for kind, quest in list(mine["active"].items()):
                if self._done(engine, agent, quest):
                    del mine["active"][kind]
                    mine["completed"] += 1
                    self._pay(engine, agent, quest)
            explored = len(agent.visited) - 1  # the spawn area does not count
            if not mine["unlocked"]:
                if explored < spec.unlock_after:
                    continue
                mine["unlocked"] = True
                engine.say(agent.id, "=== SIDE QUESTS UNLOCKED === New areas will now bring side quests.")
                self._offer(engine, agent, mine, agent.area)
                continue
            if "area_entered" not in engine.kinds:
                continue
            for ev in engine.events:
                if ev.kind == "area_entered" and ev.agent == agent.id and ev.data.get("first"):
                    self._offer(engine, agent, mine, ev.data["area"])

    # ------------------------------------------------------------------ internals
    def _done(self, engine: Engine, agent: Agent, q: SideQuest) -> bool:
        kind = q["kind"]
        if kind == "collect":
            return owned(engine, agent, q["object"]) >= q["count"]
        wanted = q.get("event") if kind == "trade" else _AWAITED[kind]
        if wanted not in engine.kinds:
            return False
        for ev in engine.events:
            if ev.kind == wanted and ev.agent == agent.id:
                if kind == "talk" and ev.data["npc"] == q["npc"]:
                    return True
                if kind in ("craft", "trade") and ev.data["object"] == q["object"]:
                    return True
        return False

    def _pay(self, engine: Engine, agent: Agent, q: SideQuest) -> None:
        game, state = engine.game, engine.state
        coins = q["reward"]
        assert game.currency is not None, "side quests need a currency (checked at load)"
        where = give(game, state, agent, game.currency, coins)
        engine.say(agent.id, f"Side quest complete: {q['title']}. I received {coins} {game.currency} ({where}).")
        engine.emit("side_quest_completed", agent.id, quest_kind=q["kind"], id=q["id"], reward=coins)

    def _offer(self, engine: Engine, agent: Agent, mine: dict[str, Any], area: str) -> None:
        spec = engine.game.quest.side_quests
        for kind in spec.kinds:
            if kind in mine["active"]:
                continue
            quest = getattr(self, f"_make_{kind}")(engine, agent, area)
            if quest is None:
                continue
            mine["counter"] += 1
            quest.update(kind=kind, id=f"side_{mine['counter']}", reward=engine.rng.randint(*spec.reward))
            mine["active"][kind] = quest
            engine.say(agent.id, f"=== SIDE QUEST: {quest['title']} ===")
            engine.emit("side_quest_offered", agent.id, quest_kind=kind, id=quest["id"], title=quest["title"])

    def _pick(self, engine: Engine, options: list[str]) -> str | None:
        return pick(engine, options) if options else None

    def _make_collect(self, engine: Engine, agent: Agent, area: str) -> SideQuest | None:
        game, state = engine.game, engine.state
        here = state.areas[area].objects
        options = []
        for handle in here:
            t = game.objects[type_of(state, handle)]
            if t.portable and t.category not in ("currency", "quest") and t.name not in options:
                options.append(t.name)
        obj = self._pick(engine, options)
        if obj is None:
            return None
        lo, hi = engine.game.quest.side_quests.collect_amount
        count = min(engine.rng.randint(lo, hi), max(1, here.get(obj, 1)))
        count = max(count, owned(engine, agent, obj) + 1)
        return {"object": obj, "count": count, "title": f"Collect {count} {obj}"}

    def _make_talk(self, engine: Engine, agent: Agent, area: str) -> SideQuest | None:
        game, state = engine.game, engine.state
        guide = game.quest.main.guide.npc if game.quest.main and game.quest.main.guide else None
        friendly = [
            h
            for h, npc in state.npcs.items()
            if not game.npcs[npc.type].hostile and npc.type != guide and npc.origin != "tutorial"
        ]
        local = [h for h in friendly if state.npcs[h].area == area]
        npc = self._pick(engine, local or friendly)
        if npc is None:
            return None
        return {"npc": npc, "title": f"Talk to {npc}"}

    def _make_craft(self, engine: Engine, agent: Agent, area: str) -> SideQuest | None:
        game, state = engine.game, engine.state
        here = {type_of(state, h) for h in state.areas[area].objects}
        options = [
            t.name
            for t in game.recipes
            if t.recipe is not None
            and (any(i in here for i in t.recipe.ingredients) or any(s in here for s in t.recipe.stations))
        ]
        obj = self._pick(engine, options)
        return None if obj is None else {"object": obj, "title": f"Craft {obj}"}

    def _make_trade(self, engine: Engine, agent: Agent, area: str) -> SideQuest | None:
        game, state = engine.game, engine.state
        merchants = [npc for npc in state.npcs.values() if game.npcs[npc.type].merchant]
        if not merchants:
            return None
        buyable = set()
        for m in merchants:
            buys = game.npcs[m.type].buys
            for handle in state.areas[area].objects:
                t = game.objects[type_of(state, handle)]
                if t.value > 0 and t.category != "currency" and (not buys or t.category in buys):
                    buyable.add(t.name)
        sell = sorted(buyable)
        if sell and engine.rng.random() < 0.5:
            obj = self._pick(engine, sell)
            assert obj is not None, "picked from a non-empty list"
            return {"object": obj, "event": "object_sold", "title": f"Sell {obj} to a merchant"}
        wares = sorted({w for m in merchants for w in m.inventory})
        obj = self._pick(engine, wares)
        if obj is None:
            return None
        return {"object": obj, "event": "object_bought", "title": f"Buy {obj} from a merchant"}
