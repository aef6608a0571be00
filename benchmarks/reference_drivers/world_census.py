"""The reference's world at reset, census by area: ``world_census.py GAME SEED``.

Emitted: the spawn area and, per area, its level, its neighbours and its NPCs (id, enemy flag, role, hp,
attack): what a player meets, to compare with odyssey's generated world of the same game.
"""

from __future__ import annotations

import sys

import refgame
from refgame import AGENT_ID, emit, make_env


def main() -> None:
    game, seed = sys.argv[1], int(sys.argv[2])
    refgame.without_tutorial(game)
    env, _agent = make_env(game, seed)
    env.reset()
    world = env.world
    areas = {}
    for area_id, area in world.area_instances.items():
        areas[area_id] = {
            "level": area.level,
            "neighbors": sorted(area.neighbors),
            "npcs": [
                {
                    "id": n,
                    "enemy": bool(world.npc_instances[n].enemy),
                    "role": getattr(world.npc_instances[n], "role", None),
                    "hp": world.npc_instances[n].hp,
                    "attack": world.npc_instances[n].attack_power,
                }
                for n in area.npcs
            ],
        }
    emit({"spawn": env.curr_agents_state["area"][AGENT_ID], "areas": areas})


if __name__ == "__main__":
    main()
