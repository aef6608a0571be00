"""``benchmarks/before_after.py``: each side runs the protocol with ``odyssey_env`` from its own tree, and a tree
that holds none is refused rather than measured with this checkout's code."""

from __future__ import annotations

import pytest

from tests.tools.scripts import BENCHMARKS, load


def _module():
    return load("before_after.py")


def test_a_tree_is_measured_with_its_own_code_and_one_without_it_refused(tmp_path):
    tool = _module()
    assert tool.measure(BENCHMARKS.parent, "mossfall", 5, 0) > 0
    with pytest.raises(RuntimeError, match="mossfall from"):
        tool.measure(tmp_path, "mossfall", 5, 0)
