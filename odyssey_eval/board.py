"""One progress board for a sweep whose cells play together in one process (``launcher=concurrent``).

Each cell's thread reports its steps through :class:`CellReporter` (what ``make_progress`` returns in
that thread, see :func:`odyssey_eval.progress.reporting_to`); the launcher's own thread draws the board:

* on a terminal, a live table with one line per cell (running cells first, then failed, then finished,
  as many as the terminal holds) under a summary line;
* otherwise (a log, CI, a batch job), the summary line every ``interval`` seconds and when the sweep ends.

The summary: cells finished, skipped, failed, running and waiting; play steps done of all; model calls
in flight, ``429`` answers and failed attempts (from the process's server gates,
:mod:`odyssey_agents.llm.limits`); tokens; and the time left at the rate of the sweep so far.

The board is also how the launcher stops the cells on Ctrl-C: once :meth:`SweepBoard.stop` is called,
each cell's next step report raises ``KeyboardInterrupt`` in that cell's thread, and the cell stops
there as a Ctrl-C'd run does (its directory resumable from its last checkpoint).
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from odyssey_eval.progress import NullProgress

if TYPE_CHECKING:
    from rich.console import JustifyMethod

__all__ = ["CellReporter", "SweepBoard"]


@dataclass
class _Cell:
    label: str
    total: int
    status: str = "waiting"  # waiting | running | finished | skipped | failed | interrupted
    steps: int = 0
    main: int = 0
    sup: int = 0
    tokens: int = 0
    phase: str = ""
    started: float | None = None
    ended: float | None = None


class SweepBoard:
    """The state of every cell of a sweep, and its display (see the module docstring).

    ``mode``: ``table`` (a live table; needs rich), ``lines`` (summary lines), ``false`` (nothing until
    the last line) or ``auto`` (a table on a terminal, lines otherwise)."""

    def __init__(
        self, labels: list[tuple[str, int]], *, mode: str = "auto", interval: float = 10.0, stream: TextIO | None = None
    ):
        self.cells = [_Cell(label, total) for label, total in labels]
        self._lock = threading.Lock()
        self._stream = stream
        self._stopping = threading.Event()
        self.started = time.monotonic()
        self.interval = interval
        self._last_line = self.started
        out = stream or sys.stdout
        if mode == "auto":
            mode = "table" if out.isatty() else "lines"
        self.mode = mode
        self._live: Any = None
        if mode == "table":
            try:
                from rich.console import Console
                from rich.live import Live
            except ImportError:  # rich is in the eval extra; without it, lines
                self.mode = "lines"
            else:
                self._console = Console(file=out)
                self._live = Live(
                    self._table(), console=self._console, refresh_per_second=2, redirect_stdout=True, transient=False
                )
                self._live.start()

    # ------------------------------------------------------------------ reports from the cells' threads
    def reporter(self, index: int) -> Any:
        """The factory ``make_progress`` calls in cell ``index``'s thread."""

        def factory(label: str, total: int) -> CellReporter:
            with self._lock:
                cell = self.cells[index]
                cell.total = total
                cell.status, cell.started = "running", time.monotonic()
            return CellReporter(self, index)

        return factory

    def update(self, index: int, steps: int, main: int, sup: int, tokens: int, phase: str) -> None:
        if self._stopping.is_set():
            raise KeyboardInterrupt  # the launcher stops the sweep: this cell stops at this step
        cell = self.cells[index]
        cell.steps, cell.main, cell.sup, cell.tokens, cell.phase = steps, main, sup, tokens, phase

    def ended(self, index: int, status: str, results: dict[str, Any] | None = None) -> None:
        """Cell ``index`` is over: ``finished``, ``skipped``, ``failed`` or ``interrupted``."""
        with self._lock:
            cell = self.cells[index]
            cell.status, cell.ended = status, time.monotonic()
            if results is not None and status in ("finished", "skipped"):
                cell.steps = int(results.get("play_steps", cell.total))
                cell.main = int(results.get("main_reward") or 0)
                cell.sup = int(results.get("supplementary_reward") or 0)
                cell.tokens = int((results.get("metrics") or {}).get("total_tokens", cell.tokens))

    def stop(self) -> None:
        self._stopping.set()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # ------------------------------------------------------------------ display (the launcher's thread)
    def tick(self) -> None:
        """Redraw the table, or print the summary line when ``interval`` seconds have passed."""
        if self._live is not None:
            self._live.update(self._table())
        elif self.mode == "lines" and time.monotonic() - self._last_line >= self.interval:
            self._print(self.summary())

    def close(self) -> None:
        """The last summary line (whatever the mode: the log ends with what happened)."""
        if self._live is not None:
            self._live.update(self._table())
            self._live.stop()
        self._print(self.summary())

    def _print(self, line: str) -> None:
        self._last_line = time.monotonic()
        print(line, file=self._stream or sys.stdout, flush=True)

    def summary(self) -> str:
        from odyssey_agents.llm.limits import gates

        with self._lock:
            cells = list(self.cells)
        count = {s: 0 for s in ("waiting", "running", "finished", "skipped", "failed", "interrupted")}
        for c in cells:
            count[c.status] += 1
        steps = sum(c.steps for c in cells)
        total = sum(c.total for c in cells)
        tokens = sum(c.tokens for c in cells)
        stats = [g.stats for g in gates()]
        in_flight = sum(s.in_flight for s in stats)
        limited = sum(s.rate_limited for s in stats)
        errors = sum(s.server_errors for s in stats)
        elapsed = time.monotonic() - self.started
        played = sum(c.steps for c in cells if c.status != "skipped")
        left = total - steps
        eta = ""
        if left > 0 and played > 0:
            eta = f"; ~{_clock(left * elapsed / played)} left"
        failed = count["failed"] + count["interrupted"]
        return (
            f"sweep {_clock(elapsed)}: {count['finished'] + count['skipped']}/{len(cells)} cells done"
            f" ({count['skipped']} skipped, {failed} failed), {count['running']} running,"
            f" {count['waiting']} waiting; steps {steps:,}/{total:,}; model calls in flight {in_flight}"
            f" (429s {limited}, failed attempts {errors}); tokens {tokens:,}{eta}"
        )

    def _table(self) -> Any:
        from rich.table import Table

        table = Table(title=self.summary(), title_justify="left", box=None, pad_edge=False)
        columns: tuple[tuple[str, JustifyMethod], ...] = (
            ("cell", "left"),
            ("", "left"),
            ("steps", "right"),
            ("main", "right"),
        )
        for name, justify in columns:
            table.add_column(name, justify=justify)
        table.add_column("sup", justify="right")
        table.add_column("tokens", justify="right")
        table.add_column("s/step", justify="right")
        order = {"running": 0, "failed": 1, "interrupted": 1, "finished": 2, "skipped": 3, "waiting": 4}
        with self._lock:
            cells = sorted(self.cells, key=lambda c: (order[c.status], -(c.ended or 0)))
        room = max(3, (self._console.height if self._live is not None else 40) - 4)
        now = time.monotonic()
        for c in cells[:room]:
            per_step = f"{((c.ended or now) - c.started) / c.steps:.1f}" if c.started is not None and c.steps else ""
            status = c.status + (f" [{c.phase}]" if c.phase and c.status == "running" else "")
            table.add_row(c.label, status, f"{c.steps}/{c.total}", str(c.main), str(c.sup), f"{c.tokens:,}", per_step)
        if len(cells) > room:
            table.add_row(f"... {len(cells) - room} more", "", "", "", "", "", "")
        return table


class CellReporter(NullProgress):
    """What a cell's runner updates once a step, in the cell's thread."""

    def __init__(self, board: SweepBoard, index: int):
        self.board, self.index = board, index

    def update(self, steps: int, main: int, sup: int, tokens: int, phase: str = "", force: bool = False) -> None:
        self.board.update(self.index, steps, main, sup, tokens, phase)


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"
