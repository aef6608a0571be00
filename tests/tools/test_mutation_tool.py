"""tools/mutation.py, the project's mutation tester: which mutants it makes, and that it judges them right.

The end-to-end test runs the tool, as a user would, on a small module and its tests in a temporary
folder, and checks every verdict: killed, survived, allow-listed as equivalent, and code that runs at
import (mutated in a fresh interpreter).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "mutation.py"


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("odyssey_mutation_tool", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


SOURCE = textwrap.dedent('''
    """A module docstring."""

    LIMIT = 10  # module level: runs at import, never mutated


    def mark(f):
        return f  # runs at import only: its mutant needs a fresh interpreter


    @mark
    def clamp(x, lo=0, hi=LIMIT):
        """Docstrings, decorators and default values are left alone."""
        if x < lo:
            return lo
        return min(x, hi)


    class Box:
        size = 3  # a class attribute: not mutated

        def small(self, x):
            return x <= self.size and x != 0
''')


def test_mutants_cover_the_operators_inside_functions_only(tool):
    keys = [m.key for m in tool.mutants_of(SOURCE)]
    assert keys == [
        "mark: return f -> return None",
        "clamp: x < lo -> not (x < lo)",
        "clamp: x < lo -> x <= lo",
        "clamp: return lo -> return None",
        "clamp: return min(x, hi) -> return None",
        "Box.small: return x <= self.size and x != 0 -> return None",
        "Box.small: x <= self.size and x != 0 -> x <= self.size or x != 0",
        "Box.small: x <= self.size -> x < self.size",
        "Box.small: x != 0 -> x == 0",
        "Box.small: 0 -> 1",
        "Box.small: 0 -> -1",
    ]


def test_each_mutant_changes_exactly_what_it_says(tool):
    original = ast.unparse(ast.parse(SOURCE))
    seen = set()
    for m in tool.mutants_of(SOURCE):
        text = ast.unparse(tool.mutated_tree(SOURCE, m))
        assert text != original and text not in seen, m.key
        seen.add(text)
        compile(tool.mutated_tree(SOURCE, m), "<mutant>", "exec")
    m = next(m for m in tool.mutants_of(SOURCE) if m.key == "clamp: x < lo -> x <= lo")
    assert "if x <= lo:" in ast.unparse(tool.mutated_tree(SOURCE, m))
    assert m.line == 14 and m.owner == ("clamp",)


def test_repeated_changes_get_numbered_keys(tool):
    keys = [m.key for m in tool.mutants_of("def f(a):\n    return a[1] + a[1]\n")]
    assert "f: 1 -> 2" in keys and "f: 1 -> 2 #2" in keys and len(keys) == len(set(keys))


TESTS = textwrap.dedent("""
    from demo.calc import Box, clamp


    def test_clamp():
        assert clamp(-5) == 0 and clamp(5) == 5 and clamp(50) == 10
        assert callable(clamp)


    def test_small():
        assert Box().small(2) and not Box().small(5)
""")


def _project(tmp_path: Path, equivalents: str, source: str = SOURCE, tests: str = TESTS) -> Path:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "__init__.py").write_text("")
    (tmp_path / "demo" / "calc.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(tests)
    (tmp_path / "mutation.toml").write_text('min_score = 60\n[modules."demo/calc.py"]\ntests = ["tests"]\n')
    (tmp_path / "equivalents.toml").write_text(equivalents)
    return tmp_path


def _run(root: Path, *extra: str) -> tuple[int, str, list]:
    out = root / "result.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(TOOL),
            "demo/calc.py",
            "--root",
            str(root),
            "--config",
            str(root / "mutation.toml"),
            "--equivalents",
            str(root / "equivalents.toml"),
            "--json",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, proc.stdout + proc.stderr, json.loads(out.read_text()) if out.exists() else []


EQUIVALENT = """
[[equivalent]]
module = "demo/calc.py"
mutant = "clamp: x < lo -> x <= lo"
reason = "at x == lo both branches return lo"
"""


def test_the_tool_judges_every_mutant(tmp_path):
    root = _project(tmp_path, EQUIVALENT)
    code, output, (result,) = _run(root)
    assert {s["mutant"] for s in result["survived"]} == {
        "Box.small: x <= self.size -> x < self.size",
        "Box.small: 0 -> 1",
        "Box.small: 0 -> -1",
    }
    assert (result["mutants"], result["equivalent"], result["killed"]) == (11, 1, 7)
    assert result["score"] == 70.0 and code == 0, output  # 7 of 10; the bar here is 60
    assert "demo/calc.py: 70.0% (7 killed of 10; 1 equivalent, 3 survived)" in output
    assert "survived  line 23: Box.small: 0 -> 1" in output


def test_a_stale_or_killed_allow_list_entry_fails_the_run(tmp_path):
    source = SOURCE.replace("@mark\n", "").replace(
        "def mark(f):\n    return f  # runs at import only: its mutant needs a fresh interpreter\n", ""
    )
    assert "tallowmere" not in source
    tests = TESTS
    root = _project(
        tmp_path,
        EQUIVALENT.replace("x <= lo", "x >= lo")
        + EQUIVALENT.replace("clamp: x < lo -> x <= lo", "Box.small: x != 0 -> x == 0"),
        source,
        tests,
    )
    code, output, (result,) = _run(root)
    assert code == 1
    assert result["stale_equivalents"] == ["clamp: x < lo -> x >= lo"]
    assert result["killed_equivalents"] == ["Box.small: x != 0 -> x == 0"]
    assert "stale allow-list entry" in output and "a test kills it (remove the entry)" in output


def test_usage_errors_are_one_line(tmp_path):
    root = _project(tmp_path, "")
    proc = subprocess.run(
        [sys.executable, str(TOOL), "demo/other.py", "--root", str(root), "--config", str(root / "mutation.toml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "mutation: not in mutation.toml: demo/other.py; configured: demo/calc.py"


def test_a_mutant_that_drops_super_runs_in_a_fresh_interpreter(tmp_path):
    """``return super().f()`` made ``return None`` compiles without the ``__class__`` cell: its code cannot be
    swapped into the running function, so the tool mutates it in a fresh interpreter rather than erring."""
    source = textwrap.dedent("""
        class Base:
            def size(self):
                return 3


        class Box(Base):
            def size(self):
                return super().size() + 1
    """)
    tests = "from demo.calc import Box\n\n\ndef test_size():\n    assert Box().size() == 4\n"
    root = _project(tmp_path, "", source, tests)
    code, output, (result,) = _run(root)
    assert result["errors"] == [] and result["survived"] == [], output
    assert (result["mutants"], result["killed"], code) == (7, 7, 0), output


def test_a_cached_property_is_mutated_in_place(tmp_path):
    """``functools.cached_property`` keeps its function as ``func`` (not ``fget``): the tool finds it there."""
    source = textwrap.dedent("""
        import functools


        class Box:
            @functools.cached_property
            def size(self):
                return 3 + 1
    """)
    tests = "from demo.calc import Box\n\n\ndef test_size():\n    assert Box().size == 4\n"
    root = _project(tmp_path, "", source, tests)
    code, output, (result,) = _run(root)
    assert result["errors"] == [] and result["survived"] == [], output
    assert (result["mutants"], result["killed"], code) == (6, 6, 0), output
