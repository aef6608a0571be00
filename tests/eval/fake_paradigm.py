"""A stand-in paradigm module whose third-party dependency is missing (for the registry's error)."""

import odyssey_test_only_missing_dependency  # noqa: F401

from odyssey_agents.base import Agent


class FakeAgent(Agent):  # pragma: no cover - never importable
    def act(self, observation, info):
        raise NotImplementedError
