"""talk to, pickpocket, buy, sell."""

from __future__ import annotations

import pytest

from .conftest import kind


# ------------------------------------------------------------------ talk
def test_talk_to_a_merchant_cycles_dialogue_and_lists_wares(h):
    h.npc("mira")
    h.ok("talk to mira")
    assert 'mira says: "Fine wares, fair prices."' in h.feedback
    assert (
        "mira sells apple (1 coin), parchment (2 coin), boots (4 coin); "
        "buys material, food, writable, weapon, container."
    ) in h.feedback
    assert h.emitted() == [("talked_to", {"npc": "mira", "type": "mira", "area": "camp"})]
    h.ok("talk to mira")
    assert 'mira says: "The yard has a furnace."' in h.feedback
    h.ok("talk to mira")
    assert 'mira says: "Fine wares, fair prices."' in h.feedback


def test_talk_to_hostile_and_wary(h):
    rat = h.npc("rat")
    h.ok(f"talk to {rat.handle}")
    assert f"{rat.handle} answers only with a snarl." in h.feedback
    assert h.emitted() == [("talked_to", {"npc": rat.handle, "type": "rat", "area": "camp"})]
    tom = h.npc("tom")
    tom.wary_until = h.state.step + 1  # wary through the next step, and no longer
    h.ok("talk to tom")
    assert "tom eyes me with suspicion and says nothing." in h.feedback
    assert "Mind the rat" not in h.feedback
    assert h.emitted() == [("talked_to", {"npc": "tom", "type": "tom", "area": "camp"})]
    h.ok("talk to tom")
    assert 'tom says: "Mind the rat in the yard."' in h.feedback


def test_talk_to_someone_without_dialogue_or_wares(h):
    tom = h.npc("tom")  # a villager: dialogue, no wares
    h.ok("talk to tom")
    assert h.feedback == 'tom says: "Mind the rat in the yard."'
    assert tom.wary_until == -1
    assert h.emitted() == [("talked_to", {"npc": "tom", "type": "tom", "area": "camp"})]


def test_talk_refusal(h):
    h.npc("tom", area="yard")
    h.fails("talk to tom", "Cannot talk to tom: there is no one by that name here.")


# ------------------------------------------------------------------ pickpocket
def test_pickpocket_coins(h, scripted):
    tom = h.npc("tom")  # 4 coins, carries a stick
    h.engine.rng = scripted([0.0])
    h.ok("pickpocket tom")
    n = h.agent.hands["coin"]
    assert 1 <= n <= 4 and tom.coins == 4 - n
    assert f"I slipped {n} coin from tom without being noticed." in h.feedback
    assert h.emitted() == [
        ("pickpocket_succeeded", {"npc": "tom", "type": "tom", "object": "coin", "amount": n}),
        ("object_acquired", {"object": "coin", "handle": "coin", "amount": n, "how": "stolen", "first": True}),
    ]


def test_pickpocket_takes_at_most_five_coins(h, scripted):
    mira = h.npc("mira")  # 10 coins
    amounts = set()
    for draw in range(20):
        mira.coins = 10
        h.agent.hands.clear()
        h.engine.rng = scripted([0.0, draw / 20])  # success, then the draw of the amount
        h.ok("pickpocket mira")
        amounts.add(h.agent.hands["coin"])
        assert mira.coins == 10 - h.agent.hands["coin"]
        assert h.kinds() == ["pickpocket_succeeded", "object_acquired"]
    assert amounts == {1, 2, 3, 4, 5}


def test_pickpocket_odds_follow_the_level_difference(h, scripted):
    tom = h.npc("tom")

    def attempt(draw: float, my_level: int, tom_level: int = 1) -> str:
        tom.coins, tom.wary_until, h.agent.level, tom.level = 4, -1, my_level, tom_level
        h.agent.hands.clear()
        h.engine.rng = scripted([draw])
        h.ok("pickpocket tom")
        return h.emitted()[0][0]

    assert attempt(0.44, 1) == "pickpocket_succeeded"  # equal levels: 0.45
    assert attempt(0.45, 1) == "pickpocket_failed"
    assert attempt(0.64, 3) == "pickpocket_succeeded"  # two levels above: 0.65
    assert attempt(0.66, 3) == "pickpocket_failed"
    assert attempt(0.34, 1, 2) == "pickpocket_succeeded"  # a level below: 0.35
    assert attempt(0.36, 1, 2) == "pickpocket_failed"
    assert attempt(0.89, 10) == "pickpocket_succeeded"  # capped at 0.9
    assert attempt(0.9, 10) == "pickpocket_failed"
    assert attempt(0.099, 1, 9) == "pickpocket_succeeded"  # floored at 0.1
    assert attempt(0.1, 1, 9) == "pickpocket_failed"


