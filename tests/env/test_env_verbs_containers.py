"""store, take out, discard: containers held in a hand or worn as the pack."""

from __future__ import annotations


def test_store_from_hands_into_a_held_bag(h):
    (bag,) = h.hold("small_bag")
    h.hold("stick")
    h.ok(f"store 1 stick {bag}")
    assert h.state.instances[bag].contents == {"stick": 1}
    assert h.agent.hands == {bag: 1}
    assert f"I stored 1 stick in {bag}." in h.feedback
    assert h.events("object_stored")[0]["container"] == bag
    assert not h.events("object_acquired")  # it was mine already


def test_store_takes_hands_first_then_the_ground(h):
    bag = h.wear("small_bag")
    h.hold("stick")
    h.put("stick", 2)
    h.ok(f"store 3 stick {bag}")
    assert h.state.instances[bag].contents == {"stick": 3}
    assert not h.agent.hands and not h.area.objects
    (ev,) = h.events("object_acquired")
    assert ev["amount"] == 2 and ev["how"] == "stored"


def test_store_coins_take_no_room(h):
    bag = h.wear("small_bag")
    h.stash(bag, "iron_ore", 2)  # full
    h.put("coin", 9)
    h.ok(f"store 9 coin {bag}")
    assert h.state.instances[bag].contents == {"iron_ore": 2, "coin": 9}


def test_store_refusals(h):
    (ground_bag,) = h.put("small_bag")
    h.put("stick", 2)
    h.fails(f"store 1 stick {ground_bag}", f"Cannot store into {ground_bag}: I hold or wear no such container.")
    bag = h.wear("small_bag")
    h.hold("stick")
    h.fails(f"store 5 stick {bag}", "Cannot store 5 stick: I have 1 in hand and see 2 here.")
    h.fails(f"store 1 {ground_bag} {bag}", f"Cannot store {ground_bag} in {bag}: containers do not go inside")
    h.put("workbench")
    h.fails(f"store 1 workbench {bag}", f"Cannot store workbench in {bag}: it is fixed in place.")
    h.put("iron_ore", 3)
    h.fails(f"store 3 iron_ore {bag}", f"Cannot store 3 iron_ore in {bag}: it needs room 6, and {bag} has 4 left.")
    assert h.state.instances[bag].contents == {}
    assert h.area.objects["iron_ore"] == 3


def test_store_a_bag_into_itself_is_refused(h):
    (bag,) = h.hold("small_bag")
    h.fails(f"store 1 {bag} {bag}", "containers do not go inside containers")


def test_take_out_one_object(h):
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 2)
    h.ok(f"take out stick {bag}")
    assert h.agent.hands == {"stick": 1} and h.state.instances[bag].contents == {"stick": 1}
    assert f"I took 1 stick out of {bag}." in h.feedback


def test_take_out_all_coins_at_once(h):
    bag = h.wear("small_bag")
    h.stash(bag, "coin", 7)
    h.hold("stick", 1)
    h.ok(f"take out coin {bag}")
    assert h.agent.hands == {"stick": 1, "coin": 7} and not h.state.instances[bag].contents


def test_take_out_refusals(h):
    (other,) = h.put("small_bag")
    h.fails(f"take out stick {other}", f"Cannot take anything out of {other}: I hold or wear no such container.")
    bag = h.wear("small_bag")
    h.stash(bag, "stick")
    h.fails(f"take out resin {bag}", f"Cannot take resin out of {bag}: it is not in there.")
    h.hold("resin", 2)
    h.fails(f"take out stick {bag}", f"Cannot take stick out of {bag}: my hands are full.")
    assert h.state.instances[bag].contents == {"stick": 1}


def test_discard_onto_the_ground(h):
    (bag,) = h.hold("small_bag")
    h.stash(bag, "stick", 3)
    h.ok(f"discard 2 stick {bag}")
    assert h.state.instances[bag].contents == {"stick": 1} and h.area.objects == {"stick": 2}
    assert f"I discarded 2 stick from {bag} onto the ground." in h.feedback


def test_discard_refusals(h):
    (other,) = h.put("small_bag")
    h.fails(f"discard 1 stick {other}", f"Cannot discard from {other}: I hold or wear no such container.")
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 2)
    h.fails(f"discard 3 stick {bag}", f"Cannot discard 3 stick: {bag} holds 2.")
    h.fails(f"discard 1 resin {bag}", f"Cannot discard 1 resin: {bag} holds 0.")
