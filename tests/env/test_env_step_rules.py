"""The base step rules: combat rhythm and ambushes, the day, spawns and respawns, death, hints, growth."""

from __future__ import annotations

import random

import pytest
from kit import variant as kit_variant

from odyssey_env.engine import Engine

from .conftest import TINY


@pytest.fixture
def variant(tmp_path, make_harness):
    """A harness on a copy of the tiny game with some rule parameters changed (:func:`kit.variant`)."""

    def build(params: dict, seed: int = 0):
        h = make_harness(Engine(kit_variant(TINY, tmp_path, params), seed))
        h.clear()
        return h

    return build


def _at(h, hh: int, mm: int) -> None:
    """Set the clock so that the next step lands on hh:mm of day 2."""
    h.state.minute = 1440 + hh * 60 + mm - 10


def test_ambush_engages_with_half_strength(variant):
    h = variant({"ambush": {"chance_by_level": [1.0]}})
    rat = h.npc("rat")
    h.ok("wait")
    assert f"{rat.handle} ambushes me for 2 damage!" in h.feedback
    assert h.agent.hp == 98 and rat.engaged == "player" and h.agent.combat == rat.handle
    h.fails("enter yard", f"Cannot leave while fighting {rat.handle}.")
    assert f"{rat.handle} strikes me for 4 damage." in h.feedback  # the fight goes on with full blows


def test_no_ambush_by_friends_or_in_a_fight(variant):
    h = variant({"ambush": {"chance_by_level": [1.0]}})
    h.npc("tom")
    h.ok("wait")
    assert "ambushes" not in h.feedback and h.agent.combat is None


@pytest.mark.parametrize(("hh", "damage"), [(0, 6), (12, 2), (8, 4)])
def test_day_and_night_change_the_enemies_blows(h, hh, damage):
    rat = h.npc("rat")
    rat.engaged, h.agent.combat = "player", rat.handle
    _at(h, hh, 0)
    h.ok("wait")
    assert f"{rat.handle} strikes me for {damage} damage." in h.feedback


def test_night_spawn_beside_an_agent_away_from_home(h, scripted):
    h.agent.area = "yard"
    h.clear()
    _at(h, 0, 0)
    h.engine.rng = scripted([0.0, 0.0])
    h.ok("wait")
    (handle,) = h.area.npcs
    assert f"Something stirs in the dark: {handle} appears." in h.feedback
    assert h.state.npcs[handle].origin == "spawn" and h.state.npcs[handle].type == "rat"  # level 1 area
    _at(h, 0, 10)
    h.ok("wait")
    assert len(h.area.npcs) == 1  # only in the first step after midnight


def test_no_night_spawn_in_the_spawn_area(h, scripted):
    _at(h, 0, 0)
    h.engine.rng = scripted([0.0, 0.0])
    h.ok("wait")
    assert not h.area.npcs


def test_night_spawn_in_an_expanded_area(h, scripted):
    """Areas that online expansion adds are away from the spawn too: the night reaches them."""
    from odyssey_env.state import Area
    from odyssey_env.worldgen import link

    h.state.areas["ash_hollow"] = Area(name="ash_hollow", place="Ash Hollow", level=1, description="New.")
    link(h.state, "yard", "ash_hollow")
    h.agent.area = "ash_hollow"
    _at(h, 0, 0)
    h.engine.rng = scripted([0.0, 0.0])
    h.ok("wait")
    (handle,) = h.area.npcs
    assert f"Something stirs in the dark: {handle} appears." in h.feedback


def test_night_spawns_are_bounded(variant, scripted):
    h = variant({"night_spawn": {"chance": 1.0, "max_alive": 2}})
    h.agent.area = "yard"
    h.clear()
    for day in range(4):
        h.state.minute = 1440 * (day + 2) - 10
        h.ok("wait")
    assert sum(1 for n in h.state.npcs.values() if n.origin == "spawn") == 2


def test_respawn_regrows_food_and_enemies_up_to_the_start(engine, make_harness, scripted):
    h = make_harness(engine)
    assert h.state.areas["camp"].objects["apple"] == 1
    h.clear("camp")
    h.clear("yard")  # the rat is gone
    h.agent.area = "shed"
    h.state.step = 39
    h.engine.rng = scripted([0.0, 0.0, 0.0])
    h.ok("wait")
    assert h.state.areas["camp"].objects == {"apple": 1}
    (rat,) = h.state.areas["yard"].npcs
    assert h.state.npcs[rat].type == "rat" and h.state.npcs[rat].origin == "respawn"
    h.state.step = 79
    h.ok("wait")
    assert h.state.areas["camp"].objects == {"apple": 1} and len(h.state.areas["yard"].npcs) == 1