def test_pickpocket_an_item_when_the_purse_is_empty(h, scripted):
    tom = h.npc("tom")
    tom.coins = 0
    h.engine.rng = scripted([0.0])
    h.ok("pickpocket tom")
    assert h.agent.hands == {"stick": 1} and tom.inventory == {}
    assert h.emitted() == [
        ("pickpocket_succeeded", {"npc": "tom", "type": "tom", "object": "stick", "amount": 1}),
        ("object_acquired", {"object": "stick", "handle": "stick", "amount": 1, "how": "stolen", "first": True}),
    ]


def test_pickpocket_an_instanced_item_names_exactly_one(h, scripted):
    mira = h.npc("mira")
    mira.coins, mira.inventory = 0, {"parchment": 1}
    before = set(h.state.instances)
    h.engine.rng = scripted([0.0])
    h.ok("pickpocket mira")
    (paper,) = set(h.state.instances) - before  # one new sheet, in my hand
    assert h.agent.hands == {paper: 1} and h.state.instances[paper].type == "parchment" and not mira.inventory
    assert h.events("pickpocket_succeeded") == [{"npc": "mira", "type": "mira", "object": paper, "amount": 1}]


def test_pickpocket_an_item_when_coins_have_no_hand(h, scripted):
    """The purse is full but my hands hold no coins and have no room: an item, which needs a hand too, fails the
    same way; with one hand free the coins come first."""
    tom = h.npc("tom")
    h.hold("resin")
    h.engine.rng = scripted([0.0])
    h.ok("pickpocket tom")
    assert "coin" in h.agent.hands and tom.inventory == {"stick": 1}
    assert h.kinds() == ["pickpocket_succeeded", "object_acquired"] and h.emitted()[0][1]["object"] == "coin"


def test_pickpocket_caught_makes_the_victim_wary(h, scripted):
    tom = h.npc("tom")
    h.engine.rng = scripted([0.99])
    out = h.do("pickpocket tom")
    assert not out.failed and not out.invalid  # bad luck is not a refused action
    assert "tom catches my hand and steps away, suspicious of me now." in h.feedback
    assert tom.wary_until == h.state.step + 30 and tom.coins == 4
    assert h.emitted() == [("pickpocket_failed", {"npc": "tom", "type": "tom"})]
    h.fails("pickpocket tom", "Cannot pickpocket tom: they are watching me closely.")
    h.ok("talk to tom")
    assert "eyes me with suspicion" in h.feedback


def test_pickpocket_refusals(h):
    h.fails("pickpocket tom", "Cannot pickpocket tom: there is no one by that name here.")
    rat = h.npc("rat")
    h.fails(f"pickpocket {rat.handle}", f"Cannot pickpocket {rat.handle}: it would notice me at once; it is hostile.")
    tom = h.npc("tom")
    h.hold("resin", 2)
    h.fails("pickpocket tom", "Cannot pickpocket tom: I need a free hand.")
    tom.coins, tom.inventory = 0, {}
    h.fails("pickpocket tom", "Cannot pickpocket tom: they carry nothing worth taking.")


# ------------------------------------------------------------------ buy
def test_buy_into_hands(h):
    mira = h.npc("mira")
    h.hold("coin", 5)
    h.ok("buy 1 apple mira")
    assert h.agent.hands == {"coin": 4, "apple": 1} and mira.inventory["apple"] == 2
    assert "I bought 1 apple from mira for 1 coin; it is in my hands." in h.feedback
    assert h.emitted() == [
        ("object_acquired", {"object": "apple", "handle": "apple", "amount": 1, "how": "received", "first": True}),
        ("object_bought", {"object": "apple", "amount": 1, "npc": "mira", "cost": 1, "first": True}),
    ]
    assert h.outcome.reward.trade == 1
    h.ok("buy 2 apple mira")
    assert h.events("object_bought") == [{"object": "apple", "amount": 2, "npc": "mira", "cost": 2, "first": False}]
    assert h.outcome.reward.trade == 0 and h.agent.hands == {"coin": 2, "apple": 1}
    assert h.area.objects == {"apple": 2}  # no third hand


