"""The ``odyssey`` command: one entry point, subcommands imported only when used.

Keeping the dispatcher free of imports means ``odyssey play`` and ``odyssey games`` (which import only
``odyssey_env``) work with gymnasium alone, and ``odyssey run`` pays for Hydra only when it runs.

This is also the one place where a user's mistake becomes one line: every subcommand lets an
:class:`odyssey_agents.errors.OdysseyError` (or a game folder's ``GameError``) propagate, and it is
printed here as ``odyssey <command>: <message>`` with exit code 2. Anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("odyssey_eval.play:main", "play a game in the terminal"),
    "games": ("odyssey_eval.catalog:main", "list the shipped games and their sizes"),
    "trust": ("odyssey_env.trust:main", "let a game folder's rules.py run (it is code)"),
    "generate": ("odyssey_gen.cli:main", "generate a new, validated game from a theme (offline or with an LLM)"),
    "run": ("odyssey_eval.run:main", "evaluate agents on games (Hydra; supports -m sweeps)"),
    "report": ("odyssey_eval.report:main", "summarise run directories and write an HTML report"),
    "view": ("odyssey_eval.viewer.cli:main", "write a run's interactive trajectory viewer (one HTML file)"),
    "challenge": ("odyssey_eval.challenge:main", "the TTCL challenge aggregation"),
    "paper": (
        "odyssey_eval.paper.cli:main",
        "import the paper's own games from the reference release (import, status)",
    ),
    "train": ("odyssey_agents.train:main", "train an LLM policy on a game with RL (GRPO + LoRA; train extra)"),
}


def usage() -> str:
    lines = ["usage: odyssey <command> [arguments]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in COMMANDS.items()]
    lines.append("\nRun 'odyssey <command> --help' for a command's own options.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    command, rest = args[0], args[1:]
    if command not in COMMANDS:
        print(f"odyssey: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    target, _ = COMMANDS[command]
    module_name, func_name = target.split(":")
    module = importlib.import_module(module_name)
    try:
        result = getattr(module, func_name)(rest)
    except BrokenPipeError:  # `odyssey games | head`: the reader left; that is not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps interpreter shutdown from flushing into the pipe
        return 0
    except Exception as exc:
        from odyssey_agents.errors import is_user_error

        if not is_user_error(exc):
            raise
        from odyssey_env.safeio import printable

        # Messages may quote run directories, game folders or model replies: escaped, line by line (a
        # game folder's problems are one per line; nothing from the data can add a line of its own).
        lines = str(exc).split("\n") if any(c.__name__ == "GameError" for c in type(exc).__mro__) else [str(exc)]
        print(f"odyssey {command}: " + "\n".join(printable(x) for x in lines), file=sys.stderr)
        return 2
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
