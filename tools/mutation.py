#!/usr/bin/env python3
"""Mutation testing: inject one small bug at a time into a module and see whether its tests notice.

Usage (from the repository root; see docs/testing.md)::

    python tools/mutation.py odyssey_env/parsing.py            # one module, its configured tests
    python tools/mutation.py --all                             # every module in tools/mutation.toml
    python tools/mutation.py odyssey_env/rewards.py --list     # the mutants, without running anything

A *mutant* is the module with one change inside one function: a flipped comparison (``<`` / ``<=``,
``==`` / ``!=``, ``in`` / ``not in``, ``is`` / ``is not``), ±1 on a number, ``True`` / ``False``,
``and`` / ``or``, ``+`` / ``-`` and ``*`` / ``/``, a dropped ``not``, a negated ``if`` / ``while`` /
conditional / comprehension test, ``return X`` made ``return None``, or a dropped statement (a call,
an attribute or item assignment, an augmented assignment, ``del``, ``raise``, ``break``, ``continue``).
The mutant is *killed* when one of the module's tests fails (or hangs), and *survives* when they all
pass: a bug of that shape would go unnoticed. Score = killed / (mutants - reviewed equivalents).

Why not mutmut: mutmut 3 skips every decorated function, which here means every quest condition
(``@_register``) and the parser's cached helper; this tool mutates them all.

How it runs, so that each module takes minutes on two cores:

* the parent process imports the tests once (``pytest --collect-only``) and forks one child per
  mutant, which swaps the ``__code__`` of the one function the mutant changes and runs pytest. Each
  mutant runs in its own process, so nothing leaks from one mutant to the next;
* a first forked run of the tests records which tests call which function, so a mutant runs only the
  tests that reach its function, fastest first, stopping at the first failure;
* a function that no test calls (code that runs at import, say), or whose mutant changes the variables
  it takes from enclosing scopes (``super()`` dropped), is mutated in a fresh interpreter instead,
  whose import of the module compiles the mutant; ``--fresh`` does that for every mutant.

The tests each module runs against are listed in ``tools/mutation.toml``; mutants that no test can
kill because they do not change behaviour are listed, each with a one-line reason, in
``tools/mutation_equivalents.toml`` (entries that no longer match, or that a test kills, are errors).
Exit status: 0 when every module reaches its minimum score, 1 when one does not (or the allow-list is
stale), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import gc
import importlib
import importlib.abc
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:
    import tomllib
except ImportError:  # Python 3.10: pytest depends on tomli there
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "tools" / "mutation.toml"
EQUIVALENTS = ROOT / "tools" / "mutation_equivalents.toml"
PYTEST_ARGS = ("-q", "-p", "no:cacheprovider", "--no-header", "-x", "-W", "ignore")


class UsageError(Exception):
    """A mistake on the command line or in the configuration: one line, exit status 2."""


# ============================================================================ mutants
@dataclass(frozen=True)
class Mutant:
    """One change inside one function of a module."""

    index: int  # position in the module's deterministic mutant list
    owner: tuple[str, ...]  # qualified name of the outermost function whose code changes
    owner_line: int  # first line of its code object (the first decorator's line when decorated)
    path: tuple[tuple[str, int | None], ...]  # where the changed node is in the module's AST
    operator: str
    line: int
    before: str
    after: str
    key: str  # stable, readable identity used by the allow-list

    def describe(self) -> str:
        return f"line {self.line}: {self.key}"


_COMPARE_SWAP: dict[type, type] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BINOP_SWAP: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
}
_DROPPABLE = (ast.Expr, ast.AugAssign, ast.Delete, ast.Raise, ast.Break, ast.Continue)
_SKIPPED_FIELDS = {"decorator_list", "returns", "type_params", "annotation", "type_comment"}


def _short(node: ast.AST, limit: int = 90) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _replacements(node: ast.AST) -> Iterator[tuple[str, ast.AST, str]]:
    """(operator, replacement node, text of the change) for every mutation of ``node`` itself."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            swap = _COMPARE_SWAP.get(type(op))
            if swap is not None:
                new = copy.deepcopy(node)
                new.ops[i] = swap()
                yield "compare", new, _short(new)
    elif isinstance(node, ast.BoolOp):
        new = copy.deepcopy(node)
        new.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield "and/or", new, _short(new)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "drop not", copy.deepcopy(node.operand), _short(node.operand)
    elif isinstance(node, (ast.BinOp, ast.AugAssign)):
        swap = _BINOP_SWAP.get(type(node.op))
        if swap is not None:
            new = copy.deepcopy(node)
            new.op = swap()
            yield "arithmetic", new, _short(new)
    elif isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, bool):
            yield "constant", ast.Constant(not value), repr(not value)
        elif isinstance(value, (int, float)):
            for delta in (1, -1):
                new_value = value + delta
                new: ast.AST = (
                    ast.Constant(new_value) if new_value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-new_value))
                )
                yield "constant", new, repr(new_value)
    elif (
        isinstance(node, ast.Return)
        and node.value is not None
        and not (isinstance(node.value, ast.Constant) and node.value.value is None)
    ):
        yield "return None", ast.Return(ast.Constant(None)), "return None"


