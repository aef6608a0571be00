"""``benchmarks/step_bytecodes.py``: its counts are the same in every fresh process (what makes them worth
reading on a loaded machine; within one process a second count is lower, the one-time work done) and fall into
the phases it names."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.tools.scripts import BENCHMARKS, load


def _module():
    return load("step_bytecodes.py")


def test_bytecode_counts_repeat_exactly_and_name_the_phases():
    tool = _module()
    first = tool.count("mossfall", 30)
    groups = {key.split(":")[0] for key in first}
    assert {"listing", "rule", "verb", "render", "info", "engine"} <= groups <= set(tool.GROUPS)
    assert first["rule: main_quest"] > 0 and first["listing: (cache)"] > 0
    assert tool.summary("mossfall", first, 3).startswith("mossfall: ")


def test_two_fresh_processes_count_the_same():
    command = [sys.executable, str(BENCHMARKS / "step_bytecodes.py"), "mossfall", "--steps", "20"]
    runs = [
        subprocess.run(command, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        for seed in ("0", "1")
    ]
    assert runs[0].stdout == runs[1].stdout and "bytecodes a step" in runs[0].stdout
