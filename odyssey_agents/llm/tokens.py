"""Token estimates for when no tokenizer is at hand (API models before the first reply, budgets).

Local backends count exactly with their tokenizer and API backends take the server's ``usage``; an
estimate is needed only *before* a call (will this prompt fit?) and for servers that report nothing.
The estimate is calibrated: after each real reply, :class:`Calibrator` learns the model's characters
per token, so the fit check tracks the tokenizer actually in use.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

__all__ = ["Calibrator", "approx_text_tokens", "approx_tokens", "message_chars", "word_tokens"]

#: Characters per token of English prose and identifiers under common BPE vocabularies.
CHARS_PER_TOKEN = 4.0
#: Chat templates add a few tokens around every message (role markers, separators).
PER_MESSAGE = 4

_WORDS = re.compile(r"\w+|[^\w\s]")


def message_chars(messages: Sequence[dict[str, str]]) -> int:
    return sum(len(m.get("content") or "") for m in messages)


def approx_text_tokens(text: str, chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """An estimate of the tokens of a bare text (no message framing): a reply whose server gave no usage."""
    return math.ceil(len(text) / chars_per_token)


def approx_tokens(messages: Sequence[dict[str, str]], chars_per_token: float = CHARS_PER_TOKEN) -> int:
    """A conservative-enough estimate of the prompt tokens of ``messages``."""
    return math.ceil(message_chars(messages) / chars_per_token) + PER_MESSAGE * len(messages)


def word_tokens(text: str) -> int:
    """Words and punctuation marks: the scripted backend's 'tokenizer' (deterministic, cheap)."""
    return len(_WORDS.findall(text))


class Calibrator:
    """Learns characters per token from real (chars, tokens) pairs, staying on the safe side."""

    def __init__(self, chars_per_token: float = CHARS_PER_TOKEN, safety: float = 1.1):
        self.chars_per_token = chars_per_token
        self.safety = safety

    def estimate(self, messages: Sequence[dict[str, str]]) -> int:
        return math.ceil(approx_tokens(messages, self.chars_per_token) * self.safety)

    def observe(self, messages: Sequence[dict[str, str]], prompt_tokens: int) -> None:
        """Record the true count of a prompt the server just reported."""
        chars = message_chars(messages)
        text_tokens = prompt_tokens - PER_MESSAGE * len(messages)
        if chars >= 200 and text_tokens > 0:  # tiny prompts say little about the ratio
            self.chars_per_token = max(1.0, chars / text_tokens)
