"""craft, disassemble, eat, write."""

from __future__ import annotations

import pytest


# ------------------------------------------------------------------ craft
def test_craft_without_a_station(h):
    h.hold("stick")
    h.hold("resin")
    h.ok("craft 1 torch")
    assert not h.agent.hands and h.area.objects == {"torch": 1}
    assert "I successfully crafted 1 torch. It is now on the ground." in h.feedback
    assert h.emitted() == [("object_crafted", {"object": "torch", "amount": 1, "area": "camp", "first": True})]
    assert h.outcome.reward.craft == 1


def test_craft_many_with_yields_at_a_station(h):
    h.put("workbench")
    h.hold("stick", 2)
    h.ok("craft 2 plank")
    assert h.area.objects == {"workbench": 1, "plank": 4} and not h.agent.hands
    assert "I successfully crafted 4 plank." in h.feedback
    assert h.emitted() == [("object_crafted", {"object": "plank", "amount": 4, "area": "camp", "first": True})]
    h.hold("stick", 1)
    h.ok("craft 1 plank")
    assert h.outcome.reward.craft == 0  # plank is no longer new
    assert h.emitted() == [("object_crafted", {"object": "plank", "amount": 2, "area": "camp", "first": False})]


def test_craft_needs_every_station_and_exactly_enough(h):
    h.put("furnace")
    h.hold("iron_ore", 2)
    h.ok("craft 1 iron_bar")
    assert h.area.objects == {"furnace": 1, "iron_bar": 1} and not h.agent.hands
    assert h.emitted() == [("object_crafted", {"object": "iron_bar", "amount": 1, "area": "camp", "first": True})]
    h.hold("stick", 2)
    h.fails("craft 2 plank", "Cannot craft plank here: it needs a workbench nearby.")
    assert h.agent.hands == {"stick": 2}


def test_craft_draws_from_hands_and_pack(h):
    h.put("workbench")
    bag = h.wear("small_bag")
    h.hold("stick", 1)
    h.stash(bag, "stick", 2)
    h.ok("craft 1 club")
    assert not h.agent.hands and h.state.instances[bag].contents == {"stick": 1}
    assert h.area.objects["club"] == 1
    assert h.emitted() == [("object_crafted", {"object": "club", "amount": 1, "area": "camp", "first": True})]


def test_crafted_container_gets_an_instance_name(h):
    h.put("workbench")
    bag = h.wear("big_bag")
    h.stash(bag, "stick", 2)
    h.stash(bag, "resin", 1)
    h.ok("craft 1 big_bag")
    (made,) = [x for x in h.area.objects if x.startswith("big_bag_")]
    assert h.state.instances[made].type == "big_bag"
    assert h.emitted() == [("object_crafted", {"object": "big_bag", "amount": 1, "area": "camp", "first": True})]


def test_craft_refusals(h):
    h.fails("craft 1 gold", "Cannot craft gold: there is no known way to make it.")
    h.fails("craft 1 stick", "Cannot craft stick: there is no known way to make it.")
    h.hold("stick")
    h.fails("craft 1 club", "Cannot craft 1 club: I need 2 stick (I carry 1).")
    h.fails("craft 2 torch", "Cannot craft 2 torch: I need 2 stick (I carry 1), 2 resin (I carry 0).")
    h.fails("craft 1 plank", "Cannot craft plank here: it needs a workbench nearby.")
    h.put("stick")  # ingredients on the ground do not count
    h.fails("craft 1 club", "I need 2 stick (I carry 1)")
    assert h.agent.hands == {"stick": 1}


# ------------------------------------------------------------------ disassemble
def test_disassemble_from_ground_and_hands(h):
    h.put("club")
    h.ok("disassemble club")
    assert h.area.objects == {"stick": 1}  # half of 2, rounded up
    assert "I took club apart: 1 stick now lie on the ground." in h.feedback
    assert h.emitted() == [("object_disassembled", {"object": "club", "handle": "club", "parts": {"stick": 1}})]
    h.hold("torch")
    h.ok("disassemble torch")
    assert not h.agent.hands and h.area.objects == {"stick": 2, "resin": 1}
    assert "I took torch apart: 1 stick, 1 resin now lie on the ground." in h.feedback
    assert h.emitted() == [
        ("object_disassembled", {"object": "torch", "handle": "torch", "parts": {"stick": 1, "resin": 1}})
    ]


def test_disassemble_gives_back_half_rounded_up(h):
    h.put("furnace")
    h.hold("iron_ore", 2)
    h.ok("craft 1 iron_bar")  # 2 ore -> 1 bar
    h.ok("disassemble iron_bar")
    assert h.area.objects == {"furnace": 1, "iron_ore": 1}
    assert h.emitted() == [
        ("object_disassembled", {"object": "iron_bar", "handle": "iron_bar", "parts": {"iron_ore": 1}})
    ]


def test_disassemble_an_empty_bag_removes_the_instance(h):
    (bag,) = h.put("big_bag")
    h.ok(f"disassemble {bag}")
    assert bag not in h.state.instances and h.area.objects == {"stick": 1, "resin": 1}
    assert h.emitted() == [
        ("object_disassembled", {"object": "big_bag", "handle": bag, "parts": {"stick": 1, "resin": 1}})
    ]