def _worth_negating(test: ast.expr) -> bool:
    """False where negating only repeats another mutant: ``not x`` (drop not) or ``a == b`` (flip)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return False
    return not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot))
    )


def _dropped(node: ast.stmt) -> bool:
    if isinstance(node, _DROPPABLE):
        return True
    return isinstance(node, ast.Assign) and all(isinstance(t, (ast.Attribute, ast.Subscript)) for t in node.targets)


def _walk(tree: ast.Module) -> Iterator[tuple[tuple[str, ...], int, tuple, ast.AST]]:
    """Every node inside a function: (owner function, its first line, path from the module, node).

    Module and class bodies are skipped except for the functions in them (their top-level code runs at
    import), and so are docstrings, decorators, annotations and default values (evaluated at definition).
    """

    def visit(
        node: ast.AST, path: tuple, owner: tuple[str, ...] | None, owner_line: int, scope: tuple[str, ...]
    ) -> Iterator:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if owner is None:
                owner = (*scope, node.name)
                owner_line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            body_start = 1 if node.body and _is_docstring(node.body[0]) else 0
            for i, stmt in enumerate(node.body[body_start:], start=body_start):
                yield from visit(stmt, (*path, ("body", i)), owner, owner_line, scope)
            return
        if isinstance(node, ast.ClassDef):
            if owner is not None:
                return  # a class inside a function: rare, and its body runs when the function does
            for i, stmt in enumerate(node.body):
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    yield from visit(stmt, (*path, ("body", i)), None, 0, (*scope, node.name))
            return
        if owner is None or isinstance(node, ast.arguments):
            return  # a lambda's parameters: their defaults are evaluated where the lambda is made
        yield owner, owner_line, path, node
        for name, value in ast.iter_fields(node):
            if name in _SKIPPED_FIELDS:
                continue
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        yield from visit(child, (*path, (name, i)), owner, owner_line, scope)
            elif isinstance(value, ast.AST):
                yield from visit(value, (*path, (name, None)), owner, owner_line, scope)

    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from visit(stmt, (("body", i),), None, 0, ())


def mutants_of(source: str, filename: str = "<module>") -> list[Mutant]:
    """The module's mutants, in a deterministic order (the same source gives the same list)."""
    tree = ast.parse(source, filename)
    out: list[Mutant] = []
    seen: dict[str, int] = {}

    def add(owner, owner_line, path, operator, node, before, after):
        qual = ".".join(owner)
        base = f"{qual}: {before} -> {after}"
        seen[base] = seen.get(base, 0) + 1
        key = base if seen[base] == 1 else f"{base} #{seen[base]}"
        out.append(Mutant(len(out), owner, owner_line, path, operator, node.lineno, before, after, key))

    for owner, owner_line, path, node in _walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            continue
        for k, (operator, _, after) in enumerate(_replacements(node)):
            add(owner, owner_line, (*path, ("replace", k)), operator, node, _short(node), after)
        if isinstance(node, (ast.If, ast.While, ast.IfExp)) and _worth_negating(node.test):
            add(
                owner,
                owner_line,
                (*path, ("negate", None)),
                "negate",
                node.test,
                _short(node.test),
                f"not ({_short(node.test)})",
            )
        if isinstance(node, ast.comprehension):
            for i, cond in enumerate(node.ifs):
                if not _worth_negating(cond):
                    continue
                add(owner, owner_line, (*path, ("negate-if", i)), "negate", cond, _short(cond), f"not ({_short(cond)})")
        if isinstance(node, ast.stmt) and _dropped(node):
            add(owner, owner_line, (*path, ("drop", None)), "drop statement", node, _short(node), "pass")
    return out


