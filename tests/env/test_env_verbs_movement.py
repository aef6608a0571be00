"""enter and lockpick: neighbours, locks, keys, and no walking away from a fight."""

from __future__ import annotations


def test_enter_a_neighbour_counts_exploration_once(h):
    h.ok("enter yard")
    out = h.outcome
    assert h.agent.area == "yard" and "I entered yard." in h.feedback
    assert h.events("area_entered") == [{"area": "yard", "first": True}]
    assert out.reward.exploration == 1
    h.ok("enter camp")
    out = h.outcome
    assert out.reward.exploration == 0  # the spawn area was never new
    h.ok("enter yard")
    out = h.outcome
    assert out.reward.exploration == 0 and h.events("area_entered")[0]["first"] is False


def test_enter_refusals(h):
    h.fails("enter camp", "I am already in camp.")
    h.fails("enter shed", "Cannot enter shed: it is not a neighboring area.")
    h.fails("enter atlantis", "Cannot enter atlantis: it is not a neighboring area.")
    h.fails("enter vault", "Cannot enter vault: the way is locked.")
    assert h.agent.area == "camp"
    h.agent.area = "yard"
    h.clear()
    h.fails("enter shed", "Cannot enter shed: the way is locked; shed_key would open it.")


def test_enter_is_barred_while_fighting(h):
    rat = h.npc("rat")
    rat.engaged, h.agent.combat = "player", rat.handle
    h.fails("enter yard", f"Cannot leave while fighting {rat.handle}.")
    assert h.agent.area == "camp"


def test_key_opens_a_locked_way_for_good(h):
    h.agent.area = "yard"
    h.clear()
    h.hold("shed_key")
    h.hold("stick")
    h.ok("enter shed")
    assert h.agent.area == "shed" and h.agent.hands == {"stick": 1}
    assert "I unlocked the way to shed with shed_key; the key stays in the lock." in h.feedback
    assert h.events("path_unlocked") == [{"a": "yard", "b": "shed", "by": "key"}]
    assert not h.state.areas["yard"].exits["shed"].locked and not h.state.areas["shed"].exits["yard"].locked
    h.ok("enter yard")
    h.ok("enter shed")  # no key needed any more


def test_lockpick_refusals(h):
    h.fails("lockpick shed", "Cannot lockpick shed: it is not a neighboring area.")
    h.fails("lockpick yard", "Cannot lockpick yard: the way is not locked.")
    h.fails("lockpick vault", "Cannot lockpick vault: I need a lockpick in my hand.")
    h.hold("lockpick")
    rat = h.npc("rat")
    rat.engaged, h.agent.combat = "player", rat.handle
    h.fails("lockpick vault", f"Cannot pick a lock while fighting {rat.handle}.")
    h.agent.area = "yard"
    h.fails("lockpick shed", "Cannot lockpick shed: this lock cannot be picked.")


def test_lockpick_success(h, scripted):
    h.hold("lockpick")
    h.engine.rng = scripted([0.0])
    h.ok("lockpick vault")
    assert "The lock clicks: the way to vault is open." in h.feedback
    assert not h.state.areas["camp"].exits["vault"].locked and not h.state.areas["vault"].exits["camp"].locked
    assert h.agent.hands == {"lockpick": 1}
    h.ok("enter vault")


def test_lockpick_failure_is_not_a_failed_action(h, scripted):
    h.hold("lockpick")
    h.engine.rng = scripted([0.99, 0.99])  # lock resists, pick survives
    out = h.do("lockpick vault")
    assert not out.failed and not out.invalid
    assert "The lock resists." in h.feedback and h.agent.hands == {"lockpick": 1}
    assert h.events("lockpick_failed") == [{"a": "camp", "b": "vault"}]
    h.engine.rng = scripted([0.99, 0.0])  # lock resists, pick snaps
    out = h.do("lockpick vault")
    assert not out.failed
    assert "The lock resists and lockpick snaps." in h.feedback and not h.agent.hands
    assert h.state.areas["camp"].exits["vault"].locked
