"""attack, throw, defend, wait, and the enemy's side of the exchange (combat rhythm)."""

from __future__ import annotations


def test_attack_follows_the_enemy_rhythm_to_victory(h):
    rat = h.npc("rat")  # pattern: attack, defend, wait
    r = rat.handle
    h.ok(f"attack {r}")
    assert f"I hit {r} for 10 damage (2/12 health left)." in h.feedback
    assert h.emitted() == [("npc_attacked", {"npc": r, "type": "rat", "damage": 10})]
    assert f"{r} strikes me for 4 damage." in h.feedback
    assert rat.hp == 2 and h.agent.hp == 96 and rat.engaged == "player" and h.agent.combat == r
    assert h.agent.stamina == 0.8
    h.ok(f"attack {r}")
    assert f"{r} guards against my blow." in h.feedback and f"I hit {r} for 0 damage" in h.feedback
    assert f"{r} holds its guard." in h.feedback and rat.hp == 2
    h.ok(f"attack {r}")
    assert f"I defeated {r}! It dropped 1 stick." in h.feedback
    assert r not in h.state.npcs and r not in h.area.npcs and h.area.objects == {"stick": 1}
    assert h.agent.combat is None
    assert h.emitted() == [
        ("npc_attacked", {"npc": r, "type": "rat", "damage": 6}),  # attack 10 x stamina 0.6
        ("npc_defeated", {"npc": r, "type": "rat", "level": 1, "area": "camp", "xp": 10, "boss": False, "first": True}),
    ]
    assert h.outcome.reward.defeat == 1 and h.agent.xp == 10


def test_second_defeat_of_a_kind_is_not_rewarded(h):
    h.agent.defeated["rat"] = 0
    rat = h.npc("rat")
    rat.hp = 1
    h.ok(f"attack {rat.handle}")
    assert h.outcome.reward.defeat == 0 and h.events("npc_defeated")[0]["first"] is False
    assert h.agent.kills == {"rat": 1}


def test_enemy_pauses_between_blows(h):
    rat = h.npc("rat")
    rat.stance_index = 2  # its "wait"
    rat.engaged, h.agent.combat = "player", rat.handle
    h.ok("wait")
    assert f"{rat.handle} pauses to catch its breath." in h.feedback and h.agent.hp == 100
    assert h.emitted() == []


def test_blows_weaken_as_i_tire_down_to_a_floor(h):
    wolf = h.npc("wolf")  # defense 2, pattern: attack, attack, defend
    wolf.hp = wolf.max_hp = 1000
    damage = []
    for _ in range(6):
        h.agent.hp = 100
        wolf.stance_index = 0  # always facing its attack stance: no guard
        h.ok(f"attack {wolf.handle}")
        damage.append(h.events("npc_attacked")[0]["damage"])
    assert damage == [8, 6, 4, 2, 1, 1]  # attack 10 x stamina 1.0, 0.8, 0.6, 0.4, 0.2, 0.2, minus defense 2
    assert abs(h.agent.stamina - 0.2) < 1e-9


def test_a_blow_against_a_guard_does_a_tenth(h):
    wolf = h.npc("wolf")
    wolf.stance_index = 2  # its "defend"
    h.agent.attack = 52
    h.ok(f"attack {wolf.handle}")
    assert h.events("npc_attacked")[0]["damage"] == 5  # (52 - 2) / 10
    assert wolf.hp == 35


def test_defeating_one_enemy_turns_to_the_next_that_fights_me(h):
    rat, other = h.npc("rat"), h.npc("rat")
    rat.engaged = other.engaged = "player"
    h.agent.combat = rat.handle
    rat.hp = 1
    h.ok(f"attack {rat.handle}")
    assert h.agent.combat == other.handle
    assert h.kinds() == ["npc_attacked", "npc_defeated"]


def test_loot_includes_the_enemy_coins(h):
    wolf = h.npc("wolf")  # drops a parchment and 2 coins
    wolf.hp = 1
    h.ok(f"attack {wolf.handle}")
    assert h.area.objects["coin"] == 2 and any(k.startswith("parchment") for k in h.area.objects)
    assert f"I defeated {wolf.handle}! It dropped " in h.feedback and "2 coin" in h.feedback
    assert h.events("npc_defeated") == [
        {"npc": wolf.handle, "type": "wolf", "level": 2, "area": "camp", "xp": 20, "boss": False, "first": True}
    ]


