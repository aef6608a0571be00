"""Handling objects: pick up, drop, inspect, equip, unequip.

Two hands hold at most two objects (a pile of coins takes one hand); what does not fit in the hands
goes into the worn pack if it has room. Weapons are held, never equipped: equipping is for armor
(defense) and for a container worn as the pack (the inventory).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from typing import TYPE_CHECKING

from odyssey_env.content import amount_text
from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.turn import Turn
from odyssey_env.verbs.common import acquire, ground, reachable_containers
from odyssey_env.world import (
    add,
    container_room,
    defense_of,
    describe_holding,
    fits_in_hands,
    hands_free,
    known_object,
    npc_here,
    remove,
    type_of,
)

if TYPE_CHECKING:
    from odyssey_env.game import Game

_COUNT_WORDS = ("none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _pack_room_for(turn: Turn, handle: str) -> bool:
    pack = turn.agent.equipment.get("pack")
    if pack is None:
        return False
    t = known_object(turn.game, turn.state, handle)
    return t is not None and t.category != "container" and container_room(turn.game, turn.state, pack) >= t.size


@action_rule
class PickUp(ActionRule):
    verb = "pick up"
    params = (("object_name", "object"),)
    description = "Pick up an object here: into a free hand, otherwise into my pack if it has room."
    depends_on = ("ground", "hands", "worn", "containers")

    def apply(self, turn: Turn, handle: str) -> None:
        area, game, agent = turn.area, turn.game, turn.agent
        n_here = area.objects.get(handle, 0)
        if not n_here:
            return turn.fail(f"Cannot pick up {handle}: there is none here.")
        t = known_object(game, turn.state, handle)
        assert t is not None, "an object lying here has a loaded type"
        if not t.portable:
            return turn.fail(f"Cannot pick up {handle}: it is fixed in place.")
        n = n_here if handle == game.currency else 1
        if fits_in_hands(game, agent, handle, n):
            remove(area.objects, handle, n)
            add(agent.hands, handle, n)
            turn.say(f"I picked up {n} {handle}.")
        elif _pack_room_for(turn, handle):
            pack = agent.equipment["pack"]
            if handle == game.currency:
                room = container_room(game, turn.state, pack)
                n = n if t.size == 0 else min(n, room // t.size)
            remove(area.objects, handle, n)
            add(turn.state.instances[pack].contents, handle, n)
            turn.say(f"My hands are full, so I put {n} {handle} into {pack}.")
        else:
            return turn.fail(f"Cannot pick up {handle}: my hands are full and I have no room for it.")
        acquire(turn, handle, n)

    def candidates(self, turn: Turn) -> Iterable[str]:
        # Same tests as apply (a free hand, coins joining coins, or room in the pack), hoisted out of the loop.
        game, agent, state = turn.game, turn.agent, turn.state
        currency = game.currency
        free = hands_free(game, agent) >= 1
        coins_in_hand = currency in agent.hands
        pack = agent.equipment.get("pack")
        lying = ground(turn)
        if free:  # the common case: everything portable fits in a free hand
            return ["pick up " + handle for handle, t in lying if t.category != "station"]
        room = container_room(game, state, pack) if pack is not None else -1
        return [
            "pick up " + handle
            for handle, t in lying
            if t.category != "station"
            and ((coins_in_hand and handle == currency) or (room >= t.size and t.category != "container"))
        ]

    def facts(self, game: Game) -> Iterable[Fact]:
        # The body is the game's (agent.hands), so the answer is counted, not assumed to be two.
        n = game.spec.agent.hands
        answer = _COUNT_WORDS[n] if n < len(_COUNT_WORDS) else str(n)
        wrong = [w for w in ("one", "two", "three", "as many as I like") if w != answer]
        yield Fact("body", "How many objects can I hold in my hands at once?", answer, tuple(wrong[-3:]))


@action_rule
class Drop(ActionRule):
    verb = "drop"
    params = (("object_name", "object"),)
    description = "Put down everything of one kind that I hold in my hands."
    depends_on = ("hands",)

    def apply(self, turn: Turn, handle: str) -> None:
        n = turn.agent.hands.get(handle, 0)
        if not n:
            return turn.fail(f"Cannot drop {handle}: I am not holding it.")
        remove(turn.agent.hands, handle, n)
        add(turn.area.objects, handle, n)
        turn.say(f"I dropped {n} {handle}.")
        turn.emit("object_dropped", object=type_of(turn.state, handle), handle=handle, amount=n, area=turn.agent.area)

    def candidates(self, turn: Turn) -> Iterable[str]:
        return list(map("drop ".__add__, turn.agent.hands))


@action_rule
class Inspect(ActionRule):
    verb = "inspect"
    params = (("target", "object"),)
    description = "Look closely at an object I can see or carry, a creature here, or this area."
    depends_on = ("place", "npcs", "hands", "worn", "containers", "ground")

    def apply(self, turn: Turn, target: str) -> None:
        state, game, agent = turn.state, turn.game, turn.agent
        if target == agent.area:
            turn.say(f"{target}: {turn.area.description}")
            turn.emit("area_inspected", area=target)
            return
        npc = npc_here(state, turn.area, target)
        if npc is not None:
            t = game.npcs[npc.type]
            mood = "hostile" if t.hostile else "friendly"
            turn.say(f"{npc.handle}: {t.description} It looks {mood}; level {npc.level}, health {npc.hp}/{npc.max_hp}.")
            turn.emit("npc_inspected", npc=npc.handle, type=npc.type)
            return
        if target not in _visible(turn):
            return turn.fail(f"Cannot inspect {target}: I do not see it here or on me.")
        turn.say(describe_object(turn, target))
        turn.emit("object_inspected", object=type_of(state, target), handle=target)

    def candidates(self, turn: Turn) -> Iterable[str]:
        # Built with C-level maps rather than yields: this verb is listed afresh whenever anything here changes.
        return [
            "inspect " + turn.agent.area,
            *map("inspect ".__add__, turn.area.npcs),
            *map("inspect ".__add__, _visible(turn)),
        ]


def _visible(turn: Turn) -> dict[str, None]:
    """Objects the agent can look at: held, worn, in reachable containers and on the ground here."""
    agent = turn.agent
    containers = reachable_containers(turn)
    if not containers:  # the common case, in one pass (this is listed whenever anything here changes)
        return dict.fromkeys(chain(agent.hands, agent.equipment.values(), turn.area.objects))
    instances = turn.state.instances
    return dict.fromkeys(
        chain(agent.hands, agent.equipment.values(), *[instances[c].contents for c in containers], turn.area.objects)
    )


def describe_object(turn: Turn, handle: str) -> str:
    """What inspecting an object reveals: description, numbers that matter, recipe and uses."""
    game, state = turn.game, turn.state
    inst = state.instances.get(handle)
    t = game.objects[inst.type if inst else handle]
    parts = [f"{handle}: {t.description}", f"It is a {t.category} of level {t.level}, size {t.size}"]
    if t.value:
        parts[-1] += f", worth {t.value} {game.currency or 'coins'}"
    parts[-1] += "."
    if t.attack:
        parts.append(f"Held, it gives attack {t.attack}.")
    if t.defense:
        parts.append(f"Worn ({t.equip_slot}), it gives defense {t.defense}.")
    if t.hp_restore:
        parts.append(f"Eating it restores {t.hp_restore} health.")
    if t.category == "container" and inst is not None:
        held = describe_holding(inst.contents) or "nothing"
        parts.append(f"It holds {held} (room {container_room(game, state, handle)} of {t.capacity}).")
    if t.category == "writable" and inst is not None:
        parts.append(f'It reads: "{inst.text}".' if inst.text else "It is blank.")
    if t.uses:
        parts.append(f"It can be used to {', '.join(t.uses)}.")
    if t.recipe is not None:
        r = t.recipe
        need = ", ".join(f"{amount_text(n)} {i}" for i, n in r.ingredients.items())
        at = f" at a {' and a '.join(r.stations)}" if r.stations else ""
        parts.append(f"Crafting {r.yields} takes {need}{at}.")
    if t.name in game.used_in:
        parts.append(f"It is an ingredient of {', '.join(game.used_in[t.name])}.")
    return " ".join(parts)


@action_rule
class Equip(ActionRule):
    verb = "equip"
    params = (("object_name", "object"),)
    description = "Wear armor or a container (the pack) from my hands or from the ground here."
    depends_on = ("hands", "worn", "ground")

    def apply(self, turn: Turn, handle: str) -> None:
        agent, area = turn.agent, turn.area
        in_hands = handle in agent.hands
        if not in_hands and handle not in area.objects:
            return turn.fail(f"Cannot equip {handle}: it is neither in my hands nor here.")
        t = known_object(turn.game, turn.state, handle)
        assert t is not None, "an object held or lying here has a loaded type"
        slot = t.equip_slot
        if slot is None:
            if t.category == "weapon":
                return turn.fail(f"Cannot equip {handle}: weapons are held in the hands, not equipped.")
            return turn.fail(f"Cannot equip {handle}: it is not something to wear.")
        if slot in agent.equipment:
            return turn.fail(f"Cannot equip {handle}: I already wear {agent.equipment[slot]} ({slot}).")
        if in_hands:
            remove(agent.hands, handle)
        else:
            remove(area.objects, handle)
            acquire(turn, handle)
        agent.equipment[slot] = handle
        agent.defense = defense_of(turn.game, agent)
        turn.say(f"I equipped {handle} ({slot}).")
        turn.emit("object_equipped", object=t.name, handle=handle, slot=slot)

    def candidates(self, turn: Turn) -> Iterable[str]:
        worn = turn.agent.equipment
        instances, objects = turn.state.instances, turn.game.objects
        out, seen = [], set()
        for handle in turn.agent.hands:
            inst = instances.get(handle)
            slot = objects[inst.type if inst is not None else handle].equip_slot
            if slot is not None and slot not in worn:
                seen.add(handle)
                out.append("equip " + handle)
        for handle, t in ground(turn):
            slot = t.equip_slot
            if slot is not None and slot not in worn and handle not in seen:
                out.append("equip " + handle)
        return out

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "body",
            "Can a weapon be equipped?",
            "no, weapons are held in the hands",
            ("yes, in the weapon slot", "yes, on the belt", "only swords"),
        )


@action_rule
class Unequip(ActionRule):
    verb = "unequip"
    params = (("object_name", "object"),)
    description = "Take off something I wear and hold it in a free hand."
    depends_on = ("worn", "hands")

    def apply(self, turn: Turn, handle: str) -> None:
        agent = turn.agent
        slot = next((s for s, h in agent.equipment.items() if h == handle), None)
        if slot is None:
            return turn.fail(f"Cannot unequip {handle}: I am not wearing it.")
        if not fits_in_hands(turn.game, agent, handle):
            return turn.fail(f"Cannot unequip {handle}: I need a free hand to hold it.")
        del agent.equipment[slot]
        add(agent.hands, handle)
        agent.defense = defense_of(turn.game, agent)
        turn.say(f"I unequipped {handle} and now hold it.")
        turn.emit("object_unequipped", object=type_of(turn.state, handle), handle=handle, slot=slot)

    def candidates(self, turn: Turn) -> Iterable[str]:
        agent = turn.agent
        for handle in agent.equipment.values():
            if fits_in_hands(turn.game, agent, handle):
                yield f"unequip {handle}"
