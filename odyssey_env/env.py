"""The Gymnasium face of the engine: ``gym.make("Odyssey/QuietBell-v0")``.

What it shares with the PettingZoo face (arguments, spaces, observation, info, reset options) is
:mod:`odyssey_env.face`'s; this module gives it Gymnasium's shape, for one player.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, SupportsFloat

import gymnasium as gym

from odyssey_env.face import (
    CHARSET,
    INFO_KEYS,
    MAX_ACTION_LENGTH,
    MAX_INFO_TEXT,
    MAX_OBSERVATION_LENGTH,
    Face,
    ObservationText,
    action_space,
    observation_space,
    observation_text,
)
from odyssey_env.game import Game

__all__ = [
    "CHARSET",
    "INFO_KEYS",
    "MAX_ACTION_LENGTH",
    "MAX_INFO_TEXT",
    "MAX_OBSERVATION_LENGTH",
    "PLAYER",
    "ObservationText",
    "OdysseyEnv",
]

#: The id of the one agent in the engine.
PLAYER = "player"


class OdysseyEnv(Face, gym.Env[str, str]):
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

    _agent_ids = (PLAYER,)

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
        self.observation_space = observation_space()
        self.action_space = action_space()
        self._last_obs: str = ""

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode. ``options``: ``tutorial`` (bool), ``valid_actions`` (bool), ``state``.

        ``options={"state": saved}`` continues a state from :meth:`save_state` instead of starting
        anew: the form that works through any stack of wrappers (``gym.make``'s, ``TimeLimit``,
        vector envs), which, in gymnasium 1.x, do not forward ``load_state``. Any other option is an
        error that names it.
        """
        saved = self._begin(seed, options)
        obs = self.load_state(saved) if saved is not None else self._observe()
        return obs, self._info(PLAYER, None)

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        engine = self.engine
        if engine is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        outcome = engine.step({PLAYER: action})[PLAYER]
        obs = self._observe()
        reward = outcome.reward.weighted(self.reward_weights)
        return obs, reward, engine.state.done, False, self._info(PLAYER, outcome)

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

    def save_state(self) -> dict[str, Any]:
        """The full episode state as JSON-ready data; ``load_state`` continues it exactly.

        Through ``gym.make``'s wrappers: ``env.unwrapped.save_state()`` (or
        ``env.get_wrapper_attr("save_state")()``), and ``env.reset(options={"state": data})`` to load.
        """
        return self._save_engine()

    def load_state(self, data: Mapping[str, Any]) -> str:
        """Restore a saved state (into this env, which may be fresh) and return the current observation.

        On an env from ``gym.make`` use ``env.reset(options={"state": data})`` instead: Gymnasium's
        wrappers (order enforcing, the env checker) only let ``step`` through after a ``reset`` they saw.
        """
        self._load_engine(data)
        return self._observe()

    # ------------------------------------------------------------------ internals
    def _seed(self, seed: int | None) -> None:
        gym.Env.reset(self, seed=seed)

    def _observe(self) -> str:
        text = observation_text(self._engine(), PLAYER)
        self._last_obs = text
        return text