def test_buy_what_does_not_fit_lands_on_the_ground(h):
    h.npc("mira")
    h.hold("coin", 10)
    h.hold("stick")
    h.ok("buy 2 apple mira")
    assert h.agent.hands == {"coin": 8, "stick": 1} and h.area.objects == {"apple": 2}
    assert "I bought 2 apple from mira for 2 coin; it is on the ground." in h.feedback
    # nothing came into my hands, so nothing was acquired (it can still be picked up)
    assert h.emitted() == [("object_bought", {"object": "apple", "amount": 2, "npc": "mira", "cost": 2, "first": True})]


def test_buy_an_instanced_object_gets_a_name(h):
    h.npc("mira")
    h.hold("coin", 2)
    h.ok("buy 1 parchment mira")
    (paper,) = list(h.agent.hands)
    assert paper.startswith("parchment_") and h.state.instances[paper].type == "parchment"
    assert h.emitted() == [
        ("object_acquired", {"object": "parchment", "handle": paper, "amount": 1, "how": "received", "first": True}),
        ("object_bought", {"object": "parchment", "amount": 1, "npc": "mira", "cost": 2, "first": True}),
    ]


def test_buy_says_where_each_instanced_object_went(h):
    """Each bought parchment gets a name and a place of its own: one hand is free, so one lands on the ground."""
    h.npc("mira")
    h.hold("coin", 10)
    h.ok("buy 2 parchment mira")
    (held,) = [x for x in h.agent.hands if x != "coin"]
    (lying,) = list(h.area.objects)
    assert held.startswith("parchment_") and lying.startswith("parchment_")
    assert "I bought 2 parchment from mira for 4 coin; 1 is in my hands and 1 on the ground." in h.feedback
    assert [kind for kind, _ in h.emitted()] == ["object_acquired", "object_bought"]


def test_buy_three_instanced_objects_two_in_hand(h):
    mira = h.npc("mira")
    mira.inventory["parchment"] = 3
    bag = h.wear("small_bag")
    h.stash(bag, "coin", 6)
    h.ok("buy 3 parchment mira")
    assert len(h.agent.hands) == 2 and len(h.area.objects) == 1
    assert "I bought 3 parchment from mira for 6 coin; 2 are in my hands and 1 on the ground." in h.feedback
    assert h.kinds() == ["object_acquired", "object_acquired", "object_bought"]


def test_buy_pays_from_the_pack(h):
    h.npc("mira")
    bag = h.wear("small_bag")
    h.stash(bag, "coin", 6)
    h.ok("buy 1 boots mira")
    assert h.state.instances[bag].contents == {"coin": 2} and h.agent.hands == {"boots": 1}
    assert h.kinds() == ["object_acquired", "object_bought"]


def test_buy_refusals(h):
    h.fails("buy 1 apple mira", "Cannot buy from mira: there is no mira here.")
    h.npc("tom")
    h.fails("buy 1 stick tom", "Cannot buy from tom: tom is not a merchant.")
    mira = h.npc("mira")
    h.fails("buy 1 apple mira", "Cannot buy 1 apple: it costs 1 coin and I carry 0.")
    h.hold("coin", 3)
    h.fails("buy 4 apple mira", "Cannot buy 4 apple: mira has 3.")
    h.fails("buy 1 stick mira", "Cannot buy 1 stick: mira has 0.")
    h.fails("buy 1 boots mira", "Cannot buy 1 boots: it costs 4 coin and I carry 3.")
    mira.wary_until = h.state.step + 10
    h.fails("buy 1 apple mira", "Cannot buy from mira: mira refuses to deal with me.")
    assert h.agent.hands == {"coin": 3}


# ------------------------------------------------------------------ sell
def test_sell_for_half_the_value(h):
    mira = h.npc("mira")
    h.hold("iron_ore", 2)
    h.ok("sell 2 iron_ore mira")
    assert h.agent.hands == {"coin": 2} and mira.inventory["iron_ore"] == 2  # 3 * 0.5 -> 1 each
    assert "I sold 2 iron_ore to mira for 2 coin; the coins are in my hands." in h.feedback
    assert h.emitted() == [
        ("object_acquired", {"object": "coin", "handle": "coin", "amount": 2, "how": "received", "first": True}),
        ("object_sold", {"object": "iron_ore", "amount": 2, "npc": "mira", "paid": 2, "first": True}),
    ]
    assert h.outcome.reward.trade == 1


def test_sell_pays_at_least_one_coin(h):
    h.npc("mira")
    h.hold("stick")  # value 1: half is 0.5
    h.ok("sell 1 stick mira")
    assert h.agent.hands == {"coin": 1}
    assert h.events("object_sold")[0]["paid"] == 1