def _locate(tree: ast.AST, path: tuple) -> tuple[Any, str, int | None]:
    """The (parent, field, index) holding the node at ``path``."""
    node, parent, name, index = tree, None, "", None
    for name, index in path:
        parent = node
        value = getattr(node, name)
        node = value[index] if index is not None else value
    return parent, name, index


def mutated_tree(source: str, mutant: Mutant, filename: str = "<module>") -> ast.Module:
    """The module's AST with ``mutant`` applied (line numbers kept, so tracebacks point at the source)."""
    tree = ast.parse(source, filename)
    *where, (how, which) = mutant.path
    parent, name, index = _locate(tree, tuple(where))
    node = getattr(parent, name)[index] if index is not None else getattr(parent, name)
    if how == "replace":
        new: ast.AST = list(_replacements(node))[which][1]
    elif how == "negate":
        node.test = ast.UnaryOp(ast.Not(), node.test)
        new = node
    elif how == "negate-if":
        node.ifs[which] = ast.UnaryOp(ast.Not(), node.ifs[which])
        new = node
    else:
        assert how == "drop", how
        new = ast.Pass()
    if index is not None:
        getattr(parent, name)[index] = new
    else:
        setattr(parent, name, new)
    ast.copy_location(new, node)
    return ast.fix_missing_locations(tree)


# ============================================================================ applying a mutant
def _code_objects(code, names: tuple[str, ...]) -> Iterator:
    """Code objects reached from ``code`` by the given chain of ``co_name`` (class bodies included)."""
    if not names:
        yield code
        return
    for const in code.co_consts:
        if hasattr(const, "co_name") and const.co_name == names[0]:
            yield from _code_objects(const, names[1:])


def _live_function(module, mutant: Mutant):
    """The function object the running program calls for ``mutant.owner`` (unwrapping decorators)."""
    obj: Any = module
    for part in mutant.owner[:-1]:
        obj = vars(obj)[part] if isinstance(obj, type) else getattr(obj, part)
    raw = vars(obj).get(mutant.owner[-1]) if isinstance(obj, type) else getattr(obj, mutant.owner[-1], None)
    candidates = []
    wrapped = (getattr(raw, name, None) for name in ("__func__", "fget", "fset", "func"))  # func: cached_property
    for value in (raw, *wrapped):
        while value is not None:
            if hasattr(value, "__code__"):
                candidates.append(value)
            value = getattr(value, "__wrapped__", None)
    for fn in candidates:
        if fn.__code__.co_firstlineno == mutant.owner_line and fn.__code__.co_name == mutant.owner[-1]:
            return fn
    raise UsageError(f"cannot find the function {'.'.join(mutant.owner)} of {module.__name__} in the running program")


def _mutant_code(module, source: str, mutant: Mutant):
    """The code object of the mutant's function, compiled from the mutated module."""
    code = compile(mutated_tree(source, mutant, module.__file__), module.__file__, "exec")
    found = [c for c in _code_objects(code, mutant.owner) if c.co_firstlineno == mutant.owner_line]
    if len(found) != 1:
        raise UsageError(f"cannot compile the mutant of {'.'.join(mutant.owner)} alone ({len(found)} matches)")
    return found[0]


def swappable(module, source: str, mutant: Mutant) -> bool:
    """Whether the mutant's code can replace the running function's: not when the change drops or adds a
    variable of an enclosing scope (``return super().f()`` made ``return None`` loses the ``__class__``
    cell), since a function's closure cells are fixed when it is made. Such a mutant runs fresh instead."""
    live = _live_function(module, mutant).__code__
    return _mutant_code(module, source, mutant).co_freevars == live.co_freevars


