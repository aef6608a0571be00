"""Help for a person typing at ``odyssey play``: hints that cost no turn, tab completion, "did you mean".

A newcomer types what other text games taught them: ``look``, ``go north``, ``inventory``, ``get coin``.
In this engine those are invalid actions, and an invalid action passes the turn as a wait, which is
right for an agent under evaluation (paper A3.1) and wrong for a person who has not learnt the verbs yet.
So human play answers such a command with the command that does it here and sends nothing to the game.

Only commands that start with no verb of the game are answered here; whatever starts with one of its
verbs goes to the game, whose feedback (wrong argument count, no such object) is the lesson. A game
that has a verb named ``look`` or ``go`` gets its own verb: the game's verbs are always tried first.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from odyssey_env.parsing import match_verb

if TYPE_CHECKING:
    from odyssey_env.env import OdysseyEnv

__all__ = ["META_COMMANDS", "Completer", "completions", "did_you_mean", "hint", "install_completion"]

#: The meta-commands of ``odyssey play`` (they are completed like verbs).
META_COMMANDS = ("help", "actions", "save", "load", "quit")

NO_TURN = "(No turn spent.)"

_DIRECTIONS = frozenset(
    {"n", "s", "e", "w", "ne", "nw", "se", "sw", "u", "d", "up", "down"}
    | {"north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"}
)
# Words of other text games -> this engine's verb, for a command whose other words are its arguments.
_SYNONYMS: dict[str, str] = {
    "get": "pick up",
    "grab": "pick up",
    "take": "pick up",
    "pickup": "pick up",
    "examine": "inspect",
    "x": "inspect",
    "read": "inspect",
    "check": "inspect",
    "kill": "attack",
    "fight": "attack",
    "hit": "attack",
    "speak": "talk to",
    "ask": "talk to",
    "talk": "talk to",
    "wear": "equip",
    "wield": "equip",
    "remove": "unequip",
    "rest": "wait",
    "sleep": "wait",
    "z": "wait",
    "make": "craft",
    "build": "craft",
    "purchase": "buy",
}
_LOOK = frozenset({"look", "l", "where", "status", "stats", "score", "map", "describe"})
_INVENTORY = frozenset({"inventory", "inv", "i", "items", "bag", "hands"})
_MOVE = frozenset({"go", "walk", "move", "travel", "run", "head", "goto", *_DIRECTIONS})
_FILLER = frozenset({"to", "the", "at", "into", "in", "a", "an", "with", "around"})


def _verbs(env: OdysseyEnv) -> list[str]:
    return list(env.game.rules.actions)


def _usage(env: OdysseyEnv, verb: str) -> str:
    return env.game.rules.actions[verb].usage()


def _lines_starting(observation: str, prefixes: Sequence[str]) -> list[str]:
    return [line for line in observation.splitlines() if line.startswith(tuple(prefixes))]


def hint(env: OdysseyEnv, command: str, observation: str) -> str | None:
    """What to say instead of sending ``command`` to the game, or None to send it.

    ``observation`` is the last one shown, from which the status lines are quoted back. A command that
    starts with one of the game's verbs is always sent (None).
    """
    text = " ".join(command.split())
    lower = text.lower()
    if not lower or match_verb(env.game.rules.verbs_by_first_word, lower) is not None:
        return None
    verbs = _verbs(env)
    head, *rest = lower.split(" ")
    if rest and rest[0] in _FILLER and head not in _MOVE:  # "look at X", "talk to X" (talk to is a verb)
        rest = rest[1:]
    if head == "look" and rest and "inspect" in verbs:  # "look at coin", "look coin"
        return f"To look at one thing, use 'inspect {' '.join(rest)}' ({_usage(env, 'inspect')}). {NO_TURN}"
    if head in _LOOK:
        status = _lines_starting(observation, ("Current Location", "I see", "My ", "Neighboring areas"))
        where = ("\n" + "\n".join(status)) if status else ""
        more = " 'inspect <target>' describes one thing;" if "inspect" in verbs else ""
        return (
            "Every observation already shows where you are, what is here, your stats and the neighbouring areas;"
            f"{more} 'actions' lists what works now. {NO_TURN}{where}"
        )
    if head in _INVENTORY:
        held = _lines_starting(observation, ("I am holding", "I have equipped"))
        what = ("\n" + "\n".join(held)) if held else ""
        inside = " 'inspect <container>' shows what a container holds." if "inspect" in verbs else ""
        return f"What you hold and wear is in every observation.{inside} {NO_TURN}{what}"
    if head in _MOVE and "enter" in verbs:
        target = [w for w in rest if w not in _FILLER]
        exits = [c.split(" ", 1)[1] for c in env.valid_actions().get("enter", [])]
        if head in _DIRECTIONS or not target:
            where = f" From here: {', '.join(exits)}." if exits else " There is no way out of here right now."
            return f"Areas have names, not directions: move with 'enter <area_name>'.{where} {NO_TURN}"
        return f"Move with 'enter <area_name>': did you mean 'enter {' '.join(target)}'? {NO_TURN}"
    verb = _SYNONYMS.get(head)
    if verb in verbs:
        args = " ".join(rest)
        suggestion = f"{verb} {args}".strip()
        return f"This game says '{verb}' ({_usage(env, verb)}): did you mean '{suggestion}'? {NO_TURN}"
    close = did_you_mean(head, {v.split()[0]: v for v in verbs})
    if close:
        return f"There is no verb '{head}'{close} {NO_TURN}"
    return None


def did_you_mean(name: str, choices: Iterable[str] | dict[str, str]) -> str:
    """``": did you mean 'X'?"`` (or ``'X' or 'Y'``) for the closest of ``choices``, or ``""`` if none is
    close. A dict maps what is compared to what is suggested (first word of a verb -> the verb)."""
    mapping = choices if isinstance(choices, dict) else {c: c for c in choices}
    close = difflib.get_close_matches(name.lower(), list(mapping), n=2, cutoff=0.6)
    if not close:
        return ""
    return ": did you mean " + " or ".join(f"'{mapping[c]}'" for c in close) + "?"


# ---------------------------------------------------------------------------- tab completion
def completions(candidates: Iterable[str], line: str, begidx: int) -> list[str]:
    """The words that may stand at ``begidx`` of ``line``: each candidate command that starts with the
    line as typed, cut at the end of the word being completed (sorted, without repeats).

    Comparing whole commands makes multi-word verbs work word by word ("pi" -> "pick", "pick " -> "up",
    "pick up " -> the objects here) without knowing where a verb ends.
    """
    typed = line.lower()
    found: set[str] = set()
    for command in candidates:
        if command.lower().startswith(typed):
            word = re.split(r"\s", command[begidx:], maxsplit=1)[0]
            if word:
                found.add(word)
    return sorted(found)


class Completer:
    """A readline completer over the meta-commands, the game's verbs and the commands valid now.

    ``candidates`` is called at most once per command typed (the first Tab of a line), since listing
    valid actions walks the state; :meth:`forget` is called after each command.
    """

    def __init__(self, candidates: Callable[[], list[str]], line: Callable[[], str], begidx: Callable[[], int]):
        self._candidates = candidates
        self._line, self._begidx = line, begidx
        self._cache: list[str] | None = None
        self._matches: list[str] = []

    def forget(self) -> None:
        self._cache = None

    def complete(self, _text: str, state: int) -> str | None:
        if state == 0:
            if self._cache is None:
                self._cache = self._candidates()
            begidx = self._begidx()
            self._matches = completions(self._cache, self._line()[:begidx] + _text, begidx)
        return self._matches[state] if state < len(self._matches) else None


def candidates_of(env: OdysseyEnv) -> list[str]:
    """What Tab completes: the meta-commands, every verb of the game, and every command valid now."""
    out = [*META_COMMANDS, *_verbs(env)]
    for commands in env.valid_actions().values():
        out.extend(commands)
    return out


def install_completion(env: OdysseyEnv) -> Completer | None:
    """Turn on Tab completion when readline is available and input is a terminal; None otherwise."""
    import sys

    if not sys.stdin.isatty():
        return None
    try:
        import readline
    except ImportError:  # Windows without pyreadline: typing works, completion does not
        return None
    completer = Completer(lambda: candidates_of(env), readline.get_line_buffer, readline.get_begidx)
    readline.set_completer_delims(" \t\n")
    readline.set_completer(completer.complete)
    if "libedit" in (readline.__doc__ or ""):  # macOS's readline
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    return completer
