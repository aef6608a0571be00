"""enter and lockpick: neighbours, locks, keys, and no walking away from a fight."""

from __future__ import annotations


def test_enter_a_neighbour_counts_exploration_once(h):
    h.ok("enter yard")
    out = h.outcome
    assert h.agent.area == "yard" and "I entered yard." in h.feedback
    assert h.emitted() == [("area_entered", {"area": "yard", "first": True})]
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
    assert h.emitted() == [
        ("path_unlocked", {"a": "yard", "b": "shed", "by": "key"}),
        ("area_entered", {"area": "shed", "first": True}),
    ]
    assert not h.state.areas["yard"].exits["shed"].locked and not h.state.areas["shed"].exits["yard"].locked
    h.ok("enter yard")
    h.ok("enter shed")  # no key needed any more
    assert h.emitted() == [("area_entered", {"area": "shed", "first": False})]


def test_entering_leaves_a_finished_fight_behind(h):
    h.agent.combat = "rat_9"  # the enemy is gone (defeated by someone else): nothing holds me here
    h.ok("enter yard")
    assert h.agent.area == "yard" and h.agent.combat is None
    assert h.emitted() == [("area_entered", {"area": "yard", "first": True})]


def test_a_fight_elsewhere_does_not_bar_the_way(h):
    rat = h.npc("rat", area="yard")
    rat.engaged = "someone_else"
    h.npc("tom").engaged = None
    h.agent.combat = "rat_0"
    h.ok("enter yard")
    assert h.agent.area == "yard" and h.kinds() == ["area_entered"]


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
    assert h.emitted() == [("path_unlocked", {"a": "camp", "b": "vault", "by": "lockpick"})]
    h.ok("enter vault")


def test_lockpick_failure_is_not_a_failed_action(h, scripted):
    h.hold("lockpick")
    h.engine.rng = scripted([0.99, 0.99])  # lock resists, pick survives
    out = h.do("lockpick vault")
    assert not out.failed and not out.invalid
    assert "The lock resists." in h.feedback and h.agent.hands == {"lockpick": 1}
    assert h.emitted() == [("lockpick_failed", {"a": "camp", "b": "vault"})]
    h.engine.rng = scripted([0.99, 0.0])  # lock resists, pick snaps
    out = h.do("lockpick vault")
    assert not out.failed
    assert "The lock resists and lockpick snaps." in h.feedback and not h.agent.hands
    assert h.state.areas["camp"].exits["vault"].locked
    assert h.emitted() == [("lockpick_failed", {"a": "camp", "b": "vault"})]


def test_lockpick_odds_come_from_its_parameters(h, scripted):
    h.hold("lockpick")
    h.engine.rng = scripted([0.34])  # below the chance of 0.35: the lock opens
    h.ok("lockpick vault")
    assert not h.state.areas["camp"].exits["vault"].locked and h.kinds() == ["path_unlocked"]
    h.state.areas["camp"].exits["vault"].locked = h.state.areas["vault"].exits["camp"].locked = True
    h.engine.rng = scripted([0.35, 0.24])  # the lock resists; below the break chance of 0.25: the pick snaps
    h.ok("lockpick vault")
    assert not h.agent.hands and h.state.areas["camp"].exits["vault"].locked and h.kinds() == ["lockpick_failed"]
    h.hold("lockpick")
    h.engine.rng = scripted([0.35, 0.25])  # resists, and the pick holds
    h.ok("lockpick vault")
    assert h.agent.hands == {"lockpick": 1} and h.kinds() == ["lockpick_failed"]


def _two_tools(world):
    """The paper's Remnant's tools: a lockpick at 20%, a wrench at 10%, each used up by every try; a failed
    try hurts with chance 0.25."""
    world["objects"].append(
        {"name": "wrench", "category": "tool", "description": "A tension wrench.", "size": 0, "uses": ["lockpick"]}
    )
    world["game"]["params"]["lockpick"] = {
        "chances": {"lockpick": 0.2, "wrench": 0.1},
        "break_chance": 1.0,
        "success_break_chance": 1.0,
        "hurt_chance": 0.25,
    }


def test_each_tool_has_its_own_odds_and_the_best_held_is_tried(variant, scripted):
    h = variant(_two_tools)
    h.hold("wrench")
    h.engine.rng = scripted([0.15])  # above the wrench's 0.1: resists; it is used up; no hurt (0.999)
    h.ok("lockpick vault")
    assert "The lock resists and wrench snaps." in h.feedback and not h.agent.hands
    assert h.state.areas["camp"].exits["vault"].locked
    assert h.emitted() == [("lockpick_failed", {"a": "camp", "b": "vault"})]
    h.hold("wrench")
    h.hold("lockpick")
    h.engine.rng = scripted([0.15])  # below the lockpick's 0.2: it is the one tried, and it opens the lock
    h.ok("lockpick vault")
    assert not h.state.areas["camp"].exits["vault"].locked
    assert h.agent.hands == {"wrench": 1}  # the lockpick is spent by the success too
    assert "The lock clicks: the way to vault is open. lockpick is spent." in h.feedback
    assert h.emitted() == [("path_unlocked", {"a": "camp", "b": "vault", "by": "lockpick"})]


def test_a_failed_try_may_hurt_by_one_whatever_the_defense(variant, scripted):
    h = variant(_two_tools)
    h.hold("wrench", 2)
    h.agent.defense = 5
    hp = h.agent.hp
    h.engine.rng = scripted([0.5, 0.5, 0.24])  # resists; spent (break chance 1); below 0.25: hurt
    h.ok("lockpick vault")
    assert h.agent.hp == hp - 1 and h.agent.hands == {"wrench": 1}
    assert "I take 1 damage while working the lock." in h.feedback
    assert h.emitted() == [("lockpick_failed", {"a": "camp", "b": "vault", "hurt": 1})]
    h.engine.rng = scripted([0.5, 0.5, 0.25])  # not below 0.25: unhurt
    h.ok("lockpick vault")
    assert h.agent.hp == hp - 1 and not h.agent.hands


def test_per_tool_odds_are_stated_as_facts(variant):
    h = variant(_two_tools)
    rule = h.engine.rules.actions["lockpick"]
    facts = {f.question: f.answer for f in rule.facts(h.engine.game)}
    assert facts["How often does picking a lock with a lockpick succeed?"] == "about 20% of tries"
    assert facts["How often does picking a lock with a wrench succeed?"] == "about 10% of tries"
    assert facts["What becomes of the tool I pick a lock with?"].startswith("every try uses it up")
    assert rule.chance_of("wrench") == 0.1 and rule.chance_of("stick") == 0.35  # others: the default chance
