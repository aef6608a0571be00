"""What a constructor accepts, for checking config groups before anything is built.

Configs name options by keyword; an option a class does not take must be an error that lists what it
does take, not a ``TypeError`` from deep inside, and never silently ignored.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


def keyword_options(fn: Callable[..., Any], *, keyword_only: bool = False) -> set[str]:
    """Names ``fn`` accepts as keywords (only its keyword-only ones with ``keyword_only``)."""
    kinds = (inspect.Parameter.KEYWORD_ONLY,) if keyword_only else \
        (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds}
