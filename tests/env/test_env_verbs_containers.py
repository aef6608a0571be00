"""store, take out, discard: containers held in a hand or worn as the pack."""

from __future__ import annotations


def test_store_from_hands_into_a_held_bag(h):
    (bag,) = h.hold("small_bag")
    h.hold("stick")
    h.ok(f"store 1 stick {bag}")
    assert h.state.instances[bag].contents == {"stick": 1}
    assert h.agent.hands == {bag: 1}
    assert f"I stored 1 stick in {bag}." in h.feedback
    # it was mine already: stored, not acquired
    assert h.emitted() == [("object_stored", {"object": "stick", "handle": "stick", "amount": 1, "container": bag})]


def test_store_several_from_the_hands_moves_them_once(h):
    bag = h.wear("small_bag")
    h.hold("stick", 2)
    h.put("stick", 5)
    h.ok(f"store 2 stick {bag}")
    assert h.state.instances[bag].contents == {"stick": 2}
    assert not h.agent.hands and h.area.objects == {"stick": 5}  # the ground's sticks stay where they are
    assert h.emitted() == [("object_stored", {"object": "stick", "handle": "stick", "amount": 2, "container": bag})]


def test_store_an_instance_reports_its_type(h):
    bag = h.wear("small_bag")
    (paper,) = h.put("parchment")
    h.ok(f"store 1 {paper} {bag}")
    assert h.state.instances[bag].contents == {paper: 1} and not h.area.objects
    assert h.emitted() == [
        ("object_acquired", {"object": "parchment", "handle": paper, "amount": 1, "how": "stored", "first": True}),
        ("object_stored", {"object": "parchment", "handle": paper, "amount": 1, "container": bag}),
    ]


def test_store_what_exactly_fills_the_bag(h):
    bag = h.wear("small_bag")  # capacity 4
    h.put("iron_ore", 2)  # size 2 each
    h.ok(f"store 2 iron_ore {bag}")
    assert h.state.instances[bag].contents == {"iron_ore": 2}
    assert h.kinds() == ["object_acquired", "object_stored"]


def test_store_takes_hands_first_then_the_ground(h):
    bag = h.wear("small_bag")
    h.hold("stick")
    h.put("stick", 2)
    h.ok(f"store 3 stick {bag}")
    assert h.state.instances[bag].contents == {"stick": 3}
    assert not h.agent.hands and not h.area.objects
    assert h.emitted() == [
        ("object_acquired", {"object": "stick", "handle": "stick", "amount": 2, "how": "stored", "first": True}),
        ("object_stored", {"object": "stick", "handle": "stick", "amount": 3, "container": bag}),
    ]


def test_store_takes_from_the_ground_only_what_the_hands_lack(h):
    bag = h.wear("small_bag")
    h.hold("stick")
    h.put("stick", 5)
    h.ok(f"store 3 stick {bag}")
    assert h.state.instances[bag].contents == {"stick": 3}
    assert not h.agent.hands and h.area.objects == {"stick": 3}
    assert h.emitted() == [
        ("object_acquired", {"object": "stick", "handle": "stick", "amount": 2, "how": "stored", "first": True}),
        ("object_stored", {"object": "stick", "handle": "stick", "amount": 3, "container": bag}),
    ]


def test_store_coins_take_no_room(h):
    bag = h.wear("small_bag")
    h.stash(bag, "iron_ore", 2)  # full
    h.put("coin", 9)
    h.ok(f"store 9 coin {bag}")
    assert h.state.instances[bag].contents == {"iron_ore": 2, "coin": 9}
    assert [kind for kind, _ in h.emitted()] == ["object_acquired", "object_stored"]


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
    assert h.emitted() == [("object_taken_out", {"object": "stick", "handle": "stick", "amount": 1, "container": bag})]


def test_take_out_of_a_bag_in_the_other_hand(h):
    (bag,) = h.hold("small_bag")
    h.stash(bag, "parchment")
    (paper,) = h.state.instances[bag].contents
    h.ok(f"take out {paper} {bag}")
    assert h.agent.hands == {bag: 1, paper: 1} and not h.state.instances[bag].contents
    assert h.emitted() == [
        ("object_taken_out", {"object": "parchment", "handle": paper, "amount": 1, "container": bag})
    ]


def test_take_out_all_coins_at_once(h):
    bag = h.wear("small_bag")
    h.stash(bag, "coin", 7)
    h.hold("stick", 1)
    h.ok(f"take out coin {bag}")
    assert h.agent.hands == {"stick": 1, "coin": 7} and not h.state.instances[bag].contents
    assert h.emitted() == [("object_taken_out", {"object": "coin", "handle": "coin", "amount": 7, "container": bag})]


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
    assert h.emitted() == [
        ("object_discarded", {"object": "stick", "handle": "stick", "amount": 2, "container": bag, "area": "camp"})
    ]


def test_discard_a_whole_stack(h):
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 3)
    h.put("stick")
    h.ok(f"discard 3 stick {bag}")
    assert not h.state.instances[bag].contents and h.area.objects == {"stick": 4}
    assert h.events("object_discarded")[0]["amount"] == 3


def test_discard_refusals(h):
    (other,) = h.put("small_bag")
    h.fails(f"discard 1 stick {other}", f"Cannot discard from {other}: I hold or wear no such container.")
    bag = h.wear("small_bag")
    h.stash(bag, "stick", 2)
    h.fails(f"discard 3 stick {bag}", f"Cannot discard 3 stick: {bag} holds 2.")
    h.fails(f"discard 1 resin {bag}", f"Cannot discard 1 resin: {bag} holds 0.")
