"""Talking and the optional pickpocket.

Talking is how agents learn prices, rumors and (from a guide) quest hints: the guide's answer is
added by the quest rule, which listens for ``talked_to`` events. A failed pickpocket makes the victim
wary: for a while they will neither talk nor trade.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.state import Npc
from odyssey_env.turn import Turn
from odyssey_env.verbs.common import acquire
from odyssey_env.world import add, fits_in_hands, materialize, npc_here, remove

if TYPE_CHECKING:
    from odyssey_env.game import Game


def wary(turn: Turn, npc: Npc) -> bool:
    return npc.wary_until >= turn.state.step


def merchant_offer(turn: Turn, npc: Npc) -> str:
    game = turn.game
    wares = ", ".join(f"{h} ({game.objects[h].value or 1} {game.currency})" for h in npc.inventory if h in game.objects)
    buys = game.npcs[npc.type].buys
    wanted = ", ".join(buys) if buys else "anything of value"
    return f"{npc.handle} sells {wares or 'nothing right now'}; buys {wanted}."


@action_rule
class TalkTo(ActionRule):
    verb = "talk to"
    params = (("npc_name", "npc"),)
    description = "Speak with someone here; merchants name their wares, guides give advice."
    depends_on = ("npcs",)

    def apply(self, turn: Turn, handle: str) -> None:
        npc = npc_here(turn.state, turn.area, handle)
        if npc is None:
            return turn.fail(f"Cannot talk to {handle}: there is no one by that name here.")
        t = turn.game.npcs[npc.type]
        if wary(turn, npc):
            turn.say(f"{handle} eyes me with suspicion and says nothing.")
        elif t.hostile:
            turn.say(f"{handle} answers only with a snarl.")
        else:
            seen = turn.state.rule_data.setdefault(self.name, {})
            k = seen.get(handle, 0)
            seen[handle] = k + 1
            if t.dialogue:
                turn.say(f'{handle} says: "{t.dialogue[k % len(t.dialogue)]}"')
            if t.merchant:
                turn.say(merchant_offer(turn, npc))
        turn.emit("talked_to", npc=handle, type=npc.type, area=npc.area)

    def candidates(self, turn: Turn) -> Iterable[str]:
        return list(map("talk to ".__add__, turn.area.npcs))


@action_rule
class Pickpocket(ActionRule):
    verb = "pickpocket"
    params = (("npc_name", "npc"),)
    description = "Try to lift coins or an item from someone here into a free hand; getting caught costs trust."
    optional = True
    depends_on = ("npcs", "npc_goods", "npc_moods", "hands")

    @dataclass(frozen=True)
    class Params:
        chance: float = 0.45  # at equal levels; +/- 0.1 per level of difference
        wary_steps: int = 30

    def _target(self, turn: Turn, handle: str) -> Npc | str:
        npc = npc_here(turn.state, turn.area, handle)
        if npc is None:
            return f"Cannot pickpocket {handle}: there is no one by that name here."
        if turn.game.npcs[npc.type].hostile:
            return f"Cannot pickpocket {handle}: it would notice me at once; it is hostile."
        if wary(turn, npc):
            return f"Cannot pickpocket {handle}: they are watching me closely."
        if not npc.coins and not npc.inventory:
            return f"Cannot pickpocket {handle}: they carry nothing worth taking."
        if not self._loot(turn, npc):
            return f"Cannot pickpocket {handle}: I need a free hand."
        return npc

    def _loot(self, turn: Turn, npc: Npc) -> str | None:
        game = turn.game
        if npc.coins and game.currency and fits_in_hands(game, turn.agent, game.currency):
            return game.currency
        for handle in npc.inventory:
            if fits_in_hands(game, turn.agent, handle):
                return handle
        return None

    def apply(self, turn: Turn, handle: str) -> None:
        npc = self._target(turn, handle)
        if isinstance(npc, str):
            return turn.fail(npc)
        chance = min(0.9, max(0.1, self.settings.chance + 0.1 * (turn.agent.level - npc.level)))
        if turn.rng.random() >= chance:
            npc.wary_until = turn.state.step + self.settings.wary_steps
            turn.say(f"{handle} catches my hand and steps away, suspicious of me now.")
            turn.emit("pickpocket_failed", npc=handle, type=npc.type)
            return
        loot = self._loot(turn, npc)
        assert loot is not None, "_target refuses when there is nothing to lift"
        if loot == turn.game.currency:
            n = turn.rng.randint(1, min(npc.coins, 5))
            npc.coins -= n
        else:
            n = 1
            remove(npc.inventory, loot)
            loot = materialize(turn.game, turn.state, loot, 1)[0][0]
        add(turn.agent.hands, loot, n)
        turn.say(f"I slipped {n} {loot} from {handle} without being noticed.")
        turn.emit("pickpocket_succeeded", npc=handle, type=npc.type, object=loot, amount=n)
        acquire(turn, loot, n, how="stolen")

    def candidates(self, turn: Turn) -> Iterable[str]:
        for handle in turn.area.npcs:
            if not isinstance(self._target(turn, handle), str):
                yield f"pickpocket {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "stealth",
            "What happens after a failed pickpocket?",
            "the victim refuses to talk or trade for a while",
            ("nothing", "I lose a level", "the victim attacks at once"),
        )
