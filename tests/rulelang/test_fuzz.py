"""Random rule files never crash the engine: a file is refused at load time with a GameError naming rules.json,
or it loads and any play of it (listed commands, random commands, saving and loading) runs without an error,
with the listing cache checked against fresh listings at every step (ODYSSEY_CHECK_VALID_ACTIONS=1)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from odyssey_env import load_game
from odyssey_env.engine import Engine
from odyssey_env.game import GameError

from .conftest import TINY

OBJECTS = ["stick", "resin", "plank", "torch", "club", "cap", "small_bag", "parchment", "coin", "apple", "workbench"]
NPCS = ["rat", "wolf", "tom", "mira"]
AREAS = ["camp", "yard", "shed", "vault"]
REFS = ["$here", "$it", "$n", "$npc", "$object", "$event.area", "$nope", "$recipe", "$removed"]
VARS = [
    {"name": "f", "kind": "flag"},
    {"name": "c", "kind": "counter", "max": 5, "scope": "global"},
    {"name": "g", "kind": "set", "max": 3, "scope": "area"},
    {"name": "t", "kind": "tally", "max": 2, "scope": "area"},
    {"name": "r", "kind": "set", "max": 2, "scope": "area", "lasts": 3},
]
TEXTS = ["hi", "at {here}", "{it} {n}", "{var.c}", "{npc}", "{event.area}", "step {step}", "{bogus}"]
TEXTS += ["{stations}", "{removed}", "{tally.t}", "{recipe}"]

obj = st.sampled_from(OBJECTS + REFS + ["nothing"])
area = st.sampled_from([*AREAS, "$here", "$it", "moon"])
text = st.sampled_from(TEXTS)
small = st.integers(-3, 8)


def conditions(depth: int = 2) -> st.SearchStrategy:
    leaf = st.one_of(
        st.builds(lambda o, n: {"has": o, "count": n}, obj, small),
        st.builds(lambda o: {"holds": o}, obj),
        st.builds(lambda o: {"wears": o}, obj),
        st.builds(lambda o: {"lies_here": o}, obj),
        st.builds(lambda n, h: {"npc_here": n, "hostile": h}, st.sampled_from([*NPCS, "*"]), st.none() | st.booleans()),
        st.builds(lambda a: {"in_area": [a]}, area),
        st.builds(lambda h: {"hour": h}, st.tuples(st.integers(0, 25), st.integers(0, 25)).map(list)),
        st.builds(lambda x, lo: {"stat": x, "at_least": lo}, st.sampled_from(["hp", "coins", "xp", "mana"]), small),
        st.just({"flag": "f"}),
        st.builds(lambda lo: {"counter": "c", "at_least": lo}, small),
        st.builds(lambda v: {"in_set": "g", "value": v}, text),
        st.builds(lambda a, b: {"same": [a, b]}, text, st.sampled_from(REFS)),
        st.builds(lambda b: {"in_combat": b}, st.booleans()),
        st.builds(lambda a: {"exit_locked": a}, area),
        st.just({"quest": {"type": "has_item_count", "object": "apple"}}),
        st.just({"bogus": 1}),
        st.builds(lambda o: {"can_craft": o}, obj),
        st.builds(lambda v: {"common_enemy": v}, st.sampled_from([*NPCS, "$npc", "$event.type", "{npc.type}", "bat"])),
        st.builds(lambda v: {"in_set": "r", "value": v}, text),
    )
    if depth == 0:
        return leaf
    sub = st.lists(conditions(depth - 1), min_size=0, max_size=3)
    return st.one_of(
        leaf, sub.map(lambda c: {"all_of": c}), sub.map(lambda c: {"any_of": c}), sub.map(lambda c: {"none_of": c})
    )


def effects(depth: int = 2) -> st.SearchStrategy:
    leaf = st.one_of(
        st.builds(lambda o, n: {"consume": o, "count": n}, obj, small),
        st.builds(lambda o, n, c: {"produce": o, "count": n, "cap": c}, obj, small, st.integers(0, 6)),
        st.builds(lambda a, b: {"transform": a, "into": b}, obj, obj),
        st.builds(lambda o, c, a: {"place": o, "cap": c, "area": a}, obj, st.integers(1, 4), area),
        st.builds(lambda o, a: {"remove": o, "area": a}, obj, area),
        st.builds(lambda a: {"move_agent": a}, area),
        st.builds(lambda a: {"move_npc": "$npc", "to": a}, area),
        st.builds(
            lambda s, b: {"change": s, "by": b}, st.sampled_from(["hp", "max_hp", "attack", "xp", "defense"]), small
        ),
        st.builds(lambda b: {"change": "hp", "by": b, "npc": "$npc"}, small),
        st.builds(lambda n: {"coins": n}, small),
        st.builds(lambda n, m: {"spawn_npc": n, "max_alive": m}, st.sampled_from(NPCS), st.integers(0, 3)),
        st.just({"remove_npc": "$npc"}),
        st.builds(lambda a: {"open_exit": a}, area),
        st.builds(lambda a: {"lock_exit": a, "key": "shed_key"}, area),
        st.builds(lambda v: {"set_flag": "f", "value": v}, st.booleans()),
        st.builds(lambda v: {"add": "c", "value": v}, small),
        st.builds(lambda v: {"set": "c", "value": v}, small),
        st.builds(lambda v: {"remember": "g", "value": v}, text),
        st.builds(lambda k, v: {"emit": k, "data": {"x": v}}, st.sampled_from(["ping", "npc_defeated", "Bad"]), text),
        st.builds(lambda t: {"say": t}, text),
        st.builds(lambda t: {"tell": t}, text),
        st.builds(lambda o, n: {"remove": o, "count": n}, obj, st.sampled_from(["$n", "$event.amount", "$removed", 2])),
        st.builds(lambda v, n: {"tally": "t", "item": v, "by": n}, text, st.sampled_from(["$removed", "$n", 1, -1])),
        st.builds(lambda v: {"emit": "ping", "data": {"x": v}}, st.sampled_from(REFS)),
        st.builds(lambda v: {"remember": "r", "value": v}, text),
    )
    if depth == 0:
        return leaf
    sub = st.lists(effects(depth - 1), max_size=3)
    return st.one_of(
        leaf,
        st.builds(lambda c, t, e: {"if": c, "then": t, "else": e}, conditions(1), sub, sub),
        st.builds(lambda n, d: {"after": n, "do": d}, st.integers(0, 4), sub),
        st.builds(lambda n, d: {"after": n, "unwatched": True, "do": d}, st.integers(0, 4), sub),
    )


slot = st.one_of(
    st.builds(
        lambda d: {"name": "it", "domain": d},
        st.sampled_from(["held", "carried", "worn", "ground", "near", "npc", "exit", "area"]),
    ),
    st.just({"name": "n", "domain": "amount", "max": 4}),
    st.just({"name": "it", "domain": "text", "example": "words"}),
    st.just({"name": "it", "domain": "carried", "types": ["stick", "resin"]}),
)
verb = st.builds(
    lambda name, slots, req, eff: {
        "verb": name,
        "description": "a verb",
        "slots": slots,
        "requires": [{"check": c, "refuse": r} for c, r in req],
        "effects": eff,
    },
    st.sampled_from(["poke", "prod it", "wait", "enter", "Bad!"]),
    st.lists(slot, max_size=2),
    st.lists(st.tuples(conditions(), text), max_size=2),
    st.lists(effects(), max_size=4),
)
trigger = st.fixed_dictionaries(
    {},
    optional={
        "every": st.integers(0, 4),
        "hours": st.tuples(st.integers(0, 24), st.integers(0, 24)).map(list),
        "enter": st.lists(st.sampled_from(AREAS), max_size=2),
        "event": st.sampled_from(["poke", "area_entered", "object_dropped", ["object_dropped", "poke"], []]),
        "becomes": conditions(1),
        "chance": st.floats(0, 1),
    },
)
step_rule = st.builds(
    lambda name, scope, trig, when, eff, types, tutorial, modify: {
        "name": name,
        "description": "a rule",
        "after": ["day_night"],
        "before": ["death"],
        "scope": scope,
        "trigger": trig,
        **({"when": when} if when is not None else {}),
        "effects": eff,
        **({"types": types} if types else {}),
        **({"tutorial": True} if tutorial else {}),
        **({"modify": modify} if modify else {}),
    },
    st.sampled_from(["r1", "r2", "combat_rhythm"]),
    st.sampled_from(["agent", "area", "npc", "object", "recipe"]),
    trigger,
    st.none() | conditions(1),
    st.lists(effects(), max_size=4),
    st.sampled_from([[], ["rat"], ["apple"], ["plank", "torch"]]),
    st.booleans(),
    st.none() | st.builds(lambda s, x: {"stat": s, "times": x}, st.sampled_from(["attack", "hp"]), st.floats(0, 3)),
)
rule_files = st.builds(
    lambda verbs, steps, keep_vars: {"vars": VARS if keep_vars else [], "verbs": verbs, "step_rules": steps},
    st.lists(verb, max_size=2),
    st.lists(step_rule, max_size=2),
    st.booleans(),
)

_loaded = {"yes": 0, "no": 0}


_SLOW_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=60, deadline=None, suppress_health_check=_SLOW_OK)
@given(rules=rule_files, seed=st.integers(0, 3))
def test_a_random_rule_file_loads_or_is_refused_and_never_crashes_a_step(tmp_path_factory, rules, seed):
    _play(tmp_path_factory, rules, seed)


def _play(tmp_path_factory, rules, seed):
    """Load one rule file; a refusal must name a game file, a loaded game must step 25 times without a crash."""
    folder = tmp_path_factory.mktemp("fuzz") / "game"
    shutil.copytree(TINY, folder)
    (folder / "rules.json").write_text(json.dumps(rules), encoding="utf-8")
    try:
        game = load_game(folder, cache=False)
    except GameError as exc:
        assert all(p.file in ("rules.json", "world.json") for p in exc.problems), str(exc)
        _loaded["no"] += 1
        return
    _loaded["yes"] += 1
    engine = Engine(game, seed, check_valid_actions=True)
    rng = random.Random(seed)
    verbs = list(game.rules.actions)
    for i in range(25):
        listed = [c for cmds in engine.valid_actions("player").values() for c in cmds]
        roll = rng.random()
        if roll < 0.7 and listed:
            command = rng.choice(listed)
        elif roll < 0.9:
            command = f"{rng.choice(verbs)} {rng.choice(OBJECTS + AREAS + ['x', '3'])}"
        else:
            command = rng.choice(["wait", "", "poke", "prod it 2"])
        engine.step({"player": command})
        engine.observe("player")
        if i == 12:
            saved = json.loads(json.dumps(engine.save_state()))
            engine.load_state(saved)


# derandomized: the same 120 files every run, so that the count below cannot fall under its bar by chance (a
# random draw of 60 once loaded only 4)
@settings(max_examples=120, deadline=None, suppress_health_check=_SLOW_OK, derandomize=True, database=None)
@given(rules=rule_files, seed=st.integers(0, 3))
def _counted(tmp_path_factory, rules, seed):
    _play(tmp_path_factory, rules, seed)


def test_the_fuzz_reaches_both_outcomes(tmp_path_factory):
    """The generator is no use if every file is refused (or none is): run it and count."""
    _loaded["yes"] = _loaded["no"] = 0
    _counted(tmp_path_factory)
    assert _loaded["yes"] >= 5 and _loaded["no"] >= 5, _loaded


def test_a_file_that_is_not_an_object_is_refused(tmp_path: Path):
    folder = tmp_path / "game"
    shutil.copytree(TINY, folder)
    for raw in ("[]", '"rules"', "3", '{"verbs": 3}', '{"verbs": [{"verb": 5}]}'):
        (folder / "rules.json").write_text(raw, encoding="utf-8")
        try:
            load_game(folder, cache=False)
        except GameError as exc:
            assert all(p.file == "rules.json" for p in exc.problems)
        else:  # pragma: no cover - the assertion below explains
            raise AssertionError(f"{raw} loaded")