def apply_in_place(module, source: str, mutant: Mutant) -> None:
    """Swap the code of the mutant's function in the already imported ``module`` (see :func:`swappable`)."""
    _live_function(module, mutant).__code__ = _mutant_code(module, source, mutant)


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports one module from a mutated AST (the fresh-process mode)."""

    def __init__(self, name: str, filename: str, source: str, mutant: Mutant):
        self.name, self.filename, self.source, self.mutant = name, filename, source, mutant

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name:
            return None
        return importlib.util.spec_from_file_location(fullname, self.filename, loader=self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        tree = mutated_tree(self.source, self.mutant, self.filename)
        exec(compile(tree, self.filename, "exec"), module.__dict__)


# ============================================================================ configuration
@dataclass
class Target:
    path: str  # relative to the repository root
    tests: list[str]
    deselect: list[str] = field(default_factory=list)
    min_score: float = 90.0

    @property
    def dotted(self) -> str:
        return self.path[:-3].replace("/", ".")

    def pytest_args(self) -> list[str]:
        args = [*PYTEST_ARGS]
        for d in self.deselect:
            args += ["--deselect", d]
        return args


def load_config(path: Path = CONFIG) -> dict[str, Target]:
    """Modules and their tests; a module names its tests itself or takes a shared ``suite``."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: {exc}") from None
    default_score = float(raw.get("min_score", 90))
    suites = raw.get("suites", {})
    out = {}
    for name, spec in raw.get("modules", {}).items():
        where = f"{path.name}: modules.{name!r}"
        if not isinstance(spec, dict):
            raise UsageError(f"{where} must be a table")
        unknown = set(spec) - {"tests", "deselect", "suite", "min_score"}
        if unknown:
            raise UsageError(f"{where} has unknown key(s) {', '.join(sorted(unknown))}")
        if "suite" in spec:
            if spec["suite"] not in suites:
                raise UsageError(f"{where} names suite {spec['suite']!r}, not defined under [suites]")
            spec = {**suites[spec["suite"]], **spec}
        tests, deselect = spec.get("tests"), spec.get("deselect", [])
        if not (isinstance(tests, list) and tests and all(isinstance(t, str) for t in tests)):
            raise UsageError(f"{where} needs a non-empty list of test paths 'tests' (or a 'suite')")
        if not (isinstance(deselect, list) and all(isinstance(t, str) for t in deselect)):
            raise UsageError(f"{where}: 'deselect' must be a list of test ids")
        out[name] = Target(name, list(tests), list(deselect), float(spec.get("min_score", default_score)))
    return out


def load_equivalents(path: Path = EQUIVALENTS) -> dict[str, dict[str, str]]:
    """module -> {mutant key: reason}."""
    if not path.exists():
        return {}
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: {exc}") from None
    out: dict[str, dict[str, str]] = {}
    for i, entry in enumerate(raw.get("equivalent", [])):
        if set(entry) != {"module", "mutant", "reason"} or not all(isinstance(v, str) and v for v in entry.values()):
            raise UsageError(f"{path}: equivalent[{i}] needs exactly the text fields module, mutant and reason")
        out.setdefault(entry["module"], {})[entry["mutant"]] = entry["reason"]
    return out


# ============================================================================ running
@dataclass
class Verdict:
    mutant: Mutant
    status: str  # killed | timeout | survived | error
    seconds: float
    how: str = "fork"  # fork | fresh
    tests: int = 0


def _run_forked(body: Callable[[], int], timeout: float) -> tuple[str, float]:
    """Run ``body`` in a forked child, output discarded; ('passed' | 'failed' | ..., seconds)."""
    start = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        rc = TOOL_ERROR
        stderr = os.dup(2)
        try:
            os.setpgid(0, 0)  # its own process group, so that a hang is killed whole
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            rc = body()
        except BaseException:
            os.write(stderr, traceback.format_exc().encode())
        finally:
            os._exit(rc)
    deadline = start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout", time.monotonic() - start
        time.sleep(0.005)
    seconds = time.monotonic() - start
    if os.WIFSIGNALED(status):
        return "crashed", seconds
    return _exit_status(os.WEXITSTATUS(status)), seconds


TOOL_ERROR = 70


def _exit_status(code: int) -> str:
    """pytest's exit code as a run status: 1 tests failed, 2 errors while collecting (a mutant that breaks
    the import), 3 an internal error raised by the code under test; 4, 5 and the tool's own errors are not
    verdicts."""
    if code == 0:
        return "passed"
    if code in (1, 2, 3):
        return "failed"
    return "tool error" if code == TOOL_ERROR else f"pytest exit {code}"


