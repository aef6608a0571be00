"""Mirror Salt's own rules (``odyssey_env/games/mirror_salt/rules.py``), one behaviour per test.

Each verb is shown succeeding in every way it can and refusing with every message it has, with its
exact valid-action listing; each step rule is shown firing and not firing. The engine runs the real
Mirror Salt game (tutorial and expansion off); a test stands the player where it needs and places
exactly the things it talks about. These are the tests ``tools/mutation.py`` runs on the module.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from kit import PLAYER, Harness, engine_on, load_with_rules

from odyssey_agents.oracle import OracleAgent
from odyssey_agents.oracle.view import View
from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.game import GAMES_DIR, Game, GameError
from odyssey_env.games.mirror_salt import rules as sg
from odyssey_env.quests.conditions import holds, owned
from odyssey_env.quests.spec import Condition
from odyssey_env.rulelang import phantoms
from odyssey_env.rulelang.runtime import data
from odyssey_env.world import add, make_objects
from odyssey_env.worldgen import spawn_npc

OPEN = "bleached_pans"  # under the open sky, level 1, next to the caravan rest and the kiln hollow
SHADE = "caravan_rest"  # sheltered
KILN = "kiln_hollow"  # sheltered, with the salt kiln


class Sg(Harness):
    """The kit's harness on Mirror Salt (the expansion off, no hostile NPC anywhere), where a refused command leaves
    the areas, the instances and the NPCs as they were."""

    verb_events = frozenset({"area_listened", "npc_listened", "object_listened", "light_refracted", "mirage_dispelled"})
    refusal_keeps = ("areas", "instances", "npcs")

    def __init__(self, seed: int = 0, game=None):
        super().__init__(engine_on(game or "mirror_salt", seed, options={"expansion": False}))
        # no stray fights or loot: each test brings its own
        self.clear_everywhere(objects=False, npcs=lambda npc: self.game.npcs[npc.type].hostile)
        self.piles.clear()

    @property
    def piles(self) -> dict:
        return phantoms.all_piles(self.engine).setdefault(sg.MIRAGE, {})

    @property
    def sunk(self) -> dict:
        """``salt_sink``'s tally (rules.json): area -> object -> units swallowed."""
        return data(self.engine)["vars"].setdefault("sunk", {})

    @property
    def pending(self) -> list:
        """What the salt is waiting to swallow: ``[area, handle, amount, due step]`` (its delayed effects)."""
        return [[here, b["event"]["handle"], b["event"]["amount"], due] for due, _, _, here, b in timers(self.engine)]

    @property
    def ringing(self) -> dict:
        """``resonance_imprint``'s lasting set (rules.json): area -> NPC type -> the step its death-note fades."""
        return data(self.engine)["vars"].setdefault("ringing", {})

    @property
    def unnerved(self) -> dict:
        """The NPCs ``imprint_falter`` holds weakened (rules.json): handle -> the attack they had."""
        return data(self.engine).setdefault("modified", {}).setdefault("imprint_falter", {})

    def stand(self, area: str) -> None:
        self.goto(area, clear=False)
        self.agent.visited.setdefault(area, self.state.step)

    def real(self, area: str) -> dict[str, int]:
        """What really lies in ``area`` (the mirages that formed there meanwhile left out)."""
        fake = self.piles.get(area, {})
        return {h: n for h, n in self.state.areas[area].objects.items() if h not in fake}

    def mirage(self, kind: str, area: str | None = None, n: int = 1, lasts: int = 60) -> None:
        name = area or self.agent.area
        add(self.state.areas[name].objects, kind, n)
        self.piles.setdefault(name, {})[kind] = [n, self.state.step + lasts]


def rings(engine: Engine) -> bool:
    """Whether a death-note rings anywhere once the step is over (one whose time is up is forgotten, as the
    Python rule's table dropped it; listen, asked during the next step, hears the same)."""
    table = engine.state.rule_data.get("rulelang", {}).get("vars", {}).get("ringing", {})
    return any(until > engine.state.step for held in table.values() for until in held.values())


def timers(engine: Engine) -> list:
    """The rule file's delayed effects waiting (salt_sink's are its only ones)."""
    return engine.state.rule_data.get("rulelang", {}).get("timers", [])


