"""Trading with merchants: buy and sell.

Prices are the object's value in the game's currency (at least 1); a merchant pays
``sell_ratio`` of the value (rounded down, at least 1) for what it buys. Coins are drawn from my
hands, then from held containers and the pack. What I receive goes into my hands if it fits and
onto the ground otherwise; the feedback says which.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.rules import ActionRule, Fact, action_rule
from odyssey_env.state import Npc
from odyssey_env.turn import Turn
from odyssey_env.verbs.common import carried_handles, coins_carried, receive
from odyssey_env.verbs.social import wary
from odyssey_env.world import add, carried_count, materialize, npc_here, remove, take_carried, type_of

if TYPE_CHECKING:
    from odyssey_env.game import Game


def price(turn: Turn, type_name: str) -> int:
    return max(1, turn.game.objects[type_name].value)


def _merchant(turn: Turn, handle: str, verb: str) -> Npc | str:
    npc = npc_here(turn.state, turn.area, handle)
    if npc is None:
        return f"Cannot {verb}: there is no {handle} here."
    if not turn.game.npcs[npc.type].merchant:
        return f"Cannot {verb}: {handle} is not a merchant."
    if wary(turn, npc):
        return f"Cannot {verb}: {handle} refuses to deal with me."
    return npc


def _dealer(turn: Turn, handle: str) -> Npc | None:
    """The NPC if :func:`_merchant` would let me deal with it, else None: for listing, which needs no
    refusal text (and asks about every NPC here whenever they change)."""
    npc = npc_here(turn.state, turn.area, handle)
    if npc is None or not turn.game.npcs[npc.type].merchant or wary(turn, npc):
        return None
    return npc


@action_rule
class Buy(ActionRule):
    verb = "buy"
    params = (("amount", "amount"), ("object_name", "object"), ("npc_name", "npc"))
    description = "Buy objects from a merchant here for their value in coins."
    depends_on = ("npcs", "npc_goods", "npc_moods", "purse")

    def apply(self, turn: Turn, n: int, handle: str, merchant: str) -> None:
        npc = _merchant(turn, merchant, f"buy from {merchant}")
        if isinstance(npc, str):
            return turn.fail(npc)
        stock = npc.inventory.get(handle, 0)
        if stock < n:
            return turn.fail(f"Cannot buy {n} {handle}: {merchant} has {stock}.")
        cost = price(turn, handle) * n
        coins = coins_carried(turn)
        if coins < cost:
            return turn.fail(f"Cannot buy {n} {handle}: it costs {cost} {turn.game.currency} and I carry {coins}.")
        assert turn.game.currency is not None, "a game with merchants has a currency (checked at load)"
        take_carried(turn.game, turn.state, turn.agent, turn.game.currency, cost)
        remove(npc.inventory, handle, n)
        held = 0  # instanced objects come one by one, so some may fit in my hands and the rest not
        for piece, k in materialize(turn.game, turn.state, handle, n):
            if receive(turn, piece, k) == "in my hands":
                held += k
        where = (
            "it is in my hands"
            if held == n
            else "it is on the ground"
            if not held
            else f"{held} {'is' if held == 1 else 'are'} in my hands and {n - held} on the ground"
        )
        turn.say(f"I bought {n} {handle} from {merchant} for {cost} {turn.game.currency}; {where}.")
        turn.emit("object_bought", object=handle, amount=n, npc=merchant, cost=cost, first=turn.first("traded", handle))

    def candidates(self, turn: Turn) -> Iterable[str]:
        coins = None
        objects = turn.game.objects
        for handle in turn.area.npcs:
            npc = _dealer(turn, handle)
            if npc is None:
                continue
            if coins is None:
                coins = coins_carried(turn)
            for ware, stock in npc.inventory.items():
                most = min(stock, coins // max(1, objects[ware].value))  # price(), inlined: listed often
                if most >= 1:
                    yield f"buy 1 {ware} {handle}"
                if most > 1:
                    yield f"buy {most} {ware} {handle}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "trade",
            "How much does a merchant charge for an object?",
            "its value in coins",
            ("twice its value", "half its value", "a fixed 5 coins"),
        )


@action_rule
class Sell(ActionRule):
    verb = "sell"
    params = (("amount", "amount"), ("object_name", "object"), ("npc_name", "npc"))
    description = "Sell carried objects to a merchant here for part of their value."
    depends_on = ("npcs", "npc_moods", "hands", "worn", "containers")

    @dataclass(frozen=True)
    class Params:
        sell_ratio: float = 0.5

    def payment(self, turn: Turn, type_name: str) -> int:
        return max(1, int(turn.game.objects[type_name].value * self.settings.sell_ratio))

    def _refusal(self, turn: Turn, npc: Npc, handle: str) -> str | None:
        game, state = turn.game, turn.state
        kind = type_of(state, handle)
        t = game.objects.get(kind)
        if t is None or handle == game.currency:
            return f"{npc.handle} will not buy {handle}."
        if t.value <= 0:
            return f"{handle} is worthless to {npc.handle}."
        buys = game.npcs[npc.type].buys
        if buys and t.category not in buys:
            return f"{npc.handle} does not buy {t.category} (only {', '.join(buys)})."
        inst = state.instances.get(handle)
        if inst is not None and inst.contents:
            return f"{handle} is not empty."
        # What I wear is safe without a check here: selling draws from my hands and containers only.
        return None

    def apply(self, turn: Turn, n: int, handle: str, merchant: str) -> None:
        npc = _merchant(turn, merchant, f"sell to {merchant}")
        if isinstance(npc, str):
            return turn.fail(npc)
        game, state, agent = turn.game, turn.state, turn.agent
        have = carried_count(game, state, agent, handle)
        if have < n:
            return turn.fail(f"Cannot sell {n} {handle}: I carry {have}.")
        refusal = self._refusal(turn, npc, handle)
        if refusal:
            return turn.fail(f"Cannot sell {handle}: {refusal}")
        kind = type_of(state, handle)
        take_carried(game, state, agent, handle, n)
        if handle in state.instances:
            del state.instances[handle]
        add(npc.inventory, kind, n)
        paid = self.payment(turn, kind) * n
        assert game.currency is not None, "a game with merchants has a currency (checked at load)"
        where = receive(turn, game.currency, paid)
        turn.say(f"I sold {n} {handle} to {merchant} for {paid} {game.currency}; the coins are {where}.")
        turn.emit("object_sold", object=kind, amount=n, npc=merchant, paid=paid, first=turn.first("traded", kind))

    def candidates(self, turn: Turn) -> Iterable[str]:
        carried = None
        for merchant in turn.area.npcs:
            npc = _dealer(turn, merchant)
            if npc is None:
                continue
            if carried is None:
                carried = carried_handles(turn)
            for handle, have in carried.items():
                if self._refusal(turn, npc, handle) is None:
                    yield f"sell 1 {handle} {merchant}"
                    if have > 1:
                        yield f"sell {have} {handle} {merchant}"

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "trade",
            "What fraction of an object's value does a merchant pay when I sell it?",
            "half" if self.settings.sell_ratio == 0.5 else f"{self.settings.sell_ratio:g}",
            ("all of it", "a quarter", "double"),
        )
