"""The Gymnasium face of the engine: ``gym.make("Odyssey/QuietBell-v0")``."""

from __future__ import annotations

import string
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory, write_to_shared_memory

from odyssey_env.engine import Engine
from odyssey_env.game import GAMES_DIR, Game, load_game
from odyssey_env.limits import TEXT_CHARS
from odyssey_env.quests import main_quest, side_quests, tutorial
from odyssey_env.rewards import COMPONENTS, check_weights
from odyssey_env.state import Agent
from odyssey_env.turn import Event, Outcome
from odyssey_env.weakcache import IdentityCache

__all__ = ["CHARSET", "INFO_KEYS", "MAX_ACTION_LENGTH", "MAX_INFO_TEXT", "MAX_OBSERVATION_LENGTH", "OdysseyEnv"]

#: Every character an observation may contain or a command may use: the engine's TEXT_CHARS, in a fixed order.
CHARSET: str = "".join(c for c in string.printable if c in TEXT_CHARS)
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
_TRUNCATED = "\n[observation truncated]"
PLAYER = "player"


class ObservationText(spaces.Text):
    """``Text`` whose batches go through ``AsyncVectorEnv``'s shared memory correctly and fast.

    Gymnasium 1.x reads a ``Text`` space's shared memory once, when the vector env is built, into a
    tuple of strings, and returns that same stale tuple after every reset and step (observations come
    back as ``"000..."``); reading through :class:`_SharedTexts` instead keeps the default
    ``gym.make_vec(..., vectorization_mode="async")`` correct. Gymnasium's own reading and writing
    are per-character Python loops over the whole ``max_length`` buffer (16,384 slots a sub-env, every
    step), which made async vector envs ~30x slower than one env; here both are numpy table lookups
    over the characters actually written, ended by one padding index (``benchmarks/vector_envs.py``).
    """


_CHAR_BYTES = np.frombuffer(CHARSET.encode("ascii"), dtype=np.uint8)  # index -> character
_PAD = len(CHARSET)  # gymnasium's padding index: one past the character set
_CODES = np.full(256, -1, dtype=np.int32)  # byte -> index in CHARSET, -1 for bytes outside it
_CODES[_CHAR_BYTES] = np.arange(len(CHARSET), dtype=np.int32)


def _decode(row: np.ndarray) -> str:
    """One sub-env's slots: the characters up to the first padding index."""
    end = row >= _PAD
    length = int(end.argmax()) if end.any() else len(row)
    return _CHAR_BYTES[row[:length]].tobytes().decode("ascii")


class _SharedTexts(Sequence[str]):
    """A live view of the observations in a vector env's shared memory; copies are plain tuples."""

    def __init__(self, space: spaces.Text, memory: Any, n: int):
        self._rows = np.frombuffer(memory.get_obj(), dtype=np.int32).reshape(n, space.max_length)
        self._n = n

    def _now(self) -> tuple[str, ...]:
        return tuple(_decode(row) for row in self._rows)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return self._now()[index]
        return _decode(self._rows[range(self._n)[index]])

    def __len__(self) -> int:
        return self._n

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        return self._now()

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return repr(self._now())


_write_text = write_to_shared_memory.dispatch(spaces.Text)


@read_from_shared_memory.register(ObservationText)
def _read_observations(space: ObservationText, shared_memory: Any, n: int = 1) -> _SharedTexts:
    return _SharedTexts(space, shared_memory, n)


@write_to_shared_memory.register(ObservationText)
def _write_observation(space: ObservationText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length
    try:
        codes = _CODES[np.frombuffer(value.encode("ascii"), dtype=np.uint8)]
    except (AttributeError, UnicodeEncodeError):
        codes = None
    if codes is None or len(codes) > size or (codes < 0).any():
        return _write_text(space, index, value, shared_memory)  # not an observation: gymnasium's checks say why
    slots = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)[index * size : (index + 1) * size]
    slots[: len(codes)] = codes
    if len(codes) < size:
        slots[len(codes)] = _PAD  # the reader stops here; what lies beyond is an older observation's


