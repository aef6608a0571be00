"""Where a random player's health goes, on both engines: ``python benchmarks/harm_trace.py GAME [--seeds 20]``.

The tracer behind docs/fidelity.md's account of the death figures of ``benchmarks/fidelity_games.py``. The same
seeded random player (a verb among those with valid actions, then one of its commands; tutorial off) plays
``--seeds`` x ``--steps`` on odyssey and on the reference (``reference_drivers/harm_trace.py``, in its
subprocess), and each side reports, per episode on average: health lost and hits taken by the step rule that
dealt them (the enemy's turn in a fight, ambushes), deaths by that rule, the player's attacks (on enemies and
on others), steps with an enemy engaged, and steps with an enemy in the player's area.

``--what-if`` replays odyssey with one or more of the reference's behaviours patched into this process's
engine (never into a game or a saved run), to measure how much of a gap each explains:

* ``flee``: I may walk away from a fight (the reference ends it; odyssey bars the exits);
* ``ambush``: the reference's ambush: every idle enemy here rolls (0.10 to 0.30 by area level, 0.025 while I
  fight another, the hour's odds added or set), strikes for half its attack less my defense, and does not
  engage (odyssey rolls once per area, 0.05 to 0.15, and the ambusher engages);
* ``respawn``: the reference's enemy waves: every 35 to 50 steps 1 to 3 areas without an enemy (never the
  spawn) get a random common enemy at their level, watched or not (Remnant's binding, odyssey's quiet refill:
  only an area emptied 80 steps before, while nobody is there, never beyond the world's starting number; Mark
  binds the reference's waves since format 9 of the import);
* ``patrol``: the reference's patrols: each free common enemy or travelling merchant moves with 0.0625 a step
  to an open neighbour holding fewer non-unique NPCs than its level, the spawn included (odyssey's: 0.3 every
  12 steps, never into the spawn, at most a level down; Mark binds the reference's since format 9).

The what-ifs apply only to games whose reference has the rule (respawn, patrol: Remnant and Mark).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference

WHAT_IFS = ("flee", "ambush", "respawn", "patrol")


def _patch(what: set[str]) -> None:
    """Patch the reference's behaviours named in ``what`` into odyssey's rule classes, in this process only."""
    from odyssey_env.steprules import combat, patrols, spawning
    from odyssey_env.steprules.living import FIXED_ORIGINS, is_world_area, move_npc
    from odyssey_env.verbs import movement
    from odyssey_env.worldgen import spawn_npc

    if "flee" in what:
        enter = movement.Enter.apply
        movement.in_combat = lambda turn: None

        def leave(self: Any, turn: Any, target: str) -> None:
            before = turn.agent.area
            enter(self, turn, target)
            if turn.agent.area != before:  # the fight stays behind: its enemy is free again
                for handle in turn.state.areas[before].npcs:
                    if turn.state.npcs[handle].engaged == turn.agent.id:
                        turn.state.npcs[handle].engaged = None

        movement.Enter.apply = leave  # type: ignore[method-assign]

    if "ambush" in what:

        def ambush(self: Any, engine: Any) -> None:
            state, kinds, mods = engine.state, engine.game.npcs, engine.state.modifiers
            top = max(a.level for a in state.areas.values())
            for agent in state.agents.values():
                if agent.in_tutorial:
                    continue
                area = state.areas[agent.area]
                for handle in list(area.npcs):
                    npc = state.npcs[handle]
                    if not kinds[npc.type].hostile or npc.engaged == agent.id:
                        continue
                    p = 0.025 if agent.combat is not None else 0.1 + (area.level - 1) * 0.2 / max(1, top - 1)
                    p = mods["ambush_set"] if "ambush_set" in mods else (p + mods.get("ambush_add", 0.0))
                    if engine.rng.random() > p * mods.get("ambush", 1.0):
                        continue
                    damage = int(max(0, math.floor(npc.attack / 2) - agent.defense) * mods.get("enemy_attack", 1.0))
                    agent.hp -= int(damage * 0.1) if agent.defending else damage
                    engine.emit("agent_ambushed", agent.id, npc=handle, type=npc.type, damage=damage)

        combat.Ambush.apply = ambush  # type: ignore[method-assign]

    if "respawn" in what:
        food = spawning.Respawn._food

        def waves(self: Any, engine: Any) -> None:
            state, settings = engine.state, self.settings
            data = state.rule_data[self.name]
            data.setdefault("next_wave", state.step + engine.rng.randint(35, 50))
            if settings.food_chance and not state.step % settings.food_period:
                food(self, engine)
            if not settings.enemy_chance or state.step < data["next_wave"]:
                return
            data["next_wave"] = state.step + engine.rng.randint(35, 50)
            kinds = [t for t in engine.game.spec.npcs if t.common_enemy]
            free = [
                name
                for name, area in state.areas.items()
                if name != state.spawn
                and is_world_area(area)
                and not any(engine.game.npcs[state.npcs[h].type].hostile for h in area.npcs)
            ]
            if not free or not kinds:
                return
            engine.rng.shuffle(free)
            for name in free[: engine.rng.randint(1, min(3, len(free)))]:
                t = kinds[engine.rng.randrange(len(kinds))]
                npc = spawn_npc(engine.game, state, t, name, origin="respawn")
                engine.emit("npc_respawned", None, npc=npc.handle, type=npc.type, area=name)

        spawning.Respawn.apply = waves  # type: ignore[method-assign]

    if "patrol" in what:

        def patrol(self: Any, engine: Any) -> None:
            state, kinds = engine.state, engine.game.npcs
            moves = []
            for area in state.areas.values():
                for handle in list(area.npcs):
                    npc = state.npcs[handle]
                    t = kinds[npc.type]
                    if npc.engaged is not None or npc.origin in FIXED_ORIGINS or t.unique:
                        continue
                    if not (t.hostile or t.merchant) or engine.rng.random() > 0.0625:
                        continue
                    options = [
                        name
                        for name, way in area.exits.items()
                        if not way.locked
                        and is_world_area(state.areas[name])
                        and sum(not kinds[state.npcs[h].type].unique for h in state.areas[name].npcs)
                        < state.areas[name].level
                    ]
                    if options:
                        moves.append((npc, options[engine.rng.randrange(len(options))]))
            for npc, to in moves:
                frm = npc.area
                move_npc(engine, npc, to)
                engine.emit("npc_wandered", None, npc=npc.handle, type=npc.type, frm=frm, to=to)

        patrols.WanderingPatrols.apply = patrol  # type: ignore[method-assign]


def ours(game: str, seed: int, steps: int) -> dict[str, Any]:
    """One episode on odyssey, measured as the reference's driver measures it."""
    from odyssey_env.env import OdysseyEnv

    env = OdysseyEnv(game, tutorial=False, valid_actions=True)
    _obs, info = env.reset(seed=seed)
    engine = env.engine
    assert engine is not None  # reset made it
    state, kinds = engine.state, engine.game.npcs
    player = state.agents["player"]
    lost: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    deaths: Counter[str] = Counter()

    def watched(name: str, fn: Callable[[Any], None]) -> Callable[[Any], None]:
        def run(eng: Any) -> None:
            before = player.hp
            fn(eng)
            if player.hp < before:
                lost[name] += before - player.hp
                hits[name] += 1
                if before > 0 >= player.hp:
                    deaths[name] += 1

        return run

    for rule in engine.rules.steps:
        if rule.name != "death":
            rule.apply = watched(rule.name, rule.apply)  # type: ignore[method-assign,assignment]
    rng = random.Random(seed)
    verbs: Counter[str] = Counter()
    attacks: Counter[str] = Counter()
    engaged = hostile = died = 0
    try:
        for _ in range(steps):
            listing = info["valid_actions"]
            verb = rng.choice([v for v, c in listing.items() if c])
            command = rng.choice(listing[verb])
            verbs[verb] += 1
            if verb == "attack":
                target = state.npcs.get(command[len("attack ") :])
                attacks["enemy" if target is not None and kinds[target.type].hostile else "not enemy"] += 1
            engaged += player.combat is not None
            hostile += any(kinds[state.npcs[h].type].hostile for h in state.areas[player.area].npcs)
            _obs, _r, terminated, _t, info = env.step(command)
            died += int(info["reward_breakdown"].get("death", 0))
            if terminated:
                break
    finally:
        for rule in engine.rules.steps:  # the rule objects are the game's, shared by later envs
            rule.__dict__.pop("apply", None)
    return {
        "lost": dict(lost),
        "hits": dict(hits),
        "deaths": dict(deaths),
        "verbs": dict(verbs),
        "attacks": dict(attacks),
        "engaged_steps": engaged,
        "hostile_steps": hostile,
        "died": died,
    }


