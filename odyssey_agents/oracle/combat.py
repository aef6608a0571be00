"""Fighting with full knowledge of the enemies' rhythm, and forecasting fights before starting them.

The engine's combat is deterministic once engaged (``odyssey_env.verbs.combat``,
``odyssey_env.steprules.combat``): in every step the enemy's stance is
``pattern[stance_index % len(pattern)]``, my blow is resolved against that stance first, then the
enemy acts on the same stance. So a policy can be simulated exactly, and the oracle picks, per fight,
the fastest of a few policies that still leaves it healthy:

* *safe*: strike on ``wait`` stances, guard on ``attack`` stances (a guarded blow does a tenth),
  never waste a blow on ``defend`` (waiting instead restores stamina);
* *bold*: also trade blows on ``attack`` stances;
* *bold until hurt*: bold while health is high, then safe.

A killing blow is always taken, since a dead enemy does not strike back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from odyssey_env.steprules.clock import DayNight
from odyssey_env.steprules.day_cycle import DayCycle
from odyssey_env.verbs.combat import STAMINA_COST, STAMINA_FLOOR, blow_damage
from odyssey_env.worldgen import npc_stats

if TYPE_CHECKING:
    from odyssey_agents.oracle.view import View
    from odyssey_env.state import Npc

MAX_SIM_STEPS = 400
POLICIES = ("safe", "bold", "hurt")


@dataclass(frozen=True)
class Foe:
    handle: str
    hp: int
    attack: int
    defense: int
    pattern: tuple[str, ...]
    index: int

    def stance(self, offset: int = 0) -> str:
        if not self.pattern:
            return "wait"
        return self.pattern[(self.index + offset) % len(self.pattern)]


@dataclass(frozen=True)
class Forecast:
    """How a fight would end under the best policy: who wins, my health left, steps, and the policy."""

    won: bool
    hp_left: int
    steps: int
    policy: str
    lost: int = 0  # health the fight takes


def foe_of(view: View, npc: Npc) -> Foe:
    return Foe(npc.handle, npc.hp, npc.attack, npc.defense, tuple(view.game.npcs[npc.type].pattern), npc.stance_index)


def foe_of_type(view: View, type_name: str) -> Foe:
    """A fresh enemy of a type as it would be spawned at its own level (a fight to come: the quest
    may not have put it in the world yet)."""
    t = view.game.npcs[type_name]
    hp, attack = npc_stats(t, t.level)
    return Foe(type_name, hp, attack, t.defense, tuple(t.pattern), 0)


def my_blow(attack: int, stamina: float, foe: Foe) -> int:
    return blow_damage(round(attack * stamina), foe.defense, guarded=foe.stance() == "defend")


def their_blow(foe: Foe, modifier: float, defense: int, defending: bool) -> int:
    return blow_damage(round(foe.attack * modifier), defense, guarded=defending)


class Clock:
    """The enemy-attack modifier of future steps, from the rules that set it: the day/night
    rhythm and the per-episode danger hours (when the game has them); otherwise today's value."""

    def __init__(self, view: View):
        engine = view.engine
        self.minute = engine.state.minute
        self.per_step = view.game.spec.game.minutes_per_step
        # the hour's rhythm: the base day_night, or the day in periods (day_cycle) in its place
        rhythm = engine.rules.step_rule("day_night") or engine.rules.step_rule("day_cycle")
        self.hours = rhythm if isinstance(rhythm, DayNight | DayCycle) else None
        danger = engine.rules.step_rule("danger_hours")
        hours = engine.state.rule_data.get("danger_hours", {}).get("hours", ()) if danger is not None else ()
        self.danger_hours = frozenset(hours)
        self.danger = getattr(getattr(danger, "settings", None), "attack", 1.0)
        self.now = engine.state.modifiers.get("enemy_attack", 1.0)

    def modifier(self, k: int) -> float:
        """Modifier during the ``k``-th step from now (k = 1 is the step about to be taken)."""
        if self.hours is None and not self.danger_hours:
            return self.now
        hour = (self.minute + k * self.per_step) // 60 % 24
        value = 1.0 if self.hours is None else self.hours.attack_at(hour)
        if hour in self.danger_hours:
            value *= self.danger
        return value


class Steady:
    """A clock that keeps one modifier: forecasts for costing fights ahead of time use the next
    step's value throughout, so that they depend on the state only through that number (and can be
    cached exactly across steps)."""

    def __init__(self, value: float):
        self.value = value

    def modifier(self, k: int) -> float:
        return self.value


