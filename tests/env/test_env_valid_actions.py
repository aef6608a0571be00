"""Valid actions are sound (every listed command executes without failing) and complete (every command
that would succeed is listed, with amounts summarised as the smallest and the largest feasible one).

Both properties are checked from the states of long seeded random walks, on every shipped game and on
the tiny test game that switches on every optional verb. Each candidate command is tried from the same
state (restored from a pickle snapshot), so the checks see exactly what an agent would. The engines run
with the valid-action cache's check mode on (tests/env/conftest.py): every listing of these walks is
also compared with a fresh one.
"""

from __future__ import annotations

import pickle
import random

import pytest

from odyssey_env import available_games, load_game
from odyssey_env.engine import Engine
from odyssey_env.parsing import parse
from odyssey_env.turn import Turn

PLAYER = "player"


class Snapshot:
    """Cheap exact restore of an engine (its state and its RNG), for trying commands side by side."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.blob = pickle.dumps(engine.state, protocol=pickle.HIGHEST_PROTOCOL)
        self.rng = engine.rng.getstate()

    def restore(self) -> None:
        self.engine.state = pickle.loads(self.blob)
        self.engine.rng.setstate(self.rng)


def _walk_states(engine: Engine, steps: int, seed: int, every: int = 1):
    """Random walk: a verb at random, then one of its listed commands, which must execute.

    Yields (step, valid actions) every ``every`` steps, before the step is taken.
    """
    rng = random.Random(seed)
    for i in range(steps):
        va = engine.valid_actions(PLAYER)
        if i % every == 0:
            yield i, va
        verb = rng.choice(list(va))
        command = rng.choice(va[verb])
        out = engine.step({PLAYER: command})[PLAYER]
        assert not out.invalid and not out.failed, (i, command, engine.state.feedback[PLAYER])


GAMES = [*available_games(), "tiny"]


def _game(name, tiny_game):
    return tiny_game if name == "tiny" else load_game(name)


def _soundness(engine: Engine, steps: int, seed: int, per_verb: int | None) -> tuple[set[str], list]:
    """Walk, and at each step try ``per_verb`` listed commands of every verb (all when None)."""
    pick = random.Random(seed + 1000)
    seen_verbs: set[str] = set()
    bad = []
    for i, va in _walk_states(engine, steps, seed):
        snap = Snapshot(engine)
        for verb, commands in va.items():
            seen_verbs.add(verb)
            if not commands or len(commands) != len(set(commands)):
                bad.append((i, verb, "empty or duplicated", commands))
            tried = commands if per_verb is None else pick.sample(commands, min(per_verb, len(commands)))
            for command in tried:
                if not _succeeds(engine, snap, command):
                    bad.append((i, command, engine.state.feedback[PLAYER]))
                    snap.restore()
        if bad:
            break
    return seen_verbs, bad


@pytest.mark.parametrize(
    ("game_name", "seed"), [("mossfall", 0), ("mossfall", 1), ("tiny", 0), ("tiny", 1), ("tiny", 2)]
)
def test_listed_commands_execute(game_name, seed, tiny_game):
    """Long walks, sampling two listed commands of every verb at each step (the walk itself runs one more)."""
    engine = Engine(_game(game_name, tiny_game), seed)
    seen_verbs, bad = _soundness(engine, 1000, seed, per_verb=2)
    assert not bad, bad[:5]
    assert {"pick up", "drop", "enter", "inspect", "talk to", "equip", "store", "craft"} <= seen_verbs, seen_verbs


@pytest.mark.parametrize("game_name", GAMES)
def test_every_listed_command_executes(game_name, tiny_game):
    """Every listed command of every verb, at every step of a shorter walk."""
    engine = Engine(_game(game_name, tiny_game), 5)
    _, bad = _soundness(engine, 300, 5, per_verb=None)
    assert not bad, bad[:5]


def test_optional_verbs_are_exercised(tiny_game):
    """The tiny game's walks reach every verb, so the checks above cover the optional ones too."""
    seen: set[str] = set()
    for seed in range(3):
        seen |= _soundness(Engine(tiny_game, seed), 1000, seed, per_verb=0)[0]
    assert seen == set(tiny_game.rules.actions), set(tiny_game.rules.actions) - seen


def test_soundness_check_can_fail(tiny_game):
    engine = Engine(tiny_game, 0)
    original = engine.valid_actions
    engine.valid_actions = lambda agent_id: {**original(agent_id), "pick up": ["pick up dragon_egg"]}
    _, bad = _soundness(engine, 1, 0, per_verb=None)
    assert bad and bad[0][1] == "pick up dragon_egg"


@pytest.mark.slow
@pytest.mark.parametrize("game_name", GAMES)
def test_long_walks_every_command(game_name, tiny_game):
    for seed in range(10, 16):
        _, bad = _soundness(Engine(_game(game_name, tiny_game), seed), 3000, seed, per_verb=None)
        assert not bad, bad[:5]


