"""pick up, drop, inspect, equip, unequip: success paths and every refusal, on the tiny game."""

from __future__ import annotations


# ------------------------------------------------------------------ pick up
def test_pick_up_one_at_a_time(h):
    h.put("stick", 2)
    h.ok("pick up stick")
    assert h.agent.hands == {"stick": 1} and h.area.objects == {"stick": 1}
    assert "I picked up 1 stick." in h.feedback
    (ev,) = h.events("object_acquired")
    assert ev["object"] == "stick" and ev["first"] is True
    h.ok("pick up stick")
    assert h.agent.hands == {"stick": 2} and "stick" not in h.area.objects
    assert h.events("object_acquired")[0]["first"] is False


def test_pick_up_takes_the_whole_coin_pile_into_one_hand(h):
    h.put("coin", 5)
    h.hold("stick")
    h.ok("pick up coin")
    assert h.agent.hands == {"stick": 1, "coin": 5}
    h.put("coin", 3)
    h.ok("pick up coin")  # coins join the pile: no extra hand needed
    assert h.agent.hands["coin"] == 8 and "I picked up 3 coin." in h.feedback


def test_pick_up_into_pack_when_hands_are_full(h):
    bag = h.wear("small_bag")
    h.hold("stick", 2)
    h.put("resin")
    h.ok("pick up resin")
    assert h.state.instances[bag].contents == {"resin": 1}
    assert f"My hands are full, so I put 1 resin into {bag}." in h.feedback


def test_pick_up_instance_by_name(h):
    (paper,) = h.put("parchment")
    h.ok(f"pick up {paper}")
    assert h.agent.hands == {paper: 1} and not h.area.objects


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
    assert h.events("object_dropped")[0]["amount"] == 2


def test_drop_refusal(h):
    h.put("stick")
    h.fails("drop stick", "Cannot drop stick: I am not holding it.")
    assert h.area.objects == {"stick": 1}


# ------------------------------------------------------------------ inspect
def test_inspect_area_npc_and_objects(h):
    h.ok("inspect camp")
    assert "camp: A quiet camp around a workbench." in h.feedback
    rat = h.npc("rat")
    h.ok(f"inspect {rat.handle}")
    assert f"{rat.handle}: A big grey rat. It looks hostile; level 1, health 12/12." in h.feedback
    h.npc("tom")
    h.ok("inspect tom")
    assert "It looks friendly" in h.feedback
    h.put("torch")
    h.ok("inspect torch")
    assert ("torch: A resin torch. It is a tool of level 1, size 1, worth 2 coin. Held, it gives attack 3. "
            "It can be used to light. Crafting 1 takes 1 stick, 1 resin.") in h.feedback
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


def test_equip_container_from_ground_becomes_pack(h):
    (bag,) = h.put("small_bag")
    h.ok(f"equip {bag}")
    assert h.agent.pack == bag and not h.area.objects
    assert h.events("object_acquired")[0]["object"] == "small_bag"


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


def test_unequip_refusals(h):
    h.fails("unequip boots", "Cannot unequip boots: I am not wearing it.")
    h.wear("boots")
    h.hold("stick", 2)
    h.fails("unequip boots", "Cannot unequip boots: I need a free hand to hold it.")
    assert h.agent.equipment == {"feet": "boots"}
