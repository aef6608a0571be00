"""``python -m odyssey_agents.train <method> key=value ...`` (also ``odyssey train``): RL training of an
LLM policy on a game. Methods: ``grpo`` (TRL's GRPOTrainer with a LoRA adapter; see
:mod:`odyssey_agents.training.grpo`). Needs the ``train`` extra: ``pip install "odyssey-gym[train]"``.

    python -m odyssey_agents.train grpo game=mossfall model=embedded steps=50
    python -m odyssey_agents.train grpo game=tallowmere model=Qwen/Qwen3-4B steps=500 num_generations=8 batch_size=8
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from odyssey_agents.errors import ConfigError

__all__ = ["METHODS", "main"]

#: method -> "module:function" taking the key=value arguments (imported only when chosen)
METHODS: dict[str, str] = {"grpo": "odyssey_agents.training.grpo:main"}

USAGE = (
    "usage: odyssey train <method> key=value ...\n\nmethods:\n  grpo   GRPO with a LoRA adapter on a game "
    "(TRL); e.g. odyssey train grpo game=mossfall model=embedded steps=50\n\nSettings and outputs: docs/agents.md"
)


def main(argv: Sequence[str] | None = None) -> int:
    """Dispatch to a method; a user's mistake raises an :class:`~odyssey_agents.errors.OdysseyError`."""
    import importlib

    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    method, rest = args[0], args[1:]
    if method not in METHODS:
        raise ConfigError(f"unknown training method {method!r}; known: {', '.join(METHODS)}")
    module, _, function = METHODS[method].partition(":")
    return int(getattr(importlib.import_module(module), function)(rest) or 0)


def _run() -> int:
    """``python -m odyssey_agents.train``: user mistakes as one line and exit code 2, as ``odyssey`` does."""
    from odyssey_agents.errors import is_user_error

    try:
        return main()
    except Exception as exc:
        if not is_user_error(exc):
            raise
        print(f"odyssey train: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_run())
