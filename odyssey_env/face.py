"""What the two faces of the engine share: one agent (``env.py``, Gymnasium) or several (``multiagent.py``,
PettingZoo) play the same engine, so they take the same arguments, checked the same way, and give the
same spaces, observations, infos and reset options.

:class:`Face` is a base class of both envs. It holds what does not depend on how many agents play: the
checked arguments (and the keyword arguments a pickled env is rebuilt from), the reset options
(``tutorial``, ``valid_actions``, ``state``) and the engine they start, and the extras both faces offer
(``verbs``, ``dependency_graph``, pickling). Each face keeps only its API's shape: one observation or a
dict of them, ``terminated`` or a dict of terminations.

The functions below are the per-agent pieces both faces build their returns from:
:func:`observation_text` (an agent's observation, cut to :data:`MAX_OBSERVATION_LENGTH`) and
:func:`agent_info` (its ``info``, limited to ``info_keys``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from copy import copy
from typing import Any, cast

import gymnasium as gym
from gymnasium import spaces

from odyssey_env.engine import Engine
from odyssey_env.game import GAMES_DIR, Game, load_game
from odyssey_env.quests import main_quest, side_quests, tutorial
from odyssey_env.rewards import COMPONENTS, check_weights
from odyssey_env.state import Agent
from odyssey_env.textspace import CHARSET, ObservationText
from odyssey_env.turn import Event, Outcome
from odyssey_env.weakcache import IdentityCache

__all__ = [
    "CHARSET",
    "INFO_KEYS",
    "MAX_ACTION_LENGTH",
    "MAX_INFO_TEXT",
    "MAX_OBSERVATION_LENGTH",
    "RESET_OPTIONS",
    "Face",
    "ObservationText",
    "ResetNeeded",
    "action_space",
    "agent_info",
    "check_info_keys",
    "dependency_graph",
    "observation_space",
    "observation_text",
]

MAX_OBSERVATION_LENGTH = 16384
MAX_ACTION_LENGTH = 512
#: Every key ``info`` may have besides ``valid_actions`` (``quest``, ``side_quests`` and ``tutorial`` only
#: in games and phases that have them); ``info_keys=`` picks a subset.
INFO_KEYS: tuple[str, ...] = (
    "step",
    "time",
    "area",
    "invalid_action",
    "action_failed",
    "reward_breakdown",
    "events",
    "in_tutorial",
    "quest",
    "side_quests",
    "tutorial",
)
#: Longest text an event in ``info["events"]`` carries (longer ones end in "..."): whatever an agent
#: sends or a game's rules write, a step's info stays small.
MAX_INFO_TEXT = MAX_ACTION_LENGTH
#: What ``reset(options=...)`` takes, in both faces; anything else is an error naming it.
RESET_OPTIONS: tuple[str, ...] = ("tutorial", "valid_actions", "state")
#: PettingZoo's API tests (``api_test``, ``parallel_api_test``) call ``reset(seed=0, options={"options": 1})``
#: to check that reset has an ``options`` parameter. That probe is accepted and ignored; it is no option.
_PETTINGZOO_PROBE = "options"
_TRUNCATED = "\n[observation truncated]"


class ResetNeeded(gym.error.ResetNeeded, RuntimeError):
    """A step or an extra before ``reset()``: Gymnasium's error, and the ``RuntimeError`` PettingZoo code expects."""


# ---------------------------------------------------------------------- arguments and spaces
def check_render_mode(render_mode: str | None, modes: Sequence[str]) -> None:
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {list(modes)}, got {render_mode!r}")


def check_info_keys(info_keys: Iterable[str] | None) -> tuple[str, ...] | None:
    """The info keys to report, in ``INFO_KEYS`` order so that infos keep one shape (None: all)."""
    if info_keys is None:
        return None
    asked = tuple(info_keys)
    unknown = sorted(set(asked) - set(INFO_KEYS))
    if unknown:
        raise ValueError(
            f"unknown info key(s) {unknown}; known: {', '.join(INFO_KEYS)} (valid actions come with valid_actions=True)"
        )
    return tuple(k for k in INFO_KEYS if k in asked)


def observation_space() -> ObservationText:
    """The space of one agent's observations: the text of :func:`observation_text`."""
    return ObservationText(MAX_OBSERVATION_LENGTH, min_length=1, charset=CHARSET)


