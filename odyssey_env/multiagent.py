"""The PettingZoo face of the engine: several agents in one shared world.

    import odyssey_env

    env = odyssey_env.parallel_env("quiet_bell", agents=3)          # PettingZoo ParallelEnv
    observations, infos = env.reset(seed=0)
    observations, rewards, terminations, truncations, infos = env.step(
        {agent: "wait" for agent in env.agents})

    aec = odyssey_env.aec_env("quiet_bell", agents=["ada", "bo"])    # PettingZoo AECEnv

A step of the shared world (paper §3.2, and the reference's multi-agent mode): every live agent's
command is applied in the fixed order of ``possible_agents`` (later agents see what earlier ones
did), then the step rules run once. Each agent has its own quest progress, tutorial, feedback,
reward breakdown and observation; agents in the same area see each other ("I see ... nearby.").

When the episode ends is a choice (``episode_end``):

* ``"first"`` (default, as in the reference): when one agent completes the main quest, the episode
  ends for everyone: every live agent is terminated.
* ``"each"``: an agent that completes its main quest is terminated and leaves the world (what it
  holds and wears stays on the ground where it stood); the others play on.

What the world holds is a choice too (``supplies``): ``"shared"`` (default, as in the reference) is
the world as the game's author placed it for one player, so agents compete for scarce materials
and one may be left unable to finish; ``"per_agent"`` multiplies the placed supplies (portable
objects listed in areas, merchants' stock) by the number of agents. A stage's boss that another
agent defeated comes back for each agent that still has to defeat it, whichever is chosen.

``max_cycles`` truncates every live agent after that many steps (PettingZoo's convention; there is
no limit by default, as in the Gymnasium face). PettingZoo is an optional dependency
(``pip install "odyssey-gym[multiagent]"``); the engine is the same one the Gymnasium face drives, and
the arguments, spaces, observations, infos and reset options are the ones it has
(:mod:`odyssey_env.face`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from odyssey_env.engine import Engine
from odyssey_env.extras import missing_extra
from odyssey_env.face import Face, action_space, observation_space, observation_text
from odyssey_env.game import Game
from odyssey_env.quests import main_quest

try:
    from pettingzoo import ParallelEnv
    from pettingzoo.utils.conversions import parallel_to_aec_wrapper
    from pettingzoo.utils.wrappers import OrderEnforcingWrapper
except ModuleNotFoundError as exc:  # pragma: no cover - exercised in a venv without the extra
    if exc.name != "pettingzoo" and not str(exc.name).startswith("pettingzoo."):
        raise
    raise missing_extra("the PettingZoo face", "multiagent", "pettingzoo") from None

__all__ = [
    "EPISODE_ENDS",
    "SUPPLIES",
    "OdysseyAECEnv",
    "OdysseyParallelEnv",
    "TextObservation",
    "aec_env",
    "agent_names",
    "env",
    "parallel_env",
]

#: Values of ``episode_end`` and ``supplies``: see the module docstring.
EPISODE_ENDS: tuple[str, ...] = ("first", "each")
SUPPLIES: tuple[str, ...] = ("shared", "per_agent")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,31}")


class TextObservation(str):
    """An observation: a plain ``str`` that also carries the ``dtype`` of its ``Text`` space.

    PettingZoo's API test reads ``observation.dtype`` and compares it with the space's (it assumes
    NumPy observations); a bare ``str`` has none. Everything else sees an ordinary string.
    """

    __slots__ = ()
    dtype = np.dtype(str)


def agent_names(game: Game, agents: int | Sequence[str]) -> tuple[str, ...]:
    """The agent ids for ``agents``: a count gives ``player_0 ... player_{n-1}``; names are checked.

    Names are shown to the other agents ("I see goblin_2, ada nearby."), so they must be plain
    identifiers that cannot be mistaken for an NPC or object of the game.
    """
    if isinstance(agents, bool) or not isinstance(agents, int | Sequence) or isinstance(agents, str | bytes):
        raise TypeError(f"agents must be a number of agents or a list of names, got {agents!r}")
    if isinstance(agents, int):
        if agents < 1:
            raise ValueError(f"agents must be at least 1, got {agents}")
        return tuple(f"player_{i}" for i in range(agents))
    names = tuple(agents)
    if not names:
        raise ValueError("agents must name at least one agent")
    taken = set(game.objects) | set(game.npcs)
    seen: set[str] = set()
    for name in names:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(
                f"agent name {name!r} must be a letter followed by up to 31 letters, digits or underscores"
            )
        if name in seen:
            raise ValueError(f"agent name {name!r} is given twice")
        seen.add(name)
        base = re.sub(r"_\d+$", "", name)
        if name in taken or base in taken:
            raise ValueError(f"agent name {name!r} could be mistaken for the game's {base!r}; choose another")
    return names


class OdysseyParallelEnv(Face, ParallelEnv[str, str, str | None]):  # None: PettingZoo's AEC wrapper may pass it
    """Several agents in one world of an AgentOdyssey game, all acting at every step.

    Spaces are those of the Gymnasium face (``Text`` observations and commands, one space object per
    agent); ``infos[agent]`` has the same keys as the Gymnasium ``info`` (reward breakdown, events,
    invalid/failed flags, quest progress, valid actions when asked for). Rewards are each agent's
    weighted reward components. See the module docstring for the step and the episode end.

    ``info_keys`` limits the infos as in the Gymnasium face, and ``reset(options=...)`` takes the same
    options (``tutorial``, ``valid_actions``, ``state``; anything else is an error naming it).

    Beyond PettingZoo: ``valid_actions(agent)``, ``verbs()``, ``save_state()``/``load_state()``
    (exact continuation, JSON-ready), ``retire(agent)`` (an agent leaves the world, truncated), and
    pickling.
    """

    # not a ClassVar: PettingZoo declares it per instance, and each env names its game in it (__init__)
    metadata: dict[str, Any] = {  # noqa: RUF012
        "render_modes": ["ansi", "human"],
        "name": "odyssey_v0",
        "is_parallelizable": True,
        "render_fps": 4,
    }

    def __init__(
        self,
        game: str | Game = "mossfall",
        *,
        agents: int | Sequence[str] = 2,
        episode_end: str = "first",
        supplies: str = "shared",
        max_cycles: int | None = None,
        valid_actions: bool = False,
        tutorial: bool = False,
        expansion: bool = True,
        reward_weights: Mapping[str, float] | None = None,
        render_mode: str | None = None,
        trust: bool = False,
        provenance: bool = False,
        info_keys: Iterable[str] | None = None,
    ):
        if episode_end not in EPISODE_ENDS:
            raise ValueError(f"episode_end must be one of {', '.join(EPISODE_ENDS)}, got {episode_end!r}")
        if supplies not in SUPPLIES:
            raise ValueError(f"supplies must be one of {', '.join(SUPPLIES)}, got {supplies!r}")
        if max_cycles is not None and (
            isinstance(max_cycles, bool) or not isinstance(max_cycles, int) or max_cycles < 1
        ):
            raise ValueError(f"max_cycles must be a positive integer or None, got {max_cycles!r}")
        super().__init__(
            game,
            valid_actions=valid_actions,
            tutorial=tutorial,
            expansion=expansion,
            reward_weights=reward_weights,
            render_mode=render_mode,
            trust=trust,
            provenance=provenance,
            info_keys=info_keys,
        )
        self.possible_agents: list[str] = list(agent_names(self.game, agents))
        self._agent_ids = tuple(self.possible_agents)
        self.agents: list[str] = []
        self._kwargs.update(
            agents=list(self.possible_agents), episode_end=episode_end, supplies=supplies, max_cycles=max_cycles
        )
        self.metadata = {**type(self).metadata, "name": f"odyssey_{self.game.name}_v0"}
        self.episode_end = episode_end
        self.supplies = self._supplies = supplies
        self.max_cycles = max_cycles
        self.observation_spaces = {a: observation_space() for a in self.possible_agents}
        self.action_spaces = {a: action_space() for a in self.possible_agents}
        self.np_random, self.np_random_seed = seeding.np_random()
        self._last_obs: dict[str, str] = {}

    # ------------------------------------------------------------------ PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space[str]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[str | None]:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        """Start an episode. ``options``: ``tutorial`` (bool), ``valid_actions`` (bool), ``state``
        (continue what :meth:`save_state` returned; no seed or tutorial with it). Any other option is
        an error that names it."""
        saved = self._begin(seed, options)
        if saved is not None:
            observations = self.load_state(saved)
        else:
            self.agents = list(self.possible_agents)
            self._last_obs = {}
            observations = {a: self._observe(a) for a in self.agents}
        return observations, {a: self._info(a, None) for a in self.agents}

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[dict[str, str], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        """Apply one command per live agent, in ``possible_agents`` order, then the step rules once."""
        engine = self._engine()
        if not self.agents:
            raise RuntimeError("every agent is done: call reset() to start a new episode")
        live = self.agents
        stray = [a for a in actions if a not in live]
        if stray:
            raise ValueError(
                f"actions for agents that are not playing: {', '.join(map(str, stray))} "
                f"(live agents: {', '.join(live)})"
            )
        missing = [a for a in live if a not in actions]
        if missing:
            raise ValueError(f"step() needs one command per live agent; missing: {', '.join(missing)}")
        outcomes = engine.step({a: actions[a] for a in live})  # live keeps possible_agents order
        state = engine.state
        observations: dict[str, str] = {}
        rewards: dict[str, float] = {}
        terminations: dict[str, bool] = {}
        truncations: dict[str, bool] = {}
        infos: dict[str, dict[str, Any]] = {}
        truncated = self.max_cycles is not None and state.step >= self.max_cycles
        for a in live:
            out = outcomes[a]
            observations[a] = self._observe(a)
            rewards[a] = out.reward.weighted(self.reward_weights)
            infos[a] = self._info(a, out)
            terminations[a] = state.done if self.episode_end == "first" else _quest_complete(engine, a)
            truncations[a] = truncated and not terminations[a]
        self.agents = [a for a in live if not (terminations[a] or truncations[a])]
        if self.episode_end == "each":
            for a in live:
                if terminations[a] and a in state.agents:
                    engine.remove_agent(a)
        return observations, rewards, terminations, truncations, infos

    def render(self) -> str | None:
        text = "\n\n".join(
            f"=== {a} ===\n{self._last_obs.get(a, '')}" for a in self.possible_agents if a in self._last_obs
        )
        if self.render_mode == "ansi":
            return text
        if self.render_mode == "human":
            print(text)
        return None

    def close(self) -> None:
        """Nothing to release: the engine holds no files, processes or windows."""

    # ------------------------------------------------------------------ extras
    def valid_actions(self, agent: str) -> dict[str, list[str]]:
        """Commands ``agent`` could apply now, grouped by verb; each executes without failing."""
        engine = self._engine()
        if agent not in self.agents:
            raise ValueError(f"{agent!r} is not playing (live agents: {', '.join(self.agents) or 'none'})")
        return engine.valid_actions(agent)

    def retire(self, agent: str) -> None:
        """Take ``agent`` out of the episode now, as a truncation: it leaves the world (what it holds and
        wears stays on the ground where it stood) and the others play on. The runner uses this when an
        agent's step budget is spent or the agent asks to stop."""
        engine = self._engine()
        if agent not in self.agents:
            raise ValueError(f"{agent!r} is not playing (live agents: {', '.join(self.agents) or 'none'})")
        self.agents = [a for a in self.agents if a != agent]
        engine.remove_agent(agent)

    def save_state(self) -> dict[str, Any]:
        """The full episode state as JSON-ready data; ``load_state`` continues it exactly."""
        return self._save_engine(agents=list(self.agents), possible_agents=list(self.possible_agents))

    def load_state(self, data: Mapping[str, Any]) -> dict[str, str]:
        """Restore a saved state (into this env, which may be fresh) and return the live agents' observations."""
        if list(data.get("possible_agents", ())) != self.possible_agents:
            raise ValueError(
                f"state is for agents {data.get('possible_agents')!r}, this env has {self.possible_agents!r}"
            )
        self._load_engine(data)
        self.agents = [a for a in data["agents"] if a in self.possible_agents]
        self._last_obs = {}
        return {a: self._observe(a) for a in self.agents}

    def info(self, agent: str) -> dict[str, Any]:
        """``agent``'s info as after a reset (no step outcome): progress, area, time, valid actions."""
        return self._info(agent, None)

    # ------------------------------------------------------------------ internals
    def _seed(self, seed: int | None) -> None:
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)

    def _observe(self, agent: str) -> str:
        text = TextObservation(observation_text(self._engine(), agent))
        self._last_obs[agent] = text
        return text


