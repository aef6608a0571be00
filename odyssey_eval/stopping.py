"""Ctrl-C and SIGTERM while a run plays: stop at the next step boundary, or at once when waiting on a model.

A run stopped in the middle of a step cannot be checkpointed there (the world may be half-updated, an
agent may have put the observation in its memory and be waiting for its model), so the first signal
only asks to stop: the loop finishes the step it is in, writes a checkpoint and leaves
(:attr:`StopSignals.requested`). A step of an agent that calls no model takes microseconds, so the
wait is not felt. An agent waiting on a model (5-30 s a call, longer for a QA round) is stopped at
once instead: ``urgent()`` says so, and the signal raises ``KeyboardInterrupt`` there, losing only the
step in progress, which is why such agents are checkpointed after every step. A second signal always
stops at once.

Handlers are installed only in the main thread (Python allows no other) and put back on exit, so a
library caller's own handlers survive a run.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["SIGNALS", "StopSignals"]

#: The signals that ask a run to stop (Ctrl-C; what ``kill``, SLURM and container runtimes send first).
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """A context manager: within it, the first SIGINT or SIGTERM sets :attr:`requested` (the signal's
    number) unless ``urgent()`` is true, in which case it raises ``KeyboardInterrupt`` at once, as a
    second signal always does."""

    def __init__(self, urgent: Callable[[], bool] = lambda: False):
        self.urgent = urgent
        self.requested: int | None = None
        #: The last signal received (the one a stop at once answered, or the request): the exit code's.
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    @property
    def name(self) -> str:
        """The requested signal's name (``SIGINT``), or ``""``."""
        return signal.Signals(self.requested).name if self.requested is not None else ""

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum
        if self.requested is not None or self.urgent():
            raise KeyboardInterrupt
        self.requested = signum

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        previous, self._previous = self._previous, {}
        for sig, handler in previous.items():
            signal.signal(sig, handler)