def test_no_respawn_where_the_agent_stands(engine, make_harness, scripted):
    h = make_harness(engine)
    h.agent.area = "yard"
    h.clear("yard")
    h.state.step = 39
    h.engine.rng = scripted([0.0, 0.0, 0.0])
    h.ok("wait")
    assert not h.area.npcs


class _CountingRng(random.Random):
    """Counts the episode's draws (``random()``), so a test can say a rule took none."""

    draws = 0

    def random(self) -> float:
        self.draws += 1
        return super().random()


def test_a_certain_respawn_draws_nothing(variant):
    """Chance 1 (food) always happens, chance 0 (enemies) never: neither takes a draw from the episode."""
    draws = {}
    for enemy_chance in (0.0, 0.5):
        h = variant({"respawn": {"enemy_chance": enemy_chance, "food_chance": 1.0}})
        h.clear("yard")  # the rat is gone
        h.agent.area = "shed"
        h.state.step = 39
        h.ok("wait")  # the other rules' draws of a step, for the baseline
        h.state.areas["camp"].objects.clear()
        h.clear("yard")  # whether or not it came back at step 40
        h.engine.rng = rng = _CountingRng(0)
        h.state.step = 79
        h.ok("wait")
        draws[enemy_chance] = rng.draws
        assert h.state.areas["camp"].objects == {"apple": 1}
        assert "food_regrew" in {e.kind for e in h.engine.events}
    assert draws[0.5] == draws[0.0] + 1, "an uncertain chance draws once per area short of enemies"


@pytest.mark.parametrize(("refill", "rats"), [("residents", 2), ("headcount", 1)])
def test_refill_counts_the_worlds_own_enemies_or_any(variant, refill, rats):
    """A night-spawned rat standing where the world's rat was: residents refill the world's rat beside it,
    headcount sees the area full."""
    h = variant({"respawn": {"refill": refill, "enemy_chance": 1.0}})
    h.clear("yard")
    h.npc("rat", area="yard").origin = "spawn"
    h.agent.area = "shed"
    h.state.step = 39
    h.ok("wait")
    assert len(h.state.areas["yard"].npcs) == rats


def test_death_drops_everything_where_i_fell(h):
    h.agent.area = "yard"
    h.clear()
    h.hold("stick")
    h.wear("boots")
    bag = h.wear("small_bag")
    h.stash(bag, "coin", 3)
    h.ok("wait")
    assert h.agent.defense == 1
    rat = h.npc("rat")
    rat.engaged, h.agent.combat = "player", rat.handle
    h.agent.hp = 3
    h.ok("wait")
    assert h.agent.area == "camp" and h.agent.hp == h.agent.max_hp == 100 and h.agent.deaths == 1
    assert f"I was defeated and woke up in camp. My belongings (stick, boots, {bag}) lie in yard." in h.feedback
    assert h.state.areas["yard"].objects == {"stick": 1, "boots": 1, bag: 1}
    assert h.agent.defense == 0 and "My defense is at 0." in h.engine.observe("player")
    assert h.state.instances[bag].contents == {"coin": 3}
    assert not h.agent.hands and not h.agent.equipment and h.agent.combat is None
    assert rat.engaged is None and rat.stance_index == 0
    assert h.events("agent_died") == [{"area": "yard", "dropped": ["stick", "boots", bag]}]
    assert h.outcome.reward.death == 1


def test_craft_hint_once(h):
    h.put("stick")
    h.put("resin")
    h.ok("pick up stick")
    assert "craft torch" not in h.feedback
    h.ok("pick up resin")
    assert "I now carry what it takes to craft torch." in h.feedback
    h.ok("drop resin")
    h.ok("pick up resin")
    assert "craft torch" not in h.feedback


def test_experience_and_levels(h):
    h.agent.xp = 98
    h.ok("enter yard")  # +5 for a new area
    assert h.agent.xp == 103 and h.agent.level == 2
    assert "I reached level 2!" in h.feedback
    assert h.agent.max_hp == 120 and h.agent.hp == 120 and h.agent.base_attack == 15
    h.ok("wait")
    assert h.agent.attack == 15


def test_death_loses_the_weapon_bonus_at_once(h):
    h.hold("club")
    h.ok("wait")
    assert h.agent.attack == 18
    h.agent.hp = -5
    h.ok("wait")
    assert h.agent.attack == 10 and "My attack is at 10." in h.engine.observe("player")
