"""Rumor notes (optional dynamics): merchants now and then leave a note with a true hint about the world.

A note tells a recipe, who sells what, where a kind of enemy was seen, which way is locked and by what,
where food grows, or an hour when the murk bites harder. Notes are writables, so they can be read
(inspect), carried, reused for writing or sold. Their number is capped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.content import amount_text
from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.steprules.living import FIXED_ORIGINS, is_world_area, pick, tell
from odyssey_env.world import add, make_objects

if TYPE_CHECKING:
    from odyssey_env.game import Game
    from odyssey_env.state import Npc


@step_rule
class RumorNotes(StepRule):
    name = "rumor_notes"
    optional = True
    description = "Merchants now and then leave a note with a true hint about the world in their area."

    @dataclass(frozen=True)
    class Params:
        period: int = 60
        chance: float = 0.5
        note: str = ""  # writable object type of the notes; empty: the game's first writable
        max_lying: int = 3  # notes lying around at once
        max_total: int = 15  # notes per episode

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {"lying": [], "total": 0}
        note = self._note_type(engine)
        if note is None:
            raise ValueError("rumor_notes: the game has no writable object type for notes")

    def _note_type(self, engine: Engine) -> str | None:
        if self.settings.note:
            t = engine.game.objects.get(self.settings.note)
            return t.name if t is not None and t.category == "writable" else None
        return next((o.name for o in engine.game.spec.objects if o.category == "writable"), None)

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        data = state.rule_data[self.name]
        data["lying"] = [[h, a] for h, a in data["lying"] if a in state.areas and h in state.areas[a].objects]
        if data["total"] >= self.settings.max_total or len(data["lying"]) >= self.settings.max_lying:
            return
        if engine.rng.random() >= self.settings.chance:
            return
        kinds = engine.game.npcs
        merchants = [
            n
            for n in state.npcs.values()
            if kinds[n.type].merchant and n.origin not in FIXED_ORIGINS and is_world_area(state.areas[n.area])
        ]
        if not merchants:
            return
        merchant = pick(engine, merchants)
        text = self._rumor(engine, merchant)
        if not text:
            return
        game = engine.game
        note = self._note_type(engine)
        assert note is not None, "start() refuses a game without a writable for notes"
        handle, _ = make_objects(game, state, note, 1)[0]
        state.instances[handle].text = text[: game.objects[note].max_text]
        add(state.areas[merchant.area].objects, handle)
        data["lying"].append([handle, merchant.area])
        data["total"] += 1
        tell(engine, merchant.area, f"{merchant.handle} tucks a folded note, {handle}, under a stone.")
        engine.emit("rumor_left", None, npc=merchant.handle, note=handle, area=merchant.area, text=text)

    # ------------------------------------------------------------------ rumors (all true when written)
    def _rumor(self, engine: Engine, merchant: Npc) -> str | None:
        makers = [self._recipe, self._wares, self._sighting, self._lock, self._food, self._hour]
        engine.rng.shuffle(makers)
        for make in makers:
            text = make(engine, merchant)
            if text:
                return text
        return None

    def _recipe(self, engine: Engine, merchant: Npc) -> str | None:
        recipes = list(engine.game.recipes)
        if not recipes:
            return None
        t = pick(engine, recipes)
        assert t.recipe is not None, "game.recipes holds only objects with a recipe"
        need = ", ".join(f"{amount_text(k)} {i}" for i, k in t.recipe.ingredients.items())
        at = f" at a {' and a '.join(t.recipe.stations)}" if t.recipe.stations else ""
        return f"Word is that {t.name} is made from {need}{at}."

    def _wares(self, engine: Engine, merchant: Npc) -> str | None:
        state, kinds = engine.state, engine.game.npcs
        others = [
            n
            for n in state.npcs.values()
            if kinds[n.type].merchant and n.handle != merchant.handle and n.inventory and n.origin not in FIXED_ORIGINS
        ]
        if not others:
            return None
        other = pick(engine, others)
        ware = pick(engine, list(other.inventory))
        return f"{other.handle}, over in {other.area}, has {ware} for sale."

    def _sighting(self, engine: Engine, merchant: Npc) -> str | None:
        state, kinds = engine.state, engine.game.npcs
        foes = [
            n
            for n in state.npcs.values()
            if kinds[n.type].hostile and n.origin != "tutorial" and is_world_area(state.areas[n.area])
        ]
        if not foes:
            return None
        foe = pick(engine, foes)
        return f"Someone saw a {foe.type} in {foe.area} not long ago."

    def _lock(self, engine: Engine, merchant: Npc) -> str | None:
        state = engine.state
        locks = [
            (name, other, ex.key)
            for name, area in state.areas.items()
            if is_world_area(area)
            for other, ex in area.exits.items()
            if ex.locked and ex.key and name < other
        ]
        if not locks:
            return None
        a, b, key = pick(engine, locks)
        return f"The way between {a} and {b} is locked; {key} opens it."

    def _food(self, engine: Engine, merchant: Npc) -> str | None:
        state, objects = engine.state, engine.game.objects
        spots = [
            (name, h)
            for name, area in state.areas.items()
            if is_world_area(area)
            for h in area.objects
            if h in objects and objects[h].category == "food"
        ]
        if not spots:
            return None
        name, food = pick(engine, spots)
        return f"There is {food} to be had in {name}."

    def _hour(self, engine: Engine, merchant: Npc) -> str | None:
        hours = engine.state.rule_data.get("danger_hours", {}).get("hours")
        if not hours:
            return None
        return f"Keep your guard up around {pick(engine, hours):02d}:00; things bite harder in that hour."

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "Who leaves notes with hints about the world lying around?",
            "merchants",
            ("enemies", "the guide", "nobody; notes never appear"),
        )
        yield Fact(
            "world",
            "Can the hints in merchants' notes be trusted?",
            "yes, they are true when written",
            ("no, they are always lies", "only at night", "only half of them"),
        )
