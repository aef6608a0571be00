"""A backend wrapper for benchmarks that adds up the backend's own CPU time, so it can be subtracted."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from odyssey_agents.llm.protocol import LLM, Completion, Message


class Timed(LLM):
    """``inner`` with the CPU seconds spent in its ``complete`` summed in ``seconds``."""

    def __init__(self, inner: LLM):
        self.inner = inner
        self.seconds = 0.0
        self.max_tokens = inner.max_tokens
        self.context_window = inner.context_window

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        start = time.process_time()
        try:
            return self.inner.complete(messages, **kwargs)
        finally:
            self.seconds += time.process_time() - start

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return self.inner.count_tokens(messages)

    def count_text(self, text: str) -> int:
        return self.inner.count_text(text)
