"""talk to, pickpocket, buy, sell."""

from __future__ import annotations

import pytest


# ------------------------------------------------------------------ talk
def test_talk_to_a_merchant_cycles_dialogue_and_lists_wares(h):
    h.npc("mira")
    h.ok("talk to mira")
    assert 'mira says: "Fine wares, fair prices."' in h.feedback
    assert ("mira sells apple (1 coin), parchment (2 coin), boots (4 coin); "
            "buys material, food, writable, weapon, container.") in h.feedback
    assert h.events("talked_to") == [{"npc": "mira", "type": "mira", "area": "camp"}]
    h.ok("talk to mira")
    assert 'mira says: "The yard has a furnace."' in h.feedback
    h.ok("talk to mira")
    assert 'mira says: "Fine wares, fair prices."' in h.feedback


def test_talk_to_hostile_and_wary(h):
    rat = h.npc("rat")
    h.ok(f"talk to {rat.handle}")
    assert f"{rat.handle} answers only with a snarl." in h.feedback
    tom = h.npc("tom")
    tom.wary_until = h.state.step + 5
    h.ok("talk to tom")
    assert "tom eyes me with suspicion and says nothing." in h.feedback


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
    assert h.events("pickpocket_succeeded")[0]["amount"] == n


def test_pickpocket_an_item_when_the_purse_is_empty(h, scripted):
    tom = h.npc("tom")
    tom.coins = 0
    h.engine.rng = scripted([0.0])
    h.ok("pickpocket tom")
    assert h.agent.hands == {"stick": 1} and tom.inventory == {}


def test_pickpocket_caught_makes_the_victim_wary(h, scripted):
    tom = h.npc("tom")
    h.engine.rng = scripted([0.99])
    out = h.do("pickpocket tom")
    assert not out.failed and not out.invalid  # bad luck is not a refused action
    assert "tom catches my hand and steps away, suspicious of me now." in h.feedback
    assert tom.wary_until == h.state.step + 30 and tom.coins == 4
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
    (ev,) = h.events("object_bought")
    assert ev["first"] is True and ev["cost"] == 1
    assert h.outcome.reward.trade == 1


def test_buy_what_does_not_fit_lands_on_the_ground(h):
    h.npc("mira")
    h.hold("coin", 10)
    h.hold("stick")
    h.ok("buy 2 apple mira")
    assert h.agent.hands == {"coin": 8, "stick": 1} and h.area.objects == {"apple": 2}
    assert "it is on the ground" in h.feedback


def test_buy_an_instanced_object_gets_a_name(h):
    h.npc("mira")
    h.hold("coin", 2)
    h.ok("buy 1 parchment mira")
    (paper,) = list(h.agent.hands)
    assert paper.startswith("parchment_") and h.state.instances[paper].type == "parchment"


def test_buy_says_where_each_instanced_object_went(h):
    """Each bought parchment gets a name and a place of its own: one hand is free, so one lands on the ground."""
    h.npc("mira")
    h.hold("coin", 10)
    h.ok("buy 2 parchment mira")
    (held,) = [x for x in h.agent.hands if x != "coin"]
    (lying,) = list(h.area.objects)
    assert held.startswith("parchment_") and lying.startswith("parchment_")
    assert "I bought 2 parchment from mira for 4 coin; 1 is in my hands and 1 on the ground." in h.feedback


def test_buy_pays_from_the_pack(h):
    h.npc("mira")
    bag = h.wear("small_bag")
    h.stash(bag, "coin", 6)
    h.ok("buy 1 boots mira")
    assert h.state.instances[bag].contents == {"coin": 2} and h.agent.hands == {"boots": 1}


def test_buy_refusals(h):
    h.fails("buy 1 apple mira", "Cannot buy from mira: there is no mira here.")
    h.npc("tom")
    h.fails("buy 1 stick tom", "Cannot buy from tom: tom is not a merchant.")
    mira = h.npc("mira")
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
    assert h.events("object_sold")[0]["first"] is True and h.outcome.reward.trade == 1


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


def test_sell_when_coins_have_no_hand_go_to_the_ground(h):
    h.npc("mira")
    h.hold("stick")
    h.hold("resin")
    bag = h.wear("small_bag")
    h.stash(bag, "iron_ore")
    h.ok("sell 1 iron_ore mira")
    assert h.area.objects == {"coin": 1} and "the coins are on the ground" in h.feedback


@pytest.mark.parametrize(("setup", "command", "message"), [
    ("coin", "sell 1 coin mira", "Cannot sell coin: mira will not buy coin."),
    ("shed_key", "sell 1 shed_key mira", "Cannot sell shed_key: shed_key is worthless to mira."),
    ("lockpick", "sell 1 lockpick mira",
     "Cannot sell lockpick: mira does not buy tool (only material, food, writable, weapon, container)."),
    (None, "sell 1 stick mira", "Cannot sell 1 stick: I carry 0."),
])
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
