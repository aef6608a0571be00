"""NoMemory: the current observation only (the paper's memoryless baseline)."""

from __future__ import annotations

from odyssey_agents.paradigms.react_agent import ReActAgent

__all__ = ["NoMemoryAgent"]


class NoMemoryAgent(ReActAgent):
    """Acts on what it sees now. Add-ons give it a memory: reflection, notes, or a short window."""

    name = "no_memory"
    window = 0
