"""``odyssey play <game>``: play a game in the terminal.

A human player is the quickest way to feel whether a game is fair, and the same loop is what a game
designer uses to try a generated game. Everything typed is sent to the env as a command, except a few
meta-commands that never cost a turn::

    help           the verbs of this game and how to type them
    actions        the commands that would work right now, grouped by verb
    save FILE      write the whole episode to FILE (JSON); `odyssey play <game> --load FILE` resumes it
    load FILE      replace the current episode by the one saved in FILE
    quit           leave (so does end-of-input, Ctrl-D)

Commands of other text games (``look``, ``go north``, ``inventory``, ``get coin``) and verbs with a typo
are answered with the command that does it here, and cost no turn either (:mod:`odyssey_eval.play_aids`);
anything that starts with one of the game's verbs goes to the game. On a terminal, Tab completes
meta-commands, verbs and their targets (readline).

A file that cannot be read or written gives an error message and leaves the current game as it was;
saving writes a temporary file first, so a failed save never damages an earlier one.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from odyssey_env.env import OdysseyEnv
from odyssey_env.game import GameError, available_games
from odyssey_env.rewards import COMPONENTS
from odyssey_eval.play_aids import did_you_mean, hint, install_completion

PROMPT = "> "
META_HELP = (
    "Meta-commands (they take no game time):\n"
    "  help         this list\n"
    "  actions      commands that would work right now\n"
    "  save FILE    save the game to FILE\n"
    "  load FILE    load a game saved in FILE\n"
    "  quit         leave the game\n"
    "Tab completes commands and their targets; look, go, inventory and the like get a hint, not a turn."
)


class PlayError(Exception):
    """A meta-command that could not be carried out; the message is shown to the player."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="odyssey play", description="Play an AgentOdyssey game in the terminal.")
    parser.add_argument("game", help="a shipped game name (e.g. mossfall) or a game folder")
    parser.add_argument("--seed", type=int, default=0, help="world seed (default 0)")
    parser.add_argument("--tutorial", action="store_true", help="start in the tutorial room (if the game has one)")
    parser.add_argument("--load", metavar="FILE", help="resume a game saved with 'save FILE'")
    parser.add_argument(
        "--trust",
        action="store_true",
        help="let the game folder's rules.py run (it is code; shipped games need no trust)",
    )
    return parser


def help_text(env: OdysseyEnv) -> str:
    """The verbs of the game with their usage and what they do, then the meta-commands."""
    rules = list(env.game.rules.actions.values())
    usages = env.verbs()
    width = max(len(u) for u in usages)
    lines = ["Commands (<amount> is a whole number; put <text> in double quotes):"]
    lines += [f"  {usage:<{width}}  {rule.description}" for usage, rule in zip(usages, rules, strict=True)]
    return "\n".join([*lines, "", META_HELP])


def actions_text(env: OdysseyEnv) -> str:
    """Valid actions grouped by verb, one verb per line."""
    groups = env.valid_actions()
    return "\n".join(f"{verb}: {' | '.join(commands)}" for verb, commands in groups.items())


def save(env: OdysseyEnv, file: str) -> str:
    """Write the episode to ``file`` atomically (a temporary file, then a rename)."""
    path = Path(file).expanduser()
    tmp = path.with_name(path.name + ".tmp")
    try:
        text = json.dumps(env.save_state())
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise PlayError(f"Cannot save to {file}: {exc.strerror or exc}.") from None
    assert env.engine is not None  # save_state needed one
    return f"Saved to {file} (step {env.engine.state.step})."


def load(env: OdysseyEnv, file: str) -> str:
    """Replace the episode by the one in ``file``; on any problem the current one is kept as it was."""
    try:
        data = json.loads(Path(file).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlayError(f"Cannot load {file}: {exc.strerror or exc}.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PlayError(f"Cannot load {file}: not a saved game (invalid JSON: {exc}).") from None
    if not isinstance(data, dict):
        raise PlayError(f"Cannot load {file}: not a saved game.")
    backup = env.save_state() if env.engine is not None else None
    try:
        return env.load_state(data)
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        if backup is not None:
            env.load_state(backup)
        if isinstance(exc, KeyError):
            why = f"not a saved game (no {exc} field)"
        else:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PlayError(f"Cannot load {file}: {why}") from None


def _reward_line(info: dict[str, Any]) -> str:
    gains = [f"+{n} {k}" if n > 0 else f"{n} {k}" for k, n in info["reward_breakdown"].items() if n and k in COMPONENTS]
    return f"[{', '.join(gains)}]" if gains else ""


def _cannot_load(game: str, exc: GameError) -> str:
    """Why ``game`` did not load: a name that is no game's, with the closest names; else the game's problems."""
    from odyssey_env.game import PAPER_GAMES
    from odyssey_env.userdir import user_games

    if not Path(game).exists() and game not in PAPER_GAMES and game not in user_games():
        shipped = available_games()
        close = did_you_mean(game, [*shipped, *user_games()])
        return (
            f"no game named {game!r}{close or '.'} Games: {', '.join(shipped)} (`odyssey games` lists them), "
            "or a folder with a world.json."
        )
    sep = "\n" if len(exc.problems) > 1 else " "  # one problem, one line
    return f"cannot load game {game!r}:{sep}{exc}"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        env = OdysseyEnv(args.game, tutorial=args.tutorial, trust=args.trust)
    except GameError as exc:
        print(f"odyssey play: {_cannot_load(args.game, exc)}", file=sys.stderr)
        return 2
    obs, _ = env.reset(seed=args.seed)
    if args.load:
        try:
            obs = load(env, args.load)
        except PlayError as exc:
            print(f"odyssey play: {exc}", file=sys.stderr)
            return 2
    print(f"{env.game.title} (seed {args.seed}). Type 'help' for commands, 'quit' to leave.\n")
    print(obs)
    completer = install_completion(env)
    while True:
        if completer is not None:
            completer.forget()  # the state may have changed: list valid commands afresh on the next Tab
        try:
            line = input(PROMPT)
        except EOFError:
            print()
            return 0
        except KeyboardInterrupt:
            print()
            return 130
        command = line.strip()
        head, _, rest = command.partition(" ")
        head, rest = head.lower(), rest.strip()
        try:
            if not command:
                continue
            if head in ("quit", "exit") and not rest:
                return 0
            if head == "help" and not rest:
                print(help_text(env))
            elif head == "actions" and not rest:
                print(actions_text(env))
            elif head in ("save", "load"):
                if not rest:
                    print(f"Usage: {head} FILE")
                elif head == "save":
                    print(save(env, rest))
                else:
                    obs = load(env, rest)
                    print(f"Loaded {rest}.\n\n{obs}")
            elif (aid := hint(env, command, obs)) is not None:
                print(aid)
            else:
                obs, _, terminated, truncated, info = env.step(command)
                print(obs)
                rewards = _reward_line(info)
                if rewards:
                    print(rewards)
                if terminated or truncated:
                    print("\nThe story is complete. Well played!" if terminated else "\nThe episode is over.")
                    return 0
        except PlayError as exc:
            print(exc)


if __name__ == "__main__":
    sys.exit(main())