class Tracker:
    """pytest plugin for the baseline run: which test calls which mutated function, and how long each test takes."""

    def __init__(self, codes: dict[Any, str]):
        self.codes = codes  # code object -> owner name
        self.current: str | None = None
        self.calls: dict[str, set[str]] = {}
        self.durations: dict[str, float] = {}
        self.failed: list[str] = []

    def _profile(self, frame, event, arg):
        if event == "call":
            owner = self.codes.get(frame.f_code)
            if owner is not None:
                self.calls.setdefault(owner, set()).add(self.current)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.current = item.nodeid
        start = time.perf_counter()
        sys.setprofile(self._profile)
        try:
            return (yield)
        finally:
            sys.setprofile(None)
            self.durations[item.nodeid] = time.perf_counter() - start

    def pytest_runtest_logreport(self, report):
        if report.failed:
            self.failed.append(report.nodeid)


class Runner:
    """Runs the mutants of one module."""

    def __init__(self, target: Target, equivalents: dict[str, str], *, fresh: bool = False, root: Path = ROOT):
        self.target, self.equivalents, self.fresh, self.root = target, equivalents, fresh, root
        self.file = root / target.path
        if not self.file.is_file():
            raise UsageError(f"no such module file: {target.path}")
        self.source = self.file.read_text(encoding="utf-8")
        self.mutants = mutants_of(self.source, str(self.file))

    # ---------------------------------------------------------------- phases
    def _prepare(self) -> Any:
        """Import the module and the tests once, in this process, so that every fork starts warm."""
        os.chdir(self.root)
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))
        module = importlib.import_module(self.target.dotted)
        if Path(module.__file__).resolve() != self.file.resolve():
            raise UsageError(
                f"{self.target.dotted} imports from {module.__file__}, not {self.file}: "
                "install the checkout in editable mode (pip install -e .)"
            )
        saved = os.dup(1), os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            rc = pytest.main([*self.target.pytest_args(), "--collect-only", *self.target.tests])
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
        if rc != 0:
            raise UsageError(
                f"collecting the tests of {self.target.path} failed (pytest exit {rc}); "
                f"run: python -m pytest --collect-only {' '.join(self.target.tests)}"
            )
        # Everything imported so far is shared by every fork: freeze it out of the garbage collector's sight, so
        # that pytest's collections at the end of each child's session do not walk it (3-4 times faster).
        gc.freeze()
        return module

    def _baseline(self, module) -> tuple[dict[str, set[str]], dict[str, float]]:
        """Run the tests once, unmutated, recording which test calls which function."""
        codes = {}
        for m in self.mutants:
            fn = _live_function(module, m)
            codes[fn.__code__] = ".".join(m.owner)
        fd, out_name = tempfile.mkstemp(suffix=".json")
        os.close(fd)

        def body() -> int:
            tracker = Tracker(codes)
            rc = pytest.main([*self.target.pytest_args(), *self.target.tests], plugins=[tracker])
            Path(out_name).write_text(
                json.dumps(
                    {
                        "rc": int(rc),
                        "failed": tracker.failed,
                        "calls": {k: sorted(v) for k, v in tracker.calls.items()},
                        "durations": tracker.durations,
                    }
                )
            )
            return 0

        status, seconds = _run_forked(body, timeout=3600)
        try:
            data = json.loads(Path(out_name).read_text() or "{}")
        finally:
            os.unlink(out_name)
        if status != "passed" or data.get("rc") != 0:
            failed = ", ".join(data.get("failed", [])[:5]) or status
            raise UsageError(
                f"the tests of {self.target.path} do not pass unmutated ({failed}); "
                f"run: python -m pytest {' '.join(self.target.tests)}"
            )
        print(f"  baseline: {len(data['durations'])} tests in {seconds:.1f}s (traced)", flush=True)
        return {k: set(v) for k, v in data["calls"].items()}, data["durations"]

    def _run_one(self, module, mutant: Mutant, tests: list[str], budget: float) -> Verdict:
        def body() -> int:
            apply_in_place(module, self.source, mutant)
            return int(pytest.main([*self.target.pytest_args(), *tests]))

        status, seconds = _run_forked(body, budget)
        return Verdict(mutant, _status(status), seconds, "fork", len(tests))

    def _run_fresh(self, mutant: Mutant, budget: float) -> Verdict:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--_fresh-child",
            str(self.root),
            self.target.path,
            str(mutant.index),
            "--",
            *self.target.pytest_args(),
            *self.target.tests,
        ]
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd, cwd=self.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            code = proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return Verdict(mutant, "timeout", time.monotonic() - start, "fresh")
        return Verdict(mutant, _status(_exit_status(code)), time.monotonic() - start, "fresh", len(self.target.tests))

    def run(self, progress: Callable[[Verdict], None] = lambda v: None) -> list[Verdict]:
        module = self._prepare()
        calls, durations = self._baseline(module)
        total = sum(durations.values())
        verdicts = []
        for mutant in self.mutants:
            owner = ".".join(mutant.owner)
            tests = sorted(calls.get(owner, ()), key=lambda t: durations.get(t, 0.0))
            if self.fresh or not tests or not swappable(module, self.source, mutant):
                verdict = self._run_fresh(mutant, budget=60 + 5 * total)
            else:
                budget = 10 + 5 * sum(durations.get(t, 0.0) for t in tests)
                verdict = self._run_one(module, mutant, tests, budget)
            verdicts.append(verdict)
            progress(verdict)
        return verdicts


