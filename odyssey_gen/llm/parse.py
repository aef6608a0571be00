"""Getting a JSON object or a Python file out of a model's reply, or saying exactly why not.

Models wrap what they write in prose and code fences, and sometimes stop mid-object. The extractors
take the first fenced block of the right language (else the outermost ``{...}`` for JSON), and a
failure is a :class:`ReplyError` whose message goes back to the model verbatim.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ReplyError", "extract_json", "extract_python"]

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)


class ReplyError(ValueError):
    """A reply that does not contain what was asked for."""


def _blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).lower(), m.group(2)) for m in FENCE.finditer(text)]


def extract_json(text: str, what: str = "the JSON object") -> dict[str, Any]:
    """The JSON object of a reply: a ```json block, else any fenced block, else the outermost braces."""
    candidates = [body for lang, body in _blocks(text) if lang in ("json", "")]
    if not candidates:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ReplyError(f"the reply contains no JSON object: write {what} in one ```json block")
        candidates = [text[start : end + 1]]
    errors = []
    for body in candidates:
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            errors.append(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
            continue
        if isinstance(value, dict):
            return value
        errors.append(f"expected a JSON object, got a {type(value).__name__}")
    raise ReplyError(f"{what} could not be read: {errors[0]}")


def extract_python(text: str, *, required: bool = True) -> str | None:
    """The Python source of a reply: the ```python blocks, joined (None when there is none)."""
    blocks = [body for lang, body in _blocks(text) if lang in ("python", "py")]
    if not blocks:
        if required:
            raise ReplyError("the reply contains no ```python block: write the whole rules.py in one")
        return None
    return "\n\n".join(b.strip("\n") for b in blocks) + "\n"
