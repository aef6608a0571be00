"""What each verb lists as valid, state by state, on the tiny game (exact lists, not random walks).

The random walks of ``test_env_valid_actions.py`` check soundness and completeness over long
episodes; these tests pin each verb's listing in the small states where an off-by-one or a flipped
test would show: a hand just free, a pack with exactly enough room, a stack of one.
"""

from __future__ import annotations


def listed(h, verb: str) -> list[str]:
    return h.engine.valid_actions("player").get(verb, [])


# ------------------------------------------------------------------ always
def test_wait_and_defend_are_always_listed(h):
    va = h.engine.valid_actions("player")
    assert va["wait"] == ["wait"] and va["defend"] == ["defend"]


# ------------------------------------------------------------------ pick up
def test_pick_up_lists_what_a_free_hand_can_take_but_no_station(h):
    (bag,) = h.put("small_bag")
    h.put("stick", 2)
    h.put("workbench")
    h.hold("resin")  # one hand still free
    assert listed(h, "pick up") == [f"pick up {bag}", "pick up stick"]


def test_pick_up_with_full_hands_lists_coins_joining_coins(h):
    h.put("coin", 3)
    h.put("stick")
    h.hold("resin")
    h.hold("coin")
    assert listed(h, "pick up") == ["pick up coin"]
    h.agent.hands.pop("coin")
    h.hold("resin")
    assert listed(h, "pick up") == []


def test_pick_up_with_full_hands_lists_what_fits_the_pack(h):
    bag = h.wear("small_bag")  # capacity 4
    h.stash(bag, "stick", 2)  # room 2
    h.hold("resin", 2)
    h.put("iron_ore")  # size 2: fits exactly
    h.put("stick")
    h.put("club")  # size 2
    (other,) = h.put("big_bag")  # containers never go into the pack
    h.put("coin", 4)  # size 0
    assert listed(h, "pick up") == ["pick up iron_ore", "pick up stick", "pick up club", "pick up coin"]
    h.stash(bag, "stick")  # room 1
    assert listed(h, "pick up") == ["pick up stick", "pick up coin"]
    assert other in h.area.objects


# ------------------------------------------------------------------ drop, inspect
def test_drop_lists_each_held_kind(h):
    assert listed(h, "drop") == []
    (paper,) = h.hold("parchment")
    h.hold("coin", 3)
    assert listed(h, "drop") == [f"drop {paper}", "drop coin"]


def test_inspect_lists_the_area_creatures_and_everything_in_sight(h):
    rat = h.npc("rat")
    h.hold("stick")
    bag = h.wear("small_bag")
    h.stash(bag, "resin")
    h.put("apple")
    assert listed(h, "inspect") == [
        "inspect camp",
        f"inspect {rat.handle}",
        "inspect stick",
        f"inspect {bag}",
        "inspect resin",
        "inspect apple",
    ]


# ------------------------------------------------------------------ equip, unequip
def test_equip_lists_wearables_in_hand_and_on_the_ground_once(h):
    h.hold("boots")
    h.put("boots")
    h.put("cap")
    h.hold("club")  # a weapon is held, never equipped
    h.put("stick")
    assert listed(h, "equip") == ["equip boots", "equip cap"]


def test_equip_leaves_out_a_slot_already_worn(h):
    h.wear("boots")
    h.hold("boots")
    h.put("boots")
    (bag,) = h.put("small_bag")
    assert listed(h, "equip") == [f"equip {bag}"]
    h.wear("big_bag")
    assert listed(h, "equip") == []


def test_unequip_lists_what_a_free_hand_can_take(h):
    h.wear("boots")
    h.wear("cap")
    assert listed(h, "unequip") == ["unequip boots", "unequip cap"]
    h.hold("stick", 2)
    assert listed(h, "unequip") == []


# ------------------------------------------------------------------ containers
def test_store_lists_hands_and_ground_together_per_container(h):
    (held,) = h.hold("small_bag")
    h.hold("stick")  # one stick in hand and two on the ground: three to store
    h.put("stick", 2)
    h.put("resin")
    h.put("workbench")
    (paper,) = h.put("parchment")
    worn = h.wear("big_bag")
    h.put("big_bag")  # no container in a container
    assert listed(h, "store") == [
        f"store 1 stick {held}",
        f"store 3 stick {held}",
        f"store 1 resin {held}",
        f"store 1 {paper} {held}",
        f"store 1 stick {worn}",
        f"store 3 stick {worn}",
        f"store 1 resin {worn}",
        f"store 1 {paper} {worn}",
    ]


def test_store_lists_what_only_the_hands_hold(h):
    bag = h.wear("small_bag")
    h.hold("stick", 2)
    assert listed(h, "store") == [f"store 1 stick {bag}", f"store 2 stick {bag}"]


def test_store_lists_nothing_without_a_container(h):
    h.hold("stick")
    assert listed(h, "store") == []


def test_take_out_lists_what_fits_in_the_hands(h):
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 2)
    h.stash(bag, "coin", 3)
    assert listed(h, "take out") == [f"take out stick {bag}", f"take out coin {bag}"]
    h.hold("coin")
    h.hold("resin")
    assert listed(h, "take out") == [f"take out coin {bag}"]  # coins join the coins in hand


def test_discard_lists_one_and_all_of_each_stack(h):
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 3)
    h.stash(bag, "resin")
    assert listed(h, "discard") == [f"discard 1 stick {bag}", f"discard 3 stick {bag}", f"discard 1 resin {bag}"]
    h.stash(bag, "resin")
    assert listed(h, "discard")[-2:] == [f"discard 1 resin {bag}", f"discard 2 resin {bag}"]