def _status(run_status: str) -> str:
    return {"passed": "survived", "failed": "killed", "timeout": "timeout", "crashed": "killed"}.get(
        run_status, "error"
    )


def _fresh_child(root: Path, module_path: str, index: int, pytest_args: Sequence[str]) -> int:
    """Entry point of a fresh-process mutant: import the module mutated, then run pytest."""
    os.chdir(root)
    sys.path.insert(0, str(root))
    file = root / module_path
    source = file.read_text(encoding="utf-8")
    mutant = mutants_of(source, str(file))[index]
    sys.meta_path.insert(0, _MutantFinder(module_path[:-3].replace("/", "."), str(file), source, mutant))
    return int(pytest.main(list(pytest_args)))


# ============================================================================ reporting
@dataclass
class Score:
    module: str
    total: int
    killed: int
    survived: list[Verdict]
    equivalent: int
    errors: list[Verdict]
    stale: list[str]  # allow-list entries matching no mutant
    killed_equivalents: list[str]  # allow-listed, yet a test kills them
    seconds: float
    min_score: float

    @property
    def score(self) -> float:
        counted = self.total - self.equivalent
        return 100.0 * self.killed / counted if counted else 100.0

    @property
    def ok(self) -> bool:
        return self.score >= self.min_score and not self.stale and not self.killed_equivalents and not self.errors


def score(target: Target, verdicts: list[Verdict], equivalents: dict[str, str], seconds: float) -> Score:
    keys = {v.mutant.key for v in verdicts}
    killed = survived_equivalent = 0
    survived, errors, killed_eq = [], [], []
    for v in verdicts:
        listed = v.mutant.key in equivalents
        if v.status in ("killed", "timeout"):
            killed += 1
            if listed:
                killed_eq.append(v.mutant.key)
        elif v.status == "survived":
            if listed:
                survived_equivalent += 1
            else:
                survived.append(v)
        else:
            errors.append(v)
    stale = sorted(k for k in equivalents if k not in keys)
    # A killed allow-listed mutant is not equivalent: count it as killed and report the entry.
    return Score(
        target.path,
        len(verdicts),
        killed,
        survived,
        survived_equivalent,
        errors,
        stale,
        killed_eq,
        seconds,
        target.min_score,
    )


def report(s: Score) -> str:
    lines = [
        f"{s.module}: {s.score:.1f}% ({s.killed} killed of {s.total - s.equivalent}; "
        f"{s.equivalent} equivalent, {len(s.survived)} survived) in {s.seconds:.0f}s"
        + ("" if s.score >= s.min_score else f"  BELOW {s.min_score:g}%")
    ]
    for v in s.survived:
        lines.append(f"  survived  {v.mutant.describe()}")
    for v in s.errors:
        lines.append(f"  error     {v.mutant.describe()} ({v.status})")
    for k in s.stale:
        lines.append(f"  stale allow-list entry (no such mutant any more): {k!r}")
    for k in s.killed_equivalents:
        lines.append(f"  allow-listed as equivalent, but a test kills it (remove the entry): {k!r}")
    return "\n".join(lines)


