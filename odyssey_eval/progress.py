"""Progress of a run: a live bar on a terminal, plain lines in a log.

On an interactive terminal, rich's bar redraws a few times a second however fast the steps come.
When output goes to a file, a pipe, CI or a batch job, a bar would be noise, but silence is worse: a
run of a slow model looks hung. There it prints one plain line per step (step, rewards, tokens,
seconds per step), at most one a second, so a fast agent's run stays a short log.

When many cells play in one process (``launcher=concurrent``), one bar or line per cell per second
would be noise of another kind: the launcher shows one board for the sweep instead, and each cell's
thread hands its updates to it (:func:`reporting_to`): ``make_progress`` then returns what the board
gave that thread, whatever the cell's own ``eval.progress`` says.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["LineProgress", "NullProgress", "Progress", "make_progress", "reporting_to"]

_thread = threading.local()


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

        self._bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[stats]}"),
            TimeElapsedColumn(),
            transient=False,
            auto_refresh=False,
        )
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


class LineProgress(NullProgress):
    """One line per step for logs, at most one per ``interval`` seconds (a fast agent's steps are
    summed into the next line); a forced update always prints unless nothing changed since the last."""

    def __init__(self, label: str, total: int, interval: float = 1.0, stream: TextIO | None = None):
        self.label, self.total, self.interval = label, total, interval
        self._stream = stream
        self._start = self._last = time.monotonic()
        self._updates = self._last_updates = 0
        self._shown: tuple[Any, ...] | None = None

    def update(self, steps: int, main: int, sup: int, tokens: int, phase: str = "", force: bool = False) -> None:
        now = time.monotonic()
        shown = (steps, main, sup, tokens, phase)
        if not force:
            self._updates += 1  # the runner updates once per step, tutorial steps included
        if shown == self._shown or (not force and now - self._last < self.interval):
            return
        per_step = (now - self._last) / max(1, self._updates - self._last_updates)
        elapsed = int(now - self._start)
        line = (
            f"{self.label}: step {steps}/{self.total}"
            + (f" [{phase}]" if phase else "")
            + f"  main {main}  sup {sup}  tokens {tokens:,}  {per_step:.1f} s/step"
            + f"  {elapsed // 3600}:{elapsed // 60 % 60:02d}:{elapsed % 60:02d}"
        )
        print(line, file=self._stream or sys.stdout, flush=True)
        self._shown, self._last, self._last_updates = shown, now, self._updates


def make_progress(setting: Any, label: str, total: int) -> NullProgress:
    """``setting``: ``auto`` (a bar on a terminal, lines otherwise), ``true``/``bar`` (a bar),
    ``lines`` (lines), ``false`` (nothing). In a thread :func:`reporting_to` set up: its reporter."""
    factory = getattr(_thread, "factory", None)
    if factory is not None:
        return factory(label, total)
    if setting in (False, "false", "off", "no"):
        return NullProgress()
    if setting == "lines" or (setting in ("auto", None) and not sys.stdout.isatty()):
        return LineProgress(label, total)
    try:
        return Progress(label, total)
    except ImportError:  # rich is in the eval extra; without it, lines
        return LineProgress(label, total)


@contextmanager
def reporting_to(factory: Callable[[str, int], NullProgress]) -> Iterator[None]:
    """In this thread, ``make_progress(setting, label, total)`` returns ``factory(label, total)``."""
    _thread.factory = factory
    try:
        yield
    finally:
        del _thread.factory