# ------------------------------------------------------------------ movement
def test_enter_lists_open_ways_and_ways_my_key_opens(h):
    assert listed(h, "enter") == ["enter yard"]
    h.agent.area = "yard"
    h.clear()
    assert listed(h, "enter") == ["enter camp"]
    h.hold("shed_key")
    assert listed(h, "enter") == ["enter camp", "enter shed"]


def test_lockpick_lists_locked_pickable_ways_only(h):
    h.hold("lockpick")
    assert listed(h, "lockpick") == ["lockpick vault"]
    h.agent.area = "yard"
    h.clear()
    assert listed(h, "lockpick") == []  # the shed's lock cannot be picked, the camp is open


# ------------------------------------------------------------------ combat, social
def test_attack_and_throw_list_enemies_only(h):
    rat = h.npc("rat")
    h.npc("tom")
    wolf = h.npc("wolf")
    h.hold("stick")
    assert listed(h, "attack") == [f"attack {rat.handle}", f"attack {wolf.handle}"]
    assert listed(h, "throw") == [f"throw stick {rat.handle}", f"throw stick {wolf.handle}"]
    h.agent.hands.clear()
    assert listed(h, "throw") == []


def test_talk_lists_everyone_here(h):
    rat = h.npc("rat")
    h.npc("tom")
    assert listed(h, "talk to") == [f"talk to {rat.handle}", "talk to tom"]


def test_pickpocket_lists_friendly_unwary_people_with_something_i_can_take(h):
    h.npc("rat")
    tom = h.npc("tom")
    mira = h.npc("mira")
    assert listed(h, "pickpocket") == ["pickpocket tom", "pickpocket mira"]
    tom.wary_until = h.state.step
    assert listed(h, "pickpocket") == ["pickpocket mira"]
    tom.wary_until = h.state.step - 1
    mira.coins, mira.inventory = 0, {}
    assert listed(h, "pickpocket") == ["pickpocket tom"]


def test_buy_lists_what_my_coins_can_pay_for(h):
    mira = h.npc("mira")  # apple 1 (3 in stock), parchment 2 (2), boots 4 (1)
    assert listed(h, "buy") == []
    h.hold("coin", 4)
    assert listed(h, "buy") == [
        "buy 1 apple mira",
        "buy 3 apple mira",
        "buy 1 parchment mira",
        "buy 2 parchment mira",
        "buy 1 boots mira",
    ]
    h.agent.hands["coin"] = 3
    assert listed(h, "buy") == ["buy 1 apple mira", "buy 3 apple mira", "buy 1 parchment mira"]
    mira.wary_until = h.state.step
    assert listed(h, "buy") == []


def test_buy_counts_coins_in_the_pack(h):
    h.npc("mira")
    bag = h.wear("small_bag")
    h.stash(bag, "coin", 2)
    assert listed(h, "buy") == ["buy 1 apple mira", "buy 2 apple mira", "buy 1 parchment mira"]


def test_sell_lists_what_the_merchant_buys(h):
    h.npc("tom")
    h.npc("mira")  # buys material, food, writable, weapon, container
    h.hold("stick")
    h.hold("lockpick")  # a tool: not bought
    bag = h.wear("small_bag")
    h.stash(bag, "resin", 2)
    h.stash(bag, "coin", 5)  # never sold
    assert listed(h, "sell") == ["sell 1 stick mira", "sell 1 resin mira", "sell 2 resin mira"]


# ------------------------------------------------------------------ crafting, food, writing
def test_craft_lists_what_carried_ingredients_make_here(h):
    h.put("workbench")
    h.hold("stick", 1)
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 2)
    h.stash(bag, "resin", 1)
    # 3 sticks, 1 resin: plank x3 (workbench), torch x1, club x1 (workbench), big_bag x1 (workbench), charm x1
    assert listed(h, "craft") == [
        "craft 1 plank",
        "craft 3 plank",
        "craft 1 torch",
        "craft 1 club",
        "craft 1 big_bag",
        "craft 1 charm",
    ]
    h.clear()  # no workbench any more
    assert listed(h, "craft") == ["craft 1 torch", "craft 1 charm"]


def test_craft_lists_only_what_every_ingredient_allows(h):
    h.put("workbench")
    h.hold("stick")  # one stick, no resin: a plank, not a club (2 sticks) nor a torch (resin)
    assert listed(h, "craft") == ["craft 1 plank"]
    h.hold("stick")
    assert listed(h, "craft") == ["craft 1 plank", "craft 2 plank", "craft 1 club"]


def test_craft_lists_nothing_when_nothing_is_carried(h):
    h.put("workbench")
    h.put("stick", 5)
    assert listed(h, "craft") == []


def test_disassemble_lists_empty_salvageable_objects_in_hand_or_here(h):
    h.hold("club")
    h.put("torch")
    h.put("charm")  # not salvageable
    h.put("plank")  # a recipe that yields 2
    (full,) = h.put("big_bag")
    h.stash(full, "stick")
    assert listed(h, "disassemble") == ["disassemble club", "disassemble torch"]
    h.state.instances[full].contents.clear()
    assert listed(h, "disassemble") == ["disassemble club", "disassemble torch", f"disassemble {full}"]


def test_eat_lists_food_carried_or_here(h):
    h.put("stick")
    assert listed(h, "eat") == []
    h.put("apple")
    assert listed(h, "eat") == ["eat apple"]
    h.clear()
    h.stash(h.wear("small_bag"), "apple")
    assert listed(h, "eat") == ["eat apple"]


def test_write_lists_each_held_writable_with_a_tool(h):
    (paper,) = h.hold("parchment")
    assert listed(h, "write") == []
    h.hold("quill")
    assert listed(h, "write") == [f'write "notes" {paper}']
