"""``benchmarks/before_after.py``: each side runs the protocol with ``odyssey_env`` from its own tree, and a tree
that holds none is refused rather than measured with this checkout's code."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _module():
    spec = importlib.util.spec_from_file_location("odyssey_before_after", BENCHMARKS / "before_after.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_tree_is_measured_with_its_own_code_and_one_without_it_refused(tmp_path):
    tool = _module()
    assert tool.measure(BENCHMARKS.parent, "mossfall", 5, 0) > 0
    with pytest.raises(RuntimeError, match="mossfall from"):
        tool.measure(tmp_path, "mossfall", 5, 0)
