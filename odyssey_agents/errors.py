"""The errors a user can fix, as one family, so every command reports them the same way.

A mistake in a config, an extra that is not installed, a model server that cannot be reached, a run
directory that cannot be used: each deserves one clear line and a non-zero exit, never a traceback.
Everything of that kind derives from :class:`OdysseyError`; the ``odyssey`` command catches it in one
place (:func:`odyssey_eval.cli.main`) and prints its message. Anything else is a bug and keeps its
traceback.

:class:`ConfigError` is the settings branch of the family: the config errors of ``odyssey_eval``, of
the LLM backends (:class:`~odyssey_agents.llm.LLMConfigError`) and of the paradigms and add-ons
(:class:`~odyssey_agents.paradigms.AgentConfigError`) all derive from it, so code that builds agents
from configs can catch one class. It lives here, below ``odyssey_eval`` and beside the agents,
because dependencies point ``odyssey_eval -> odyssey_agents -> odyssey_env``. (Game folders have their
own :class:`odyssey_env.game.GameError`, which the CLI reports the same way.)
"""

from __future__ import annotations

__all__ = ["ConfigError", "OdysseyError", "is_user_error"]


class OdysseyError(Exception):
    """A problem the user can fix; the message says what and how, in one line."""


class ConfigError(OdysseyError, ValueError):
    """Settings that cannot be used as given: unknown option, wrong type, value out of range."""


def is_user_error(exc: BaseException) -> bool:
    """Whether ``exc`` is reported as one line rather than a traceback: an :class:`OdysseyError`, a
    game folder's :class:`~odyssey_env.game.GameError` or an extra the env package misses
    (:class:`~odyssey_env.extras.MissingExtra`) (a different package, hence not subclasses)."""
    if isinstance(exc, OdysseyError):
        return True
    from odyssey_env.extras import MissingExtra
    from odyssey_env.schema import FormatError

    return isinstance(exc, FormatError | MissingExtra)