# ---------------------------------------------------------------------------- completeness
def _names(engine: Engine) -> list[str]:
    """Every handle the state or the game could mention, plus two that exist nowhere."""
    state, game = engine.state, engine.game
    names: dict[str, None] = {}
    names.update(dict.fromkeys(game.objects))
    names.update(dict.fromkeys(state.instances))
    names.update(dict.fromkeys(state.npcs))
    names.update(dict.fromkeys(state.areas))
    names.update(dict.fromkeys(game.npcs))
    names.update(dict.fromkeys(["nothing_at_all", "ghost_7"]))
    return list(names)


def _largest_count(engine: Engine) -> int:
    state = engine.state
    counts = [1]
    for area in state.areas.values():
        counts += area.objects.values()
    for agent in state.agents.values():
        counts += agent.hands.values()
    for inst in state.instances.values():
        counts += inst.contents.values()
    for npc in state.npcs.values():
        counts += npc.inventory.values()
        counts.append(npc.coins)
    return sum(counts)  # a generous bound: more than anything can be carried, bought or stored


def _succeeds(engine: Engine, snap: Snapshot, command: str) -> bool:
    """Apply just the verb (no step rules: they cannot make a verb fail) and report success.

    A success changes the state, which is then restored; a refusal must change nothing, which
    :func:`_check_state` verifies once at the end.
    """
    parsed = parse(engine.rules, command)
    assert not isinstance(parsed, str), (command, parsed)
    rule, args = parsed
    engine.state.feedback[PLAYER] = []
    engine.events = []
    turn = Turn(engine, engine.state.agents[PLAYER])
    rule.apply(turn, *args)
    if turn.ok:
        snap.restore()
    return turn.ok


Key = tuple[str, tuple[str, ...]]


def _listed(rules, va: dict[str, list[str]]) -> dict[Key, set[int]]:
    """Listed commands keyed by (verb, name arguments) -> the amounts listed (empty set when no amount)."""
    out: dict[Key, set[int]] = {}
    for commands in va.values():
        for command in commands:
            key, amounts = _key(rules, command)
            out.setdefault(key, set()).update(amounts)
    return out


def _key(rules, command: str) -> tuple[Key, set[int]]:
    """(verb, name arguments) of a command, and its amount if it has one; the text of ``write`` is ignored."""
    rule, args = parse(rules, command)
    names, amounts = [], set()
    for (_, kind), value in zip(rule.params, args, strict=True):
        if kind == "amount":
            amounts.add(value)
        elif kind != "text":
            names.append(value)
    return (rule.verb, tuple(names)), amounts


def _check_state(engine: Engine) -> list[str]:
    """Try the whole candidate universe from this state; return what is wrong with the valid actions."""
    va = engine.valid_actions(PLAYER)
    listed = _listed(engine.rules, va)
    names = _names(engine)
    npcs = [*list(engine.state.npcs), "ghost_7"]
    areas = [*list(engine.state.areas), "nowhere"]
    containers = [h for h, i in engine.state.instances.items() if engine.game.objects[i.type].category == "container"]
    writables = [h for h, i in engine.state.instances.items() if engine.game.objects[i.type].category == "writable"]
    pools = {
        "object": names,
        "npc": npcs,
        "area": areas,
        "container": [*containers, "stick"],
        "writable": [*writables, "stick"],
        "text": ['"notes"'],
        "amount": ["1"],
    }
    most = _largest_count(engine)
    snap = Snapshot(engine)
    before = (engine.state.to_dict(), engine.rng.getstate())
    problems = []
    for verb, rule in engine.rules.actions.items():
        combos: list[list[str]] = [[]]
        for _, kind in rule.params:
            combos = [[*c, w] for c in combos for w in pools[kind]]
        amount_at = next((i for i, (_, k) in enumerate(rule.params) if k == "amount"), None)
        for combo in combos:
            command = " ".join([verb, *combo])
            if not _succeeds(engine, snap, command):
                if amount_at is not None:  # amounts are monotone: if 1 is refused, so must 2 be
                    combo[amount_at] = "2"
                    if _succeeds(engine, snap, " ".join([verb, *combo])):
                        problems.append(f"{' '.join([verb, *combo])!r} succeeds but amount 1 does not")
                continue
            key, _ = _key(engine.rules, command)
            if key not in listed:
                problems.append(f"{command!r} succeeds but {key} is not listed")
                continue
            if amount_at is None:
                continue
            feasible = [1]
            for n in range(2, most + 2):
                combo[amount_at] = str(n)
                if not _succeeds(engine, snap, " ".join([verb, *combo])):
                    break
                feasible.append(n)
            combo[amount_at] = str(feasible[-1] + 2)
            if _succeeds(engine, snap, " ".join([verb, *combo])):
                problems.append(f"{' '.join([verb, *combo])!r} succeeds after a gap in the feasible amounts")
            if listed[key] != {1, feasible[-1]}:
                problems.append(f"{key}: feasible amounts 1..{feasible[-1]}, listed {sorted(listed[key])}")
    engine.state.feedback[PLAYER] = before[0]["feedback"][PLAYER]
    if (engine.state.to_dict(), engine.rng.getstate()) != before:
        problems.append("a refused command changed the state")
        snap.restore()
    return problems


