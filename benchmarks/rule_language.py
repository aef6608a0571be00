"""What an interpreted rule costs: the same mechanics written in Python and in the rule language, timed in one run.

Four mechanics on the tiny engine-test game (tests/env/data/tiny), written twice: as a ``rules.py`` (trusted
here: this file wrote it) and as a ``rules.json`` (odyssey_env.rulelang):

* ``whittle <wood>``: a verb with a typed slot, a precondition and its refusal, a transform, a counter and a
  templated line;
* ``cold_night``: every 2 steps at night, each agent without a torch in hand loses 1 health and is told;
* ``rat_gnaw``: each rat, with chance 0.2 (the episode's RNG), heals 1 and the area hears it;
* ``forage``: every 5 steps each area regrows apples up to 2.

First both games play the same seeded walk over the valid actions and must give the same observations, rewards
and events, step for step (else the comparison means nothing, and the script says so and stops). Then both play
``--steps`` steps ``--rounds`` times, taking turns round by round so the machine's other load falls on both
alike. Printed: the mean seconds per whole step (``env.step``, valid actions listed) of each, and the seconds
spent in the four mechanics themselves (their ``apply`` and ``candidates``, timed by wrapping them), each with
the ratio interpreted / Python. The goal of issue 25 is a ratio of at most 1.3 for the mechanics.

    python benchmarks/rule_language.py [--steps 400] [--rounds 5] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "env" / "data" / "tiny"
MECHANICS = ("whittle", "cold_night", "rat_gnaw", "forage")

RULES_JSON: dict[str, Any] = {
    "vars": [{"name": "whittled", "kind": "counter", "max": 1000}],
    "verbs": [
        {
            "verb": "whittle",
            "description": "Carve a stick I carry into a plank, with a club in hand.",
            "slots": [{"name": "wood", "domain": "carried", "types": ["stick"]}],
            "requires": [{"check": {"holds": "club"}, "refuse": "I need a club in hand to whittle {wood}."}],
            "effects": [
                {"transform": "$wood", "into": "plank"},
                {"add": "whittled"},
                {"say": "I whittle {wood} into a plank ({var.whittled} so far)."},
            ],
        }
    ],
    "step_rules": [
        {
            "name": "cold_night",
            "description": "At night the cold bites whoever holds no torch.",
            "after": ["day_night"],
            "before": ["combat_rhythm"],
            "trigger": {"every": 2, "hours": [20, 6]},
            "when": {"none_of": [{"holds": "torch"}]},
            "effects": [{"change": "hp", "by": -1}, {"say": "The cold bites."}],
        },
        {
            "name": "rat_gnaw",
            "description": "Rats gnaw the stores and grow back their strength.",
            "after": ["cold_night"],
            "before": ["combat_rhythm"],
            "scope": "npc",
            "types": ["rat"],
            "trigger": {"chance": 0.2},
            "effects": [{"change": "hp", "by": 1, "npc": "$npc"}, {"tell": "{npc} gnaws at the stores."}],
        },
        {
            "name": "forage",
            "description": "Apples grow back, two at most in an area.",
            "after": ["respawn"],
            "before": ["tutorial"],
            "scope": "area",
            "trigger": {"every": 5},
            "effects": [{"place": "apple", "cap": 2}],
        },
    ],
}

RULES_PY = '''"""The benchmark's mechanics in Python (benchmarks/rule_language.py), the same as its rules.json."""

from odyssey_env.rules import ActionRule, StepRule, action_rule, step_rule
from odyssey_env.steprules.living import is_world_area, tell
from odyssey_env.verbs.common import acquire, carried_handles
from odyssey_env.world import add, carried_count, give, take_carried, type_of


@action_rule
class Whittle(ActionRule):
    verb = "whittle"
    params = (("wood", "object"),)
    description = "Carve a stick I carry into a plank, with a club in hand."
    emits = ("whittle",)
    depends_on = ("hands", "worn", "containers")

    def _holds_club(self, turn):
        return any(type_of(turn.state, h) == "club" for h in turn.agent.hands)

    def apply(self, turn, wood):
        if wood not in carried_handles(turn) or type_of(turn.state, wood) != "stick":
            return turn.fail(f"Cannot whittle {wood}: it is not something I carry (stick).")
        if not self._holds_club(turn):
            return turn.fail(f"I need a club in hand to whittle {wood}.")
        game, state, agent = turn.game, turn.state, turn.agent
        if carried_count(game, state, agent, wood):
            take_carried(game, state, agent, wood, 1)
            if give(game, state, agent, "plank", 1) == "in my hands":
                acquire(turn, "plank", 1, how="received")
        data = state.rule_data.setdefault("rulelang", {"vars": {}, "timers": [], "spawned": {}, "was": {}})
        counts = data["vars"].setdefault("whittled", {})
        counts[agent.id] = min(1000, counts.get(agent.id, 0) + 1)
        turn.say(f"I whittle {wood} into a plank ({counts[agent.id]} so far).")
        turn.emit("whittle", area=agent.area, wood=wood)

    def candidates(self, turn):
        if not self._holds_club(turn):
            return
        for h in carried_handles(turn):
            if type_of(turn.state, h) == "stick":
                yield f"whittle {h}"


