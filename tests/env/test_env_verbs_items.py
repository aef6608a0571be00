"""pick up, drop, inspect, equip, unequip: success paths and every refusal, on the tiny game."""

from __future__ import annotations

from .conftest import kind


# ------------------------------------------------------------------ pick up
def test_pick_up_one_at_a_time(h):
    h.put("stick", 2)
    h.ok("pick up stick")
    assert h.agent.hands == {"stick": 1} and h.area.objects == {"stick": 1}
    assert "I picked up 1 stick." in h.feedback
    assert h.emitted() == [
        ("object_acquired", {"object": "stick", "handle": "stick", "amount": 1, "how": "picked", "first": True})
    ]
    h.ok("pick up stick")
    assert h.agent.hands == {"stick": 2} and "stick" not in h.area.objects
    assert h.emitted() == [
        ("object_acquired", {"object": "stick", "handle": "stick", "amount": 1, "how": "picked", "first": False})
    ]


def test_pick_up_takes_the_whole_coin_pile_into_one_hand(h):
    h.put("coin", 5)
    h.hold("stick")
    h.ok("pick up coin")
    assert h.agent.hands == {"stick": 1, "coin": 5}
    assert h.emitted() == [
        ("object_acquired", {"object": "coin", "handle": "coin", "amount": 5, "how": "picked", "first": True})
    ]
    h.put("coin", 3)
    h.ok("pick up coin")  # coins join the pile: no extra hand needed
    assert h.agent.hands["coin"] == 8 and "I picked up 3 coin." in h.feedback
    assert h.events("object_acquired")[0]["amount"] == 3


def test_pick_up_into_pack_when_hands_are_full(h):
    bag = h.wear("small_bag")
    h.hold("stick", 2)
    h.put("resin")
    h.ok("pick up resin")
    assert h.state.instances[bag].contents == {"resin": 1} and h.agent.hands == {"stick": 2}
    assert f"My hands are full, so I put 1 resin into {bag}." in h.feedback
    assert h.emitted() == [
        ("object_acquired", {"object": "resin", "handle": "resin", "amount": 1, "how": "picked", "first": True})
    ]


def test_pick_up_into_a_pack_with_exactly_enough_room(h):
    bag = h.wear("small_bag")  # capacity 4
    h.stash(bag, "iron_ore")  # size 2: room 2 left
    h.hold("stick", 2)
    h.put("iron_ore")
    h.ok("pick up iron_ore")
    assert h.state.instances[bag].contents == {"iron_ore": 2} and not h.area.objects
    assert h.kinds() == ["object_acquired"]
    h.put("resin")
    h.fails("pick up resin", "my hands are full and I have no room for it")


def test_coins_go_into_the_pack_when_the_hands_are_full(h):
    bag = h.wear("small_bag")
    h.hold("stick", 2)
    h.put("coin", 7)
    h.ok("pick up coin")  # coins take no room: the whole pile fits
    assert h.state.instances[bag].contents == {"coin": 7} and "coin" not in h.area.objects
    assert f"My hands are full, so I put 7 coin into {bag}." in h.feedback
    assert h.emitted() == [
        ("object_acquired", {"object": "coin", "handle": "coin", "amount": 7, "how": "picked", "first": True})
    ]


def test_pick_up_instance_by_name(h):
    (paper,) = h.put("parchment")
    h.ok(f"pick up {paper}")
    assert h.agent.hands == {paper: 1} and not h.area.objects
    assert h.emitted() == [
        ("object_acquired", {"object": "parchment", "handle": paper, "amount": 1, "how": "picked", "first": True})
    ]


def test_pick_up_refusals(h):
    h.fails("pick up stick", "Cannot pick up stick: there is none here.")
    h.put("workbench")
    h.fails("pick up workbench", "Cannot pick up workbench: it is fixed in place.")
    h.hold("stick", 2)
    h.put("resin")
    h.fails("pick up resin", "Cannot pick up resin: my hands are full and I have no room for it.")
    bag = h.wear("small_bag")
    h.stash(bag, "iron_ore", 2)  # capacity 4, now full
    h.fails("pick up resin", "Cannot pick up resin: my hands are full and I have no room for it.")
    h.state.instances[bag].contents.clear()
    (big,) = h.put("big_bag")
    h.fails(f"pick up {big}", f"Cannot pick up {big}: my hands are full")  # bags never go into bags
    assert h.area.objects == {"workbench": 1, "resin": 1, big: 1}


