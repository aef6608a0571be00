"""The ReAct prompt of paper appendix A5.1 and tolerant parsing of the strict JSON reply."""

from odyssey_agents.prompting.prompt import ACT_KEYS, PromptBuilder
from odyssey_agents.prompting.reply import Reply, clean_action, parse_choice, parse_reply

__all__ = ["ACT_KEYS", "PromptBuilder", "Reply", "clean_action", "parse_choice", "parse_reply"]