def _completeness(engine: Engine, steps: int, seed: int, every: int) -> list[str]:
    problems = []
    for i, _ in _walk_states(engine, steps, seed, every=every):
        problems += [f"step {i}: {p}" for p in _check_state(engine)]
        if problems:
            break
    return problems


@pytest.mark.parametrize(
    ("game_name", "seed"), [("mossfall", 3), ("mossfall", 4), ("tiny", 3), ("tiny", 4), ("tiny", 5)]
)
def test_every_command_that_succeeds_is_listed(game_name, seed, tiny_game):
    engine = Engine(_game(game_name, tiny_game), seed)
    problems = _completeness(engine, 1000, seed, every=20)
    assert not problems, problems[:10]


@pytest.mark.slow
@pytest.mark.parametrize("game_name", GAMES)
def test_long_walks_completeness(game_name, tiny_game):
    for seed in range(10, 16):
        problems = _completeness(Engine(_game(game_name, tiny_game), seed), 3000, seed, every=5)
        assert not problems, problems[:10]


def _tamper_drop_pick_up(va):
    va.pop("pick up", None)


def _tamper_store_amount(va):
    va["store"] = [c.replace("store 3 ", "store 2 ") for c in va["store"]]


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (_tamper_drop_pick_up, "'pick up stick' succeeds"),
        (_tamper_store_amount, "feasible amounts 1..3, listed [1, 2]"),
    ],
)
def test_completeness_check_can_fail(h, tamper, expected):
    """A check that never fails proves nothing: spoil the listing and the check must notice."""
    h.wear("small_bag")
    h.put("stick", 3)
    original = h.engine.valid_actions

    def spoiled(agent_id):
        va = original(agent_id)
        tamper(va)
        return va

    h.engine.valid_actions = spoiled
    assert any(expected in p for p in _check_state(h.engine)), _check_state(h.engine)


# ---------------------------------------------------------------------------- small, exact cases
def test_amounts_are_summarised_by_smallest_and_largest(h):
    bag = h.wear("small_bag")  # capacity 4
    h.put("stick", 3)
    h.put("iron_ore", 3)  # size 2: at most 2 fit
    h.put("coin", 9)  # size 0: all fit
    va = h.engine.valid_actions("player")
    assert {c for c in va["store"]} == {
        f"store 1 stick {bag}",
        f"store 3 stick {bag}",
        f"store 1 iron_ore {bag}",
        f"store 2 iron_ore {bag}",
        f"store 1 coin {bag}",
        f"store 9 coin {bag}",
    }
    h.stash(bag, "resin", 4)
    assert "store" in h.engine.valid_actions("player")  # coins still fit in a full bag
    assert h.engine.valid_actions("player")["store"] == [f"store 1 coin {bag}", f"store 9 coin {bag}"]


def test_trade_listing(h):
    h.npc("mira")
    h.hold("coin", 5)
    h.hold("iron_ore")
    va = h.engine.valid_actions("player")
    assert va["buy"] == [
        "buy 1 apple mira",
        "buy 3 apple mira",
        "buy 1 parchment mira",
        "buy 2 parchment mira",
        "buy 1 boots mira",
    ]
    assert va["sell"] == ["sell 1 iron_ore mira"]  # never coins
    assert va["pickpocket"] == ["pickpocket mira"]  # hands are full, but her coins would join mine
    h.state.npcs["mira"].coins = 0
    assert "pickpocket" not in h.engine.valid_actions("player")


def test_locks_fights_and_tools_shape_the_listing(h):
    assert h.valid().count("enter yard") == 1 and "enter vault" not in h.valid()
    assert "lockpick" not in h.engine.valid_actions("player")
    h.hold("lockpick")
    assert h.engine.valid_actions("player")["lockpick"] == ["lockpick vault"]
    rat = h.npc("rat")
    assert h.engine.valid_actions("player")["attack"] == [f"attack {rat.handle}"]
    rat.engaged, h.agent.combat = "player", rat.handle
    va = h.engine.valid_actions("player")
    assert "enter" not in va and "lockpick" not in va  # no walking away from a fight
    assert va["throw"] == [f"throw lockpick {rat.handle}"]


def test_listing_changes_nothing(h):
    h.npc("mira")
    h.hold("coin", 3)
    before = h.state.to_dict(), h.engine.rng.getstate()
    for _ in range(3):
        h.engine.valid_actions("player")
    assert (h.state.to_dict(), h.engine.rng.getstate()) == before
