"""Small helpers shared by the agent tests: play an agent in a real game, record every model call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from odyssey_agents.base import Decision, Task
from odyssey_agents.llm.protocol import LLM, Completion, Message


class Recording(LLM):
    """Wraps a backend and keeps every completion, to check that usage accounts for all of them."""

    def __init__(self, inner: LLM):
        self.inner = inner
        self.completions: list[Completion] = []
        self.prompts: list[list[Message]] = []

    @property
    def context_window(self):  # type: ignore[override]
        return self.inner.context_window

    @property
    def max_tokens(self):  # type: ignore[override]
        return self.inner.max_tokens

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        completion = self.inner.complete(messages, **kwargs)
        self.completions.append(completion)
        self.prompts.append(list(messages))
        return completion

    def count_tokens(self, messages):
        return self.inner.count_tokens(messages)

    def count_text(self, text):
        return self.inner.count_text(text)

    def state(self):
        return self.inner.state()

    def set_state(self, state):
        self.inner.set_state(state)

    def describe(self):
        return self.inner.describe()


def play(
    agent, steps: int, *, game: str = "mossfall", seed: int = 0, start: int = 0, env=None, obs=None, info=None
) -> tuple[list[Decision], Any, str, dict]:
    """Play ``steps`` steps; returns the decisions and the env to continue with."""
    from odyssey_env import OdysseyEnv

    if env is None:
        env = OdysseyEnv(game)
        obs, info = env.reset(seed=seed)
        agent.reset(Task(game, game.title(), tuple(env.verbs()), seed))
    decisions = []
    for _ in range(steps):
        decision = agent.act(obs, info)
        decisions.append(decision)
        if decision.stop:
            break
        obs, _, terminated, _, info = env.step(decision.action)
        if terminated:
            break
    return decisions, env, obs, info