# ------------------------------------------------------------------ drop
def test_drop_everything_of_a_kind(h):
    h.hold("stick", 2)
    h.ok("drop stick")
    assert not h.agent.hands and h.area.objects == {"stick": 2}
    assert "I dropped 2 stick." in h.feedback
    assert h.emitted() == [("object_dropped", {"object": "stick", "handle": "stick", "amount": 2, "area": "camp"})]


def test_drop_an_instance_reports_its_type(h):
    (paper,) = h.hold("parchment")
    h.ok(f"drop {paper}")
    assert h.area.objects == {paper: 1}
    assert h.emitted() == [("object_dropped", {"object": "parchment", "handle": paper, "amount": 1, "area": "camp"})]


def test_drop_refusal(h):
    h.put("stick")
    h.fails("drop stick", "Cannot drop stick: I am not holding it.")
    assert h.area.objects == {"stick": 1}


# ------------------------------------------------------------------ inspect
def test_inspect_area_npc_and_objects(h):
    h.ok("inspect camp")
    assert "camp: A quiet camp around a workbench." in h.feedback
    assert h.emitted() == [("area_inspected", {"area": "camp"})]
    rat = h.npc("rat")
    h.ok(f"inspect {rat.handle}")
    assert f"{rat.handle}: A big grey rat. It looks hostile; level 1, health 12/12." in h.feedback
    assert h.emitted() == [("npc_inspected", {"npc": rat.handle, "type": "rat"})]
    h.npc("tom")
    h.ok("inspect tom")
    assert "It looks friendly" in h.feedback
    h.put("torch")
    h.ok("inspect torch")
    assert (
        "torch: A resin torch. It is a tool of level 1, size 1, worth 2 coin. Held, it gives attack 3. "
        "It can be used to light. Crafting 1 takes 1 stick, 1 resin."
    ) in h.feedback
    assert h.emitted() == [("object_inspected", {"object": "torch", "handle": "torch"})]
    h.hold("stick")
    h.ok("inspect stick")
    assert "It is an ingredient of plank, torch, club, big_bag." in h.feedback
    h.hold("boots")
    h.ok("inspect boots")
    assert "Worn (feet), it gives defense 1." in h.feedback


def test_inspect_container_and_writable_contents(h):
    bag = h.wear("small_bag")
    h.stash(bag, "stick")
    h.stash(bag, "parchment")
    (paper,) = [x for x in h.state.instances[bag].contents if x.startswith("parchment")]
    h.ok(f"inspect {bag}")
    assert f"It holds 1 stick, 1 {paper} (room 3 of 4)." in h.feedback
    h.ok(f"inspect {paper}")
    assert "It is blank." in h.feedback
    assert h.emitted() == [("object_inspected", {"object": "parchment", "handle": paper})]
    h.state.instances[paper].text = "meet at dawn"
    h.ok(f"inspect {paper}")
    assert 'It reads: "meet at dawn".' in h.feedback


def test_inspect_refusals(h):
    h.fails("inspect yard", "Cannot inspect yard: I do not see it here or on me.")
    h.fails("inspect stick", "Cannot inspect stick: I do not see it here or on me.")
    h.npc("rat", area="yard")
    h.fails("inspect rat_0", "Cannot inspect rat_0")


# ------------------------------------------------------------------ equip / unequip
def test_equip_armor_from_hands(h):
    h.hold("boots")
    h.ok("equip boots")
    assert h.agent.equipment == {"feet": "boots"} and not h.agent.hands
    assert h.agent.defense == 1 and "I equipped boots (feet)." in h.feedback
    assert h.emitted() == [("object_equipped", {"object": "boots", "handle": "boots", "slot": "feet"})]


def test_equip_container_from_ground_becomes_pack(h):
    (bag,) = h.put("small_bag")
    h.ok(f"equip {bag}")
    assert h.agent.pack == bag and not h.area.objects
    assert h.emitted() == [
        ("object_acquired", {"object": "small_bag", "handle": bag, "amount": 1, "how": "picked", "first": True}),
        ("object_equipped", {"object": "small_bag", "handle": bag, "slot": "pack"}),
    ]


def test_equip_armor_from_the_ground(h):
    h.put("boots")
    h.ok("equip boots")
    assert h.agent.equipment == {"feet": "boots"} and not h.area.objects and h.agent.defense == 1
    assert [kind for kind, _ in h.emitted()] == ["object_acquired", "object_equipped"]