class OdysseyAECEnv(parallel_to_aec_wrapper[str, str, str]):
    """The AEC view of :class:`OdysseyParallelEnv` (PettingZoo's converter, plus saving and pickling).

    Agents choose one after another in ``possible_agents`` order; the shared world steps when the last
    live agent has chosen, so every agent of a cycle acts on the same state, exactly as in the
    parallel env.
    """

    env: OdysseyParallelEnv

    def __init__(self, parallel: OdysseyParallelEnv):
        super().__init__(parallel)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """As the parallel env's reset; ``options={"state": saved}`` takes a state of either env, an AEC
        state with its cycle in progress (the commands chosen so far)."""
        super().reset(seed=seed, options=options)  # type: ignore[no-untyped-call]  # PettingZoo leaves it unannotated
        saved = (options or {}).get("state")
        if isinstance(saved, Mapping) and "aec" in saved:
            self._restore_cycle(saved["aec"])

    def valid_actions(self, agent: str | None = None) -> dict[str, list[str]]:
        """Commands the agent (the one to act, by default) could apply now, grouped by verb."""
        return self.env.valid_actions(self.agent_selection if agent is None else agent)

    def verbs(self) -> list[str]:
        return self.env.verbs()

    def save_state(self) -> dict[str, Any]:
        """The world and the cycle in progress (commands chosen so far), as JSON-ready data."""
        data = self.env.save_state()
        data["aec"] = {
            "agents": list(self.agents),
            "live": list(self._live_agents),
            "actions": dict(self._actions),
            "order": list(self._agent_selector.agent_order),
            "selection": self.agent_selection,
            "index": self._agent_selector._current_agent,
            "observations": dict(self._observations),
            "rewards": dict(self.rewards),
            "cumulative": dict(self._cumulative_rewards),
            "terminations": dict(self.terminations),
            "truncations": dict(self.truncations),
            "infos": dict(self.infos),
        }
        return data

    def load_state(self, data: Mapping[str, Any]) -> None:
        """Restore what :meth:`save_state` returned (into this env, which may be fresh)."""
        if "aec" not in data:
            raise ValueError("not an AEC state: save it with the AEC env's save_state()")
        self.reset(seed=int(data.get("seed", 0)))
        self.env.load_state(data)
        self._restore_cycle(data["aec"])

    def _restore_cycle(self, aec: Mapping[str, Any]) -> None:
        self.agents = list(aec["agents"])
        self._live_agents = list(aec["live"])
        self._actions = dict(aec["actions"])
        self._agent_selector.reinit(list(aec["order"]))
        self._agent_selector._current_agent = aec["index"]
        self._agent_selector.selected_agent = aec["selection"]
        self.agent_selection = aec["selection"]
        self._observations = dict(aec["observations"])
        self.rewards = dict(aec["rewards"])
        self._cumulative_rewards = dict(aec["cumulative"])
        self.terminations = dict(aec["terminations"])
        self.truncations = dict(aec["truncations"])
        self.infos = dict(aec["infos"])