def test_disassemble_a_held_bag_prefers_the_hand(h):
    (bag,) = h.hold("big_bag")
    h.ok(f"disassemble {bag}")
    assert not h.agent.hands and bag not in h.state.instances and h.area.objects == {"stick": 1, "resin": 1}
    assert h.kinds() == ["object_disassembled"]


def test_disassemble_refusals(h):
    h.fails("disassemble club", "Cannot disassemble club: it is neither in my hands nor here.")
    h.put("charm")
    h.fails("disassemble charm", "Cannot disassemble charm: it cannot be taken apart.")
    h.put("plank")
    h.fails("disassemble plank", "Cannot disassemble plank: it cannot be taken apart.")  # yields 2
    h.put("stick")
    h.fails("disassemble stick", "Cannot disassemble stick: it cannot be taken apart.")
    (bag,) = h.hold("big_bag")
    h.stash(bag, "resin")
    h.fails(f"disassemble {bag}", f"Cannot disassemble {bag}: it is not empty.")
    assert bag in h.state.instances


# ------------------------------------------------------------------ eat
@pytest.mark.parametrize("where", ["hands", "ground", "pack"])
def test_eat_restores_health(h, where):
    if where == "hands":
        h.hold("apple")
    elif where == "ground":
        h.put("apple")
    else:
        h.stash(h.wear("small_bag"), "apple")
    h.agent.hp = 50
    h.ok("eat apple")
    assert h.agent.hp == 60 and "I ate apple and recovered 10 health." in h.feedback
    assert "apple" not in h.agent.hands and "apple" not in h.area.objects
    assert h.emitted() == [("object_eaten", {"object": "apple", "restored": 10})]


def test_eat_prefers_carried_food_and_caps_at_max(h):
    h.hold("apple")
    h.put("apple")
    h.agent.hp = 95
    h.ok("eat apple")
    assert h.agent.hp == 100 and "recovered 5 health" in h.feedback
    assert not h.agent.hands and h.area.objects == {"apple": 1}
    assert h.emitted() == [("object_eaten", {"object": "apple", "restored": 5})]


def test_eat_one_of_several(h):
    bag = h.wear("small_bag")
    h.stash(bag, "apple", 2)
    h.agent.hp = 50
    h.ok("eat apple")
    assert h.state.instances[bag].contents == {"apple": 1} and h.agent.hp == 60
    assert h.emitted() == [("object_eaten", {"object": "apple", "restored": 10})]


def test_eat_refusals(h):
    h.hold("stick")
    h.fails("eat stick", "Cannot eat stick: it is not food.")
    h.fails("eat rock", "Cannot eat rock: it is not food.")
    h.fails("eat apple", "Cannot eat apple: I have none and see none here.")


# ------------------------------------------------------------------ write
def test_write_with_a_tool_in_the_other_hand(h):
    h.hold("quill")
    (paper,) = h.hold("parchment")
    h.ok(f'write "meet me at the old well" {paper}')
    assert h.state.instances[paper].text == "meet me at the old well"
    assert f'I wrote "meet me at the old well" on {paper}.' in h.feedback
    assert h.emitted() == [
        ("text_written", {"writable": paper, "object": "parchment", "text": "meet me at the old well", "area": "camp"})
    ]
    h.ok(f"write hello {paper}")  # one word needs no quotes; writing replaces the text
    assert h.state.instances[paper].text == "hello"


def test_write_keeps_the_case_of_the_text(h):
    h.hold("quill")
    (paper,) = h.hold("parchment")
    h.ok(f'write "Ember at NOON" {paper.upper()}')
    assert h.state.instances[paper].text == "Ember at NOON"
    assert h.events("text_written")[0]["text"] == "Ember at NOON"


def test_write_exactly_as_much_as_fits(h):
    h.hold("quill")
    (scrap,) = h.hold("scrap")  # at most 3 characters
    h.ok(f"write abc {scrap}")
    assert h.state.instances[scrap].text == "abc"
    assert h.emitted() == [("text_written", {"writable": scrap, "object": "scrap", "text": "abc", "area": "camp"})]
    h.fails(f"write abcd {scrap}", f"Cannot write that on {scrap}: it holds at most 3 characters.")


def test_write_refusals(h):
    (paper,) = h.put("parchment")
    h.fails(f'write "hi" {paper}', f"Cannot write on {paper}: I must hold it, and it must be something to write on.")
    h.hold("stick")
    h.fails('write "hi" stick', "Cannot write on stick: I must hold it")
    h.agent.hands.clear()
    (paper,) = h.hold("parchment")
    h.fails(f'write "hi" {paper}', "Cannot write: I need a writing tool in my other hand.")
    h.hold("quill")
    h.fails(f'write "{"x" * 41}" {paper}', f"Cannot write that on {paper}: it holds at most 40 characters.")
    h.fails(f'write "héllo" {paper}', "Cannot write that: use plain printable characters on one line.")
    h.fails(f'write "" {paper}', "Cannot write that: use plain printable characters on one line.")
    assert h.state.instances[paper].text == ""


def test_listed_write_fits_a_small_writable(h):
    h.hold("quill")
    (scrap,) = h.hold("scrap")  # holds at most 3 characters
    (command,) = h.engine.valid_actions("player")["write"]
    assert command == f'write "not" {scrap}'
    h.ok(command)
    assert h.state.instances[scrap].text == "not" and h.kinds() == ["text_written"]