def action_space() -> spaces.Text:
    """The space of one agent's commands."""
    return spaces.Text(MAX_ACTION_LENGTH, min_length=1, charset=CHARSET)


def _is_shipped(game: Game) -> bool:
    return game.path.parent == GAMES_DIR


# ---------------------------------------------------------------------- the shared base of both envs
class Face:
    """The arguments, reset and extras of an Odyssey env, whether one agent plays it or several.

    A subclass sets ``_agent_ids`` (the engine's agents, in the order their commands apply) and, for
    several agents, ``_supplies``; it gives its own ``reset``/``step`` shapes, ``load_state`` and
    ``_seed`` (how its API reseeds ``np_random``), and builds them from :meth:`_begin`,
    :meth:`_engine`, :func:`observation_text` and :meth:`_info`.
    """

    # not a ClassVar: Gymnasium and PettingZoo declare it per instance (the PettingZoo face sets its own)
    metadata: dict[str, Any] = {"render_modes": ["ansi", "human"], "render_fps": 4}  # noqa: RUF012
    _agent_ids: tuple[str, ...] = ()
    _supplies: str | None = None  # the engine's "supplies" option; None: the engine's default, not passed
    np_random: Any  # each API brings its own (gymnasium's property, or set by the PettingZoo face)
    _last_obs: Any  # what render() shows: the last observation, or each agent's

    # ------------------------------------------------------------------ each face's shape
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def save_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def load_state(self, data: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def __init__(
        self,
        game: str | Game,
        *,
        valid_actions: bool,
        tutorial: bool,
        expansion: bool,
        reward_weights: Mapping[str, float] | None,
        render_mode: str | None,
        trust: bool,
        provenance: bool,
        info_keys: Iterable[str] | None,
    ):
        check_render_mode(render_mode, type(self).metadata["render_modes"])
        self.game: Game = load_game(game, trust=trust)
        #: The info keys to report (None: all). In INFO_KEYS order, so infos keep one shape.
        self.info_keys: tuple[str, ...] | None = check_info_keys(info_keys)
        self.reward_weights = check_weights(reward_weights or {"quest": 1.0})
        #: What the env is rebuilt from when unpickled (a subclass adds its own arguments).
        self._kwargs: dict[str, Any] = {
            "game": self.game.name if _is_shipped(self.game) else str(self.game.path),
            "trust": trust or isinstance(game, Game),  # a loaded Game's rules have already run
            "valid_actions": valid_actions,
            "tutorial": tutorial,
            "expansion": expansion,
            "reward_weights": dict(reward_weights) if reward_weights else None,
            "render_mode": render_mode,
            "provenance": provenance,
            "info_keys": self.info_keys,
        }
        self.render_mode = render_mode
        self.with_valid_actions = valid_actions
        self.tutorial = tutorial
        self.expansion = expansion
        self.provenance = provenance
        self.engine: Engine | None = None

    # ------------------------------------------------------------------ reset
    def _seed(self, seed: int | None) -> None:
        raise NotImplementedError

    def _begin(self, seed: int | None, options: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """Check the reset options, reseed, and start a new episode; or return the saved state that
        ``options["state"]`` names, for the face's ``load_state`` to continue (its own seed and
        tutorial setting come with it)."""
        options = {k: v for k, v in (options or {}).items() if k != _PETTINGZOO_PROBE}
        unknown = sorted(set(options) - set(RESET_OPTIONS))
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; known: {', '.join(RESET_OPTIONS)}")
        if "state" in options and (seed is not None or "tutorial" in options):
            raise ValueError(
                "reset(options={'state': ...}) continues a saved episode, which has its own seed "
                "and tutorial setting: pass neither seed= nor the tutorial option with it"
            )
        self._seed(seed)
        if "valid_actions" in options:
            self.with_valid_actions = bool(options["valid_actions"])
        if "state" in options:
            return cast("Mapping[str, Any]", options["state"])  # a save_state() dict, as documented
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        engine_options: dict[str, Any] = {
            "tutorial": bool(options.get("tutorial", self.tutorial)),
            "expansion": self.expansion,
        }
        if self._supplies is not None:
            engine_options["supplies"] = self._supplies
        if self.provenance:
            engine_options["provenance"] = True
        self.engine = Engine(self.game, episode_seed, agents=self._agent_ids, options=engine_options)
        return None

    def _load_engine(self, data: Mapping[str, Any]) -> Engine:
        """Restore a saved state into the engine (starting one first in a fresh env) and ``np_random``."""
        if self.engine is None:
            self.reset(seed=int(data.get("seed", 0)))
        engine = self._engine()
        engine.load_state(data)
        if "np_random" in data:
            self.np_random.bit_generator.state = data["np_random"]
        return engine

    def _save_engine(self, **extra: Any) -> dict[str, Any]:
        """The engine's state, then the face's ``extra`` keys, then ``np_random`` (in that order: the
        saved bytes stay those earlier versions wrote)."""
        data = self._engine().save_state()
        data.update(extra)
        data["np_random"] = self.np_random.bit_generator.state  # a fresh dict of str and int: JSON-ready
        return data

    # ------------------------------------------------------------------ extras
    def verbs(self) -> list[str]:
        """Usage line of every verb this game has, e.g. ``store <amount> <object_name> <container_name>``."""
        return [rule.usage() for rule in self.game.rules.actions.values()]

    def dependency_graph(self, **filters: bool) -> dict[str, Any]:
        """The episode's action-dependency graph so far, every agent's actions in one graph
        (``provenance=True``); see ``odyssey_env.provenance.ProvenanceTracker.graph`` for the format
        and filters."""
        return dependency_graph(self._engine(), **filters)

    # ------------------------------------------------------------------ internals
    def _engine(self) -> Engine:
        if self.engine is None:
            raise ResetNeeded("call reset() first")
        return self.engine

    def _info(self, agent: str, outcome: Outcome | None) -> dict[str, Any]:
        return agent_info(self._engine(), agent, outcome, valid_actions=self.with_valid_actions, keys=self.info_keys)

    def __getstate__(self) -> dict[str, Any]:
        # reset(options=...) may have switched valid actions on or off since construction: keep that.
        return {
            "kwargs": {**self._kwargs, "valid_actions": self.with_valid_actions},
            "state": self.save_state() if self.engine is not None else None,
            "last_obs": copy(self._last_obs),
        }

    def __setstate__(self, data: dict[str, Any]) -> None:
        type(self).__init__(self, **data["kwargs"])
        if data["state"] is not None:
            self.load_state(data["state"])
        self._last_obs = data["last_obs"]


# ---------------------------------------------------------------------- one agent's observation and info
_ZERO = dict.fromkeys(COMPONENTS, 0)


def dependency_graph(engine: Engine, **filters: bool) -> dict[str, Any]:
    """The engine's dependency graph, or a clear error when the episode is not tracked."""
    if engine.provenance is None:
        raise ValueError("this env does not track provenance: create it with provenance=True")
    return engine.provenance.graph(**filters)


def observation_text(engine: Engine, agent_id: str) -> str:
    """The observation of one agent, cut to ``MAX_OBSERVATION_LENGTH``."""
    text = engine.observe(agent_id)
    if len(text) > MAX_OBSERVATION_LENGTH:
        text = text[: MAX_OBSERVATION_LENGTH - len(_TRUNCATED)] + _TRUNCATED
    return text


_InfoField = Callable[[Engine, Agent, "Outcome | None"], Any]
#: How each info key is computed; ``quest``, ``side_quests`` and ``tutorial`` only where the game and
#: the phase have them (``_GAME_WHEN``, ``_AGENT_WHEN``). One table, so ``info_keys=`` computes exactly
#: what it reports.
_INFO_FIELDS: dict[str, _InfoField] = {
    "step": lambda engine, agent, outcome: engine.state.step,
    "time": lambda engine, agent, outcome: engine.clock(),
    "area": lambda engine, agent, outcome: agent.area,
    "invalid_action": lambda engine, agent, outcome: bool(outcome and outcome.invalid),
    "action_failed": lambda engine, agent, outcome: bool(outcome and outcome.failed),
    "reward_breakdown": lambda engine, agent, outcome: outcome.reward.to_dict() if outcome else _ZERO.copy(),
    "events": lambda engine, agent, outcome: [_event(e) for e in outcome.events] if outcome else [],
    "in_tutorial": lambda engine, agent, outcome: agent.in_tutorial,
    "quest": lambda engine, agent, outcome: main_quest.progress(engine, agent.id),
    "side_quests": lambda engine, agent, outcome: side_quests.progress(engine, agent.id),
    "tutorial": lambda engine, agent, outcome: tutorial.progress(engine, agent.id),
}
#: Keys reported only where the game has them (decided once per game) ...
_GAME_WHEN: dict[str, Callable[[Game], bool]] = {
    "quest": lambda game: game.quest.main is not None,
    "side_quests": lambda game: game.quest.side_quests.enabled,
}
#: ... and keys reported only in some phase of the agent (asked at every step).
_AGENT_WHEN: dict[str, Callable[[Agent], bool]] = {
    "tutorial": lambda agent: agent.in_tutorial,
}
assert tuple(_INFO_FIELDS) == INFO_KEYS and set(_GAME_WHEN).isdisjoint(_AGENT_WHEN)

#: The leading keys that every game reports in every phase.
_ALWAYS = INFO_KEYS.index("quest")
assert not ({*INFO_KEYS[:_ALWAYS]} & ({*_GAME_WHEN} | {*_AGENT_WHEN}))
_InfoPlan = tuple[tuple[str, _InfoField, "Callable[[Agent], bool] | None"], ...]
#: Per game (weakly, by identity): the info plans made for the key lists asked of it.
_info_plans: IdentityCache[Game, dict[tuple[str, ...] | None, _InfoPlan]] = IdentityCache(lambda game: {})


def _info_plan(game: Game, keys: Sequence[str] | None) -> _InfoPlan:
    """The fields to compute for ``keys`` in ``game``, each with its per-step condition (or None):
    info is built at every step, and what depends on the game alone need not be asked every time."""
    keys = None if keys is None else tuple(keys)
    known = _info_plans.entries.get(id(game))  # the cache read inline: info is built at every step
    plans = known[1] if known is not None else _info_plans(game)
    hit = plans.get(keys)
    if hit is not None:
        return hit
    made = tuple(
        (key, _INFO_FIELDS[key], _AGENT_WHEN.get(key))
        for key in (INFO_KEYS if keys is None else keys)
        if key not in _GAME_WHEN or _GAME_WHEN[key](game)
    )
    if len(plans) >= 64:  # a caller asking for ever new key lists: stay bounded
        plans.clear()
    plans[keys] = made
    return made


def agent_info(
    engine: Engine,
    agent_id: str,
    outcome: Outcome | None,
    *,
    valid_actions: bool = False,
    keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The ``info`` dict of one agent after a reset (``outcome`` None) or a step.

    ``keys`` (in ``INFO_KEYS`` order; None: all) limits what is computed as well as what is reported.
    """
    state = engine.state
    agent = state.agents[agent_id]
    plan = _info_plan(engine.game, keys)
    if keys is None and outcome is not None:
        # Every key, after a step (what env.step builds by default): the fields that always appear,
        # written out, as _INFO_FIELDS computes them (tests/env/test_env_step_caches.py compares).
        info = {
            "step": state.step,
            "time": engine.clock(),
            "area": agent.area,
            "invalid_action": bool(outcome.invalid),
            "action_failed": bool(outcome.failed),
            "reward_breakdown": outcome.reward.to_dict(),
            "events": [_event(e) for e in outcome.events],
            "in_tutorial": agent.in_tutorial,
        }
        plan = plan[_ALWAYS:]
    else:
        info = {}
    for key, field, when in plan:
        if when is None or when(agent):
            info[key] = field(engine, agent, outcome)
    if valid_actions:
        info["valid_actions"] = engine.valid_actions(agent_id)
    return info


def _event(event: Event) -> dict[str, Any]:
    data = event.data
    for value in data.values():
        if isinstance(value, str) and len(value) > MAX_INFO_TEXT:
            break
    else:  # the common case: nothing to cut
        return {"kind": event.kind, **data}
    out: dict[str, Any] = {"kind": event.kind}
    for key, value in data.items():
        if isinstance(value, str) and len(value) > MAX_INFO_TEXT:
            value = value[: MAX_INFO_TEXT - 3] + "..."
        out[key] = value
    return out
