"""Crafting and the optional disassemble.

A recipe consumes ingredients that I carry (hands, held containers, pack) and needs its stations on
the ground of the area. Crafted objects land on the ground (paper A5.2: "It is now on the ground").
An amount may be a fraction of a unit (0.5 iron_bar): ``craft n`` then uses the amount times n rounded
up (:meth:`Recipe.uses <odyssey_env.content.Recipe.uses>`), as the paper's games do.
Disassembling gives back half of each ingredient, rounded up, so it never yields more than it cost
(a fraction of a unit gives nothing back).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from odyssey_env.content import ObjectType
from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.turn import Turn
from odyssey_env.verbs.common import carried_handles
from odyssey_env.world import add, carried_count, make_objects, remove, take_carried, type_of

if TYPE_CHECKING:
    from odyssey_env.game import Game


@action_rule
class Craft(ActionRule):
    verb = "craft"
    params = (("amount", "amount"), ("object_name", "object"))
    description = "Craft objects from carried ingredients, at the stations their recipe needs."
    depends_on = ("hands", "worn", "containers", "ground")

    def apply(self, turn: Turn, n: int, name: str) -> None:
        game, state, agent, area = turn.game, turn.state, turn.agent, turn.area
        t = game.objects.get(name)
        if t is None or t.recipe is None:
            return turn.fail(f"Cannot craft {name}: there is no known way to make it.")
        recipe = t.recipe
        needs = recipe.needs(n)
        missing = [
            f"{k} {i} (I carry {carried_count(game, state, agent, i)})"
            for i, k in needs.items()
            if carried_count(game, state, agent, i) < k
        ]
        if missing:
            return turn.fail(f"Cannot craft {n} {name}: I need {', '.join(missing)}.")
        absent = [s for s in recipe.stations if s not in area.objects]
        if absent:
            return turn.fail(f"Cannot craft {name} here: it needs a {' and a '.join(absent)} nearby.")
        for ingredient, k in needs.items():
            take_carried(game, state, agent, ingredient, k)
        made = recipe.yields * n
        for handle, k in make_objects(game, state, name, made):
            add(area.objects, handle, k)
        turn.say(f"I successfully crafted {made} {name}. It is now on the ground.")
        turn.emit("object_crafted", object=name, amount=made, area=agent.area, first=turn.first("crafted", name))

    def candidates(self, turn: Turn) -> Iterable[str]:
        game, objects = turn.game, turn.area.objects
        carried = carried_handles(turn)
        if not carried:
            return
        used_in = game.used_in
        seen = set()
        for handle in carried:
            for product in used_in.get(handle, ()):
                if product in seen:
                    continue
                seen.add(product)
                recipe = game.objects[product].recipe
                assert recipe is not None, "used_in lists only objects with a recipe"
                most = None  # min() over the ingredients, stopping at the first one I lack
                for i in recipe.ingredients:
                    can = recipe.batches(i, carried.get(i, 0))
                    if most is None or can < most:
                        most = can
                        if not most:
                            break
                if not most or any(s not in objects for s in recipe.stations):
                    continue
                yield f"craft 1 {product}"
                if most > 1:
                    yield f"craft {most} {product}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "crafting",
            "Where does a crafted object appear?",
            "on the ground of the area",
            ("in my hands", "in my pack", "with the nearest merchant"),
        )


def salvage(t: ObjectType) -> dict[str, int]:
    """What disassembling ``t`` gives back: half of each ingredient, rounded up (never more than it cost)."""
    assert t.recipe is not None, "only crafted objects are salvaged"
    return t.recipe.salvage()


def _salvageable(t: ObjectType) -> bool:
    """Whether ``t`` may be taken apart: crafted one at a time, and giving something back (a wrench of
    0.5 iron_bar gives nothing, so taking it apart would only destroy it: not offered)."""
    return t.recipe is not None and t.salvageable and t.recipe.yields == 1 and bool(t.recipe.salvage())


@action_rule
class Disassemble(ActionRule):
    verb = "disassemble"
    params = (("object_name", "object"),)
    description = "Take apart a crafted object in my hands or on the ground, recovering half its ingredients."
    optional = True
    depends_on = ("hands", "containers", "ground", "ground_contents")

    def apply(self, turn: Turn, handle: str) -> None:
        game, state, agent, area = turn.game, turn.state, turn.agent, turn.area
        source = agent.hands if handle in agent.hands else area.objects if handle in area.objects else None
        if source is None:
            return turn.fail(f"Cannot disassemble {handle}: it is neither in my hands nor here.")
        t = game.objects[type_of(state, handle)]
        if not _salvageable(t):
            return turn.fail(f"Cannot disassemble {handle}: it cannot be taken apart.")
        inst = state.instances.get(handle)
        if inst is not None and inst.contents:
            return turn.fail(f"Cannot disassemble {handle}: it is not empty.")
        remove(source, handle)
        if inst is not None:
            del state.instances[handle]
        parts = salvage(t)
        for ingredient, k in parts.items():
            add(area.objects, ingredient, k)
        listed = ", ".join(f"{k} {i}" for i, k in parts.items())
        turn.say(f"I took {handle} apart: {listed} now lie on the ground.")
        turn.emit("object_disassembled", object=t.name, handle=handle, parts=parts)

    def candidates(self, turn: Turn) -> Iterable[str]:
        instances, objects = turn.state.instances, turn.game.objects
        out = []
        for handle in {**turn.agent.hands, **turn.area.objects}:
            inst = instances.get(handle)
            if _salvageable(objects[inst.type if inst is not None else handle]) and not (inst and inst.contents):
                out.append("disassemble " + handle)
        return out

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "crafting",
            "What does disassembling a crafted object give back?",
            "half of each ingredient, rounded up",
            ("all ingredients", "nothing", "coins"),
        )