def rules_copy(tmp_path, edit) -> Engine | Game:
    """Mirror Salt with its rules.json edited by ``edit`` (a copy, loaded afresh with the shipped rules.py)."""
    folder = tmp_path / "mirror_salt"
    shutil.copytree(GAMES_DIR / "mirror_salt", folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
    rules = json.loads((folder / "rules.json").read_text(encoding="utf-8"))
    edit({r["name"]: r for r in rules["step_rules"]}, {v["name"]: v for v in rules["vars"]})
    (folder / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    return load_with_rules(folder, sg)


def salty(tmp_path, **changes) -> Sg:
    """A Mirror Salt engine whose ``salt_sink`` (in rules.json) waits ``delay`` steps and remembers ``most``
    kinds per area, and whose kin of a fallen enemy keep ``times`` their attack."""

    def edit(rules: dict, vars: dict) -> None:
        if "delay" in changes:
            rules["salt_sink"]["effects"][0]["after"] = changes["delay"]
        if "most" in changes:
            vars["sunk"]["max"] = changes["most"]
        if "times" in changes:
            rules["imprint_falter"]["modify"]["times"] = changes["times"]

    world = Sg(game=rules_copy(tmp_path, edit))
    world.stand(OPEN)
    world.clear()
    return world


@pytest.fixture
def s() -> Sg:
    world = Sg()
    world.stand(OPEN)
    world.clear()
    return world


def variant(**params) -> Sg:
    """A Mirror Salt engine whose rules take other parameters (a fresh, uncached copy of the game): a rule of
    rules.json (salt_mirage) through world.json's game.params, read when the file is loaded, one of rules.py
    through its settings."""
    data_rules = {"salt_mirage"}
    given = {k: v for k, v in params.items() if k in data_rules}
    if given:
        folder = Path(tempfile.mkdtemp()) / "mirror_salt"
        shutil.copytree(GAMES_DIR / "mirror_salt", folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
        for name, changes in given.items():
            world["game"]["params"].setdefault(name, {}).update(
                {k: list(v) if isinstance(v, tuple) else v for k, v in changes.items()}
            )
        (folder / "world.json").write_text(json.dumps(world), encoding="utf-8")
        game = load_with_rules(folder, sg)
        shutil.rmtree(folder.parent)
    else:
        game = load_game("mirror_salt", cache=False)
    for name, changes in params.items():
        if name in data_rules:
            continue
        rule = game.rules.step_rule(name) or game.rules.actions[name]
        rule.settings = dataclasses.replace(rule.settings, **changes)
    world = Sg(game=game)
    world.stand(OPEN)
    world.clear()
    return world


# ============================================================================ listen
def test_listen_here_names_the_mirages_the_sunk_and_the_death_notes(s):
    s.put("quartz_sand", 2)
    s.mirage("rock_salt")
    s.sunk[OPEN] = {"glass_knife": 1}
    now = s.state.step
    s.ringing[OPEN] = {"glass_stalker": now + 11, "glare_wyrm": now + 2}
    text = s.ok(f"listen {OPEN}")
    assert f"I kneel and listen to {OPEN}." in text
    assert "Among what lies here, the rock_salt makes no sound at all: a mirage, not really there." in text
    assert "quartz_sand" not in text.split("Under")[0].split("Among")[1]
    assert "Under the crust the salt still hums with what it swallowed: 1 glass_knife." in text
    assert "death-note of a glass_stalker: its kind falters here for 10 more steps." in text
    assert "death-note of a glare_wyrm: its kind falters here for 1 more step." in text
    assert s.events("area_listened") == [{"area": OPEN, "remote": False, "mirages": 1}]
    assert listened_in(s, OPEN)


def test_listen_here_names_several_mirages(s):
    s.mirage("rock_salt")
    s.mirage("sunstone", n=2)
    text = s.ok(f"listen {OPEN}")
    assert "the rock_salt and the sunstone make no sound at all: mirages, not really there." in text
    assert s.events("area_listened")[0]["mirages"] == 3


def test_listen_here_when_all_is_true_or_nothing_lies_here(s):
    assert "Only the wind over the salt." in s.ok(f"listen {OPEN}")
    assert "rings true" not in s.feedback
    s.put("rock_salt")
    text = s.ok(f"listen {OPEN}")
    assert "Everything lying here rings true." in text and "Only the wind" not in text
    assert s.state.rule_data["rulelang"]["vars"]["heard"][PLAYER] == [OPEN]  # heard once, recorded once


def listened_in(s, area):
    """rules.json's predicate listened_in (the set ``heard`` holds each area listened to while standing in it)."""
    return s.engine.rules.predicates["listened_in"](s.engine, s.agent, area=area)


def test_listen_to_a_neighbouring_area(s):
    s.clear("singing_dunes")
    text = s.ok("listen singing_dunes")
    assert "I press an ear to the salt toward singing_dunes and hear no one moving there." in text
    assert s.events("area_listened") == [{"area": "singing_dunes", "remote": True, "heard": {}}]
    s.npc("glass_stalker", "singing_dunes")
    s.npc("glass_stalker", "singing_dunes")
    assert "hear 2 glass_stalker there." in s.ok("listen singing_dunes")
    assert s.events("area_listened")[0]["heard"] == {"glass_stalker": 2}
    assert not listened_in(s, "singing_dunes")  # from afar it does not count


@pytest.mark.parametrize(
    ("index", "sound"),
    [
        (0, "it is gathering itself to strike"),
        (1, "its breath is ragged: it will pause"),
        (2, "it is drawing into its guard"),
    ],
)
def test_listen_to_an_enemy_tells_its_next_move(s, index, sound):
    foe = s.npc("glass_stalker")
    foe.stance_index = index
    s.unnerved.pop(foe.handle, None)
    text = s.ok(f"listen {foe.handle}")
    assert f"I listen to {foe.handle}: {sound}." in text
    assert "trembles" not in text
    stance = ["attack", "wait", "defend"][index]
    assert s.events("npc_listened") == [{"npc": foe.handle, "type": "glass_stalker", "stance": stance}]


def test_listen_to_an_unnerved_enemy_and_to_a_trader(s):
    foe = s.npc("glass_stalker")
    s.unnerved[foe.handle] = foe.attack
    assert "It trembles at the death-note still ringing in the glass." in s.ok(f"listen {foe.handle}")
    trader = s.npc("salt_trader")
    trader.coins = 7
    assert f"I listen to {trader.handle}: 7 glass_bead clink in their purse." in s.ok(f"listen {trader.handle}")
    assert s.events("npc_listened")[0]["stance"] is None


def test_listen_to_objects(s):
    s.mirage("sunstone")
    assert "The sunstone lying here makes no sound at all, and the salt under it bears no weight: a mirage." in s.ok(
        "listen sunstone"
    )
    assert s.events("object_listened") == [{"object": "sunstone", "handle": "sunstone", "mirage": True}]
    s.put("clear_glass")
    set_glaze(s.engine, "clear_glass", 0, 1)  # (only what is in hand can be glazed)
    text = s.ok("listen clear_glass")
    assert "clear_glass rings with a clear, high note." in text and "crackles" not in text
    assert s.events("object_listened")[0]["mirage"] is False
    knife = s.hold_one("glass_knife")
    text = s.ok(f"listen {knife}")
    assert "glass_knife answers with the dull knock of something real." in text and "glaze" not in text
    set_glaze(s.engine, knife, 0, 2)
    assert "A crust of salt glaze crackles on it (2 layers)." in s.ok(f"listen {knife}")
    set_glaze(s.engine, knife, 0, 1)
    assert "A crust of salt glaze crackles on it (1 layer)." in s.ok(f"listen {knife}")
    bag = s.wear("caravan_pack")
    s.stash(bag, "mirror_flake")
    assert "mirror_flake rings with a clear, high note." in s.ok("listen mirror_flake")
    assert "rings" not in s.ok(f"listen {bag}") and "dull knock" in s.feedback


def test_a_carried_thing_is_real_even_where_its_mirage_lies(s):
    s.mirage("rock_salt")
    bag = s.wear("caravan_pack")
    s.stash(bag, "rock_salt")
    assert "a mirage" in s.ok("listen rock_salt")  # the one lying here is the one I hear
    s.piles.clear()
    s.state.areas[OPEN].objects.clear()
    assert "dull knock" in s.ok("listen rock_salt")


def test_listen_refuses_what_is_not_here(s):
    s.put("rock_salt", area="singing_dunes")
    for target in ("rock_salt", "mirror_basin", "keeper_odalys", "nothing_at_all"):
        s.fails(
            f"listen {target}",
            f"Cannot listen to {target}: it is not this area, a neighbouring one, "
            "someone here, or something I see or carry.",
        )


def test_listen_lists_every_target_and_only_those(s):
    foe = s.npc("glass_stalker")
    s.put("rock_salt")
    knife = s.hold_one("glass_knife")
    bag = s.wear("caravan_pack")
    s.stash(bag, "clear_glass")
    expected = {
        f"listen {t}"
        for t in (
            OPEN,
            "caravan_rest",
            "kiln_hollow",
            "singing_dunes",
            foe.handle,
            "rock_salt",
            knife,
            bag,
            "clear_glass",
        )
    }
    assert set(s.listed("listen")) == expected
    for command in sorted(expected):
        s.ok(command)


def test_listen_declares_its_facts():
    rule = load_game("mirror_salt").rules.actions["listen"]
    answers = [f.answer for f in rule.facts(load_game("mirror_salt"))]
    assert answers == ["listen to it: a mirage makes no sound", "what it will do next"]


# ============================================================================ refract
def test_refract_breaks_the_mirages_here_only(s):
    s.mirage("rock_salt")
    s.mirage("sunstone", n=2)
    s.mirage("quartz_sand", area="singing_dunes")
    s.put("mirror_flake")
    s.hold_one("clear_glass")
    text = s.ok("refract clear_glass")
    assert f"I hold clear_glass up to the mirror sky and bend its light across {OPEN}." in text
    assert "The honest light passes straight through the rock_salt lying here: it was a mirage" in text
    assert "through the sunstone lying here" in text
    assert s.area.objects == {"mirror_flake": 1}
    assert OPEN not in s.piles and s.piles["singing_dunes"]["quartz_sand"][0] == 1
    assert s.events("mirage_dispelled") == [
        {"object": "rock_salt", "amount": 1, "area": OPEN},
        {"object": "sunstone", "amount": 2, "area": OPEN},
    ]
    assert s.events("light_refracted") == [
        {"object": "clear_glass", "handle": "clear_glass", "area": OPEN, "dispelled": 3, "cleared": 0}
    ]


def test_refract_cracks_the_glaze_off_what_i_hold(s):
    knife = s.hold_one("glass_knife")
    bag = s.wear("caravan_pack")
    s.stash(bag, "sun_prism")
    set_glaze(s.engine, knife, 5, 3)
    text = s.ok("refract sun_prism")
    assert "The focused beam cracks the salt glaze off glass_knife." in text
    assert "nothing here is false" not in text
    assert glazed(s.engine) == {knife: [1, 0]}  # bare, and a fresh count of the sun begun
    assert s.agent.attack == s.agent.base_attack + 6
    assert s.events("light_refracted")[0]["cleared"] == 1


def test_the_glaze_cracked_off_two_things_is_said_after_the_light_in_the_hands_order(s):
    knife = s.hold_one("glass_knife")
    pick = s.hold_one("salt_pick")
    bag = s.wear("caravan_pack")
    s.stash(bag, "sun_prism")
    set_glaze(s.engine, pick, 0, 1)  # the pick's glaze came first: the hands' order names the knife first
    set_glaze(s.engine, knife, 0, 2)
    text = s.ok("refract sun_prism")
    light = text.index("I hold sun_prism up to the mirror sky")
    assert text.index("The focused beam cracks the salt glaze off glass_knife, salt_pick.") > light
    assert "nothing here is false" not in text and glazed(s.engine) == {knife: [1, 0], pick: [1, 0]}
    assert s.events("light_refracted")[0]["cleared"] == 2


def test_refract_where_nothing_is_false_and_what_it_records(s):
    s.hold_one("oath_lens")
    assert "It spills into colour on the salt; nothing here is false." in s.ok("refract oath_lens")
    assert s.events("light_refracted") == [
        {"object": "oath_lens", "handle": "oath_lens", "area": OPEN, "dispelled": 0, "cleared": 0}
    ]
    light_bent = s.engine.rules.predicates["light_bent"]  # rules.json's: the set ``bent`` holds "<type>@<area>"
    assert light_bent(s.engine, s.agent, object="oath_lens", area=OPEN)
    assert not light_bent(s.engine, s.agent, object="oath_lens", area="zenith_spire")
    s.ok("refract oath_lens")
    assert s.state.rule_data["rulelang"]["vars"]["bent"][PLAYER] == [f"oath_lens@{OPEN}"]  # kept once


def test_refract_refuses_what_i_do_not_carry_and_what_is_not_clear(s):
    s.put("clear_glass")
    s.fails("refract clear_glass", "Cannot refract through clear_glass: I do not carry it.")
    s.fails("refract nothing_at_all", "Cannot refract through nothing_at_all: I do not carry it.")
    s.hold_one("glass_knife")
    s.fails(
        "refract glass_knife",
        "Cannot refract through glass_knife: it is not clear glass, and light will not bend through it.",
    )


def test_refract_lists_the_clear_glass_i_carry(s):
    s.put("clear_glass")
    s.hold_one("glass_knife")
    s.hold_one("mirror_flake")
    assert set(s.listed("refract")) == {"refract mirror_flake"}
    bag = s.wear("caravan_pack")
    s.stash(bag, "oath_lens")
    s.stash(bag, "rock_salt")
    assert set(s.listed("refract")) == {"refract mirror_flake", "refract oath_lens"}
    s.agent.hands.clear()
    s.agent.equipment.clear()
    assert set(s.listed("refract")) == set()


def test_refract_declares_its_facts():
    game = load_game("mirror_salt")
    assert [f.answer for f in game.rules.actions["refract"].facts(game)] == [
        "it breaks them all",
        "refract light through clear glass",
    ]


# ============================================================================ salt glaze
def glazed(engine: Engine, who: str = PLAYER) -> dict[str, list[int]]:
    """``salt_glaze``'s per-held counters for one agent as ``{handle: [steps in the sun, layers]}``: the rule
    file keeps them as two variables keyed ``"<agent>/<handle>"``, and drops a value back at 0."""
    tables, prefix, out = data(engine)["vars"], f"{who}/", {}
    for i, var in enumerate((sg.GLAZE_SUN, sg.GLAZE_LAYERS)):
        for key, value in tables.get(var, {}).items():
            if key.startswith(prefix):
                out.setdefault(key[len(prefix) :], [0, 0])[i] = value
    return out


def set_glaze(engine: Engine, handle: str, sun: int, layers: int, who: str = PLAYER) -> None:
    """Set what ``glazed`` reads, as the rule would have left it (a 0 is no value)."""
    for var, value in ((sg.GLAZE_SUN, sun), (sg.GLAZE_LAYERS, layers)):
        table = data(engine)["vars"].setdefault(var, {})
        table.pop(f"{who}/{handle}", None)
        if value:
            table[f"{who}/{handle}"] = value


def test_glaze_builds_under_the_open_sky(s):
    knife = s.hold_one("glass_knife")
    s.wait(5)
    assert s.agent.attack == s.agent.base_attack + 6
    assert glazed(s.engine) == {knife: [5, 0]}
    s.ok("wait")
    assert "Salt glaze crusts glass_knife in my hand (layer 1 of 3): it strikes for 2 less." in s.feedback
    assert s.events("item_glazed") == [{"handle": knife, "layers": 1}]
    assert s.agent.attack == s.agent.base_attack + 4
    assert sg.glaze_layers(s.engine, PLAYER, knife) == 1


def test_glaze_stops_at_its_last_layer_and_never_takes_more_than_half(s):
    s.hold_one("glass_knife")
    s.wait(18)
    assert "(layer 3 of 3): it strikes for 3 less." in s.feedback  # 6 - 3*2 would be 0: half of 6 stays
    assert s.agent.attack == s.agent.base_attack + 3
    s.wait(12)
    assert "glaze" not in s.feedback and s.agent.attack == s.agent.base_attack + 3
    assert sg.glaze_layers(s.engine, PLAYER, "glass_knife") == 3


def test_glaze_blunts_the_best_weapon_held(s):
    s.hold_one("glass_knife")
    s.hold_one("salt_pick")
    s.wait(12)
    assert s.agent.attack == s.agent.base_attack + 11 - 4
    s.wait(6)
    assert s.agent.attack == s.agent.base_attack + 6  # 11 - 6 would be 5; half of 11, rounded up, stays


def test_shade_flakes_glaze_off_and_adds_none(s):
    knife = s.hold_one("glass_knife")
    s.wait(14)
    s.stand(SHADE)
    s.ok("wait")
    assert "In the shade, a layer of salt glaze flakes off glass_knife." in s.feedback
    assert s.agent.attack == s.agent.base_attack + 4
    s.ok("wait")
    assert s.agent.attack == s.agent.base_attack + 6
    s.wait(10)
    assert "glaze" not in s.feedback and sg.glaze_layers(s.engine, PLAYER, knife) == 0
    assert glazed(s.engine) == {}  # nothing left on it (a value back at 0 is dropped)
    s.stand(OPEN)
    s.wait(5)
    assert sg.glaze_layers(s.engine, PLAYER, knife) == 0  # shade reset the count: six more steps needed
    s.ok("wait")
    assert sg.glaze_layers(s.engine, PLAYER, knife) == 1


def test_stowing_sheds_the_glaze(s):
    bag = s.wear("caravan_pack")
    s.hold_one("glass_knife")
    s.wait(3)
    s.ok(f"store 1 glass_knife {bag}")
    assert "glaze" not in s.feedback  # nothing had crusted yet
    s.ok(f"take out glass_knife {bag}")
    s.wait(6)
    s.ok(f"store 1 glass_knife {bag}")
    assert "Out of the glare, the salt glaze flakes off glass_knife." in s.feedback
    assert glazed(s.engine) == {}  # let go of: its values forgotten
    s.ok(f"take out glass_knife {bag}")
    assert s.agent.attack == s.agent.base_attack + 6 and sg.glaze_layers(s.engine, PLAYER, "glass_knife") == 0


def test_glaze_spares_what_has_no_edge_and_empty_hands(s):
    s.hold_one("clear_glass")
    s.wait(12)
    assert "glaze" not in s.feedback and glazed(s.engine) == {}
    assert s.agent.attack == s.agent.base_attack
    s.agent.hands.clear()
    s.ok("wait")
    assert glazed(s.engine) == {}


def test_glaze_declares_its_facts():
    game = load_game("mirror_salt")
    facts = list(game.rules.step_rule(sg.GLAZE).facts(game))
    assert [f.answer for f in facts] == [
        "salt glazes it and blunts its attack",
        "carry it in shade or in my pack, not in my hand under the open sky",
    ]


def test_open_sky_is_every_real_area_but_the_sheltered():
    game = load_game("mirror_salt")
    engine = Engine(game, 0)
    sky = {name for name, area in engine.state.areas.items() if sg.open_sky(engine, area)}
    assert sky == set(game.areas) - {"caravan_rest", "kiln_hollow", "lensmakers_ruin"}
    tutorial = Engine(game, 0, options={"tutorial": True})
    assert not sg.open_sky(tutorial, tutorial.state.areas["shade_tent"])


# ============================================================================ forge alert
def test_forge_alert_by_a_station_with_everything_on_me(s):
    s.stand(KILN)
    bag = s.wear("caravan_pack")
    s.stash(bag, "quartz_sand", 2)
    s.stash(bag, "rock_salt", 1)
    s.ok("wait")
    assert (
        "Forge alert: with the salt_kiln here and what I carry, I could make clear_glass (craft 1 clear_glass)."
    ) in s.feedback
    assert s.events("forge_alert") == [{"area": KILN, "objects": ["clear_glass"]}]
    s.ok("wait")
    assert "Forge alert" not in s.feedback  # told once


def test_forge_alert_names_only_what_became_ready(s):
    s.stand(KILN)
    bag = s.wear("caravan_pack")
    s.stash(bag, "quartz_sand", 2)
    s.stash(bag, "rock_salt", 1)
    s.ok("wait")
    s.stash(bag, "brass_wire", 1)
    s.stash(bag, "clear_glass", 1)
    s.ok("wait")
    assert s.events("forge_alert") == [{"area": KILN, "objects": ["sun_key"]}]
    assert "I could make sun_key (craft 1 sun_key)." in s.feedback


def test_forge_alert_again_after_leaving_and_after_the_ingredients_come_back(s):
    s.stand(KILN)
    bag = s.wear("caravan_pack")
    s.stash(bag, "quartz_sand", 2)
    s.stash(bag, "rock_salt", 1)
    s.ok("wait")
    s.ok("enter caravan_rest")
    assert "Forge alert" not in s.feedback
    s.ok("enter kiln_hollow")
    assert s.events("forge_alert") == [{"area": KILN, "objects": ["clear_glass"]}]
    s.ok("craft 1 clear_glass")
    assert "Forge alert" not in s.feedback
    s.stash(bag, "quartz_sand", 2)
    s.stash(bag, "rock_salt", 1)
    s.ok("wait")
    assert s.events("forge_alert") == [{"area": KILN, "objects": ["clear_glass"]}]


def test_no_forge_alert_without_the_station_or_an_ingredient(s):
    bag = s.wear("caravan_pack")
    s.stash(bag, "quartz_sand", 2)
    s.stash(bag, "rock_salt", 1)
    s.ok("wait")  # the bleached pans have no kiln
    assert "Forge alert" not in s.feedback and not s.events("forge_alert")
    s.stand(KILN)
    s.state.instances[bag].contents["quartz_sand"] = 1
    s.ok("wait")
    assert "Forge alert" not in s.feedback and not s.events("forge_alert")


def test_forge_alert_needs_every_station_of_the_recipe():
    world = Sg()
    world.stand("lensmakers_ruin")
    world.clear()
    world.put("grinding_wheel")
    bag = world.wear("caravan_pack")
    world.stash(bag, "quartz_sand", 2)
    world.stash(bag, "rock_salt", 1)  # clear glass wants a kiln, not a wheel
    world.stash(bag, "mirror_flake", 2)
    world.stash(bag, "brass_wire", 1)
    world.ok("wait")
    assert world.events("forge_alert") == [{"area": "lensmakers_ruin", "objects": ["mirror_greaves"]}]


def test_forge_alert_declares_its_facts():
    game = load_game("mirror_salt")
    assert [f.answer for f in game.rules.step_rule("forge_alert").facts(game)] == [
        "when I stand by a station carrying everything one of its recipes needs"
    ]


# ============================================================================ salt sink
def test_a_dropped_thing_sinks_once_left_alone(s):
    s.hold_one("rock_salt", 2)
    s.ok("drop rock_salt")
    s.ok("enter caravan_rest")
    s.wait(28)
    assert s.real(OPEN) == {"rock_salt": 2}
    s.ok("wait")
    assert s.real(OPEN) == {} and s.events("object_sank") == [{"object": "rock_salt", "amount": 2, "area": OPEN}]
    assert s.pending == [] and s.sunk == {OPEN: {"rock_salt": 2}}
    s.ok(f"enter {OPEN}")
    assert "the salt still hums with what it swallowed: 2 rock_salt." in s.ok(f"listen {OPEN}")


def test_nothing_sinks_while_someone_watches(s):
    s.hold_one("rock_salt")
    s.ok("drop rock_salt")
    s.wait(40)
    assert s.area.objects == {"rock_salt": 1}
    s.ok("enter caravan_rest")
    s.wait(28)
    assert s.real(OPEN) == {"rock_salt": 1}  # the clock started when I left
    s.ok("wait")
    assert s.real(OPEN) == {}


def test_only_what_is_left_sinks_and_discarding_counts_as_dropping(s):
    bag = s.wear("caravan_pack")
    s.stash(bag, "quartz_sand", 3)
    s.ok(f"discard 3 quartz_sand {bag}")
    s.ok("pick up quartz_sand")
    s.put("rock_salt")  # lying here before: not dropped by anyone
    s.ok("enter caravan_rest")
    s.wait(30)
    assert s.real(OPEN) == {"rock_salt": 1}
    assert s.sunk[OPEN] == {"quartz_sand": 2}


def test_the_salt_spares_keys_quest_objects_and_named_things(s):
    slate = s.hold_one("salt_slate")
    s.hold_one("sun_key")
    s.ok(f"drop {slate}")
    s.ok("drop sun_key")
    s.hold_one("oath_lens")
    s.ok("drop oath_lens")
    s.ok("enter caravan_rest")
    s.wait(40)
    assert s.real(OPEN) == {slate: 1, "sun_key": 1, "oath_lens": 1}
    assert s.pending == []


def test_what_i_drop_in_the_tutorial_stays():
    game = load_game("mirror_salt")
    engine = Engine(game, 0, options={"tutorial": True})
    agent = engine.state.agents[PLAYER]
    add(agent.hands, "rock_salt", 1)
    engine.step({PLAYER: "drop rock_salt"})
    assert timers(engine) == []


def test_the_salt_remembers_a_bounded_number_of_kinds(tmp_path):
    world = salty(tmp_path, delay=1, most=2)
    for kind in ("rock_salt", "quartz_sand", "sunstone"):
        world.hold_one(kind)
        world.ok(f"drop {kind}")
    world.ok("enter caravan_rest")
    world.wait(2)
    assert world.real(OPEN) == {}
    assert world.sunk[OPEN] == {"rock_salt": 1, "quartz_sand": 1}


def test_the_pending_list_is_bounded(s, monkeypatch):
    monkeypatch.setattr("odyssey_env.rulelang.effects.MAX_TIMERS", 3)  # the language's bound (256) made small
    for _ in range(5):
        s.hold_one("rock_salt")
        s.ok("drop rock_salt")
    assert len(s.pending) == 3
    assert [due for *_, due in s.pending] == [s.state.step + 30] * 3  # the oldest kept, each watched since


def test_sink_declares_its_facts():
    game = load_game("mirror_salt")
    assert [f.answer for f in game.rules.step_rule("salt_sink").facts(game)] == [
        "after a while they sink and are gone",
        "keys, quest objects and named things like bags and slates",
    ]


# ============================================================================ resonance imprint
def test_a_fallen_enemy_leaves_a_death_note_that_unnerves_its_kin(s):
    prey = s.npc("glass_stalker")
    prey.hp = 1
    kin = s.npc("glass_stalker")
    elsewhere = s.npc("glass_stalker", "singing_dunes")
    s.ok(f"attack {prey.handle}")
    assert f"The glass around me catches the death-note of {prey.handle} and keeps ringing" in s.feedback
    assert s.events("imprint_formed") == [{"area": OPEN, "type": "glass_stalker"}]
    assert kin.attack == round(8 * 0.7) and elsewhere.attack == 8
    assert s.unnerved == {kin.handle: 8}


def test_the_death_note_fades_and_kin_recover(s):
    prey = s.npc("glass_stalker")
    prey.hp = 1
    kin = s.npc("glass_stalker")
    s.ok(f"attack {prey.handle}")
    s.state.npcs[kin.handle].engaged = None
    s.agent.combat = None
    until = s.ringing[OPEN]["glass_stalker"]
    s.stand(SHADE)  # out of reach of an ambush
    s.wait(until - 1 - s.state.step)
    assert kin.attack == 6
    s.stand(OPEN)
    s.ok("wait")
    assert "The death-note of the glass_stalker fades from the glass." in s.feedback
    assert kin.attack == 8 and not rings(s.engine) and s.unnerved == {}


def test_kin_that_leave_the_ringing_area_recover(s):
    prey = s.npc("glass_stalker")
    prey.hp = 1
    kin = s.npc("glass_stalker")
    s.ok(f"attack {prey.handle}")
    s.state.areas[OPEN].npcs.remove(kin.handle)
    s.state.areas["singing_dunes"].npcs.append(kin.handle)
    kin.area = "singing_dunes"
    kin.engaged = None
    s.agent.combat = None
    s.ok("wait")
    assert kin.attack == 8 and s.unnerved == {}


def test_no_death_note_without_a_death_or_from_a_boss(s):
    kin = s.npc("glass_stalker", "singing_dunes")
    s.wait(3)
    assert kin.attack == 8 and not rings(s.engine) and s.unnerved == {}
    wyrm = s.npc("glare_wyrm")
    wyrm.hp = 1
    s.ok("attack glare_wyrm")
    assert "death-note" not in s.feedback and not rings(s.engine)


def test_imprint_parameters_are_checked(tmp_path):
    def edit(rules: dict, vars: dict) -> None:
        rules["imprint_falter"]["modify"]["times"] = 0.0

    with pytest.raises(GameError, match=r"rules.json: step_rules\[\d\].modify.times: must lie above 0"):
        rules_copy(tmp_path, edit)


def test_imprint_declares_its_facts():
    game = load_game("mirror_salt")
    assert [f.answer for f in game.rules.step_rule("resonance_imprint").facts(game)] == [
        "they falter and strike softer for a while"
    ]


# ============================================================================ salt mirage
def test_a_mirage_picked_up_vanishes_and_is_never_had(s):
    s.mirage("resonant_shard")
    s.ok("pick up resonant_shard")
    assert "The resonant_shard I took thins to glare in my grasp and is gone: it was a mirage." in s.feedback
    assert s.events("mirage_vanished") == [{"object": "resonant_shard", "amount": 1, "area": OPEN}]
    assert s.agent.hands == {} and s.area.objects == {} and s.piles == {}
    assert "resonant_shard" not in s.agent.acquired  # the first real one will count as the first find
    assert not holds(s.engine, s.agent, Condition(type="has_item_count", object="resonant_shard"))


def test_a_mirage_that_goes_into_the_pack_vanishes_from_it(s):
    bag = s.wear("caravan_pack")
    s.stash(bag, "resonant_shard")  # a real one, already had
    s.hold_one("glass_knife")
    s.hold_one("rock_salt")
    s.mirage("resonant_shard")
    s.ok("pick up resonant_shard")
    assert "it was a mirage" in s.feedback
    assert s.state.instances[bag].contents == {"resonant_shard": 1}
    assert s.agent.acquired.get("resonant_shard") is None or s.agent.acquired["resonant_shard"] < s.state.step
    s.mirage("sunstone", n=2)
    s.ok(f"store 2 sunstone {bag}")
    assert s.state.instances[bag].contents == {"resonant_shard": 1}
    assert s.events("mirage_vanished") == [{"object": "sunstone", "amount": 2, "area": OPEN}]


def test_a_real_thing_landing_on_a_mirage_breaks_it(s):
    s.mirage("rock_salt")
    s.hold_one("rock_salt")
    s.ok("drop rock_salt")
    assert "A real rock_salt lands on the salt, and the mirage beside it thins away." in s.feedback
    assert s.area.objects == {"rock_salt": 1} and s.piles == {}
    s.ok("pick up rock_salt")
    assert s.agent.hands == {"rock_salt": 1}


def test_mirages_fade_after_their_time(s):
    s.mirage("sunstone", lasts=3)
    s.wait(2)
    assert s.area.objects == {"sunstone": 1}
    s.ok("wait")
    assert "The sunstone lying here wavers in the heat and is gone: a mirage." in s.feedback
    assert s.events("mirage_faded") == [{"object": "sunstone", "amount": 1, "area": OPEN}]
    assert s.area.objects == {} and s.piles == {}


def test_a_mirage_lost_without_an_event_is_forgotten_and_a_gone_area_drops_its_piles(s):
    s.mirage("sunstone", n=2)
    s.area.objects["sunstone"] = 1
    s.ok("wait")
    assert s.piles[OPEN]["sunstone"][0] == 1
    s.area.objects.clear()
    s.ok("wait")
    assert s.piles == {}
    s.piles["nowhere_at_all"] = {"sunstone": [1, 99]}
    s.ok("wait")
    assert s.piles == {}


def test_mirages_form_only_on_the_open_salt_where_nobody_watches():
    world = variant(salt_mirage={"chance": 1.0, "max_alive": 50, "period": 1})
    world.stand(OPEN)
    formed = []
    for _ in range(30):
        world.ok("wait")
        formed += [(e["area"], e["object"]) for e in world.events("mirage_formed")]
    assert len(formed) >= 10
    areas = {a for a, _ in formed}
    assert OPEN not in areas and not areas & {"caravan_rest", "kiln_hollow", "lensmakers_ruin"}
    game = world.engine.game
    for area, kind in formed:
        assert kind in game.rules.step_rule(sg.MIRAGE).settings.kinds
        assert game.objects[kind].level <= world.state.areas[area].level + 1
    assert len(set(formed)) == len(formed)  # never a second mirage of one kind in one area
    for area, kinds in world.piles.items():
        for kind, (n, _) in kinds.items():
            assert world.state.areas[area].objects[kind] == n  # a pile is exactly its phantoms


def test_mirages_keep_to_their_period_their_chance_and_their_cap():
    never = variant(salt_mirage={"chance": 0.0, "period": 1})
    never.wait(20)
    assert never.piles == {}
    capped = variant(salt_mirage={"chance": 1.0, "period": 1, "max_alive": 2})
    capped.wait(10)
    assert sum(len(k) for k in capped.piles.values()) == 2
    sparse = variant(salt_mirage={"chance": 1.0, "period": 5, "max_alive": 50})
    counts = []
    for _ in range(10):
        sparse.ok("wait")
        counts.append(sum(len(k) for k in sparse.piles.values()))
    assert counts == [counts[0]] * 4 + [counts[0] + 1] * 5 + [counts[0] + 2]


def test_no_mirage_of_a_kind_already_lying_there():
    world = variant(salt_mirage={"chance": 1.0, "period": 1, "kinds": ("rock_salt",)})
    for name, area in world.state.areas.items():
        if name != OPEN:
            area.objects["rock_salt"] = 5
    world.wait(5)
    assert world.piles == {}


def test_mirages_never_take_a_named_worn_fixed_or_money_shape():
    """The phantom effect makes none of a type whose vanishing would take something real with it (named
    things, worn ones, stations, money); a game setting such kinds gets no mirage of them."""
    for bad in ("glass_bead", "hide_satchel", "dune_veil", "salt_kiln"):
        world = variant(salt_mirage={"chance": 1.0, "period": 1, "max_alive": 50, "kinds": (bad,)})
        world.wait(10)
        assert world.piles == {} and not world.events("mirage_formed"), bad


def test_mirage_kinds_must_be_known_objects(tmp_path):
    folder = tmp_path / "mirror_salt"
    shutil.copytree(GAMES_DIR / "mirror_salt", folder, ignore=shutil.ignore_patterns("__pycache__", "__init__.py"))
    world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
    world["game"]["params"]["salt_mirage"]["kinds"] = ["rock_salt", "nothing_at_all"]
    (folder / "world.json").write_text(json.dumps(world), encoding="utf-8")
    with pytest.raises(GameError, match="nothing_at_all"):
        load_with_rules(folder, sg)


def test_phantoms_are_reported_and_the_oracle_does_not_see_them(s):
    s.mirage("resonant_shard", n=2)
    s.mirage("sunstone", area="singing_dunes")
    s.put("rock_salt")
    rule = s.engine.rules.step_rule(sg.MIRAGE)
    assert sorted(rule.phantoms(s.engine)) == [(OPEN, "resonant_shard", 2), ("singing_dunes", "sunstone", 1)]
    view = View(s.engine, PLAYER)
    assert OPEN not in {a for a, _, _ in view.ground["resonant_shard"]}
    assert "singing_dunes" not in {a for a, _, _ in view.ground.get("sunstone", [])}
    assert [x for x in view.ground["rock_salt"] if x[0] == OPEN] == [(OPEN, "rock_salt", 1)]
    assert view.objects_at(OPEN) == {"rock_salt": 1}


def test_the_oracle_never_reaches_for_a_mirage(s):
    """A stage wants resonant shards: one lies here, but it is a mirage; the real ones are further."""
    s.agent.hands.clear()
    s.mirage("resonant_shard")
    oracle = OracleAgent()
    done = s.state.rule_data["main_quest"]["agents"][PLAYER]["done"]
    done += ["fuse_clear_glass", "thin_the_stalkers"]
    s.state.rule_data["main_quest"]["agents"][PLAYER]["open"] = ["grind_the_oath_lens"]
    command, _ = oracle.decide(s.engine)
    assert command != "pick up resonant_shard"
    assert "resonant_shard" in {t for t in View(s.engine, PLAYER).ground}  # real ones exist elsewhere


def test_mirage_declares_its_facts():
    game = load_game("mirror_salt")
    assert [f.answer for f in game.rules.step_rule(sg.MIRAGE).facts(game)] == [
        "it vanishes from my grasp",
        "on the open salt, where nobody is watching",
    ]


# ============================================================================ quest predicates
def test_listening_in_the_dunes_completes_the_stage_and_from_afar_does_not(s):
    s.stand("bleached_pans")
    s.ok("listen singing_dunes")
    assert "listen_to_the_dunes" not in s.state.rule_data["main_quest"]["agents"][PLAYER]["done"]
    s.ok("enter singing_dunes")
    s.clear()
    s.ok("listen singing_dunes")
    assert "listen_to_the_dunes" in s.state.rule_data["main_quest"]["agents"][PLAYER]["done"]


def test_owned_counts_no_mirage(s):
    s.mirage("sunstone")
    s.ok("pick up sunstone")
    assert owned(s.engine, s.agent, "sunstone") == 0


# ============================================================================ edges the mutation tests asked for
def test_nothing_of_the_desert_reaches_the_tutorial():
    game = load_game("mirror_salt")
    engine = Engine(game, 0, options={"tutorial": True})
    agent = engine.state.agents[PLAYER]
    add(agent.hands, "glass_knife", 1)
    for _ in range(13):
        engine.step({PLAYER: "wait"})
    assert glazed(engine) == {} and agent.attack == agent.base_attack + 6
    room = engine.state.areas[agent.area]
    foe = spawn_npc(game, engine.state, game.npcs["glass_stalker"], room.name)
    foe.hp = 1
    engine.step({PLAYER: f"attack {foe.handle}"})
    assert not rings(engine)


def test_the_salt_keeps_count_among_other_events(s):
    s.hold_one("glass_knife")
    s.hold_one("rock_salt")
    s.wait(5)
    s.ok("drop rock_salt")  # the same step the knife takes its first layer of glaze
    assert s.events("item_glazed")
    assert s.pending == [[OPEN, "rock_salt", 1, s.state.step + 30]]


def test_what_is_picked_back_up_does_not_sink(s):
    s.hold_one("rock_salt")
    s.ok("drop rock_salt")
    s.ok("pick up rock_salt")
    timers(s.engine).append([30, timers(s.engine)[0][1], PLAYER, "nowhere_at_all", {"event": {"handle": "x"}}])
    s.ok("enter caravan_rest")
    s.wait(31)
    assert s.agent.hands == {"rock_salt": 1} and s.pending == [] and s.sunk == {}


def test_imprint_weakening_is_checked_and_leaves_at_least_one(tmp_path):
    def edit(rules: dict, vars: dict) -> None:
        rules["imprint_falter"]["modify"]["times"] = 10.5

    with pytest.raises(GameError, match="at most 10"):
        rules_copy(tmp_path / "bad", edit)
    world = salty(tmp_path, times=0.1)
    prey = world.npc("glass_stalker")
    prey.hp = 1
    weak = world.npc("glass_stalker")
    weak.attack = 1
    strong = world.npc("glass_stalker")
    world.ok(f"attack {prey.handle}")
    assert (weak.attack, strong.attack) == (1, 1)


def test_a_mirage_taken_while_the_sun_glazes_my_blade(s):
    s.hold_one("glass_knife")
    s.mirage("rock_salt")
    s.wait(5)
    s.ok("pick up rock_salt")
    assert s.events("item_glazed") and s.events("mirage_vanished")
    assert s.agent.hands == {"glass_knife": 1}


def test_taking_a_real_thing_leaves_the_mirages_elsewhere(s):
    s.mirage("rock_salt", area="singing_dunes")
    s.mirage("sunstone")
    s.put("rock_salt")
    s.ok("pick up rock_salt")
    assert s.agent.hands == {"rock_salt": 1} and not s.events("mirage_vanished")
    assert s.piles == {"singing_dunes": {"rock_salt": [1, 60]}, OPEN: {"sunstone": [1, 60]}}


def _two_agents() -> tuple[Engine, dict]:
    engine = Engine(load_game("mirror_salt"), 0, agents=(PLAYER, "other"), options={"expansion": False})
    for agent in engine.state.agents.values():
        agent.area = OPEN
    engine.state.areas[OPEN].objects.clear()
    piles = phantoms.all_piles(engine).setdefault(sg.MIRAGE, {})
    piles.clear()
    engine.state.areas[OPEN].objects["rock_salt"] = 1
    piles[OPEN] = {"rock_salt": [1, 99]}
    engine.state.agents["other"].hands["rock_salt"] = 1
    return engine, piles


def test_a_real_thing_dropped_as_the_mirage_is_taken_stays_real():
    engine, piles = _two_agents()
    engine.step({PLAYER: "pick up rock_salt", "other": "drop rock_salt"})
    assert engine.state.agents[PLAYER].hands == {} and piles == {}
    assert engine.state.areas[OPEN].objects == {"rock_salt": 1}


def test_only_the_phantom_share_of_a_grab_vanishes():
    engine, piles = _two_agents()
    ((bag, _),) = make_objects(engine.game, engine.state, "caravan_pack", 1)
    engine.state.agents[PLAYER].equipment["pack"] = bag
    engine.step({"other": "drop rock_salt", PLAYER: f"store 2 rock_salt {bag}"})
    assert engine.state.instances[bag].contents == {"rock_salt": 1} and piles == {}


def test_mirages_take_shapes_up_to_a_level_above_their_ground():
    world = variant(salt_mirage={"chance": 1.0, "period": 1, "max_alive": 50, "kinds": ("sunstone",)})
    world.wait(30)
    assert set(world.piles) == {"shard_field", "zenith_spire"}  # level 3 and 5; the basin has real ones


def test_a_fresh_mirage_is_exactly_one_phantom():
    world = variant(salt_mirage={"chance": 1.0, "period": 1, "max_alive": 50})
    for _ in range(4):
        world.ok("wait")
        for ev in world.events("mirage_formed"):
            assert world.piles[ev["area"]][ev["object"]] == [1, world.state.step + 60]
            assert world.state.areas[ev["area"]].objects[ev["object"]] == 1


def test_a_fading_pile_reports_what_faded(s):
    s.mirage("sunstone", n=2, lasts=1)
    s.ok("wait")
    assert s.events("mirage_faded") == [{"object": "sunstone", "amount": 2, "area": OPEN}]


def test_a_bought_thing_is_real_even_where_its_mirage_lies(s):
    trader = s.npc("salt_trader")
    s.hold_one("glass_bead", 5)
    s.mirage("rock_salt")
    s.ok(f"buy 1 rock_salt {trader.handle}")
    assert s.agent.hands["rock_salt"] == 1 and s.piles[OPEN]["rock_salt"][0] == 1
    assert not s.events("mirage_vanished")


def test_a_pile_emptied_this_step_makes_no_second_vanishing():
    engine = Engine(load_game("mirror_salt"), 0, agents=(PLAYER, "dropper", "taker"), options={"expansion": False})
    for agent in engine.state.agents.values():
        agent.area = OPEN
    objects = engine.state.areas[OPEN].objects
    objects.clear()
    piles = phantoms.all_piles(engine).setdefault(sg.MIRAGE, {})
    piles.clear()
    objects["rock_salt"] = 1
    piles[OPEN] = {"rock_salt": [1, 99]}
    engine.state.agents["dropper"].hands["rock_salt"] = 1
    out = engine.step({"dropper": "drop rock_salt", PLAYER: "pick up rock_salt", "taker": "pick up rock_salt"})
    vanished = {(e.agent, e.data["amount"]) for o in out.values() for e in o.events if e.kind == "mirage_vanished"}
    assert vanished == {(PLAYER, 1)}
    taker = engine.state.agents["taker"]
    assert taker.hands == {"rock_salt": 1} and engine.state.agents[PLAYER].hands == {}
    assert "rock_salt" in taker.acquired  # a real find, counted as one
    assert not any("mirage" in line for line in engine.state.feedback.get("taker", []))
