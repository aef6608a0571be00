"""The one protocol every language-model backend speaks, and the errors they raise.

Agents never talk to a library directly: they hand a list of chat messages and a *purpose* (``act``,
``reflect``, ``summarise``, ``answer``, ...) to :meth:`LLM.complete` and get a :class:`Completion`
back with the text and the exact input and output token counts of that call. Because the purpose
travels with every call, a run's token totals are plain sums over its calls, extra calls included.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from odyssey_agents.base import Call
from odyssey_agents.errors import OdysseyError
from odyssey_env.extras import MissingExtra as EnvMissingExtra
from odyssey_env.extras import install_command

__all__ = ["LLM", "Completion", "ContextOverflow", "LLMError", "Message", "MissingExtra", "require"]

#: A chat message: ``{"role": "system" | "user" | "assistant", "content": "..."}``.
Message = dict[str, str]


class LLMError(OdysseyError, RuntimeError):
    """A model call that failed for good (after the backend's retries), or a backend that cannot start
    (no key); the run directory stays resumable."""


class ContextOverflow(LLMError):
    """The prompt leaves no room for a reply inside the model's context window."""

    def __init__(self, prompt_tokens: int, limit: int, message: str | None = None):
        self.prompt_tokens = prompt_tokens
        self.limit = limit
        super().__init__(
            message
            or f"prompt of {prompt_tokens} tokens leaves no room for a reply in a context window of {limit} tokens"
        )


class MissingExtra(OdysseyError, EnvMissingExtra):
    """A backend or agent whose libraries are not installed; the message says what to install, worded
    for this installation (:func:`odyssey_env.extras.install_command`)."""


def require(module: str, extra: str = "llm", install: str | None = None) -> ModuleType:
    """Import ``module`` or raise :class:`MissingExtra` naming the extra that provides it.

    Backends call this inside their constructors, so ``import odyssey_agents`` never pays for torch.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        hint = install or install_command(extra)
        raise MissingExtra(f"this backend needs the Python package {exc.name!r}: {hint}") from exc


@dataclass
class Completion:
    """One model reply and what it cost.

    ``reasoning`` holds a reasoning model's thinking when the server or template returns it apart from
    the answer (it is never parsed for the action). ``estimated`` is true when the server reported no
    usage and the counts come from the backend's own estimate. ``cached_tokens``: the input tokens the
    server says its prompt cache served (0 where it says nothing).
    """

    text: str
    input_tokens: int
    output_tokens: int
    seconds: float
    purpose: str
    reasoning: str | None = None
    finish_reason: str | None = None
    estimated: bool = False
    cached_tokens: int = 0

    def call(self, prefix_tokens: int = 0) -> Call:
        """The ledger entry of this completion (``prefix_tokens``: see :class:`Call`)."""
        return Call(
            self.purpose,
            self.input_tokens,
            self.output_tokens,
            round(self.seconds, 6),
            prefix_tokens=prefix_tokens,
            cached_tokens=self.cached_tokens,
        )


class LLM(abc.ABC):
    """A chat model. Subclasses implement :meth:`complete` and :meth:`count_tokens`.

    ``json_keys`` tells the backend which JSON object the caller expects (``("reasoning", "action")``
    for a ReAct step). It is a hint: a local backend may start the reply with ``{"reasoning": "`` to
    keep a small model on format, an API backend may ask for JSON mode, the scripted backend writes
    exactly those keys. The caller still parses whatever comes back. ``starts`` is a second hint:
    the ways a key's value may begin (the game's verbs for ``action``, the letters for ``answer``);
    only a backend set up to constrain decoding uses it.
    """

    #: Backend name as used in ``conf/llm`` (``openai``, ``vllm``, ``hf``, ``embedded``, ``scripted``).
    backend: str = "llm"
    #: The model's context window in tokens, when known; prompts beyond it raise ContextOverflow.
    context_window: int | None = None
    #: Default reply budget of a call.
    max_tokens: int = 1024

    @abc.abstractmethod
    def complete(
        self,
        messages: Sequence[Message],
        *,
        purpose: str,
        max_tokens: int | None = None,
        json_keys: Sequence[str] | None = None,
        starts: Mapping[str, Sequence[str]] | None = None,
    ) -> Completion:
        """Send ``messages`` and return the reply with its token counts."""

    @abc.abstractmethod
    def count_tokens(self, messages: Sequence[Message]) -> int:
        """Input tokens ``messages`` would cost (exact for local models, an estimate for APIs)."""

    def count_text(self, text: str) -> int:
        """Tokens of a bare text (memory budgets). Default: the message count of one user message."""
        return self.count_tokens([{"role": "user", "content": text}])

    def reply_budget(self, prompt_tokens: int, max_tokens: int | None = None, minimum: int = 8) -> int:
        """``max_tokens`` clipped so prompt plus reply fit the context window (never above the limit)."""
        budget = self.max_tokens if max_tokens is None else max_tokens
        if self.context_window is not None:
            room = self.context_window - prompt_tokens
            if room < minimum:
                raise ContextOverflow(prompt_tokens, self.context_window)
            budget = min(budget, room)
        return budget

    def state(self) -> dict[str, Any]:
        """What a checkpoint must keep so a resumed run samples what an uninterrupted one would."""
        return {}

    def set_state(self, state: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Restore :meth:`state`."""

    def describe(self) -> dict[str, Any]:
        """Backend and model, for results files."""
        return {"backend": self.backend}
