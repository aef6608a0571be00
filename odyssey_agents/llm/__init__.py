"""Language-model backends behind one protocol (:class:`LLM`), each call's tokens counted by purpose.

Backends import their libraries (openai, transformers, torch) only when built; a missing one raises
:class:`MissingExtra` naming what to install.
"""

from odyssey_agents.llm.factory import BACKENDS, LLMConfigError, build_llm
from odyssey_agents.llm.protocol import LLM, Completion, ContextOverflow, LLMError, Message, MissingExtra

__all__ = [
    "BACKENDS",
    "LLM",
    "Completion",
    "ContextOverflow",
    "LLMConfigError",
    "LLMError",
    "Message",
    "MissingExtra",
    "build_llm",
]
