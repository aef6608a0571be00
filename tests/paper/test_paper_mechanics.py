"""The paper games' own verbs and dynamics, bound to odyssey's implementations (odyssey_eval/paper/mechanics.py).

Each game is imported from the real release (the wheel, as in test_import_reference.py: skipped without it) and
each of its own verbs is shown listed among the valid actions and succeeding from a state set up by hand, with
the parameters the import read from the reference's rules. The oracle's solve of these games is checked in
test_import_reference.py; the reference's rules are listed in docs/fidelity.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kit import Harness, engine_on

from odyssey_env.listing import CHECK_ENV
from odyssey_env.observation import render
from odyssey_env.rulelang.runtime import data
from odyssey_eval.paper.importer import import_release
from odyssey_eval.paper.mechanics import OWN
from odyssey_eval.paper.release import cached_wheel, open_release

WHEEL = cached_wheel()
pytestmark = pytest.mark.skipif(
    WHEEL is None or not WHEEL.is_file(),
    reason="the reference wheel is not here: set ODYSSEY_REFERENCE_WHEEL or run `odyssey paper import` once",
)


def _imported(tmp_path_factory: pytest.TempPathFactory, game: str) -> Path:
    out = tmp_path_factory.mktemp(f"paper-{game}")
    assert WHEEL is not None
    import_release(open_release(WHEEL), out, (game,))
    return out / game


def _hostile(h: Harness) -> str:
    """An enemy NPC type of the game that is not a boss of its quest (a common enemy)."""
    return next(n.name for n in h.game.npcs.values() if n.hostile and n.common_enemy)


def _writable(h: Harness) -> str:
    """A writable type of the world's own (the reference's ``obj_paper`` is Metropolis's ``legal_brief``)."""
    return next(o.name for o in h.game.spec.objects if o.category == "writable" and not o.quest)


def _bound(folder: Path, shipped: str) -> None:
    """Every game-specific rule of the reference's game is bound to ``shipped``'s, and says how it differs."""
    world = json.loads((folder / "world.json").read_text())
    assert world["game"]["rules_from"] == [shipped]
    notes = json.loads((folder / "paper.json").read_text())["differences"]
    assert not [n for n in notes if "has no odyssey implementation" in n["difference"]]
    played = [n for n in notes if n["difference"].startswith(f"played by odyssey's {shipped} rule")]
    assert len(played) == sum(1 for rule in OWN.values() if rule.game == shipped)


# ============================================================================ Metropolis: Gavelmoor's law
@pytest.fixture(scope="module")
def metropolis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _imported(tmp_path_factory, "metropolis")


def test_metropolis_binds_every_rule_of_its_own_to_gavelmoor_s(metropolis: Path) -> None:
    _bound(metropolis, "gavelmoor")
    h = Harness(engine_on(metropolis))
    assert {"invoke law", "file objection", "appeal verdict"} <= set(h.game.rules.actions)
    steps = {r.name for r in h.game.rules.steps}
    assert {"nightly_rewrite", "law_expiry", "objection_effects", "legal_paradox", "contempt_of_court"} <= steps
    assert {"binding_precedent", "contraband_suspicion", "trial_proceedings"} <= steps
    # the reference's numbers: an invocation lasts DURATION (3) turns, contempt fines FINE_COINS_PER_TURN (2)
    assert h.game.rules.actions["invoke law"].settings.term == 3
    assert h.game.rules.step_rule("contempt_of_court").settings.fine == 2


def test_metropolis_laws_are_invoked_and_objected_to(metropolis: Path) -> None:
    h = Harness(engine_on(metropolis))
    h.clear()
    sheet = h.hold_one(_writable(h), text="the ward keeps the peace")
    assert f"invoke law {sheet}" in h.listed("invoke law")
    h.ok(f"invoke law {sheet}")
    assert h.events("law_invoked")[0]["statute"] == "peace"
    h.hold_one(h.game.currency, 5)
    assert h.listed("file objection") == [f"file objection {sheet}"]
    h.ok(f"file objection {sheet}")
    assert h.events("objection_filed")


