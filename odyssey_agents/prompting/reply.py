"""Getting the JSON object out of what a model actually wrote.

The prompt asks for one JSON object and nothing else; real models wrap it in code fences, put prose
or ``<think>`` blocks around it, leave trailing commas, use Python quotes, or run out of tokens
before the closing brace. :func:`parse_reply` accepts all of that when the intended object is
unambiguous, and otherwise says *why* the reply is unusable (``Reply.error``): the agent then
waits, and the step is counted as malformed, apart from the engine's invalid actions.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from odyssey_agents.llm.thinking import split_thinking

__all__ = ["MAX_ACTION_CHARS", "Reply", "clean_action", "parse_choice", "parse_reply"]

MAX_ACTION_CHARS = 512  # the env's action space limit
_DECODER = json.JSONDecoder(strict=False)  # tolerate raw newlines inside strings
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_SMART = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})
_MAX_OBJECTS = 64
_MAX_STARTS = 64  # positions where an object is tried: bounds the work on a reply full of braces
_MAX_SCANS = 8  # brace-matching scans of the whole reply (see _Braces)
_MAX_REPAIR_CHARS = 100_000  # an object this long is decoded as JSON or not at all, never by literal_eval
_SPECIAL = re.compile(r"[{}\"'\\]")
_STRING_VALUE = r'"\s*:\s*"((?:[^"\\]|\\.)*)"'


@dataclass(frozen=True)
class Reply:
    """The fields of the reply's JSON object; ``error`` says why it is unusable (None when usable)."""

    fields: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    repaired: bool = False  # true when the object needed repair or was salvaged field by field

    @property
    def ok(self) -> bool:
        return self.error is None

    def text(self, key: str) -> str:
        value = self.fields.get(key)
        if isinstance(value, str) or value is None:
            return (value or "").strip()
        try:
            return json.dumps(value)
        except (TypeError, ValueError, RecursionError):  # nested deeper than the stack allows here
            return ""

    @property
    def action(self) -> str:
        return self.fields.get("action", "") if self.ok else ""


def _objects(text: str) -> list[tuple[dict[str, Any], bool]]:
    """Every JSON object that starts at some ``{``, outermost first; flag those needing repair.

    At most ``_MAX_STARTS`` positions are tried and brace matching is shared between them
    (:class:`_Braces`), so the work stays linear in the reply's length whatever the model wrote.
    """
    found: list[tuple[dict[str, Any], bool]] = []
    braces = _Braces(text)
    pos = text.find("{")
    end_of_last = -1
    starts = 0
    while pos != -1 and len(found) < _MAX_OBJECTS and starts < _MAX_STARTS:
        if pos > end_of_last:
            starts += 1
            try:
                value, end = _DECODER.raw_decode(text, pos)
                end -= 1
                repaired = False
            except (ValueError, RecursionError):  # JSONDecodeError, over-long integers, deep nesting
                value, end = _repair(text, pos, braces)
                repaired = True
            if isinstance(value, dict):
                found.append((value, repaired))
                end_of_last = end
        pos = text.find("{", pos + 1)
    return found


def _repair(text: str, pos: int, braces: _Braces) -> tuple[Any, int]:
    """Trailing commas, typographic quotes and Python literals, for the span up to the matching brace."""
    end = braces.closing(pos)
    if end < 0 or end - pos > _MAX_REPAIR_CHARS:
        return None, -1
    span = _TRAILING_COMMA.sub(r"\1", text[pos : end + 1].translate(_SMART))
    try:
        return _DECODER.decode(span), end
    except (ValueError, RecursionError):
        pass
    try:
        value = ast.literal_eval(span.replace("true", "True").replace("false", "False").replace("null", "None"))
        # Python literals JSON cannot hold become JSON here, not a crash later: tuple keys are dropped,
        # sets become sorted lists and anything else (bytes, Ellipsis, complex) its repr.
        return json.loads(json.dumps(value, skipkeys=True, default=_jsonable)), end
    except Exception:  # literal_eval of model text raises many kinds (SyntaxError, TypeError, MemoryError, ...)
        return None, -1


def _jsonable(value: Any) -> Any:
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)  # repr: a set of mixed types has no order of its own
    return repr(value)


