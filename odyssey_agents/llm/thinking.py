"""Separating a reasoning model's thinking from its answer.

Qwen3 and DeepSeek-R1 style models write ``<think> ... </think>`` before the answer when the template
or server does not split it out. The thinking is kept (for the trajectory) but never parsed for an
action: a JSON example inside the thinking must not be taken for the reply.
"""

from __future__ import annotations

import re

__all__ = ["split_thinking"]

_TAG = re.compile(r"<(/?)think>", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str, str | None]:
    """Return ``(answer, thinking)``; thinking is None when the text has none.

    An unclosed ``<think>`` (the reply ran out of tokens while thinking) leaves no answer. A lone
    ``</think>`` (templates that open the block in the prompt) ends the thinking. One walk over the
    tags, so a reply of ten thousand ``<think>`` costs no more than reading it.
    """
    answer: list[str] = []  # the pieces outside thinking, in order
    blocks: list[str] = []
    lead: str | None = None  # everything before a lone </think>
    pos, opened = 0, -1  # opened: where the open block's text starts
    for m in _TAG.finditer(text):
        closing = bool(m.group(1))
        if opened < 0 and not closing:
            answer.append(text[pos : m.start()])
            opened = m.end()
        elif opened >= 0 and closing:
            blocks.append(text[opened : m.start()].strip())
            opened, pos = -1, m.end()
        elif opened < 0 and lead is None:  # the first lone </think>: what came before was thinking
            answer.append(text[pos : m.start()])
            lead = "".join(answer).strip()
            answer, pos = [], m.end()
        # a <think> inside a block, or a later lone </think>, is part of the text around it
    unclosed = text[opened:].strip() if opened >= 0 else None
    if unclosed is None:
        answer.append(text[pos:])
    if lead is None and not blocks and unclosed is None:
        return text, None
    thoughts = [t for t in (lead, *blocks, unclosed) if t]
    return "".join(answer).strip(), "\n".join(thoughts)