def test_metropolis_verdicts_are_appealed(metropolis: Path) -> None:
    h = Harness(engine_on(metropolis))
    h.clear()
    h.hold_one(h.game.currency, 5)
    enemy = h.npc(_hostile(h))
    enemy.hp = 1
    h.ok(f"attack {enemy.handle}")  # unprovoked: the spectral judge finds me guilty, sentence next turn
    assert h.events("verdict")[0]["guilty"]
    assert h.listed("appeal verdict") == ["appeal verdict"]
    h.ok("appeal verdict")
    assert h.events("verdict_overturned") == [{"kinds": ["fine"]}]


# ============================================================================ Robot Kingdom: Rust Throne's scrap
@pytest.fixture(scope="module")
def robot_kingdom(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _imported(tmp_path_factory, "robot_kingdom")


def test_robot_kingdom_binds_its_rules_to_rust_throne_s(robot_kingdom: Path) -> None:
    _bound(robot_kingdom, "rust_throne")
    h = Harness(engine_on(robot_kingdom))
    assert {"salvage", "scavenge", "rally", "siphon", "jam", "overload"} <= set(h.game.rules.actions)
    steps = {r.name for r in h.game.rules.steps}
    assert {"intimidation", "united_presence", "tactical_warnings", "forge_migration"} <= steps
    assert {"scrap_mending", "devil_drain"} <= steps
    assert "reclamation" not in steps and "corrosion" not in steps  # open gaps, with their reasons in paper.json
    notes = json.loads((robot_kingdom / "paper.json").read_text())["differences"]
    gaps = {n["where"] for n in notes if n["difference"].startswith("open gap:")}
    assert {"step_rules.territory_reclamation_step", "step_rules.corruption_decay_step"} <= gaps
    # the reference's numbers: a rally costs BASE_COST 8 + COST_PER_LEVEL 4 a level; carry 3 devil-forged things
    rally = h.game.rules.actions["rally"].settings
    assert (rally.cost, rally.cost_per_level, rally.wake) == (8, 4, False)
    assert h.game.rules.step_rule("devil_drain").settings.limit == 3


def test_robot_kingdom_salvage_raises_attack_for_good(robot_kingdom: Path) -> None:
    h = Harness(engine_on(robot_kingdom))
    h.clear()
    h.hold_one("scrap_iron", 2)
    assert h.listed("salvage") == []  # the reference's TOOL_ID must be in hand
    h.agent.hands.pop("scrap_iron")
    h.hold_one("repair_kit")
    h.hold_one("scrap_iron", 2)
    assert h.listed("salvage") == ["salvage scrap_iron"]
    before = h.agent.base_attack
    h.ok("salvage scrap_iron")
    assert h.agent.base_attack == before + 3 and "scrap_iron" not in h.agent.hands


def test_robot_kingdom_scavenge_rally_siphon_jam_overload(robot_kingdom: Path) -> None:
    h = Harness(engine_on(robot_kingdom))
    finds = h.game.rules.actions["scavenge"].settings.finds
    h.goto(sorted(finds)[0])
    assert h.listed("scavenge") == ["scavenge"]
    h.ok("scavenge")
    assert h.events("object_scavenged")
    recruit = h.npc(h.game.rules.actions["rally"].settings.recruits[0])
    h.hold_one(h.game.currency, 100)
    assert f"rally {recruit.handle}" in h.listed("rally")
    h.ok(f"rally {recruit.handle}")
    assert h.events("npc_rallied")
    h.clear()
    enemy = h.npc(_hostile(h))
    enemy.hp = enemy.max_hp = 500
    h.hold_one("cog", 3)
    assert f"jam cog {enemy.handle}" in h.listed("jam")
    h.ok(f"jam cog {enemy.handle}")  # it engages me
    assert enemy.engaged == "player"
    h.agent.hp = 10
    assert f"siphon cog {enemy.handle}" in h.listed("siphon")
    attack = enemy.attack
    h.ok(f"siphon cog {enemy.handle}")
    value = h.game.objects["cog"].value
    assert h.events("power_siphoned")[0]["direction"] == "conduit" and enemy.attack == attack - value // 3
    h.hold_one("hellcoal")
    assert "overload hellcoal" in h.listed("overload")
    h.ok("overload hellcoal")
    assert h.events("component_overloaded")[0]["hits"] == [enemy.handle]


# ============================================================================ Saltglass: Mirror Salt's glass
@pytest.fixture(scope="module")
def saltglass(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _imported(tmp_path_factory, "saltglass")


def test_saltglass_binds_its_rules_to_mirror_salt_s(saltglass: Path) -> None:
    _bound(saltglass, "mirror_salt")
    h = Harness(engine_on(saltglass))
    assert {"listen", "refract"} <= set(h.game.rules.actions)
    steps = {r.name for r in h.game.rules.steps}
    assert {"salt_glaze", "forge_alert", "salt_sink", "resonance_imprint", "salt_mirage"} <= steps
    # the dynamics Mirror Salt keeps as data come in as the imported game's own rules.json, taken whole
    shipped = Path(__file__).resolve().parents[2] / "odyssey_env" / "games" / "mirror_salt" / "rules.json"
    assert json.loads((saltglass / "rules.json").read_text()) == json.loads(shipped.read_text())
    # the reference's open salt areas (OPEN_SALT_AREAS) lie under the sky; the others are sheltered
    assert set(h.game.rules.step_rule("salt_glaze").settings.sheltered) == {"library", "armory", "orrery", "spire"}
    assert h.game.rules.step_rule("salt_mirage").settings.chance == 0.12


def test_saltglass_listen_and_refract(saltglass: Path) -> None:
    h = Harness(engine_on(saltglass))
    h.goto("flats")
    assert "listen flats" in h.listed("listen")
    h.ok("listen flats")
    lens = h.game.rules.actions["refract"].settings.lenses[0]
    h.hold_one(lens)
    assert h.listed("refract") == [f"refract {lens}"]
    h.ok(f"refract {lens}")


# ============================================================================ Quarantine: Lazaret's light
@pytest.fixture(scope="module")
def quarantine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _imported(tmp_path_factory, "quarantine")


def test_quarantine_binds_its_light_to_lazaret_s_and_names_what_is_left(quarantine: Path) -> None:
    _bound(quarantine, "lazaret")
    h = Harness(engine_on(quarantine))
    assert {"refuel", "eavesdrop"} <= set(h.game.rules.actions) and "burn corpses" not in h.game.rules.actions
    lamp = h.game.rules.step_rule("lamp_fuel").settings
    # the reference's lights and their max_fuel; dark areas drawn once at the reference's rate, never the spawn
    assert {k: v["capacity"] for k, v in lamp.lights.items()} == {"lantern": 30, "flashlight": 50}
    assert lamp.dark_areas and h.state.spawn not in lamp.dark_areas
    # Lazaret's rules.json rule, which the import wrote into Quarantine's rules.json with its own names
    rules = json.loads((quarantine / "rules.json").read_text())
    (light,) = [r for r in rules["step_rules"] if r["name"] == "lamp_fuel"]
    assert light["veil"] and light["facts"][0]["question"] == "When does a lantern burn its lantern_fuel?"
    assert {"name": "fuel", "kind": "counter", "scope": "object", "max": 50} in rules["vars"]
    assert type(h.game.rules.step_rule("lamp_fuel")).__name__ == "Step_lamp_fuel"
    notes = json.loads((quarantine / "paper.json").read_text())["differences"]
    gaps = {n["where"].split(".", 1)[1] for n in notes if n["difference"].startswith("open gap:")}
    assert {"barricade", "shove", "burn corpses"} <= gaps and "concoct" not in gaps


def test_quarantine_refuel_and_eavesdrop(quarantine: Path) -> None:
    h = Harness(engine_on(quarantine))
    h.clear()
    h.hold_one("lantern")
    h.hold_one("lantern_fuel")
    assert h.listed("refuel") == ["refuel lantern"]
    h.ok("refuel lantern")
    assert h.events("light_refueled")
    way = sorted(h.area.exits)[0]
    assert f"eavesdrop {way}" in h.listed("eavesdrop")
    h.ok(f"eavesdrop {way}")
    assert h.events("eavesdropped")


def test_quarantine_refuel_is_listed_anew_when_only_a_light_s_fuel_changes(
    quarantine: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``refuel`` is reused from the listing cache while nothing it reads changes, and listed anew when only
    its light's fuel (the rule language's counter) does; the check mode compares every listing with a fresh one."""
    monkeypatch.setenv(CHECK_ENV, "1")
    h = Harness(engine_on(quarantine))
    h.clear()
    lamp = h.hold_one("lantern")
    h.hold_one("lantern_fuel")
    assert h.listed("refuel") == [f"refuel {lamp}"]
    fuel = data(h.engine)["vars"].setdefault("fuel", {})
    fuel[lamp] = 30  # full: nothing else changed
    assert h.listed("refuel") == []
    del fuel[lamp]
    assert h.listed("refuel") == [f"refuel {lamp}"]


def test_quarantine_s_dark_burns_its_own_lights_and_veils_what_is_there(quarantine: Path) -> None:
    h = Harness(engine_on(quarantine))
    settings = h.game.rules.step_rule("lamp_fuel").settings
    h.goto(settings.dark_areas[0])
    h.clear_everywhere()
    assert "(it is pitch dark)" in render(h.engine, h.agent.id)
    lamp = h.hold_one("flashlight")
    data(h.engine)["vars"].setdefault("fuel", {})[lamp] = 2
    assert "(it is pitch dark)" not in render(h.engine, h.agent.id)
    text = h.ok("wait")
    assert f"My {lamp} lights the dark (1 turns of lantern_fuel left)." in text  # its own fuel, from its table
    assert f"My {lamp} gutters out." in h.ok("wait") and h.events("light_out") == [
        {"handle": lamp, "area": h.agent.area}
    ]


def test_quarantine_s_dark_bars_the_way_on_into_the_dark_without_a_light(quarantine: Path) -> None:
    """The refusal is Lazaret's requirement on ``enter`` (it reads ``lamp_fuel``'s params: ``params_of``), which
    the import writes into Quarantine's rules.json as a hook of its own, without Lazaret's lockdown."""
    rules = json.loads((quarantine / "rules.json").read_text())
    (hook,) = rules["hooks"]
    assert hook["verb"] == "enter" and [r.get("params_of") for r in hook["requires"]] == ["lamp_fuel"]
    h = Harness(engine_on(quarantine))
    dark = h.game.rules.step_rule("lamp_fuel").settings.dark_areas
    here, there = next((a, b) for a in dark for b in dark if b in h.state.areas[a].exits)
    h.goto(here)
    h.clear_everywhere()
    for a, b in ((here, there), (there, here)):
        h.state.areas[a].exits[b].locked = False
    refusal = f"Cannot find my way to {there} in the dark: I need a burning light."
    h.fails(f"enter {there}", refusal)
    assert f"enter {there}" not in h.listed("enter")
    lit = [b for b in h.state.areas[here].exits if b not in dark]
    assert all(f"enter {b}" in h.listed("enter") for b in lit if not h.state.areas[here].exits[b].locked)
    lamp = h.hold_one("flashlight")
    data(h.engine)["vars"].setdefault("fuel", {})[lamp] = 5
    assert f"enter {there}" in h.listed("enter")
    h.ok(f"enter {there}")
    assert h.agent.area == there


def test_quarantine_concoct_is_written_in_the_rule_language_with_the_reference_s_potencies(quarantine: Path) -> None:
    rules = json.loads((quarantine / "rules.json").read_text())
    assert [v["verb"] for v in rules["verbs"]] == ["concoct"]
    h = Harness(engine_on(quarantine))
    h.clear()
    h.hold_one("green_herb", 2)
    h.agent.hp = 10
    assert h.listed("concoct") == ["concoct green_herb green_herb"]  # the same herb twice takes two of it
    h.ok("concoct green_herb green_herb")
    assert h.agent.hp == 30 and "green_herb" not in h.agent.hands  # green + green = 20 in the reference's table
    h.hold_one("red_herb")
    h.hold_one("blue_herb")
    assert h.listed("concoct") == ["concoct blue_herb red_herb", "concoct red_herb blue_herb"]
    h.ok("concoct red_herb blue_herb")
    assert h.agent.hp == 100 and h.events("remedy_concocted")[0]["hp"] == 70


# ============================================================================ Remnant: locks and fractions
@pytest.fixture(scope="module")
def remnant(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _imported(tmp_path_factory, "remnant")


def test_remnant_makes_two_wrenches_of_one_bar_and_picks_with_the_reference_s_odds(remnant: Path) -> None:
    h = Harness(engine_on(remnant))
    h.clear()
    wrench = h.game.objects["tension_wrench"]
    assert wrench.recipe is not None and wrench.recipe.ingredients == {"iron_bar": 0.5}  # the reference's amount
    notes = " ".join(n["difference"] for n in json.loads((remnant / "paper.json").read_text())["differences"])
    assert "0.5 iron_bar" not in notes and "lockpicking tool" not in notes  # neither is a difference any more
    for station in wrench.recipe.stations:
        h.put(station)
    h.hold("iron_bar")
    assert "craft 2 tension_wrench" in h.listed("craft")
    h.ok("craft 2 tension_wrench")
    assert h.area.objects["tension_wrench"] == 2 and "iron_bar" not in h.agent.hands
    rule = h.engine.rules.actions["lockpick"]
    assert (rule.chance_of("lockpick"), rule.chance_of("tension_wrench")) == (0.2, 0.1)
    p = rule.settings
    assert (p.break_chance, p.success_break_chance, p.hurt_chance, p.hurt) == (1.0, 1.0, 0.25, 1)


# ============================================================== the day and respawn, as the reference has them
def test_remnant_s_day_is_the_reference_s_day_cycle_with_its_numbers(remnant: Path) -> None:
    steps = {r.name: r for r in engine_on(remnant).rules.steps}
    assert "day_cycle" in steps and not {"day_night", "night_spawn", "danger_hours"} & set(steps)
    p = steps["day_cycle"].settings
    assert (p.midnight_ambush, p.midnight_attack, p.small_hours_attack) == (0.3, 1.3, 1.2)
    assert (p.noon_ambush, p.noon_attack, p.afternoon_attack) == (0.05, 0.8, 0.8)
    respawn = steps["respawn"].settings  # the reference's EnemyRespawn and FoodRespawn, odyssey's quiet style
    assert respawn.refill == "headcount" and respawn.food_chance == 0.5


def test_a_game_whose_reference_brings_nothing_back_has_no_respawn(metropolis: Path) -> None:
    steps = {r.name for r in engine_on(metropolis).rules.steps}
    assert not {"respawn", "day_night", "night_spawn", "day_cycle"} & steps


def test_robot_kingdom_keeps_returning_enemies_for_its_unbound_reclamation_but_no_food(robot_kingdom: Path) -> None:
    steps = {r.name: r for r in engine_on(robot_kingdom).rules.steps}
    assert not {"day_night", "night_spawn"} & set(steps)
    respawn = steps["respawn"].settings
    assert respawn.enemy_chance > 0 and respawn.food_chance == 0.0
