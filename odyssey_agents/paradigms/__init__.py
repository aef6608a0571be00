"""The LLM paradigms of paper §4 that learn in context: NoMemory, LongContext, ShortTermMemory, Mem1.

Each is one short module over :class:`ReActAgent`; the add-ons (reflection, summarisation,
short-term memory) compose with all of them (:mod:`odyssey_agents.addons`).
"""

from odyssey_agents.paradigms.long_context import LongContextAgent
from odyssey_agents.paradigms.mem1 import Mem1Agent
from odyssey_agents.paradigms.no_memory import NoMemoryAgent
from odyssey_agents.paradigms.react_agent import AgentConfigError, ReActAgent
from odyssey_agents.paradigms.short_term_memory import ShortTermMemoryAgent

__all__ = ["AgentConfigError", "LongContextAgent", "Mem1Agent", "NoMemoryAgent", "ReActAgent", "ShortTermMemoryAgent"]
