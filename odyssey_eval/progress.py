"""A live progress line (steps, rewards, tokens) for runs started from an interactive terminal.

Off when output is not a terminal (logs, CI, SLURM, joblib workers), so it costs batch runs
nothing; when on, it redraws a few times a second however fast the steps come.
"""

from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["NullProgress", "Progress", "make_progress"]


class NullProgress:
    def update(self, steps: int, main: int, sup: int, tokens: int, phase: str = "", force: bool = False) -> None:
        pass

    def close(self) -> None:
        pass


class Progress(NullProgress):
    """rich's progress bar, refreshed at most every ``interval`` seconds."""

    def __init__(self, label: str, total: int, interval: float = 0.2):
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), transient=False,
                                 auto_refresh=False)
        self._task = self._bar.add_task(label, total=total, stats="")
        self._bar.start()
        self._interval = interval
        self._next = 0.0

    def update(self, steps: int, main: int, sup: int, tokens: int, phase: str = "", force: bool = False) -> None:
        now = time.monotonic()
        if now < self._next and not force:
            return
        self._next = now + self._interval
        stats = f"main {main}  sup {sup}  tokens {tokens:,}" + (f"  [{phase}]" if phase else "")
        self._bar.update(self._task, completed=steps, stats=stats)
        self._bar.refresh()

    def close(self) -> None:
        self._bar.refresh()
        self._bar.stop()


def make_progress(setting: Any, label: str, total: int) -> NullProgress:
    """``setting``: true / false / "auto" (on when stdout is a terminal and rich is installed)."""
    if setting in (False, "false", "off", "no"):
        return NullProgress()
    if setting in ("auto", None) and not sys.stdout.isatty():
        return NullProgress()
    try:
        return Progress(label, total)
    except ImportError:
        return NullProgress()