class OdysseyEnv(gym.Env[str, str]):
    """A long-horizon text RPG from the AgentOdyssey suite, for one player.

    ## Description
    The player wakes in a procedurally placed world of places and areas, objects and NPCs, and acts
    with text commands (``pick up apple``, ``craft 1 wooden_sword``, ``enter library``). A main quest
    of chapters and stages gives the story; side quests, crafting, trade and combat give the rest.
    The world is generated from ``reset(seed=...)``: the same seed and the same commands give the
    same trajectory in any process.

    ## Action Space
    ``Text``: one command. Unknown verbs, wrong argument counts and malformed amounts are *invalid
    actions* (``info["invalid_action"]``); the turn then passes as a wait. Commands the state does not
    allow get corrective feedback (``info["action_failed"]``). Any action, text or not and of any size,
    is checked before the state changes (a non-text action is an invalid action too), and a text in
    ``info["events"]`` is cut at ``MAX_INFO_TEXT`` characters. For a ``Discrete`` action space over
    the valid commands, wrap the env in :class:`odyssey_env.wrappers.ValidActions`.

    ## Observation Space
    ``Text``: the first-person report of paper appendix A5.2 (time, place, what happened, what I hold,
    wear and see, my numbers, the neighboring areas).

    ## Rewards
    ``info["reward_breakdown"]`` has the per-step components ``quest``, ``side_quest``,
    ``exploration``, ``craft``, ``defeat``, ``trade`` and ``death``. The scalar reward is their
    weighted sum with ``reward_weights`` (default ``{"quest": 1.0}``: main-quest stages).

    ## Episode End
    ``terminated`` when the main quest is complete. The env itself has no step limit; the registered
    ids truncate at the paper's 500 steps (``gym.make(id, max_episode_steps=N)``, ``-1`` for none).

    ## Arguments
    * ``game``: a shipped game name or a game folder.
    * ``trust``: let a game folder's ``rules.py`` run (shipped games need no trust; see ``odyssey_env.trust``).
    * ``valid_actions``: add ``info["valid_actions"]`` (commands grouped by verb) to every step.
    * ``tutorial``: start in the tutorial room (games that have one).
    * ``expansion``: let online expansion add places once the world is explored (games that have it).
    * ``reward_weights``: weights of the reward components for the scalar reward.
    * ``provenance``: track which action produced and which consumed each object (``dependency_graph()``;
      see ``odyssey_env.provenance``). Off by default, and free when off.
    * ``render_mode``: ``"ansi"`` (returns the text) or ``"human"`` (prints it).
    * ``info_keys``: report only these ``info`` keys (``INFO_KEYS``; default all). Each key costs a
      little to compute and, in a vector env, one array and one mask per leaf to merge: RL code that
      reads two keys can ask for two.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}

    def __init__(
        self,
        game: str | Game = "mossfall",
        *,
        valid_actions: bool = False,
        tutorial: bool = False,
        expansion: bool = True,
        reward_weights: Mapping[str, float] | None = None,
        render_mode: str | None = None,
        trust: bool = False,
        provenance: bool = False,
        info_keys: Iterable[str] | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.game: Game = load_game(game, trust=trust)
        if info_keys is not None:
            info_keys = tuple(info_keys)
            unknown = sorted(set(info_keys) - set(INFO_KEYS))
            if unknown:
                raise ValueError(
                    f"unknown info key(s) {unknown}; known: {', '.join(INFO_KEYS)} "
                    "(valid actions come with valid_actions=True)"
                )
        #: The info keys to report (None: all). In INFO_KEYS order, so infos keep one shape.
        self.info_keys: tuple[str, ...] | None = (
            None if info_keys is None else tuple(k for k in INFO_KEYS if k in info_keys)
        )
        self._kwargs = {
            "game": str(self.game.path) if not _is_shipped(self.game) else self.game.name,
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
        self.reward_weights = check_weights(reward_weights or {"quest": 1.0})
        self.observation_space = ObservationText(MAX_OBSERVATION_LENGTH, min_length=1, charset=CHARSET)
        self.action_space = spaces.Text(MAX_ACTION_LENGTH, min_length=1, charset=CHARSET)
        self.engine: Engine | None = None
        self._last_obs = ""

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode. ``options``: ``tutorial`` (bool), ``valid_actions`` (bool), ``state``.

        ``options={"state": saved}`` continues a state from :meth:`save_state` instead of starting
        anew: the form that works through any stack of wrappers (``gym.make``'s, ``TimeLimit``,
        vector envs), which, in gymnasium 1.x, do not forward ``load_state``.
        """
        options = dict(options or {})
        unknown = set(options) - {"tutorial", "valid_actions", "state"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; known: tutorial, valid_actions, state")
        if "state" in options and (seed is not None or "tutorial" in options):
            raise ValueError(
                "reset(options={'state': ...}) continues a saved episode, which has its own seed "
                "and tutorial setting: pass neither seed= nor the tutorial option with it"
            )
        super().reset(seed=seed)
        if "valid_actions" in options:
            self.with_valid_actions = bool(options["valid_actions"])
        if "state" in options:
            obs = self.load_state(options["state"])
            return obs, self._info(None)
        episode_seed = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
        tutorial = bool(options.get("tutorial", self.tutorial))
        engine_options = {"tutorial": tutorial, "expansion": self.expansion}
        if self.provenance:
            engine_options["provenance"] = True
        self.engine = Engine(self.game, episode_seed, agents=(PLAYER,), options=engine_options)
        obs = self._observe()
        return obs, self._info(None)

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        engine = self.engine
        if engine is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        outcome = engine.step({PLAYER: action})[PLAYER]
        obs = self._observe()
        reward = outcome.reward.weighted(self.reward_weights)
        return obs, reward, engine.state.done, False, self._info(outcome)

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._last_obs
        if self.render_mode == "human":
            print(self._last_obs)
        return None

    # ------------------------------------------------------------------ extras
    def valid_actions(self) -> dict[str, list[str]]:
        """Commands applicable now, grouped by verb; each executes without failing."""
        return self._engine().valid_actions(PLAYER)

    def verbs(self) -> list[str]:
        """Usage line of every verb this game has, e.g. ``store <amount> <object_name> <container_name>``."""
        return [rule.usage() for rule in self.game.rules.actions.values()]

    def dependency_graph(self, **filters: bool) -> dict[str, Any]:
        """The episode's action-dependency graph so far (``provenance=True``); see
        ``odyssey_env.provenance.ProvenanceTracker.graph`` for the format and filters."""
        return dependency_graph(self._engine(), **filters)

    def save_state(self) -> dict[str, Any]:
        """The full episode state as JSON-ready data; ``load_state`` continues it exactly.

        Through ``gym.make``'s wrappers: ``env.unwrapped.save_state()`` (or
        ``env.get_wrapper_attr("save_state")()``), and ``env.reset(options={"state": data})`` to load.
        """
        data = self._engine().save_state()
        data["np_random"] = self.np_random.bit_generator.state  # a fresh dict of str and int: JSON-ready
        return data

    def load_state(self, data: Mapping[str, Any]) -> str:
        """Restore a saved state (into this env, which may be fresh) and return the current observation.

        On an env from ``gym.make`` use ``env.reset(options={"state": data})`` instead: Gymnasium's
        wrappers (order enforcing, the env checker) only let ``step`` through after a ``reset`` they saw.
        """
        if self.engine is None:
            self.reset(seed=int(data.get("seed", 0)))
        self.engine.load_state(data)
        if "np_random" in data:
            self.np_random.bit_generator.state = data["np_random"]
        return self._observe()

    # ------------------------------------------------------------------ internals
    def _engine(self) -> Engine:
        if self.engine is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self.engine

    def _observe(self) -> str:
        text = observation_text(self.engine, PLAYER)
        self._last_obs = text
        return text

    def _info(self, outcome: Outcome | None) -> dict[str, Any]:
        return agent_info(self.engine, PLAYER, outcome, valid_actions=self.with_valid_actions, keys=self.info_keys)

    def __getstate__(self) -> dict[str, Any]:
        # reset(options=...) may have switched valid actions on or off since construction: keep that.
        kwargs = {**self._kwargs, "valid_actions": self.with_valid_actions}
        return {
            "kwargs": kwargs,
            "state": self.save_state() if self.engine is not None else None,
            "last_obs": self._last_obs,
        }

    def __setstate__(self, data: dict[str, Any]) -> None:
        self.__init__(**data["kwargs"])
        if data["state"] is not None:
            self.load_state(data["state"])
        self._last_obs = data["last_obs"]


_ZERO = dict.fromkeys(COMPONENTS, 0)


def dependency_graph(engine: Engine, **filters: bool) -> dict[str, Any]:
    """The engine's dependency graph, or a clear error when the episode is not tracked (shared by both faces)."""
    if engine.provenance is None:
        raise ValueError("this env does not track provenance: create it with provenance=True")
    return engine.provenance.graph(**filters)


def observation_text(engine: Engine, agent_id: str) -> str:
    """The observation of one agent, cut to ``MAX_OBSERVATION_LENGTH`` (shared by both faces)."""
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
    plans = _info_plans(game)
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
    """The ``info`` dict of one agent after a reset (``outcome`` None) or a step (shared by both faces).

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


def _is_shipped(game: Game) -> bool:
    return game.path.parent == GAMES_DIR


class _FaceModule(types.ModuleType):
    """``odyssey_env.env(...)`` is PettingZoo's AEC constructor, and ``odyssey_env.env`` is also this module.

    Python binds a submodule to its package attribute once it is imported, which would hide the
    function of the same name; a callable module keeps both meanings (``gym.make`` imports this module).
    """

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from odyssey_env.multiagent import env as aec_env

        return aec_env(*args, **kwargs)


sys.modules[__name__].__class__ = _FaceModule
