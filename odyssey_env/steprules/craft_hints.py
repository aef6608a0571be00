"""New-craftable hints: when I first carry everything a recipe needs, I notice it once."""

from __future__ import annotations

from odyssey_env.engine import Engine
from odyssey_env.rules import StepRule, step_rule
from odyssey_env.world import carried_count


@step_rule
class CraftHints(StepRule):
    name = "craft_hints"
    description = "On acquiring a new kind of object, mention recipes whose ingredients I now carry."

    def apply(self, engine: Engine) -> None:
        if "object_acquired" not in engine.kinds:
            return
        game, state = engine.game, engine.state
        for ev in engine.events:
            if ev.kind != "object_acquired" or not ev.data.get("first"):
                continue
            assert ev.agent is not None, "an object is acquired by an agent"
            agent = state.agents[ev.agent]
            told = state.rule_data.setdefault(self.name, {}).setdefault(agent.id, [])
            for product in game.used_in.get(ev.data["object"], ()):
                if product in told:
                    continue
                recipe = game.objects[product].recipe
                assert recipe is not None, "used_in lists only objects with a recipe"
                if all(carried_count(game, state, agent, i) >= k for i, k in recipe.needs().items()):
                    told.append(product)
                    at = f" at a {' and a '.join(recipe.stations)}" if recipe.stations else ""
                    engine.say(agent.id, f"I now carry what it takes to craft {product}{at}.")
