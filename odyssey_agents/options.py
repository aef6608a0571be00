"""What a constructor accepts, for checking config groups before anything is built.

Configs name options by keyword; an option a class does not take must be an error that lists what it
does take, not a ``TypeError`` from deep inside, and never silently ignored.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def keyword_options(target: type | Callable[..., Any], *, keyword_only: bool = False) -> set[str]:
    """Names ``target`` accepts as keywords (only its keyword-only ones with ``keyword_only``).

    For a class, a constructor that takes ``**kwargs`` is read as passing them on to its base class
    (``EmbeddedLLM`` to ``TransformersLLM``, a paradigm to :class:`ReActAgent`), so the bases'
    options count too: otherwise every option a subclass forwards would be refused by config checks.
    """
    kinds = (
        (inspect.Parameter.KEYWORD_ONLY,)
        if keyword_only
        else (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )
    if not isinstance(target, type):
        return {p.name for p in inspect.signature(target).parameters.values() if p.kind in kinds}
    names: set[str] = set()
    for klass in target.__mro__:
        if klass is object:
            break
        init = vars(klass).get("__init__")
        if init is None:
            continue
        params = list(inspect.signature(init).parameters.values())[1:]  # without self
        names |= {p.name for p in params if p.kind in kinds}
        if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            break
    return names
