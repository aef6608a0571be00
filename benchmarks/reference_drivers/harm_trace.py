"""Where a seeded random player's health goes on the reference engine: ``harm_trace.py GAME SEED STEPS``.

Plays as ``episode_stats.py`` does (tutorial off, a verb among those with valid actions, then one of its
commands) and measures, rule by rule, the health the player loses: each step rule's ``apply`` and the
action dispatch are wrapped so the player's health is read before and after each. Emitted: health lost
and deaths by the rule in which it happened (a death is put on the rule that took health to 0 or below),
hits taken by rule, the verbs chosen, the player's attacks by target (an enemy, or not), steps with an
enemy engaged, and the last commands before each of the first few deaths. ``benchmarks/fidelity_gaps.py``
runs it beside odyssey's counterpart.
"""

from __future__ import annotations

import random
import sys
from collections import Counter

import refgame
from refgame import AGENT_ID, emit, make_env


def main() -> None:
    game, seed, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    refgame.without_tutorial(game)
    env, agent = make_env(game, seed)
    lost: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    deaths: Counter[str] = Counter()

    def watched(name: str, fn):  # type: ignore[no-untyped-def]
        def run(*args, **kwargs):  # type: ignore[no-untyped-def]
            before = agent.hp
            out = fn(*args, **kwargs)
            after = agent.hp
            if name != "death_and_respawn_step" and after < before:
                lost[name] += before - after
                hits[name] += 1
                if before > 0 >= after:
                    deaths[name] += 1
            return out

        return run

    for rule in env.step_rules:
        rule.apply = watched(rule.name, rule.apply)
    env.action_rule_engine.dispatch = watched("action", env.action_rule_engine.dispatch)
    observations = env.reset()
    rng = random.Random(seed)
    verbs: Counter[str] = Counter()
    attacks: Counter[str] = Counter()
    engaged_steps = hostile_steps = died = 0
    history: list[str] = []
    examples: list[list[str]] = []
    npc_ids = env.world.auxiliary["npc_name_to_id"]
    for _ in range(steps):
        listing = observations[AGENT_ID]["valid_actions"]
        verb = rng.choice([v for v, commands in listing.items() if commands])
        command = rng.choice(listing[verb])
        verbs[verb] += 1
        if verb == "attack":
            name = command[len("attack ") :]
            npc = env.world.npc_instances.get(npc_ids.get(name, ""))
            attacks["enemy" if npc is not None and npc.enemy else "not enemy"] += 1
        here = env.world.area_instances[env.curr_agents_state["area"][AGENT_ID]]
        hostile_steps += any(env.world.npc_instances[n].enemy for n in here.npcs)
        engaged_steps += bool(env.curr_agents_state.get("active_combats", {}).get(AGENT_ID))
        observations, rewards, terminated, _info = env.step({AGENT_ID: command})
        text = observations[AGENT_ID]["text"]
        history.append(f"{command} -> {' | '.join(t for t in text.splitlines() if 'HP' in t or 'died' in t)[:300]}")
        died += int(rewards[AGENT_ID].death)
        if rewards[AGENT_ID].death and len(examples) < 3:
            examples.append(history[-6:])
        if terminated:
            break
    emit(
        {
            "game": game,
            "seed": seed,
            "lost": dict(lost),
            "hits": dict(hits),
            "deaths": dict(deaths),
            "verbs": dict(verbs),
            "attacks": dict(attacks),
            "engaged_steps": engaged_steps,
            "hostile_steps": hostile_steps,
            "died": died,
            "examples": examples,
        }
    )


if __name__ == "__main__":
    main()
