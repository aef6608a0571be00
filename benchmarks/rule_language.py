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
    """Wraps the mechanics' apply and candidates of one game's rule book, adding up their seconds."""

    def __init__(self, game: Any):
        self.seconds = 0.0
        rules = game.rules
        for rule in [rules.actions["whittle"], *(rules.step_rule(n) for n in MECHANICS[1:])]:
            for method in ("apply", "candidates"):
                if hasattr(rule, method):
                    setattr(rule, method, self._wrap(getattr(rule, method), method == "candidates"))

    def _wrap(self, fn: Any, generator: bool) -> Any:
        def timed(*args: Any) -> Any:
            start = time.perf_counter()
            try:
                out = fn(*args)
                return list(out) if generator else out
            finally:
                self.seconds += time.perf_counter() - start

        return timed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
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
        for r in range(args.rounds):
            for name in ("python", "interpreted") if r % 2 == 0 else ("interpreted", "python"):
                t = timers[name]
                before = t.seconds
                start = time.perf_counter()
                walk(games[name], args.seed + r, args.steps)
                step_seconds[name].append((time.perf_counter() - start) / args.steps)
                rule_seconds[name].append((t.seconds - before) / args.steps)
    print(f"{args.rounds} rounds of {args.steps} steps each (median per step):")
    base_step, base_rule = statistics.median(step_seconds["python"]), statistics.median(rule_seconds["python"])
    for name in ("python", "interpreted"):
        st, ru = statistics.median(step_seconds[name]), statistics.median(rule_seconds[name])
        print(
            f"  {name:12s} whole step {st * 1e6:8.1f} us ({st / base_step:4.2f}x)   "
            f"the four mechanics {ru * 1e6:7.1f} us ({ru / base_rule:4.2f}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