# ============================================================================ command line
class Progress:
    """One character per mutant as it is judged: . killed, T timed out, S survived, e equivalent, E error."""

    def __init__(self, equivalents: dict[str, str]):
        self.equivalents, self.count = equivalents, 0
        self.marks = {"killed": ".", "timeout": "T", "survived": "S", "error": "E"}

    def __call__(self, v: Verdict) -> None:
        self.count += 1
        mark = "e" if v.status == "survived" and v.mutant.key in self.equivalents else self.marks[v.status]
        print(mark, end="\n" if self.count % 80 == 0 else "", flush=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python tools/mutation.py",
        description=__doc__.split("\n\n")[0],
        epilog="Configuration: tools/mutation.toml (tests per module) and "
        "tools/mutation_equivalents.toml (reviewed equivalent mutants).",
    )
    p.add_argument("modules", nargs="*", help="module files, as listed in tools/mutation.toml")
    p.add_argument("--all", action="store_true", help="every module of tools/mutation.toml, one after another")
    p.add_argument("--list", action="store_true", help="print the mutants and exit")
    p.add_argument("--fresh", action="store_true", help="run every mutant in a fresh interpreter (slow, exact)")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--config", default=str(CONFIG), help=argparse.SUPPRESS)
    p.add_argument("--equivalents", default=str(EQUIVALENTS), help=argparse.SUPPRESS)
    p.add_argument("--root", default=str(ROOT), help=argparse.SUPPRESS)  # for the tool's own tests
    return p


def _select(args: argparse.Namespace) -> tuple[dict[str, Target], dict[str, dict[str, str]], list[str]]:
    config = load_config(Path(args.config))
    equivalents = load_equivalents(Path(args.equivalents))
    names = list(config) if args.all else args.modules
    if not names:
        raise UsageError(f"name a module (e.g. odyssey_env/parsing.py) or pass --all; configured: {', '.join(config)}")
    unknown = [n for n in names if n not in config]
    if unknown:
        raise UsageError(f"not in {Path(args.config).name}: {', '.join(unknown)}; configured: {', '.join(config)}")
    unknown_eq = sorted(set(equivalents) - set(config))
    if unknown_eq:
        raise UsageError(f"{Path(args.equivalents).name} names unconfigured module(s): {', '.join(unknown_eq)}")
    return config, equivalents, names


def _as_json(scores: list[Score]) -> str:
    return (
        json.dumps(
            [
                {
                    "module": s.module,
                    "score": round(s.score, 2),
                    "mutants": s.total,
                    "killed": s.killed,
                    "equivalent": s.equivalent,
                    "seconds": round(s.seconds, 1),
                    "survived": [{"line": v.mutant.line, "mutant": v.mutant.key} for v in s.survived],
                    "errors": [{"line": v.mutant.line, "mutant": v.mutant.key, "status": v.status} for v in s.errors],
                    "stale_equivalents": s.stale,
                    "killed_equivalents": s.killed_equivalents,
                }
                for s in scores
            ],
            indent=1,
        )
        + "\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--_fresh-child"]:
        sep = argv.index("--")
        return _fresh_child(Path(argv[1]), argv[2], int(argv[3]), argv[sep + 1 :])
    args = _parser().parse_args(argv)
    root = Path(args.root).resolve()
    try:
        config, equivalents, names = _select(args)
        if args.list:
            for name in names:
                runner = Runner(config[name], equivalents.get(name, {}), root=root)
                print(f"{name}: {len(runner.mutants)} mutants")
                for m in runner.mutants:
                    print(f"  {m.describe()}")
            return 0
        scores = []
        for name in names:
            runner = Runner(config[name], equivalents.get(name, {}), fresh=args.fresh, root=root)
            print(f"{name}: {len(runner.mutants)} mutants, tests: {' '.join(config[name].tests)}", flush=True)
            start = time.monotonic()
            verdicts = runner.run(Progress(runner.equivalents))
            print()
            s = score(config[name], verdicts, runner.equivalents, time.monotonic() - start)
            print(report(s), flush=True)
            scores.append(s)
        if len(scores) > 1:
            print("\n| module | mutants | equivalent | killed | survived | score |\n|---|---|---|---|---|---|")
            for s in scores:
                print(f"| {s.module} | {s.total} | {s.equivalent} | {s.killed} | {len(s.survived)} | {s.score:.1f}% |")
        if args.json:
            Path(args.json).write_text(_as_json(scores))
        return 0 if all(s.ok for s in scores) else 1
    except UsageError as exc:
        print(f"mutation: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # piped into head: not an error
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
