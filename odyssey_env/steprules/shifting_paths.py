"""Shifting paths (optional dynamics): a few paths close with the moon or with noise, then reopen.

A few ordinary paths close for a while during "their" moon phase or when noise piles up at either end,
and open again afterwards. Only paths whose closing, all together, leaves every area reachable are ever
used, and closings are temporary, so the main quest is never blocked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.engine import Engine
from odyssey_env.rules import Fact, StepRule, step_rule
from odyssey_env.steprules.living import is_world_area, tell
from odyssey_env.steprules.patrols import noise_at
from odyssey_env.world import breadth_first

if TYPE_CHECKING:
    from odyssey_env.game import Game
    from odyssey_env.state import WorldState


def moon_phase(minute: int, phases: int = 8, days_per_phase: int = 1) -> int:
    """Phase index (0 = new moon) on the day that contains game minute ``minute``."""
    return (minute // 1440 // days_per_phase) % phases


@step_rule
class ShiftingPaths(StepRule):
    name = "shifting_paths"
    optional = True
    description = (
        "A few paths close for a while during their moon phase or after loud noise at either end; "
        "closing them never cuts any area off."
    )

    @dataclass(frozen=True)
    class Params:
        paths: tuple[tuple[str, str], ...] = ()  # candidate paths; empty: chosen from the graph at start
        max_paths: int = 3
        period: int = 6  # steps between checks
        phases: int = 8  # moon phases in a cycle
        days_per_phase: int = 1
        noise_to_close: int = 5

        def __post_init__(self) -> None:
            if self.phases < 1 or self.days_per_phase < 1:
                raise ValueError("phases and days_per_phase must be at least 1")

    def start(self, engine: Engine) -> None:
        state, rng = engine.state, engine.rng
        if self.settings.paths:
            wanted = [tuple(p) for p in self.settings.paths]
            for a, b in wanted:
                ex = state.areas.get(a) and state.areas[a].exits.get(b)
                if not ex or ex.locked:
                    raise ValueError(f"shifting_paths: {a}-{b} is not an open path of this world")
        else:
            wanted = []
            for name, area in state.areas.items():
                if not is_world_area(area):
                    continue
                for other, ex in area.exits.items():
                    if name < other and not ex.locked and state.spawn not in (name, other):
                        wanted.append((name, other))
            rng.shuffle(wanted)
        chosen: list[tuple[str, str]] = []
        for path in wanted:
            if len(chosen) >= self.settings.max_paths:
                break
            if _connected_without(state, [*chosen, path]):
                chosen.append(path)
            elif self.settings.paths:
                raise ValueError(f"shifting_paths: closing {path[0]}-{path[1]} with the others would cut areas off")
        state.rule_data[self.name] = {
            "paths": [[a, b, rng.randrange(self.settings.phases)] for a, b in chosen],
            "closed": [],
        }

    def apply(self, engine: Engine) -> None:
        state = engine.state
        if state.step % self.settings.period:
            return
        data = state.rule_data[self.name]
        phase = moon_phase(state.minute, self.settings.phases, self.settings.days_per_phase)
        closed: list[list[str]] = data["closed"]
        for a, b, own_phase in data["paths"]:
            if a not in state.areas or b not in state.areas:
                continue
            loud = max(noise_at(state, a), noise_at(state, b)) >= self.settings.noise_to_close
            shut = phase == own_phase or loud
            is_closed = [a, b] in closed
            if shut and not is_closed:
                for x, y in ((a, b), (b, a)):  # stone, not a lock: no pick opens it
                    state.areas[x].exits[y].locked, state.areas[x].exits[y].pickable = True, False
                closed.append([a, b])
                why = "as the moon turns" if phase == own_phase else "shaken by the din"
                tell(engine, a, f"With a grinding of stone, the way to {b} shuts {why}.")
                tell(engine, b, f"With a grinding of stone, the way to {a} shuts {why}.")
                engine.emit("path_shifted", None, a=a, b=b, closed=True)
            elif not shut and is_closed:
                for x, y in ((a, b), (b, a)):  # only ever-open paths shift, so nothing else is restored
                    state.areas[x].exits[y].locked, state.areas[x].exits[y].pickable = False, True
                closed.remove([a, b])
                tell(engine, a, f"The way to {b} is open again.")
                tell(engine, b, f"The way to {a} is open again.")
                engine.emit("path_shifted", None, a=a, b=b, closed=False)

    def facts(self, game: Game) -> Iterable[Fact]:
        yield Fact(
            "world",
            "Why might a path that was open yesterday be closed today?",
            "some paths close during their moon phase or after loud noise nearby, then reopen",
            ("I broke it", "a merchant bought it", "paths never change"),
        )


def _connected_without(state: WorldState, removed: list[tuple[str, str]]) -> bool:
    """Whether every world area stays reachable from the spawn with ``removed`` paths shut.

    Locked paths with keys count as passable: they are the designed way in, which a key opens.
    """
    cut = {(a, b) for a, b in removed} | {(b, a) for a, b in removed}
    seen = breadth_first(state, state.spawn, lambda here, there, _: (here, there) not in cut)
    return all(n in seen for n, a in state.areas.items() if is_world_area(a))
