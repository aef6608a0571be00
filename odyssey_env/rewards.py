"""Per-step reward breakdown, derived from the events a step emitted (paper §3.2).

Each component counts *firsts* where the paper does (new areas, new object types crafted, new NPC
types defeated, new object types traded), so that a component summed over an episode equals the
corresponding count. Nothing is rewarded while an agent is in the tutorial.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from odyssey_env.turn import Event

COMPONENTS: tuple[str, ...] = ("quest", "side_quest", "exploration", "craft", "defeat", "trade", "death")
#: The paper's supplementary reward: side quests + areas explored + unique crafts + unique defeats.
SUPPLEMENTARY: tuple[str, ...] = ("side_quest", "exploration", "craft", "defeat")

# event kind -> (component, needs data["first"])
_EVENT_COMPONENT: dict[str, tuple[str, bool]] = {
    "quest_stage_completed": ("quest", False),
    "side_quest_completed": ("side_quest", False),
    "area_entered": ("exploration", True),
    "object_crafted": ("craft", True),
    "npc_defeated": ("defeat", True),
    "object_bought": ("trade", True),
    "object_sold": ("trade", True),
    "agent_died": ("death", False),
}


@dataclass(slots=True)
class RewardBreakdown:
    quest: int = 0
    side_quest: int = 0
    exploration: int = 0
    craft: int = 0
    defeat: int = 0
    trade: int = 0
    death: int = 0

    @property
    def main(self) -> int:
        return self.quest

    @property
    def supplementary(self) -> int:
        return sum(getattr(self, k) for k in SUPPLEMENTARY)

    def to_dict(self) -> dict[str, int]:
        return {
            "quest": self.quest,
            "side_quest": self.side_quest,
            "exploration": self.exploration,
            "craft": self.craft,
            "defeat": self.defeat,
            "trade": self.trade,
            "death": self.death,
        }

    def weighted(self, weights: Mapping[str, float]) -> float:
        if len(weights) == 1:  # the default ({"quest": 1.0}), asked at every step: sum() of one term, unrolled
            for k, w in weights.items():
                return float(0 + getattr(self, k) * w)
        return float(sum(getattr(self, k) * w for k, w in weights.items()))


def breakdown(events: Iterable[Event], agent_id: str) -> RewardBreakdown:
    r = RewardBreakdown()
    for ev in events:
        if ev.agent != agent_id:
            continue
        hit = _EVENT_COMPONENT.get(ev.kind)
        if hit is None:
            continue
        component, needs_first = hit
        if needs_first and not ev.data.get("first"):
            continue
        setattr(r, component, getattr(r, component) + 1)
    return r


def check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    unknown = set(weights) - set(COMPONENTS)
    if unknown:
        raise ValueError(f"unknown reward component(s) {sorted(unknown)}; known: {', '.join(COMPONENTS)}")
    return {k: float(v) for k, v in weights.items()}
