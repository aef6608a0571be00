"""The LLM author (the paper's generators) and the describing pass, over ``odyssey_agents.llm`` models.

``LLMAuthor`` writes world.json, rules.py and quest.json from prompts built out of the engine itself
(:mod:`.prompts`); ``Describer`` rewrites a procedural game's descriptions (and, if asked, names).
Importing this package imports no model library: model clients load theirs when built.
"""

from odyssey_gen.llm.author import LLMAuthor
from odyssey_gen.llm.describe import Describer

__all__ = ["Describer", "LLMAuthor"]
