"""Shared pieces of the security tests: an isolated trust store, payload sentinels, hostile game folders."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from odyssey_env import trust

CORPUS = Path(__file__).parent / "corpus"
TINY = Path(__file__).parents[1] / "env" / "data" / "tiny"
ROOT = Path(__file__).parents[2]


def payload(name: str, sentinel: Path) -> str:
    """The corpus file ``name`` with its sentinel placeholder pointing at ``sentinel``."""
    return (CORPUS / name).read_text().replace("@SENTINEL@", str(sentinel))


@pytest.fixture
def store(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "config" / "trusted.json"
    monkeypatch.setenv(trust.TRUST_FILE_ENV, str(path))
    return path


@pytest.fixture
def sentinel(tmp_path) -> Path:
    """A file a payload appends to when it runs: it must never exist after a test."""
    return tmp_path / "PAYLOAD-RAN"


def game_folder(parent: Path, name: str = "game", rules: str | None = None) -> Path:
    folder = parent / name
    folder.mkdir()
    shutil.copy(TINY / "world.json", folder / "world.json")
    if rules is not None:
        (folder / "rules.py").write_text(rules)
    return folder


def plant_pyc(folder: Path, source: str) -> Path:
    """``__pycache__/rules.<tag>.pyc`` compiled from ``source`` as an unchecked-hash pyc (PEP 552)."""
    src = folder.parent / f".{folder.name}-pyc-source.py"
    src.write_text(source)
    target = Path(importlib.util.cache_from_source(str(folder / "rules.py")))
    target.parent.mkdir(exist_ok=True)
    py_compile.compile(
        str(src), cfile=str(target), doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
    )
    src.unlink()
    return target


def odyssey(*args: str, cwd: Path, store: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """The ``odyssey`` command in a child process with its own trust store."""
    env = {**os.environ, trust.TRUST_FILE_ENV: str(store), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "odyssey_eval.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line_refusal(done: subprocess.CompletedProcess, *needles: str) -> str:
    """The refusal on stderr: non-zero exit, no traceback, one line, naming what it should."""
    err = done.stderr.strip()
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in err, err
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