def test_equip_refusals(h):
    h.fails("equip boots", "Cannot equip boots: it is neither in my hands nor here.")
    h.hold("club")
    h.fails("equip club", "Cannot equip club: weapons are held in the hands, not equipped.")
    h.put("stick")
    h.fails("equip stick", "Cannot equip stick: it is not something to wear.")
    h.wear("boots")
    h.put("boots")
    h.fails("equip boots", "Cannot equip boots: I already wear boots (feet).")
    assert h.area.objects == {"stick": 1, "boots": 1}


def test_unequip_into_a_free_hand(h):
    h.wear("boots")
    h.agent.defense = 1
    h.ok("unequip boots")
    assert h.agent.hands == {"boots": 1} and not h.agent.equipment and h.agent.defense == 0
    assert "I unequipped boots and now hold it." in h.feedback
    assert h.emitted() == [("object_unequipped", {"object": "boots", "handle": "boots", "slot": "feet"})]


def test_unequip_keeps_the_defense_of_what_stays_worn(h):
    h.hold("cap")
    h.ok("equip cap")
    h.hold("boots")
    h.ok("equip boots")
    assert h.agent.defense == 3  # cap 2 + boots 1
    h.ok("unequip boots")
    assert h.agent.defense == 2 and h.agent.equipment == {"head": "cap"}
    assert h.kinds() == ["object_unequipped"]


def test_unequip_refusals(h):
    h.fails("unequip boots", "Cannot unequip boots: I am not wearing it.")
    h.wear("boots")
    h.hold("stick", 2)
    h.fails("unequip boots", "Cannot unequip boots: I need a free hand to hold it.")
    assert h.agent.equipment == {"feet": "boots"}


def test_coins_that_take_room_fill_what_is_left_of_the_pack(variant):
    def heavy_coins(world):
        kind(world, "objects", "coin")["size"] = 2

    h = variant(heavy_coins)
    bag = h.wear("small_bag")  # capacity 4
    h.stash(bag, "stick")  # room 3: one coin of size 2
    h.hold("resin", 2)
    h.put("coin", 5)
    h.ok("pick up coin")
    assert h.state.instances[bag].contents == {"stick": 1, "coin": 1} and h.area.objects == {"coin": 4}
    assert f"My hands are full, so I put 1 coin into {bag}." in h.feedback
    assert h.events("object_acquired")[0]["amount"] == 1


def test_equipping_updates_defense_at_once_even_without_the_attack_update_rule(variant):
    def no_stats(world):
        world["game"]["disable"] = ["attack_update"]

    h = variant(no_stats)
    h.hold("cap")
    h.ok("equip cap")
    assert h.agent.defense == 2
    h.put("boots")
    h.ok("equip boots")
    assert h.agent.defense == 3 and h.kinds() == ["object_acquired", "object_equipped"]
    h.ok("unequip cap")
    assert h.agent.defense == 1 and h.kinds() == ["object_unequipped"]


def test_inspect_food_and_a_written_instance(h):
    h.put("apple")
    h.ok("inspect apple")
    assert h.feedback == (
        "apple: A red apple. It is a food of level 1, size 1, worth 1 coin. Eating it restores 10 health."
    )
    assert h.emitted() == [("object_inspected", {"object": "apple", "handle": "apple"})]
    (paper,) = h.hold("parchment")
    h.state.instances[paper].text = "hi"
    h.ok(f"inspect {paper}")
    assert h.feedback == (
        f'{paper}: A sheet of parchment. It is a writable of level 1, size 0, worth 2 coin. It reads: "hi".'
    )


def test_inspect_an_empty_bag(h):
    bag = h.wear("small_bag")
    h.ok(f"inspect {bag}")
    assert h.feedback == (
        f"{bag}: A small bag. It is a container of level 1, size 1, worth 3 coin. It holds nothing (room 4 of 4)."
    )
    assert h.emitted() == [("object_inspected", {"object": "small_bag", "handle": bag})]


def test_inspect_what_i_wear_and_what_my_pack_holds(h):
    h.wear("boots")
    bag = h.wear("small_bag")
    h.stash(bag, "resin")
    h.ok("inspect boots")
    assert h.emitted() == [("object_inspected", {"object": "boots", "handle": "boots"})]
    h.ok("inspect resin")
    assert "resin: A lump of resin." in h.feedback
    assert h.feedback.endswith("It is an ingredient of torch, charm, big_bag.")