def theirs(game: str, seed: int, steps: int) -> dict[str, Any]:
    return reference.run_json(reference.DRIVERS / "harm_trace.py", [game, str(seed), str(steps)])  # type: ignore[return-value]


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Means per episode; ``deaths`` also in total with its standard error."""
    out: dict[str, Any] = {}
    for key in ("lost", "hits", "deaths", "attacks"):
        total: Counter[str] = Counter()
        for r in runs:
            total.update(r[key])
        out[key] = {k: round(v / len(runs), 2) for k, v in total.most_common()}
    per = [sum(r["deaths"].values()) for r in runs]
    se = statistics.stdev(per) / math.sqrt(len(per)) if len(per) > 1 else 0.0
    out["death_total"] = f"{statistics.fmean(per):.2f} +- {se:.2f}"
    for key in ("engaged_steps", "hostile_steps"):
        out[key] = round(statistics.fmean(r[key] for r in runs), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("game")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--what-if", nargs="*", default=[], choices=WHAT_IFS, help="odyssey with these reference behaviours")
    p.add_argument("--no-reference", action="store_true", help="odyssey's side only")
    args = p.parse_args(argv)
    _patch(set(args.what_if))
    label = "odyssey" + (f" + {', '.join(args.what_if)}" if args.what_if else "")
    rows = {label: summary([ours(args.game, s, args.steps) for s in range(args.seeds)])}
    if not args.no_reference:
        rows["reference"] = summary([theirs(args.game, s, args.steps) for s in range(args.seeds)])
    for name, row in rows.items():
        print(f"{args.game}, {name} (mean of {args.seeds} seeds x {args.steps} steps)")
        for key, value in row.items():
            print(f"  {key:14s} {json.dumps(value)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