def test_attack_refusals(h):
    h.fails("attack rat_0", "Cannot attack rat_0: there is no such creature here.")
    h.npc("tom")
    h.fails("attack tom", "Cannot attack tom: they are not hostile.")
    assert h.state.npcs["tom"].hp == 40


def test_throw_lands_on_the_ground(h):
    rat = h.npc("rat")
    h.hold("stick", 2)
    h.ok(f"throw stick {rat.handle}")
    assert f"I threw stick at {rat.handle} for 2 damage (10/12 health left)." in h.feedback
    assert h.agent.hands == {"stick": 1} and h.area.objects == {"stick": 1}
    assert rat.engaged == "player"
    assert h.emitted() == [("object_thrown", {"object": "stick", "handle": "stick", "npc": rat.handle, "damage": 2})]


def test_throw_can_defeat(h):
    rat = h.npc("rat")
    h.hold("club")  # attack 8 + 2 * size 2 = 12
    h.ok(f"throw club {rat.handle}")
    assert f"I defeated {rat.handle}!" in h.feedback
    assert h.area.objects == {"club": 1, "stick": 1}
    assert [kind for kind, _ in h.emitted()] == ["object_thrown", "npc_defeated"]
    assert h.events("object_thrown")[0]["damage"] == 12


def test_throw_against_armor_does_at_least_one_damage(h):
    wolf = h.npc("wolf")  # defense 2
    (paper,) = h.hold("parchment")  # attack 0, size 0
    h.ok(f"throw {paper} {wolf.handle}")
    assert h.events("object_thrown") == [{"object": "parchment", "handle": paper, "npc": wolf.handle, "damage": 1}]
    assert wolf.hp == 39


def test_throw_refusals(h):
    rat = h.npc("rat")
    h.fails(f"throw stick {rat.handle}", "Cannot throw stick: I am not holding it.")
    h.hold("stick")
    h.fails("throw stick rat_99", "Cannot throw at rat_99: there is no such creature here.")
    h.npc("tom")
    h.fails("throw stick tom", "Cannot throw at tom: they are not hostile.")
    assert h.agent.hands == {"stick": 1}


def test_defend_blunts_blows_and_restores_half_the_stamina(h):
    rat = h.npc("rat")
    rat.engaged, h.agent.combat = "player", rat.handle
    h.agent.stamina = 0.4
    h.ok("defend")
    assert "I raised my guard." in h.feedback
    assert h.emitted() == []
    assert f"{rat.handle} strikes me through my guard for 0 damage." in h.feedback
    assert h.agent.hp == 100 and abs(h.agent.stamina - 0.7) < 1e-9
    h.ok("wait")  # the guard lasts one turn only
    assert "through my guard" not in h.feedback


def test_wait_restores_all_stamina(h):
    h.agent.stamina = 0.2
    h.ok("wait")
    assert "I waited for a while." in h.feedback and h.agent.stamina == 1.0
    assert h.emitted() == []


def test_held_weapon_raises_attack_after_the_step(h):
    h.hold("club")
    h.ok("wait")
    assert h.agent.attack == 18 and h.kinds() == []
    h.hold("torch")
    h.ok("wait")
    assert h.agent.attack == 18  # the best held object counts, not the sum


def test_an_enemy_left_with_one_health_fights_on(h):
    rat = h.npc("rat")
    rat.hp = 11
    h.ok(f"attack {rat.handle}")
    assert rat.hp == 1 and rat.handle in h.state.npcs and rat.engaged == "player"
    assert f"I hit {rat.handle} for 10 damage (1/12 health left)." in h.feedback
    assert not h.events("npc_defeated")


def test_the_killing_blow_is_told_and_kills_are_counted_per_kind(h):
    for expected in (1, 2):
        rat = h.npc("rat")
        rat.hp = 10
        h.agent.stamina = 1.0
        h.ok(f"attack {rat.handle}")
        assert f"I hit {rat.handle} for 10 damage." in h.feedback
        assert h.agent.kills == {"rat": expected}
        assert h.kinds() == ["npc_attacked", "npc_defeated"]
    wolf = h.npc("wolf")
    wolf.hp = 1
    h.ok(f"attack {wolf.handle}")
    assert h.agent.kills == {"rat": 2, "wolf": 1}
