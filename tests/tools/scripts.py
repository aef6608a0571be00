"""The benchmark scripts the tool tests exercise, loaded from their files (``benchmarks/`` is no package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def load(relative: str) -> ModuleType:
    """``benchmarks/<relative>`` as a module of its own (``harm_trace.py`` -> ``odyssey_harm_trace``)."""
    path = BENCHMARKS / relative
    spec = importlib.util.spec_from_file_location("odyssey_" + path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
