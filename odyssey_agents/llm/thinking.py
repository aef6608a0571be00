"""Separating a reasoning model's thinking from its answer.

Qwen3 and DeepSeek-R1 style models write ``<think> ... </think>`` before the answer when the template
or server does not split it out. The thinking is kept (for the trajectory) but never parsed for an
action: a JSON example inside the thinking must not be taken for the reply.
"""

from __future__ import annotations

import re

__all__ = ["split_thinking"]

_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"<think>", re.IGNORECASE)
_CLOSE = re.compile(r"</think>", re.IGNORECASE)


def split_thinking(text: str) -> tuple[str, str | None]:
    """Return ``(answer, thinking)``; thinking is None when the text has none.

    An unclosed ``<think>`` (the reply ran out of tokens while thinking) leaves no answer. A lone
    ``</think>`` (templates that open the block in the prompt) ends the thinking.
    """
    thoughts = [m.strip() for m in _BLOCK.findall(text)]
    answer = _BLOCK.sub("", text)
    close = _CLOSE.search(answer)
    if close:
        thoughts.insert(0, answer[: close.start()].strip())
        answer = answer[close.end():]
    opened = _OPEN.search(answer)
    if opened:
        thoughts.append(answer[opened.end():].strip())
        answer = answer[: opened.start()]
    if not thoughts:
        return text, None
    return answer.strip(), "\n".join(t for t in thoughts if t)
