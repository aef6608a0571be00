"""odyssey_agents: the agent zoo (non-LLM baselines, LLM paradigms) and LLM backends.

Paradigms that need heavy libraries import them inside their own modules, and say which extra to
install when they are missing; importing this package stays cheap.
"""

from odyssey_agents.base import Agent, Answer, Call, Decision, Task, Usage

__all__ = ["Agent", "Answer", "Call", "Decision", "Task", "Usage"]
