"""Suite-wide settings: nothing a test does may read or change the user's own files; the quick subset.

``python -m pytest -m quick`` runs the tests that took at most :data:`QUICK_LIMIT` seconds when last
measured (``tests/durations.json``, written by ``tools/test_durations.py``) and every test not measured
yet: the subset to run while developing (about a minute and a half on 2 idle cores, against about eleven
for the whole suite). The whole suite is still what CI runs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: Tests slower than this (seconds, setup + call + teardown) are left out of ``-m quick``.
QUICK_LIMIT = 0.5
DURATIONS = Path(__file__).with_name("durations.json")


#: The folders :func:`pytest_configure` made, removed again when the session ends.
_MADE: list[str] = []


def pytest_configure(config):
    # The trust store of odyssey_env.trust lives in the user's config folder: tests get their own.
    _MADE.append(tempfile.mkdtemp(prefix="odyssey-trust-"))
    os.environ["ODYSSEY_TRUST_FILE"] = os.path.join(_MADE[-1], "trusted.json")
    # So is the user games directory (imported and generated games found by name): tests start with none.
    _MADE.append(tempfile.mkdtemp(prefix="odyssey-games-"))
    os.environ["ODYSSEY_GAMES_DIR"] = _MADE[-1]
    config.addinivalue_line(
        "markers",
        f"quick: took at most {QUICK_LIMIT} s when last measured (tests/durations.json); `pytest -m quick`",
    )


def pytest_unconfigure(config):
    # Every run of the suite used to leave its two folders behind in the system's temp folder.
    while _MADE:
        shutil.rmtree(_MADE.pop(), ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    durations = json.loads(DURATIONS.read_text(encoding="utf-8")) if DURATIONS.is_file() else {}
    quick = pytest.mark.quick
    for item in items:
        if durations.get(item.nodeid, 0.0) <= QUICK_LIMIT:
            item.add_marker(quick)