@step_rule
class ColdNight(StepRule):
    name = "cold_night"
    description = "At night the cold bites whoever holds no torch."
    after = ("day_night",)
    before = ("combat_rhythm",)

    def apply(self, engine):
        state = engine.state
        if state.step % 2:
            return
        hour = (state.minute // 60) % 24
        if not (hour >= 20 or hour < 6):
            return
        for agent in list(state.agents.values()):
            if agent.in_tutorial or any(type_of(state, h) == "torch" for h in agent.hands):
                continue
            agent.hp = min(agent.max_hp, agent.hp - 1)
            engine.say(agent.id, "The cold bites.")


@step_rule
class RatGnaw(StepRule):
    name = "rat_gnaw"
    description = "Rats gnaw the stores and grow back their strength."
    after = ("cold_night",)
    before = ("combat_rhythm",)

    def apply(self, engine):
        state = engine.state
        for npc in list(state.npcs.values()):
            if npc.type != "rat" or not is_world_area(state.areas[npc.area]):
                continue
            if engine.rng.random() >= 0.2:
                continue
            npc.hp = max(1, min(npc.max_hp, npc.hp + 1))
            tell(engine, npc.area, f"{npc.handle} gnaws at the stores.")


@step_rule
class Forage(StepRule):
    name = "forage"
    description = "Apples grow back, two at most in an area."
    after = ("respawn",)
    before = ("tutorial",)

    def apply(self, engine):
        state = engine.state
        if state.step % 5:
            return
        for area in list(state.areas.values()):
            if is_world_area(area):
                n = min(1, 2 - area.objects.get("apple", 0))
                if n > 0:
                    add(area.objects, "apple", n)
'''


# ============================================================================ lazaret: rules.json vs its old rules.py
#: Lazaret's rules.py as it was before barricade, refuel, the enter hook and the hunt of the risen moved to its
#: rules.json (frozen in benchmarks/data/, read as text, never imported), the Python side of ``--game lazaret``;
#: its ``LampFuel`` is the Python side of ``lamp_fuel`` too (the shipped rules.py has none since it moved), the
#: same class but for where it kept the fuel (its own rule_data, where rules.json's counter keeps it now).
LAZARET_OLD_PY = ROOT / "benchmarks" / "data" / "lazaret_rules_py.txt"
#: Lazaret's ``concoct`` and ``shove`` as its rules.py wrote them before they moved to its rules.json, appended
#: to that rules.py for the Python side of ``--game lazaret`` (with their world.json parameters back).
LAZARET_PY = """

from odyssey_env.verbs.combat import STAMINA_FLOOR, strike
from odyssey_env.verbs.common import receive
from odyssey_env.world import npc_here


@action_rule
class Concoct(ActionRule):
    verb = "concoct"
    params = (("first_herb", "object"), ("second_herb", "object"))
    description = "Grind two different herbs I carry together into the remedy their pair makes (or into sludge)."
    emits = ("remedy_concocted",)
    depends_on = ("hands", "worn", "containers")

    @dataclass(frozen=True)
    class Params:
        remedies: dict[str, tuple[str, str]] = field(default_factory=dict)  # remedy -> its two herbs
        failure: str = ""  # what a pair that makes no remedy spoils into

        def __post_init__(self) -> None:
            for remedy, herbs in self.remedies.items():
                if len(herbs) != 2 or herbs[0] == herbs[1]:
                    raise ValueError(f"remedies.{remedy}: expected two different herbs")

    def __init__(self, params: Concoct.Params | None = None):
        ActionRule.__init__(self, params)
        remedies = params.remedies if params is not None else {}
        self._by_pair = {frozenset(herbs): remedy for remedy, herbs in remedies.items()}
        self._herbs = tuple(dict.fromkeys(h for herbs in remedies.values() for h in herbs))

    def _refusal(self, turn: Turn, first: str, second: str) -> str | None:
        if first == second:
            return f"Cannot concoct {first} with itself: a remedy takes two different herbs."
        carried = carried_handles(turn)
        for herb in (first, second):
            if herb not in self._herbs:
                return f"Cannot concoct with {herb}: it is not a herb."
            if not carried.get(herb, 0):
                return f"Cannot concoct with {herb}: I carry none."
        return None

    def apply(self, turn: Turn, first: str, second: str) -> None:
        refusal = self._refusal(turn, first, second)
        if refusal is not None:
            return turn.fail(refusal)
        game, state, agent = turn.game, turn.state, turn.agent
        take_carried(game, state, agent, first, 1)
        take_carried(game, state, agent, second, 1)
        remedy = self._by_pair.get(frozenset((first, second)))
        made = remedy or self.settings.failure
        if not made:
            turn.say(f"I grind {first} with {second}, but nothing comes of it.")
        else:
            where = receive(turn, made, 1)
            if remedy:
                turn.say(f"I grind {first} with {second} into 1 {made} ({where}).")
            else:
                turn.say(f"I grind {first} with {second}, but they curdle into 1 {made} ({where}).")
        turn.emit("remedy_concocted", remedy=made, herbs=[first, second], ok=remedy is not None)

    def candidates(self, turn: Turn) -> Iterator[str]:
        carried = carried_handles(turn)
        herbs = [h for h in self._herbs if carried.get(h, 0)]
        for a in herbs:
            for b in herbs:
                if a != b:
                    yield f"concoct {a} {b}"

    def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        herbs = self.settings.remedies.get(match.get("remedy", ""))
        if herbs is None:
            return None
        carried = carried_handles_of(engine, agent)
        missing = next((h for h in herbs if not carried.get(h, 0)), None)
        return hints.has(missing) if missing is not None else None

    def facts(self, game: Game):
        if self.settings.remedies:
            remedy, (a, b) = next(iter(self.settings.remedies.items()))
            yield Fact(
                "herbs",
                f"Which remedy do {a} and {b} make together?",
                remedy,
                tuple(
                    r
                    for r in (
                        *list(self.settings.remedies)[1:],
                        self.settings.failure or "nothing",
                        "poison",
                        "lamp oil",
                    )
                    if r != remedy
                )[:3],
            )


@action_rule
class Shove(ActionRule):
    verb = "shove"
    params = (("furniture", "object"), ("npc_name", "npc"))
    description = (
        "Topple heavy furniture here onto an enemy: the blow ignores its guard, but leaves me winded "
        "and the furniture in pieces."
    )
    emits = ("npc_shoved",)
    depends_on = ("ground", "npcs")

    @dataclass(frozen=True)
    class Params:
        furniture: dict[str, int] = field(default_factory=dict)  # furniture -> damage of its fall

    def _refusal(self, turn: Turn, furniture: str, target: str) -> str | None:
        if furniture not in self.settings.furniture:
            return f"Cannot shove {furniture}: it is not heavy furniture."
        if not turn.area.objects.get(furniture, 0):
            return f"Cannot shove {furniture}: there is none here."
        npc = npc_here(turn.state, turn.area, target)
        if npc is None:
            return f"Cannot shove {furniture} onto {target}: there is no such creature here."
        if not turn.game.npcs[npc.type].hostile:
            return f"Cannot shove {furniture} onto {target}: they are not hostile."
        return None

    def apply(self, turn: Turn, furniture: str, target: str) -> None:
        refusal = self._refusal(turn, furniture, target)
        if refusal is not None:
            return turn.fail(refusal)
        game, state, area = turn.game, turn.state, turn.area
        npc = state.npcs[target]
        damage = self.settings.furniture[furniture]
        remove(area.objects, furniture)
        debris = []
        recipe = game.objects[furniture].recipe
        for ingredient, amount in recipe.ingredients.items() if recipe is not None else ():
            n = int(amount // 2)  # whole units, as the rule language's salvage
            if n:
                for piece, k in make_objects(game, state, ingredient, n):
                    add(area.objects, piece, k)
                debris.append(f"{n} {ingredient}")
        turn.agent.stamina = STAMINA_FLOOR
        turn.say(
            f"I put my shoulder to {furniture} and it topples; I am winded."
            + (f" It breaks into {', '.join(debris)}." if debris else "")
        )
        turn.emit("npc_shoved", npc=target, type=npc.type, furniture=furniture, damage=damage, area=area.name)
        strike(turn, npc, damage, f"{furniture} crushes")

    def candidates(self, turn: Turn) -> Iterator[str]:
        here = turn.area.objects
        furniture = [f for f in self.settings.furniture if here.get(f, 0)]
        if not furniture:
            return
        state, kinds = turn.state, turn.game.npcs
        enemies = [h for h in turn.area.npcs if kinds[state.npcs[h].type].hostile]
        for f in furniture:
            for npc in enemies:
                yield f"shove {f} {npc}"

    def needs(self, engine: Engine, agent: Agent, match: Mapping[str, Any]) -> Condition | None:
        state, kinds, wanted = engine.state, engine.game.npcs, match.get("type")

        def fit(name: str) -> bool:
            area = state.areas[name]
            return any(area.objects.get(f, 0) for f in self.settings.furniture) and any(
                kinds[state.npcs[h].type].hostile and wanted in (None, state.npcs[h].type) for h in area.npcs
            )

        where = nearest(state, agent.area, fit, unlocked)
        return hints.in_area(where) if where is not None and where != agent.area else None

    def facts(self, game: Game):
        yield Fact(
            "combat",
            "Does an enemy's guard soften the blow of furniture shoved onto it?",
            "no",
            ("yes, to a tenth", "yes, by half", "it dodges it entirely"),
        )
"""
LAZARET_PARAMS: dict[str, Any] = {
    "concoct": {
        "remedies": {
            "fever_draught": ["feverfew", "sallow_bark"],
            "wormwood_purge": ["wormwood", "rue_sprig"],
            "four_thieves_vinegar": ["garlic_bulb", "hyssop"],
            "angelica_cordial": ["angelica_root", "feverfew"],
            "nightshade_drops": ["nightshade_berry", "hyssop"],
        },
        "failure": "grey_sludge",
    },
    "shove": {"furniture": {"iron_cot": 16, "linen_press": 22, "oak_pew": 20, "drug_cabinet": 22, "bone_rack": 18}},
    "barricade": {"material": "deal_plank", "amount": 2, "strength": 6},
}
#: Parameters the old rules.py read that rules.json now says itself (merged into the shipped ones).
LAZARET_OLD_PARAMS: dict[str, dict[str, Any]] = {
    "corpse_corruption": {
        "corpse": "plague_corpse",
        "risen": "risen_husk",
        "rise_after": 48,
        "warn_before": 6,
        "hunt_period": 3,
        "hunt_range": 2,
    },
    "burn corpses": {"fuel": 2, "ash": "bone_ash"},
    "quarantine_lockdown": {"after": 20},
}
#: The verbs a ward walk takes whenever listed (those in rules.json now), and all the timed rules.
LAZARET_MECHANICS = ("concoct", "shove", "barricade", "refuel", "eavesdrop", "burn corpses")
LAZARET_TIMED_VERBS = (*LAZARET_MECHANICS, "enter")
#: the hunt was corpse_corruption's second half (the rest of it is rules.json's corpse_corruption now);
#: quarantine_lockdown has the same name on both sides
LAZARET_TIMED_STEPS = ("corpse_corruption", "risen_hunt", "quarantine_lockdown", "lamp_fuel")


def make_games(tmp: Path) -> tuple[Any, Any]:
    from odyssey_env import load_game

    py, js = tmp / "python", tmp / "interpreted"
    for folder in (py, js):
        shutil.copytree(TINY, folder)
        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
        world["game"]["start_time"] = "19:00"  # the night comes within the walk
        camp = world["places"][0]["areas"][0]
        camp["objects"].update(club=1, stick=12)  # so that the walk whittles
        (folder / "world.json").write_text(json.dumps(world), encoding="utf-8")
    (py / "rules.py").write_text(RULES_PY, encoding="utf-8")
    (js / "rules.json").write_text(json.dumps(RULES_JSON), encoding="utf-8")
    return load_game(py, trust=True, cache=False), load_game(js, cache=False)


def make_lazaret(tmp: Path) -> tuple[Path, Path]:
    """Two copies of Lazaret: as shipped (its ported mechanics in rules.json) and with them back in rules.py."""
    from odyssey_env.game import GAMES_DIR

    py, js = tmp / "python" / "lazaret", tmp / "interpreted" / "lazaret"
    skip = shutil.ignore_patterns("__pycache__", "__init__.py")
    for folder in (py, js):
        shutil.copytree(GAMES_DIR / "lazaret", folder, ignore=skip)
    (py / "rules.json").unlink()
    old = LAZARET_OLD_PY.read_text(encoding="utf-8")
    (py / "rules.py").write_text(old + LAZARET_PY, encoding="utf-8")
    world = json.loads((py / "world.json").read_text(encoding="utf-8"))
    params = world["game"]["params"]
    params.update(LAZARET_PARAMS)
    for rule, values in LAZARET_OLD_PARAMS.items():
        params[rule] = {**params.get(rule, {}), **values}
    (py / "world.json").write_text(json.dumps(world), encoding="utf-8")
    return py, js


def ported(record: str) -> bool:
    """Whether a walk's record is a command of one of the ported verbs (some are two words)."""
    command = record.split("\x00", 1)[0]
    return any(command == v or command.startswith(v + " ") for v in LAZARET_MECHANICS)


def lazaret_timed(game: Any) -> list[Any]:
    """The rules whose apply and candidates are timed: the ported verbs, enter (hooked in rules.json, replaced
    in rules.py) and the step rules that carry the risen's hunt (one in rules.py, two in rules.json)."""
    rules = [game.rules.actions[v] for v in LAZARET_TIMED_VERBS]
    return rules + [r for n in LAZARET_TIMED_STEPS if (r := game.rules.step_rule(n)) is not None]


_VERB_LIST = re.compile(r"(Commands start with one of: )([^.]*)(\.)")


def same_but_verb_order(record: str) -> str:
    """A record with the invalid-action line's verb list sorted: rules.json's verbs come after rules.py's in
    the rule book, so the list names the same verbs in another order (docs/game-format.md says so)."""
    return _VERB_LIST.sub(lambda m: m.group(1) + ", ".join(sorted(m.group(2).split(", "))) + m.group(3), record)


def load_folder(folder: Path) -> Any:
    from odyssey_env import load_game

    return load_game(folder, trust=(folder / "rules.py").exists(), cache=False)


def scripted(game: Any, name: str = "lazaret", tutorial: bool = False) -> list[str]:
    """A game's golden script (tests/golden/<name>.jsonl: its seed and commands), recorded as :func:`walk` does
    (``tutorial``: played with the tutorial, as Mirror Salt's was recorded)."""
    from odyssey_env.env import OdysseyEnv

    golden = ROOT / "tests" / "golden" / f"{name}.jsonl"
    header = json.loads(golden.read_text(encoding="utf-8").splitlines()[0])
    env = OdysseyEnv(game, valid_actions=True, tutorial=tutorial)
    obs, info = env.reset(seed=header["seed"])
    record = [obs]
    for action in header["commands"]:
        obs, reward, terminated, _, info = env.step(action)
        record.append(f"{action}\x00{obs}\x00{reward}\x00{info['events']}")
        if terminated:
            break
    return record


def dark_scene(game: Any, seed: int) -> list[str]:
    """Lazaret's dark, which a walk seldom reaches lit: in the charnel stair (dark) with a storm lantern of 3
    turns (the ossuary on odd seeds), a risen husk and a plague rat beside me, I wait until the lamp is out and
    the lurkers fall on me. Observations, rewards and events, as
    :func:`walk` records them. The lamp's fuel is set where each side keeps it (the old rules.py's own memory,
    rules.json's per-object counter)."""
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.observation import render
    from odyssey_env.rulelang.runtime import write_var
    from odyssey_env.world import make_objects
    from odyssey_env.worldgen import spawn_npc

    env = OdysseyEnv(game, valid_actions=True, tutorial=False)
    env.reset(seed=seed)
    engine = env.engine
    state = engine.state
    agent = next(iter(state.agents.values()))
    agent.area = "charnel_stair" if seed % 2 == 0 else "ossuary"
    agent.hands.clear()
    ((lamp, _),) = make_objects(game, state, "storm_lantern", 1)
    agent.hands[lamp] = 1
    light = engine.rules.step_rule("lamp_fuel")
    if type(light).__name__ == "LampFuel":  # the old rules.py keeps its own memory
        state.rule_data.setdefault("lamp_fuel", {}).setdefault("fuel", {})[lamp] = 3
    else:
        write_var(engine, "fuel", lamp, 3, 0)
    for kind in ("risen_husk", "plague_rat"):
        spawn_npc(game, state, game.npcs[kind], agent.area)
    record = [render(engine, agent.id)]
    for _ in range(8):
        obs, reward, terminated, _, info = env.step("wait")
        record.append(f"wait\x00{obs}\x00{reward}\x00{info['events']}")
        if terminated:
            break
    return record


def ward_walk(game: Any, seed: int, steps: int, states: list[bytes] | None = None) -> list[str]:
    """A seeded walk over Lazaret's valid actions (no tutorial), taking one of the ported verbs half the time they
    are listed (``states``: gets the state after each step, pickled)."""
    import pickle

    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, valid_actions=True, tutorial=False)
    obs, info = env.reset(seed=seed)
    pick = random.Random(seed)
    record = [obs]
    for _ in range(steps):
        va = info["valid_actions"]
        mine = [c for v in LAZARET_MECHANICS for c in va.get(v, ())]
        wanted = [c for c in va.get("pick up", ()) if not c.startswith("pick up groat")]
        if mine and pick.random() < 0.5:  # eavesdrop is listed everywhere: half the steps, not all
            action = pick.choice(mine)
        elif wanted and pick.random() < 0.3:  # herbs and furniture come to hand now and then
            action = pick.choice(wanted)
        else:
            action = pick.choice(va[pick.choice(sorted(va))])
        obs, reward, terminated, _, info = env.step(action)
        record.append(f"{action}\x00{obs}\x00{reward}\x00{info['events']}")
        if states is not None:
            states.append(pickle.dumps(env.engine.state))
        if terminated:
            obs, info = env.reset(seed=seed + len(record))
    return record


def child(folder: Path, seed: int, steps: int) -> int:
    """One timed walk in this (fresh) process: prints seconds per step, whole and in the mechanics."""
    game = load_folder(folder)
    salt = folder.name == "mirror_salt"
    timer = Timed(game, salt_rules(game) if salt else lazaret_timed(game))
    start = time.perf_counter()
    record = (salt_walk if salt else ward_walk)(game, seed, steps)
    seconds = time.perf_counter() - start
    used = sum(ported(r) for r in record[1:])
    lamp = timer.by_rule.get("lamp_fuel", 0.0) / steps  # the light's burning and lurking, and its veil
    verbs = {v: timer.by_rule.get(v, 0.0) / steps for v in ("listen", "refract")}  # Mirror Salt's verbs alone
    print(
        json.dumps(
            {
                "step": seconds / steps,
                "rule": timer.seconds / steps,
                "trim": timer.trimmed() / steps,
                "lamp": lamp,
                **verbs,
            }
        )
    )
    print(f"{used} commands of {', '.join(LAZARET_MECHANICS)}", file=sys.stderr)
    return 0


def listing_on_the_same_states(games: dict[str, Any], seed: int, steps: int, rounds: int) -> dict[str, float]:
    """Seconds one listing of the timed verbs takes in each game, on the same states (those of a seeded walk,
    the same walk in each game as the parity check showed, each kept in its own game's form: the fuel of a
    lamp, say, lives in another table), each listed 10 times with a fresh probe turn, best of ``rounds``: the
    mechanics' own cost, without the walk's other work, the collector's pauses or a fresh process's noise."""
    import pickle

    from odyssey_env.env import OdysseyEnv
    from odyssey_env.turn import Turn

    setups = {}
    for name, game in games.items():
        kept: list[bytes] = []
        ward_walk(game, seed, steps, kept)
        env = OdysseyEnv(game, tutorial=False)
        env.reset(seed=seed)
        setups[name] = (
            env.engine,
            [pickle.loads(k) for k in kept],
            [game.rules.actions[v] for v in LAZARET_TIMED_VERBS],
        )
    best: dict[str, float] = {}
    for _ in range(rounds):
        for name, (engine, states, rules) in setups.items():
            start = time.perf_counter()
            for state in states:
                engine.state = state
                agent = next(iter(state.agents.values()))
                for _ in range(10):
                    turn = Turn(engine, agent, probe=True)
                    for rule in rules:
                        list(rule.candidates(turn))
            took = (time.perf_counter() - start) / (10 * len(states))
            best[name] = min(best.get(name, took), took)
    return best


def lazaret(args: argparse.Namespace) -> int:
    """``--game lazaret``: parity on the golden script and a walk, then fresh processes taking turns."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        py, js = make_lazaret(Path(tmp))
        pg, jg = load_folder(py), load_folder(js)
        for what, a, b in (
            (
                "golden script",
                [same_but_verb_order(r) for r in scripted(pg, "lazaret", True)],
                [same_but_verb_order(r) for r in scripted(jg, "lazaret", True)],
            ),
            (f"walk of {args.steps}", ward_walk(pg, args.seed, args.steps), ward_walk(jg, args.seed, args.steps)),
            (
                "dark scene, seeds 0-9",
                [r for s in range(10) for r in dark_scene(pg, s)],
                [r for s in range(10) for r in dark_scene(jg, s)],
            ),
        ):
            same = sum(x == y for x, y in zip(a, b, strict=True))
            used = sum(ported(r) for r in a[1:])
            print(f"parity, {what}: {same}/{len(a)} records identical ({used} commands of the ported verbs)")
            dark = {
                k: sum(k in r for r in a) for k in ("lights the dark", "gutters out", "pitch dark", "out of the dark")
            }
            print("  the dark in it (records saying): " + ", ".join(f"{k!r} {n}" for k, n in dark.items()))
            if same != len(a) or len(a) != len(b):
                first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
                print(f"first difference at record {first}:")
                print(f"  python:      {a[first : first + 1]!r:.300}\n  interpreted: {b[first : first + 1]!r:.300}")
                return 1
        listing = listing_on_the_same_states({"python": pg, "interpreted": jg}, args.seed, 300, 7)
        runs: dict[str, list[dict[str, float]]] = {"python": [], "interpreted": []}
        folders = {"python": py, "interpreted": js}
        for r in range(args.rounds):
            for name in ("python", "interpreted") if r % 2 == 0 else ("interpreted", "python"):
                command = [sys.executable, __file__, "--child", str(folders[name])]
                command += ["--steps", str(args.steps), "--seed", str(args.seed + r)]
                out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT).stdout
                runs[name].append(json.loads(out.splitlines()[-1]))
    print(f"{args.rounds} fresh processes each, {args.steps} steps each (median per step):")
    base = {k: statistics.median(run[k] for run in runs["python"]) for k in ("step", "rule", "trim")}
    for name in ("python", "interpreted"):
        st, ru, tr = (statistics.median(run[k] for run in runs[name]) for k in ("step", "rule", "trim"))
        print(
            f"  {name:12s} whole step {st * 1e6:8.1f} us ({st / base['step']:4.2f}x)   "
            f"timed rules {ru * 1e6:7.1f} us ({ru / base['rule']:4.2f}x), "
            f"without the slowest 1% of calls {tr * 1e6:6.1f} us ({tr / base['trim']:4.2f}x)"
        )
    lamp = {name: statistics.median(run["lamp"] for run in runs[name]) for name in runs}
    print(
        f"  of which lamp_fuel (apply and veil): python {lamp['python'] * 1e6:.1f} us, interpreted "
        f"{lamp['interpreted'] * 1e6:.1f} us ({lamp['interpreted'] / max(lamp['python'], 1e-12):4.2f}x)"
    )
    print(f"one listing of {', '.join(LAZARET_TIMED_VERBS)} on the same 300 states, best of 7:")
    for name in ("python", "interpreted"):
        print(f"  {name:12s} {listing[name] * 1e6:6.2f} us ({listing[name] / listing['python']:4.2f}x)")
    return 0


# ============================================================================ mirror_salt: rules.json vs old rules.py
#: Mirror Salt's ``forge_alert``, ``salt_sink`` and ``resonance_imprint`` as its rules.py wrote them before they
#: moved to rules.json, appended to the shipped rules.py for the Python side of ``--game mirror_salt``; what
#: listen reads (``sunk_in``, ``imprints_in``, ``unnerved``) is pointed back at the Python rules' own memory.
MIRROR_SALT_PY = """

from typing import Any

from odyssey_env.steprules.living import occupied

FORGE = "forge_alert"
SINK = "salt_sink"
IMPRINT = "resonance_imprint"


@step_rule
class ForgeAlert(StepRule):
    name = FORGE
    after = ("craft_hints",)  # after craft_hints, so hints read in the order they arose
    before = ("experience",)
    description = (
        "By a station, with everything one of its recipes needs on me, I am told once what I could make there."
    )

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {}

    def apply(self, engine: Engine) -> None:
        state, game = engine.state, engine.game
        data = state.rule_data[self.name]
        for agent in state.agents.values():
            area = state.areas[agent.area]
            stations = [h for h in area.objects if h in game.objects and game.objects[h].category == "station"]
            if not stations:
                data.pop(agent.id, None)
                continue
            ready = [
                t.name
                for t in game.recipes
                if t.recipe is not None
                and t.recipe.stations
                and all(s in area.objects for s in t.recipe.stations)
                and all(carried_count(game, state, agent, i) >= k for i, k in t.recipe.ingredients.items())
            ]
            last = data.get(agent.id)
            told = last[1] if last and last[0] == area.name else []
            new = [r for r in ready if r not in told]
            data[agent.id] = [area.name, ready]
            if not new:
                continue
            commands = ", ".join(f"craft 1 {r}" for r in new)
            engine.say(
                agent.id,
                f"Forge alert: with the {' and '.join(stations)} here and what I carry, "
                f"I could make {', '.join(new)} ({commands}).",
            )
            engine.emit("forge_alert", agent.id, area=area.name, objects=new)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "crafting",
            "When does a forge alert tell me what I could make?",
            "when I stand by a station carrying everything one of its recipes needs",
            ("whenever I pick up a material", "every morning", "only when a merchant is near"),
        )


@step_rule
class SaltSink(StepRule):
    name = SINK
    after = ("respawn",)  # the world's processes done, before the quests look
    description = (
        "What I drop on the salt and leave unattended sinks after a while and is gone; named things, "
        "keys and quest objects are spared."
    )

    @dataclass(frozen=True)
    class Params:
        delay: int = 30  # steps with nobody in the area before a dropped thing sinks
        spared: tuple[str, ...] = ("quest", "key", "container", "writable", "station")
        max_pending: int = 64
        max_remembered: int = 8  # kinds the salt remembers swallowing per area (listen hears them)

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {"pending": [], "sunk": {}}

    def apply(self, engine: Engine) -> None:
        state, game, p = engine.state, engine.game, self.settings
        data = state.rule_data[self.name]
        pending: list[list[Any]] = data["pending"]
        if "object_dropped" in engine.kinds or "object_discarded" in engine.kinds:
            for ev in engine.events:
                if ev.kind not in ("object_dropped", "object_discarded"):
                    continue
                handle = ev.data["handle"]
                area = state.areas.get(ev.data["area"])
                t = known_object(game, state, handle)
                if (
                    area is None
                    or not is_world_area(area)
                    or handle in state.instances
                    or t is None
                    or t.category in p.spared
                ):
                    continue
                pending.append([area.name, handle, ev.data["amount"], state.step])
            del pending[: max(0, len(pending) - p.max_pending)]
        if not pending:
            return
        here = occupied(state)
        keep = []
        for entry in pending:
            name, handle, n, since = entry
            area = state.areas.get(name)
            if area is None:
                continue
            if name in here:
                entry[3] = state.step  # attended: the salt waits
                keep.append(entry)
                continue
            if state.step - since < p.delay:
                keep.append(entry)
                continue
            k = min(n, area.objects.get(handle, 0))
            if not k:
                continue
            remove(area.objects, handle, k)
            sunk = data["sunk"].setdefault(name, {})
            if handle in sunk or len(sunk) < p.max_remembered:
                sunk[handle] = sunk.get(handle, 0) + k
            engine.emit("object_sank", None, object=handle, amount=k, area=name)
        pending[:] = keep

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "salt",
            "What happens to things I drop on the salt and walk away from?",
            "after a while they sink and are gone",
            ("they stay forever", "a merchant keeps them for me", "they turn into mirages"),
        )
        yield Fact(
            "salt",
            "Which dropped things does the salt never swallow?",
            "keys, quest objects and named things like bags and slates",
            ("weapons", "coins", "everything sinks"),
        )


@step_rule
class ResonanceImprint(StepRule):
    name = IMPRINT
    after = ("day_night",)  # before combat_rhythm: kin falter on the very step the death-note sounds
    before = ("combat_rhythm",)
    description = (
        "Where an enemy falls the glass keeps its death-note for a while, and its kin in that area strike softer."
    )

    @dataclass(frozen=True)
    class Params:
        duration: int = 40  # steps the glass rings
        weaken: float = 0.3  # share of attack the unnerved lose

        def __post_init__(self) -> None:
            if not 0 <= self.weaken < 1:
                raise ValueError(f"weaken: {self.weaken} must be at least 0 and below 1")

    def start(self, engine: Engine) -> None:
        engine.state.rule_data[self.name] = {"imprints": {}, "unnerved": {}}

    def apply(self, engine: Engine) -> None:
        state, game = engine.state, engine.game
        data = state.rule_data[self.name]
        imprints: dict[str, dict[str, int]] = data["imprints"]
        if "npc_defeated" in engine.kinds:
            for ev in engine.events:
                if ev.kind != "npc_defeated" or not game.npcs[ev.data["type"]].common_enemy:
                    continue  # a boss or a unique foe has no kin to falter
                area = state.areas.get(ev.data["area"])
                if area is None or not is_world_area(area):
                    continue
                imprints.setdefault(area.name, {})[ev.data["type"]] = state.step + self.settings.duration
                tell(
                    engine,
                    area.name,
                    f"The glass around me catches the death-note of {ev.data['npc']} and "
                    f"keeps ringing: its kind will falter here for a while.",
                )
                engine.emit("imprint_formed", ev.agent, area=area.name, type=ev.data["type"])
        unnerved: dict[str, int] = data["unnerved"]
        for name in list(imprints):
            kinds = imprints[name]
            for kind in [k for k, until in kinds.items() if until <= state.step]:
                del kinds[kind]
                tell(engine, name, f"The death-note of the {kind} fades from the glass.")
            if not kinds or name not in state.areas:
                del imprints[name]
        covered = set()
        for name, kinds in imprints.items():
            for handle in state.areas[name].npcs:
                npc = state.npcs[handle]
                if npc.type in kinds:
                    covered.add(handle)
                    if handle not in unnerved:
                        unnerved[handle] = npc.attack
                        npc.attack = max(1, round(npc.attack * (1 - self.settings.weaken)))
        for handle in [h for h in unnerved if h not in covered]:
            original = unnerved.pop(handle)
            recovered = state.npcs.get(handle)
            if recovered is not None:
                recovered.attack = original

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "combat",
            "What happens to enemies where one of their kind has just fallen?",
            "they falter and strike softer for a while",
            ("they grow enraged and strike harder", "they flee the area", "nothing"),
        )


def sunk_in(engine: Engine, area: str) -> dict[str, int]:
    return engine.state.rule_data.get(SINK, {}).get("sunk", {}).get(area, {})


def imprints_in(engine: Engine, area: str) -> dict[str, int]:
    return engine.state.rule_data.get(IMPRINT, {}).get("imprints", {}).get(area, {})


def unnerved(engine: Engine, handle: str) -> bool:
    return handle in engine.state.rule_data.get(IMPRINT, {}).get("unnerved", {})
"""
MIRROR_SALT_MECHANICS = ("forge_alert", "salt_sink", "resonance_imprint", "salt_glaze", "salt_mirage")
#: salt_glaze as rules.py wrote it (before it moved to rules.json), appended to the Python side's rules.py too.
MIRROR_SALT_GLAZE_PY = ROOT / "benchmarks" / "data" / "mirror_salt_glaze_py.txt"
#: salt_mirage as rules.py wrote it (before it moved to rules.json), appended to the Python side's rules.py too.
MIRROR_SALT_MIRAGE_PY = ROOT / "benchmarks" / "data" / "mirror_salt_mirage_py.txt"
#: refract as rules.py wrote it before the glaze it cracks off moved to rules.json's glaze_cracked, appended last.
MIRROR_SALT_REFRACT_PY = ROOT / "benchmarks" / "data" / "mirror_salt_refract_py.txt"
#: The interpreted side's step rule that does what the Python refract did in the verb (timed with the verb).
MIRROR_SALT_REFRACT_RULES = ("glaze_cracked",)
#: The interpreted side's other rules that carry them: resonance_imprint's kin faltering, and the language's
#: delayed effects (salt_sink's countdowns, the fading death-notes).
MIRROR_SALT_HELPERS = ("imprint_falter", "rule_timers")
#: What the shipped rules.json keeps for those and for refract (its verb, its predicate light_bent, the set of
#: where light was bent and the count of glazed things it takes), dropped from the Python side's copy.
MIRROR_SALT_VARS = ("sunk", "ringing", "glaze", "glaze_sun", "bent", "glazed_held", "heard", "heard_mirages")
MIRROR_SALT_VERBS = ("refract", "listen")
MIRROR_SALT_PREDICATES = ("light_bent", "listened_in")
#: listen as rules.py wrote it before it moved to rules.json, with its predicate listened_in, appended too.
MIRROR_SALT_LISTEN_PY = ROOT / "benchmarks" / "data" / "mirror_salt_listen_py.txt"


def make_mirror_salt(tmp: Path) -> tuple[Path, Path]:
    """Two copies of Mirror Salt: as shipped (forge_alert, salt_sink, resonance_imprint and salt_glaze in
    rules.json) and with them back in rules.py."""
    from odyssey_env.game import GAMES_DIR

    py, js = tmp / "python" / "mirror_salt", tmp / "interpreted" / "mirror_salt"
    skip = shutil.ignore_patterns("__pycache__", "__init__.py")
    for folder in (py, js):
        shutil.copytree(GAMES_DIR / "mirror_salt", folder, ignore=skip)
    rules = json.loads((py / "rules.json").read_text(encoding="utf-8"))
    gone = {*MIRROR_SALT_MECHANICS, *MIRROR_SALT_HELPERS, *MIRROR_SALT_REFRACT_RULES}
    rules["step_rules"] = [r for r in rules["step_rules"] if r["name"] not in gone]
    rules["vars"] = [v for v in rules["vars"] if v["name"] not in MIRROR_SALT_VARS]
    rules["verbs"] = [v for v in rules.get("verbs", ()) if v["verb"] not in MIRROR_SALT_VERBS]
    rules["predicates"] = [p for p in rules.get("predicates", ()) if p["name"] not in MIRROR_SALT_PREDICATES]
    if rules["step_rules"] or rules.get("verbs"):
        (py / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    else:
        (py / "rules.json").unlink()
    world = json.loads((py / "world.json").read_text(encoding="utf-8"))
    del world["game"]["params"]["salt_mirage"]["sheltered"]  # the Python rule asks salt_glaze's (open_sky)
    del world["game"]["params"]["listen"]  # the Python listen reads refract's lenses
    (py / "world.json").write_text(json.dumps(world), encoding="utf-8")
    shipped = (py / "rules.py").read_text(encoding="utf-8")
    glaze = MIRROR_SALT_GLAZE_PY.read_text(encoding="utf-8")
    refract = MIRROR_SALT_REFRACT_PY.read_text(encoding="utf-8")
    mirage = MIRROR_SALT_MIRAGE_PY.read_text(encoding="utf-8")
    listen = MIRROR_SALT_LISTEN_PY.read_text(encoding="utf-8")
    # what the old rules.py imported for the frozen rules (the shipped one no longer needs it all)
    imports = (
        "from collections.abc import Iterable\nfrom dataclasses import dataclass\n"
        "from odyssey_env.rules import Fact, StepRule, step_rule\n"
        "from collections.abc import Iterator\nfrom odyssey_env.rules import ActionRule, action_rule, predicate\n"
        "from odyssey_env.verbs.combat import stance\nfrom odyssey_env.verbs.common import carried_handles, ground\n"
        "from odyssey_env.world import carried_count, known_object, npc_here, type_of\n"
    )
    parts = (shipped, imports + MIRROR_SALT_PY, glaze, listen, refract, mirage)
    (py / "rules.py").write_text("\n\n".join(parts), encoding="utf-8")
    return py, js


def stocked_mirror_salt(tmp: Path) -> tuple[Path, Path]:
    """:func:`make_mirror_salt`, both copies with a kiln, a wheel and materials in the first areas, so that a
    random walk comes by stations with what their recipes need, and blades lying under the open sky (the same
    edit on both sides)."""
    py, js = make_mirror_salt(tmp)
    for folder in (py, js):
        world = json.loads((folder / "world.json").read_text(encoding="utf-8"))
        areas = {a["name"]: a for p in world["places"] for a in p["areas"]}
        areas["caravan_rest"]["objects"].update(salt_kiln=1, quartz_sand=8, rock_salt=4, brass_wire=3)
        areas["bleached_pans"]["objects"].update(grinding_wheel=1, driftwood_haft=3, resonant_shard=4)
        # blades under the open sky, so that the walk holds one long enough for salt_glaze to crust it
        areas["bleached_pans"]["objects"].update(glass_knife=2, salt_pick=2)
        areas["singing_dunes"]["objects"].update(salt_pick=2)
        (folder / "world.json").write_text(json.dumps(world), encoding="utf-8")
    return py, js


def salt_walk(game: Any, seed: int, steps: int, states: list[bytes] | None = None) -> list[str]:
    """A seeded walk over Mirror Salt's valid actions (no tutorial) that drops and discards now and then, so
    that the salt has something to swallow and the forge something to announce."""
    import pickle

    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, valid_actions=True, tutorial=False)
    obs, info = env.reset(seed=seed)
    pick = random.Random(seed)
    record = [obs]
    for _ in range(steps):
        va = info["valid_actions"]
        dropping = [c for v in ("drop", "discard") for c in va.get(v, ())]
        wanted = va.get("pick up", ())
        roll = pick.random()
        if dropping and roll < 0.15:
            action = pick.choice(dropping)
        elif wanted and roll < 0.4:
            action = pick.choice(wanted)
        else:
            action = pick.choice(va[pick.choice(sorted(va))])
        obs, reward, terminated, _, info = env.step(action)
        record.append(f"{action}\x00{obs}\x00{reward}\x00{info['events']}")
        if states is not None:
            states.append(pickle.dumps(env.engine.state))
        if terminated:
            obs, info = env.reset(seed=seed + len(record))
    return record


def same_but_glaze_line(record: str) -> str:
    """A record with the glaze refract cracks off told within refract's line: rules.json's glaze_cracked says
    it in a line of its own, right after it (docs/game-format.md says so)."""
    return record.replace("\nThe focused beam cracks the salt glaze off", " The focused beam cracks the salt glaze off")


def glaze_scene(game: Any) -> list[str]:
    """A short scene for refract's glaze (the walks rarely bring a lens and a glazed blade together): in the
    open sun of bleached_pans, nobody else there, a caravan_pack holding clear_glass, I pick up a glass knife
    and a salt pick, hold them until both are glazed twice over, bend the light, and hold them a while more."""
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.world import add, make_objects

    env = OdysseyEnv(game, valid_actions=True, tutorial=False)
    obs, info = env.reset(seed=0)
    state = env.engine.state
    agent = next(iter(state.agents.values()))
    area = state.areas["bleached_pans"]
    for handle in list(area.npcs):
        area.npcs.remove(handle)
        del state.npcs[handle]
    agent.area = area.name
    ((pack, _),) = make_objects(game, state, "caravan_pack", 1)
    agent.equipment["pack"] = pack
    for handle, k in make_objects(game, state, "clear_glass", 1):
        add(state.instances[pack].contents, handle, k)
    for kind in ("glass_knife", "salt_pick"):
        for handle, k in make_objects(game, state, kind, 1):
            add(area.objects, handle, k)
    record = [obs]
    commands = ["pick up glass_knife", "pick up salt_pick", *["wait"] * 13, "refract clear_glass", *["wait"] * 7]
    for action in commands:
        obs, reward, terminated, _, info = env.step(action)
        record.append(f"{action}\x00{obs}\x00{reward}\x00{info['events']}")
        if terminated:
            break
    return record


def mirage_scene(game: Any) -> list[str]:
    """A short scene for the mirages (the walks rarely listen to one or bend light on one): mirages every step
    where nobody stands, the agent walking the open salt, listening to what lies here, picking up what it
    finds, bending light through clear glass, and waiting for one to fade (lifetime 6)."""
    from odyssey_env.env import OdysseyEnv
    from odyssey_env.world import add, make_objects

    env = OdysseyEnv(game, valid_actions=True, tutorial=False)
    obs, info = env.reset(seed=3)
    state = env.engine.state
    agent = next(iter(state.agents.values()))
    for area in state.areas.values():
        for handle in list(area.npcs):
            area.npcs.remove(handle)
            del state.npcs[handle]
    ((pack, _),) = make_objects(game, state, "caravan_pack", 1)
    agent.equipment["pack"] = pack
    for handle, k in make_objects(game, state, "clear_glass", 1):
        add(state.instances[pack].contents, handle, k)
    record = [obs]
    pick = random.Random(3)
    for i in range(60):
        va = info["valid_actions"]
        here = agent.area
        if i % 7 == 3:
            action = f"listen {here}"
        elif i % 4 == 2:
            action = "refract clear_glass"
        elif va.get("pick up") and i % 2 == 0:
            action = pick.choice(va["pick up"])
        elif i % 5 == 4 and va.get("listen"):
            action = pick.choice(va["listen"])
        else:
            action = pick.choice(va.get("enter") or va.get("go to") or va["wait"])
        obs, reward, terminated, _, info = env.step(action)
        record.append(f"{action}\x00{obs}\x00{reward}\x00{info['events']}")
        if terminated:
            break
    return record


def mirage_variant(folder: Path) -> Path:
    """A copy of a Mirror Salt folder whose mirages form every step (chance 1, up to 8, lasting 6 steps), with no
    stations lying about."""
    out = folder.parent.parent / ("mirage-" + folder.parent.name) / folder.name
    shutil.copytree(folder, out)
    world = json.loads((out / "world.json").read_text(encoding="utf-8"))
    world["game"]["params"]["salt_mirage"].update(chance=1.0, period=1, max_alive=8, lifetime=6)
    # no stations: two recipes that become craftable in one step are told in one line by the Python forge_alert
    # and in two by rules.json's (docs/game-format.md says so); this scene is about the mirages
    stations = {o["name"] for o in world["objects"] if o["category"] == "station"}
    for place in world["places"]:
        for area in place["areas"]:
            area["objects"] = {k: v for k, v in area.get("objects", {}).items() if k not in stations}
    (out / "world.json").write_text(json.dumps(world), encoding="utf-8")
    return out


def salt_rules(game: Any) -> list[Any]:
    """The rules that carry forge_alert, salt_sink, resonance_imprint and salt_glaze in a copy of Mirror Salt (on
    the interpreted side with imprint_falter and the language's rule_timers, which do part of their work), and
    the verbs listen and refract (on the interpreted side with glaze_cracked, which cracks the glaze off)."""
    names = (*MIRROR_SALT_MECHANICS, *MIRROR_SALT_HELPERS, *MIRROR_SALT_REFRACT_RULES)
    rules = [game.rules.step_rule(n) for n in names]
    return [r for r in rules if r is not None] + [game.rules.actions["refract"], game.rules.actions["listen"]]


def mirror_salt(args: argparse.Namespace) -> int:
    """``--game mirror_salt``: parity on the golden script and a walk, then fresh processes taking turns."""
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        shipped = make_mirror_salt(Path(tmp) / "shipped")
        py, js = stocked_mirror_salt(Path(tmp) / "stocked")
        sp, sj = load_folder(shipped[0]), load_folder(shipped[1])
        pg, jg = load_folder(py), load_folder(js)
        for what, a, b in (
            ("golden script", scripted(sp, "mirror_salt", True), scripted(sj, "mirror_salt", True)),
            (f"walk of {args.steps}", salt_walk(pg, args.seed, args.steps), salt_walk(jg, args.seed, args.steps)),
            ("glaze scene", glaze_scene(sp), glaze_scene(sj)),
            (
                "mirage scene",
                mirage_scene(load_folder(mirage_variant(shipped[0]))),
                mirage_scene(load_folder(mirage_variant(shipped[1]))),
            ),
        ):
            b = [same_but_glaze_line(r) for r in b]
            same = sum(x == y for x, y in zip(a, b, strict=True))
            told = sum("Forge alert" in r for r in a[1:])
            sank = sum("object_sank" in r for r in a[1:])
            rang = sum("imprint_formed" in r for r in a[1:])
            glazed = sum("item_glazed" in r for r in a[1:])
            flaked = sum("glaze flakes off" in r for r in a[1:])
            cracked = sum("focused beam cracks" in r for r in a[1:])
            formed = sum(r.count("mirage_formed") for r in a[1:])
            vanished = sum("mirage_vanished" in r for r in a[1:])
            faded = sum("mirage_faded" in r for r in a[1:])
            dispelled = sum("mirage_dispelled" in r for r in a[1:])
            print(
                f"parity, {what}: {same}/{len(a)} records identical "
                f"({told} forge alerts, {sank} steps with sinking, {rang} death-notes, "
                f"{glazed} layers of glaze, {flaked} steps with glaze flaking, {cracked} with glaze cracked off, "
                f"{formed} mirages formed, {vanished} vanished, {faded} faded, {dispelled} dispelled)"
            )
            if same != len(a) or len(a) != len(b):
                first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
                print(f"first difference at record {first}:")
                print(f"  python:      {a[first : first + 1]!r:.300}\n  interpreted: {b[first : first + 1]!r:.300}")
                return 1
        runs: dict[str, list[dict[str, float]]] = {"python": [], "interpreted": []}
        folders = {"python": py, "interpreted": js}
        for r in range(args.rounds):
            for name in ("python", "interpreted") if r % 2 == 0 else ("interpreted", "python"):
                command = [sys.executable, __file__, "--child", str(folders[name])]
                command += ["--steps", str(args.steps), "--seed", str(args.seed + r)]
                out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=ROOT).stdout
                runs[name].append(json.loads(out.splitlines()[-1]))
    print(f"{args.rounds} fresh processes each, {args.steps} steps each (median per step):")
    base = {k: statistics.median(run[k] for run in runs["python"]) for k in ("step", "rule", "trim")}
    for name in ("python", "interpreted"):
        st, ru, tr = (statistics.median(run[k] for run in runs[name]) for k in ("step", "rule", "trim"))
        li, re = (statistics.median(run.get(k, 0.0) for run in runs[name]) for k in ("listen", "refract"))
        print(
            f"  {name:12s} whole step {st * 1e6:8.1f} us ({st / base['step']:4.2f}x)   "
            f"timed rules {ru * 1e6:7.1f} us ({ru / base['rule']:4.2f}x), "
            f"without the slowest 1% of calls {tr * 1e6:6.1f} us ({tr / base['trim']:4.2f}x); "
            f"listen {li * 1e6:5.1f} us, refract {re * 1e6:5.1f} us a step"
        )
    return 0


def walk(game: Any, seed: int, steps: int) -> list[str]:
    """A seeded walk over the valid actions, recorded (commands, observations, rewards, events)."""
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, valid_actions=True)
    obs, info = env.reset(seed=seed)
    pick = random.Random(seed)
    record = [obs]
    for _ in range(steps):
        va = info["valid_actions"]
        verbs = sorted(va)
        wanted = [c for c in va.get("pick up", ()) if c in ("pick up club", "pick up stick")]
        if "whittle" in va and pick.random() < 0.5:
            action = pick.choice(va["whittle"])
        elif wanted and pick.random() < 0.5:  # so that the walk whittles now and then
            action = pick.choice(wanted)
        else:
            action = pick.choice(va[pick.choice(verbs)])
        obs, reward, terminated, _, info = env.step(action)
        record.append(f"{action}\x00{obs}\x00{reward}\x00{info['events']}")
        if terminated:
            obs, info = env.reset(seed=seed + len(record))
    return record


class Timed:
    """Wraps the mechanics' apply and candidates of one game's rule book, adding up their seconds (and keeping
    each call's, for :meth:`trimmed`)."""

    def __init__(self, game: Any, chosen: list[Any] | None = None):
        from odyssey_env.rules import StepRule

        self.seconds = 0.0
        self.calls: list[float] = []
        #: seconds by mechanic (a verb's name or a step rule's)
        self.by_rule: dict[str, float] = {}
        rules = game.rules
        if chosen is None:
            chosen = [rules.actions["whittle"], *(rules.step_rule(n) for n in MECHANICS[1:])]
        for rule in chosen:
            name = getattr(rule, "verb", None) or rule.name
            own_veil = getattr(getattr(rule, "veil", None), "__func__", None) not in (None, StepRule.veil)
            for method in ("apply", "candidates", *(("veil",) if own_veil else ())):
                if hasattr(rule, method):
                    setattr(rule, method, self._wrap(getattr(rule, method), method == "candidates", name))

    def _wrap(self, fn: Any, generator: bool, name: str) -> Any:
        def timed(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                out = fn(*args)
                return list(out) if generator else out
            finally:
                took = time.perf_counter() - start
                self.seconds += took
                self.calls.append(took)
                self.by_rule[name] = self.by_rule.get(name, 0.0) + took

        return timed

    def trimmed(self) -> float:
        """The seconds without the slowest 1% of calls: on a shared machine a call the scheduler preempts
        takes milliseconds for microseconds of work, and lands on either side by chance."""
        kept = sorted(self.calls)[: len(self.calls) - len(self.calls) // 100]
        return sum(kept)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--game", choices=("tiny", "lazaret", "mirror_salt"), default="tiny")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # one timed lazaret walk (internal)
    args = parser.parse_args(argv)
    if args.child is not None:
        return child(args.child, args.seed, args.steps)
    if args.game == "lazaret":
        return lazaret(args)
    if args.game == "mirror_salt":
        return mirror_salt(args)
    with tempfile.TemporaryDirectory() as tmp:
        py, js = make_games(Path(tmp))
        a, b = walk(py, args.seed, args.steps), walk(js, args.seed, args.steps)
        same = sum(x == y for x, y in zip(a, b, strict=True))
        whittled = sum("whittle " in r.split("\x00", 1)[0] for r in a[1:])
        print(f"parity: {same}/{len(a)} records identical ({whittled} whittle commands, night from step 6)")
        if same != len(a):
            first = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
            print(f"first difference at record {first}:")
            print(f"  python:      {a[first]!r:.300}\n  interpreted: {b[first]!r:.300}")
            return 1
        timers = {"python": Timed(py), "interpreted": Timed(js)}
        games = {"python": py, "interpreted": js}
        step_seconds: dict[str, list[float]] = {"python": [], "interpreted": []}
        rule_seconds: dict[str, list[float]] = {"python": [], "interpreted": []}
        each: dict[str, dict[str, list[float]]] = {"python": {}, "interpreted": {}}
        for r in range(args.rounds):
            for name in ("python", "interpreted") if r % 2 == 0 else ("interpreted", "python"):
                t = timers[name]
                before, by_rule = t.seconds, dict(t.by_rule)
                start = time.perf_counter()
                walk(games[name], args.seed + r, args.steps)
                step_seconds[name].append((time.perf_counter() - start) / args.steps)
                rule_seconds[name].append((t.seconds - before) / args.steps)
                for mechanic, seconds in t.by_rule.items():
                    took = (seconds - by_rule.get(mechanic, 0.0)) / args.steps
                    each[name].setdefault(mechanic, []).append(took)
    print(f"{args.rounds} rounds of {args.steps} steps each (median per step):")
    base_step, base_rule = statistics.median(step_seconds["python"]), statistics.median(rule_seconds["python"])
    for name in ("python", "interpreted"):
        st, ru = statistics.median(step_seconds[name]), statistics.median(rule_seconds[name])
        print(
            f"  {name:12s} whole step {st * 1e6:8.1f} us ({st / base_step:4.2f}x)   "
            f"the four mechanics {ru * 1e6:7.1f} us ({ru / base_rule:4.2f}x)"
        )
    ratios = []
    for mechanic in MECHANICS:
        py_us, js_us = (statistics.median(each[side][mechanic]) * 1e6 for side in ("python", "interpreted"))
        ratios.append(f"{mechanic} {js_us:.2f} / {py_us:.2f} us ({js_us / py_us:.2f}x)")
    print("  each mechanic, interpreted / python: " + ", ".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