class _OrderEnforcing(OrderEnforcingWrapper[str, str, str | None]):
    """PettingZoo's order checks, knowing that loading a state counts as a reset."""

    env: OdysseyAECEnv

    def load_state(self, data: Mapping[str, Any]) -> None:
        self.env.load_state(data)
        self._has_reset = True
        self._has_updated = True


def parallel_env(game: str | Game = "mossfall", **kwargs: Any) -> OdysseyParallelEnv:
    """A PettingZoo ``ParallelEnv`` of ``game`` (see :class:`OdysseyParallelEnv` for the arguments)."""
    return OdysseyParallelEnv(game, **kwargs)


def aec_env(game: str | Game = "mossfall", **kwargs: Any) -> OrderEnforcingWrapper[str, str, str | None]:
    """A PettingZoo ``AECEnv`` of ``game`` (same arguments as :func:`parallel_env`), order-checked as
    PettingZoo's own environments are (``odyssey_env.aec_env``)."""
    return _OrderEnforcing(OdysseyAECEnv(OdysseyParallelEnv(game, **kwargs)))


#: PettingZoo's convention: an environment module's ``env()`` is its AEC constructor.
env = aec_env


# ---------------------------------------------------------------------- quest state
def _quest_complete(engine: Engine, agent: str) -> bool:
    """Whether ``agent`` has completed every stage of the main quest (never, in a game without one)."""
    if engine.game.quest.main is None:
        return False
    return main_quest.progress(engine, agent)["done"]