class _Braces:
    """Where the ``{`` at a position closes, for many positions in a few linear scans.

    A scan from one ``{`` tracks quotes and nesting to the end of the text and records the closing
    brace of every ``{`` it meets outside a string: a scan started at such a ``{`` would see exactly
    the same characters in the same state. Only a ``{`` that sat inside a string needs a scan of its
    own, and at most ``_MAX_SCANS`` are made.
    """

    def __init__(self, text: str):
        self.text = text
        self.close: dict[int, int] = {}
        self.scans = 0

    def closing(self, pos: int) -> int:
        if pos not in self.close:
            if self.scans >= _MAX_SCANS:
                return -1
            self.scans += 1
            self._scan(pos)
        return self.close[pos]

    def _scan(self, start: int) -> None:
        close = self.close
        open_at: list[int] = []
        quote, skip = "", -1
        for m in _SPECIAL.finditer(self.text, start):
            i = m.start()
            if i == skip:
                continue
            ch = m.group()
            if quote:
                if ch == "\\":
                    skip = i + 1
                elif ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "{":
                open_at.append(i)
            elif ch == "}" and open_at:
                close.setdefault(open_at.pop(), i)
        for i in open_at:
            close.setdefault(i, -1)


def _salvage(text: str, keys: Sequence[str]) -> dict[str, Any]:
    """Field by field, for an object cut off before its closing brace (the reply ran out of tokens)."""
    out: dict[str, Any] = {}
    for key in keys:
        m = re.search('"' + re.escape(key) + _STRING_VALUE, text)
        if m:
            try:
                out[key] = json.loads(f'"{m.group(1)}"', strict=False)
            except json.JSONDecodeError:
                out[key] = m.group(1)
    return out


def clean_action(value: Any) -> tuple[str, str | None]:
    """Normalise a command (quotes, bullets, whitespace); return ``(action, error)``."""
    if not isinstance(value, str):
        return "", f"the action is a {type(value).__name__}, not a text"
    action = " ".join(value.split())
    for _ in range(2):
        action = action.strip().strip("`").strip()
        if len(action) >= 2 and action[0] == action[-1] and action[0] in "\"'":
            action = action[1:-1]
        for lead in ("- ", "* ", "> "):
            if action.startswith(lead):
                action = action[len(lead) :]
        if action.lower().startswith("action:"):
            action = action[len("action:") :]
    action = action.strip()
    if not action:
        return "", "the action is empty"
    if len(action) > MAX_ACTION_CHARS:
        return "", f"the action is longer than {MAX_ACTION_CHARS} characters"
    return action, None


def parse_reply(
    text: str | None, keys: Sequence[str] = ("reasoning", "action"), required: Sequence[str] = ("action",)
) -> Reply:
    """Find the reply's JSON object and check it has the ``required`` keys (see module docstring)."""
    if text is None or not text.strip():
        return Reply(error="empty reply")
    answer, _ = split_thinking(text)
    if not answer.strip():
        return Reply(error="the reply holds only thinking (it ran out of tokens before answering)")
    candidates = _objects(answer)
    chosen: tuple[dict[str, Any], bool] | None = None
    for obj, repaired in candidates:  # the first object with every required key
        if all(k in obj for k in required):
            chosen = (obj, repaired)
            break
    if chosen is None:
        salvaged = _salvage(answer, keys)
        if all(k in salvaged for k in required):
            chosen = (salvaged, True)
        elif candidates:
            missing = [k for k in required if k not in candidates[0][0]]
            return Reply(fields=candidates[0][0], error=f"the JSON object has no {', '.join(missing)} key")
        else:
            return Reply(error="no JSON object in the reply")
    fields, repaired = dict(chosen[0]), chosen[1]
    if "action" in required:
        action, error = clean_action(fields.get("action"))
        if error:
            return Reply(fields=fields, error=error, repaired=repaired)
        fields["action"] = action
    return Reply(fields=fields, repaired=repaired)


def parse_choice(text: str | None, n_choices: int, choices: Sequence[str] = ()) -> int | None:
    """The chosen index from ``{"answer": "B"}`` (a letter, or the exact text of a choice), else None."""
    if not text or n_choices <= 0:
        return None
    reply = parse_reply(text, keys=("answer",), required=("answer",))
    candidates: list[Any] = [reply.fields.get("answer")] if "answer" in reply.fields else []
    if not candidates:
        answer, _ = split_thinking(text)
        m = re.search(r"\banswer\b(?:\s+is)?\W{0,4}([A-Za-z])\b", answer, re.IGNORECASE) or re.fullmatch(
            r"\W*([A-Za-z])\W*", answer
        )
        if m:
            candidates.append(m.group(1))
    lowered = [c.strip().lower() for c in choices]
    for value in candidates:
        if not isinstance(value, str):
            continue
        v = value.strip()
        if v.lower() in lowered:
            return lowered.index(v.lower())
        m = re.fullmatch(r"\(?([A-Za-z])(?:\)|[.):]\s.*|\s*)", v, re.DOTALL)
        if m:
            index = ord(m.group(1).upper()) - ord("A")
            if 0 <= index < n_choices:
                return index
    return None