def choose(
    policy: str, hp: int, max_hp: int, attack: int, defense: int, stamina: float, foes: list[Foe], modifier: float
) -> tuple[str, Foe | None]:
    """One step of a policy: ``("attack", foe)``, ``("defend", None)`` or ``("wait", None)``."""
    blows = [my_blow(attack, stamina, f) for f in foes]
    killable = [f for f, b in zip(foes, blows, strict=True) if b >= f.hp]
    if killable:
        # Finish the one that would hit hardest this step.
        return "attack", max(killable, key=lambda f: (f.stance() == "attack", f.attack))
    threats = [f for f in foes if f.stance() == "attack"]
    open_ = [f for f in foes if f.stance() != "defend"]
    if not threats:
        if open_:
            return "attack", min(open_, key=lambda f: f.hp)
        return "wait", None
    bold = policy == "bold" or (policy == "hurt" and hp > max_hp * 0.6)
    if bold and open_:
        incoming = sum(their_blow(f, modifier, defense, False) for f in threats)
        if incoming < hp:
            return "attack", min(open_, key=lambda f: f.hp)
    return "defend", None


def simulate(
    policy: str,
    hp: int,
    max_hp: int,
    attack: int,
    defense: int,
    stamina: float,
    foes: list[Foe],
    clock: Clock | Steady,
    opening: bool = False,
) -> Forecast:
    """Play a fight out under one policy (exactly the engine's arithmetic) and report how it ends.

    With ``opening``, the fight is one I start: an enemy that is not fighting yet does nothing
    until struck, so the first step is my blow on ``foes[0]``, whatever its stance.
    """
    live = list(foes)
    steps = 0
    start = hp
    target: Foe | None
    while live and hp > 0 and steps < MAX_SIM_STEPS:
        steps += 1
        modifier = clock.modifier(steps)
        if opening and steps == 1:
            action, target = "attack", live[0]
        else:
            action, target = choose(policy, hp, max_hp, attack, defense, stamina, live, modifier)
        defending = False
        if action == "attack":
            assert target is not None
            i = live.index(target)
            left = target.hp - my_blow(attack, stamina, target)
            stamina = max(STAMINA_FLOOR, stamina - STAMINA_COST)
            if left <= 0:
                del live[i]
            else:
                live[i] = Foe(target.handle, left, target.attack, target.defense, target.pattern, target.index)
        elif action == "defend":
            defending = True
            stamina += (1.0 - stamina) * 0.5
        else:
            stamina = 1.0
        for i, f in enumerate(live):
            if f.stance() == "attack":
                hp -= their_blow(f, modifier, defense, defending)
            live[i] = Foe(f.handle, f.hp, f.attack, f.defense, f.pattern, f.index + 1)
    return Forecast(not live and hp > 0, max(hp, 0), steps, policy, start - max(hp, 0))


def forecast(
    view: View,
    foes: list[Foe],
    *,
    attack: int | None = None,
    defense: int | None = None,
    hp: int | None = None,
    margin: float = 0.3,
    clock: Clock | Steady | None = None,
    opening: bool = False,
) -> Forecast:
    """The best policy's outcome: the fastest win that keeps ``margin`` of my health, else the safest.

    ``opening``: I start the fight by striking ``foes[0]`` (see :func:`simulate`).
    """
    agent = view.agent
    clock = Clock(view) if clock is None else clock
    attack = agent.attack if attack is None else attack
    defense = agent.defense if defense is None else defense
    hp = agent.hp if hp is None else hp
    results = [simulate(p, hp, agent.max_hp, attack, defense, agent.stamina, foes, clock, opening) for p in POLICIES]
    keep = max(1, int(agent.max_hp * margin))
    good = [r for r in results if r.won and r.hp_left >= keep]
    if good:
        return min(good, key=lambda r: (r.steps, -r.hp_left))
    return max(results, key=lambda r: (r.won, r.hp_left, -r.steps))


def fight_step(view: View) -> tuple[str, str]:
    """The command for this step of an ongoing fight, and why."""
    agent = view.agent
    foes = [foe_of(view, n) for n in view.engaged_foes()]
    best = forecast(view, foes)
    clock = Clock(view)
    action, target = choose(
        best.policy, agent.hp, agent.max_hp, agent.attack, agent.defense, agent.stamina, foes, clock.modifier(1)
    )
    why = f"fight ({best.policy}; forecast {'win' if best.won else 'loss'}, hp {best.hp_left}, {best.steps} steps)"
    if action == "attack":
        assert target is not None
        return f"attack {target.handle}", why
    return action, why


def no_blow_coming(view: View) -> bool:
    """Whether no engaged enemy strikes this step."""
    return all(foe_of(view, n).stance() != "attack" for n in view.engaged_foes())