def test_sell_from_the_pack_and_an_instance(h):
    mira = h.npc("mira")
    bag = h.wear("small_bag")
    h.stash(bag, "resin")
    (paper,) = h.hold("parchment")
    h.ok("sell 1 resin mira")
    assert h.state.instances[bag].contents == {} and h.agent.hands["coin"] == 1
    h.ok(f"sell 1 {paper} mira")
    assert paper not in h.state.instances and mira.inventory["parchment"] == 3
    assert h.agent.hands == {"coin": 2}
    assert h.events("object_sold") == [{"object": "parchment", "amount": 1, "npc": "mira", "paid": 1, "first": True}]


def test_sell_when_coins_have_no_hand_go_to_the_ground(h):
    h.npc("mira")
    h.hold("stick")
    h.hold("resin")
    bag = h.wear("small_bag")
    h.stash(bag, "iron_ore")
    h.ok("sell 1 iron_ore mira")
    assert h.area.objects == {"coin": 1} and "the coins are on the ground" in h.feedback
    assert h.emitted() == [
        ("object_sold", {"object": "iron_ore", "amount": 1, "npc": "mira", "paid": 1, "first": True})
    ]


@pytest.mark.parametrize(
    ("setup", "command", "message"),
    [
        ("coin", "sell 1 coin mira", "Cannot sell coin: mira will not buy coin."),
        ("shed_key", "sell 1 shed_key mira", "Cannot sell shed_key: shed_key is worthless to mira."),
        (
            "lockpick",
            "sell 1 lockpick mira",
            "Cannot sell lockpick: mira does not buy tool (only material, food, writable, weapon, container).",
        ),
        (None, "sell 1 stick mira", "Cannot sell 1 stick: I carry 0."),
    ],
)
def test_sell_refusals(h, setup, command, message):
    h.npc("mira")
    if setup:
        h.hold(setup)
    h.fails(command, message)


def test_sell_a_full_bag_is_refused(h):
    h.npc("mira")
    (bag,) = h.hold("small_bag")
    h.stash(bag, "stick")
    h.fails(f"sell 1 {bag} mira", f"Cannot sell {bag}: {bag} is not empty.")


def test_sell_merchant_refusals(h):
    h.hold("stick")
    h.fails("sell 1 stick mira", "Cannot sell to mira: there is no mira here.")
    h.npc("tom")
    h.fails("sell 1 stick tom", "Cannot sell to tom: tom is not a merchant.")
    mira = h.npc("mira")
    mira.wary_until = h.state.step + 3
    h.fails("sell 1 stick mira", "Cannot sell to mira: mira refuses to deal with me.")


def test_sell_a_held_pair_while_wearing_another(variant):
    """Worn things are never sold (selling draws from hands and containers only), but a held pair of boots is
    mine to sell even while I wear boots of the same kind."""

    def mira_buys_armor(world):
        kind(world, "npcs", "mira")["buys"] = ["armor"]

    h = variant(mira_buys_armor)
    h.npc("mira")
    h.wear("boots")
    h.hold("boots")
    assert "sell 1 boots mira" in h.engine.valid_actions("player")["sell"]
    h.ok("sell 1 boots mira")
    assert h.agent.equipment == {"feet": "boots"} and h.agent.hands == {"coin": 2}
    assert h.kinds() == ["object_acquired", "object_sold"]
    h.fails("sell 1 boots mira", "Cannot sell 1 boots: I carry 0.")
    assert h.agent.equipment == {"feet": "boots"}


def test_talk_cycles_through_a_longer_dialogue_in_order(variant):
    def three_lines(world):
        kind(world, "npcs", "tom")["dialogue"] = ["One.", "Two.", "Three."]

    h = variant(three_lines)
    h.npc("tom")
    said = []
    for _ in range(4):
        h.ok("talk to tom")
        said.append(h.feedback)
        assert h.kinds() == ["talked_to"]
    assert said == ['tom says: "One."', 'tom says: "Two."', 'tom says: "Three."', 'tom says: "One."']


def test_a_worthless_ware_sells_for_one_coin(h):
    mira = h.npc("mira")
    mira.inventory = {"shed_key": 1}  # value 0
    h.ok("talk to mira")
    assert "mira sells shed_key (1 coin);" in h.feedback
    h.hold("coin", 1)
    assert h.engine.valid_actions("player")["buy"] == ["buy 1 shed_key mira"]
    h.ok("buy 1 shed_key mira")
    assert h.agent.hands == {"shed_key": 1}
    assert h.events("object_bought")[0]["cost"] == 1
