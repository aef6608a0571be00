"""Turning a command string into a verb and typed arguments, or into an invalid-action message.

Only *format* problems are decided here (paper A3.1): an empty input, an unknown verb, a wrong number
of arguments, an amount that is not a positive whole number, an unclosed quote, a name that no game
could use (empty, too long, or not printable ASCII: verbs echo names back). Those make the action
invalid and the turn passes as a wait. Whether the named things exist is the verb's business and is
answered with corrective feedback instead.
"""

from __future__ import annotations

import functools
import re
import reprlib
import shlex
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from odyssey_env.limits import MAX_AMOUNT, MAX_NAME_LENGTH

if TYPE_CHECKING:
    from odyssey_env.rules import ActionRule, RuleBook

#: Characters of a command that an ``invalid_action`` event keeps (the env's action-space limit):
#: a megabyte sent as a command must not come back as a megabyte of ``info``.
MAX_COMMAND_ECHO = 512
_ECHO_LIMIT = 80
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 60


def echo(text: str) -> str:
    """A safe, short rendering of user input for feedback (printable ASCII only, bounded length)."""
    safe = text.encode("ascii", "backslashreplace").decode("ascii")
    safe = "".join(c if c.isprintable() else repr(c)[1:-1] for c in safe)
    return safe if len(safe) <= _ECHO_LIMIT else safe[: _ECHO_LIMIT - 3] + "..."


def command_echo(command: Any) -> str:
    """The command as an event records it: the text, or a short repr of a non-text action, bounded."""
    if isinstance(command, str):
        text = command
    else:
        try:
            text = _REPR.repr(command)
        except Exception:  # an int past Python's digit limit, an object whose repr fails
            text = f"<{type(command).__name__}>"
    return text if len(text) <= MAX_COMMAND_ECHO else text[: MAX_COMMAND_ECHO - 3] + "..."


@functools.cache
def _words(n: int) -> re.Pattern[str]:
    """The first ``n`` whitespace-separated words, each followed by whitespace or the end."""
    return re.compile(r"\s+".join([r"(\S+)"] * n) + r"(?=\s|$)")


def verb_index(verbs: Iterable[str]) -> dict[str, list[str]]:
    """Verbs by their first word, longest first, so that "pick up" wins over a verb named "pick"."""
    index: dict[str, list[str]] = {}
    for verb in sorted(verbs, key=len, reverse=True):
        index.setdefault(verb.split()[0], []).append(verb)
    return index


def match_verb(index: dict[str, list[str]], lower: str) -> tuple[str, int] | None:
    """The verb a stripped, lower-cased command starts with and where it ends, or None.

    Needs only the verb names (:func:`verb_index`), so reports can tell which verb a recorded command
    used without loading the game's rules (which may be code)."""
    for verb in index.get(lower.split(None, 1)[0], ()):
        if lower.startswith(verb) and (len(lower) == len(verb) or lower[len(verb)].isspace()):
            return verb, len(verb)
        if " " in verb:  # "pick   up": the words of a two-word verb may be spaced any way
            match = _words(verb.count(" ") + 1).match(lower)
            if match and " ".join(match.groups()) == verb:
                return verb, match.end()
    return None


def parse(rules: RuleBook, text: Any) -> tuple[ActionRule, tuple[Any, ...]] | str:
    """Return ``(rule, args)`` or the feedback text of an invalid action."""
    if not isinstance(text, str):
        return f"Invalid action: expected a text command, got {type(text).__name__}."
    s = text.strip()
    if not s:
        return "Invalid action: the command is empty."
    found = match_verb(rules.verbs_by_first_word, s.lower())
    if found is None:
        return (
            f"Invalid action: could not understand '{echo(s)}'. Commands start with one of: {', '.join(rules.actions)}."
        )
    verb, end = found
    rule = rules.actions[verb]
    rest = s[end:].strip()
    if '"' in rest or "'" in rest:
        try:
            words = shlex.split(rest)
        except ValueError:
            return f"Invalid action: unclosed quote in '{echo(s)}'. Put text in matching double quotes."
    else:
        words = rest.split()
    params = rule.params
    if len(words) != len(params):
        return f"Invalid action: '{rule.verb}' takes the form '{rule.usage()}', but got {len(words)} argument(s)."
    if not params:
        return rule, ()
    args: list[Any] = []
    for word, (label, kind) in zip(words, params, strict=True):
        if kind == "amount":
            if not (word.isascii() and word.isdigit()) or not 0 < int(word) <= MAX_AMOUNT:
                return (
                    f"Invalid action: <{label}> must be a whole number from 1 to {MAX_AMOUNT}, "
                    f"got '{echo(word)}' in '{rule.usage()}'."
                )
            args.append(int(word))
        elif kind == "text":
            args.append(word)
        elif not word or len(word) > MAX_NAME_LENGTH or not (word.isascii() and word.isprintable()):
            # Verbs echo names in their feedback, which must stay printable ASCII and short.
            return (
                f"Invalid action: <{label}> must be a name of printable ASCII characters (at most "
                f"{MAX_NAME_LENGTH}), got '{echo(word)}' in '{rule.usage()}'."
            )
        else:
            args.append(word.lower())
    return rule, tuple(args)
