"""A message link between two processes whose round trip costs microseconds, not a vCPU wake-up.

A pipe round trip between two Python processes costs 50 µs and more on a virtual machine (most of it
waking the sleeping peer's CPU), about half an odyssey step: a vector env that talks through pipes
spends more time waiting than stepping. A :class:`Link` carries pickled messages through shared
memory instead, and its reader polls for them for up to ``spin_s`` before going to sleep on a pipe;
a writer that finds its reader asleep wakes it through that pipe. While messages keep coming (a
vector env stepping), nobody sleeps and a round trip costs a couple of microseconds; an idle link
(the caller thinking between steps) sleeps after ``spin_s`` and costs nothing. The polling loop
yields the CPU every few microseconds, so on a machine with more busy processes than cores it
gives way instead of holding a core.

Publishing through shared memory relies on the other process seeing the payload's bytes before the
sequence number that announces them: x86's memory model guarantees that, weaker ones (ARM) do not.
:func:`spinning_is_safe` says which applies; elsewhere use ``spin_s=0``, where every message goes
through the pipe (and the kernel orders everything). A message bigger than the shared buffer goes
through the pipe too. Going to sleep can race with a wake-up (each side's store may not yet be
visible when the other reads); the sleeper therefore also re-checks on a short timeout, so the race
costs at most a millisecond, never a hang.
"""

from __future__ import annotations

import copyreg
import io
import os
import pickle
import platform
import time
from collections import deque
from multiprocessing import TimeoutError as _TimeoutError
from multiprocessing.connection import Connection, wait
from typing import Any, ClassVar

import numpy as np

__all__ = ["Link", "LinkClosed", "PeerDied", "make_link", "spinning_is_safe"]

_HEADER = 10  # five slots per direction: see Link.send
_SLEEP_CHECKS_S = (0.001, 0.002, 0.005, 0.01)  # re-checks while asleep: the last repeats
# Polling this long without an answer, the poller starts yielding its core between polls: free when
# no other process wants the core (a yield then returns at once), and on a busy machine the process
# it waits for may be the one that needs the core.
_YIELD_AFTER_S = 0.00002
_yield_cpu = getattr(os, "sched_yield", lambda: time.sleep(0))  # (no sched_yield on Windows)


def _rebuild_array(data: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)  # a bytearray: writable, as pickled ones are


def _reduce_array(array: np.ndarray) -> tuple[Any, ...]:
    """A plain array as its bytes, dtype and shape: numpy's own reduce costs several microseconds each
    way for the small arrays infos carry (``action_mask``); anything else is reduced numpy's way."""
    dtype = array.dtype
    flags = array.flags  # read-only arrays come back read-only from numpy's reduce: left to it
    if (
        dtype.hasobject
        or dtype.fields is not None
        or not dtype.isnative
        or not (flags.c_contiguous and flags.writeable)
    ):
        return array.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    return _rebuild_array, (array.tobytes(), dtype.str, array.shape)


class _Pickler(pickle.Pickler):
    dispatch_table: ClassVar[dict[type, Any]] = {**copyreg.dispatch_table, np.ndarray: _reduce_array}


class _Encoder:
    """``pickle.dumps`` with one reusable pickler whose only difference is how it packs numpy arrays."""

    def __init__(self) -> None:
        self._buffer = io.BytesIO()
        self._pickler = _Pickler(self._buffer, protocol=pickle.HIGHEST_PROTOCOL)

    def __call__(self, message: Any) -> bytes:
        buffer = self._buffer
        buffer.seek(0)
        buffer.truncate()
        self._pickler.clear_memo()  # each message stands alone: no references to an earlier one
        self._pickler.dump(message)
        return buffer.getvalue()


class LinkClosed(EOFError):
    """The other end closed the link (its process is gone or shut down)."""


class PeerDied(LinkClosed):
    """The process at the other end exited while this one waited for its message."""


def spinning_is_safe() -> bool:
    """Whether this CPU keeps stores in order for other cores (x86): then messages may bypass the pipe."""
    return platform.machine().lower() in {"x86_64", "amd64", "i386", "i686", "x86"}


class Link:
    """One end of a two-way link: :meth:`send` to the other end, :meth:`recv` from it.

    Built in pairs by :func:`make_link`; each end is handed to its process (picklable for process
    start-up, by ``multiprocessing``'s rules for shared arrays and connections).
    """

    def __init__(self, side: int, header: Any, buffers: tuple[Any, Any], conn: Connection, spin_s: float):
        self._side = side
        self._raw = (header, buffers)  # kept for pickling to a child process
        self._header = memoryview(header).cast("B").cast("q")
        self._out = memoryview(buffers[side]).cast("B")
        self._in = memoryview(buffers[1 - side]).cast("B")
        self._conn = conn
        self.spin_s = spin_s
        self._received = 0
        self._sent = 0
        self._stash: deque[bytes] = deque()  # big messages the pipe brought while this end slept
        self._encode = _Encoder()

    def __reduce__(self) -> tuple[Any, ...]:
        return Link, (self._side, *self._raw, self._conn, self.spin_s)

    # The header holds five slots per direction (the one side s writes to starts at 5 * s): messages
    # published, the length of the one in the shared buffer, which message that is, messages the
    # reader has finished reading (the buffer is free again), and whether the reader sleeps.
    def send(self, message: Any) -> None:
        """Hand ``message`` (anything picklable) to the other end; never blocks on the reader.

        The shared buffer holds one message: while the reader has not finished the last one, or when
        a message is bigger than the buffer, the message goes through the pipe (still in order).
        Raises :class:`LinkClosed` when the pipe finds the other end closed.
        """
        data = self._encode(message)
        try:
            self._send(data)
        except (BrokenPipeError, ConnectionResetError) as exc:  # the pipe's reading end is closed
            raise LinkClosed("the other end of the link is closed") from exc

    def _send(self, data: bytes) -> None:
        if self.spin_s <= 0:
            self._conn.send_bytes(data)
            return
        header, base = self._header, 5 * self._side
        due = self._sent + 1
        if len(data) <= len(self._out) and header[base + 3] == self._sent:
            self._out[: len(data)] = data
            header[base + 1] = len(data)
            header[base + 2] = due
        else:
            self._conn.send_bytes(data)
        header[base] = due  # publishes the message (after its bytes: see the module docstring)
        self._sent = due
        if header[base + 4]:
            self._conn.send_bytes(b"")  # the reader sleeps: wake it

    def recv(self, timeout: float | None = None, sentinel: int | None = None) -> Any:
        """The next message from the other end.

        ``timeout`` raises :class:`multiprocessing.TimeoutError` (the message stays due: call again);
        ``sentinel`` (the other process's ``Process.sentinel``) raises :class:`PeerDied` if that
        process exits first. A closed other end raises :class:`LinkClosed`.
        """
        if self.spin_s <= 0:
            return pickle.loads(self._next_pipe_message(timeout, sentinel))
        header, base = self._header, 5 * (1 - self._side)
        due = self._received + 1
        if header[base] < due:
            self._wait(base, due, timeout, sentinel)
        if header[base + 2] == due:
            message = pickle.loads(self._in[: header[base + 1]])
        else:
            message = pickle.loads(self._stash.popleft() if self._stash else self._next_pipe_message(None, None))
        self._received = due
        header[base + 3] = due  # read: the writer may reuse the buffer
        return message

    def close(self) -> None:
        self._conn.close()

    # ------------------------------------------------------------------ internals
    def _wait(self, base: int, due: int, timeout: float | None, sentinel: int | None) -> None:
        header = self._header
        now = time.perf_counter()
        give_up = None if timeout is None else now + timeout
        stop_spinning = now + self.spin_s
        start_yielding = now + _YIELD_AFTER_S
        polls = 0
        while header[base] < due:  # spin: the message is usually microseconds away
            polls += 1
            if polls & 15 == 0:
                now = time.perf_counter()
                if now >= stop_spinning or (give_up is not None and now >= give_up):
                    break
                if now >= start_yielding:  # a slower answer: let other processes have this core meanwhile
                    _yield_cpu()
        else:
            return
        asleep = base + 4
        header[asleep] = 1
        try:
            checks = 0
            while header[base] < due:
                wait_s = _SLEEP_CHECKS_S[min(checks, len(_SLEEP_CHECKS_S) - 1)]
                checks += 1
                if give_up is not None:
                    left = give_up - time.perf_counter()
                    if left <= 0:
                        raise _TimeoutError(f"no message within {timeout} s")
                    wait_s = min(wait_s, left)
                ready = wait([self._conn] if sentinel is None else [self._conn, sentinel], wait_s)
                if self._conn in ready:
                    message = self._recv_bytes(sentinel)
                    if message:
                        self._stash.append(message)
                    checks = 0
                elif sentinel is not None and sentinel in ready and header[base] < due:
                    raise PeerDied("the process at the other end of the link exited")
        finally:
            header[asleep] = 0

    def _next_pipe_message(self, timeout: float | None, sentinel: int | None) -> bytes:
        """The next non-empty message on the pipe (empty ones are wake-ups)."""
        give_up = None if timeout is None else time.perf_counter() + timeout
        while True:
            left = None if give_up is None else max(0.0, give_up - time.perf_counter())
            ready = wait([self._conn] if sentinel is None else [self._conn, sentinel], left)
            if self._conn in ready:
                message = self._recv_bytes(sentinel)
                if message:
                    return message
            elif sentinel is not None and sentinel in ready:
                raise PeerDied("the process at the other end of the link exited")
            elif give_up is not None and time.perf_counter() >= give_up:
                raise _TimeoutError(f"no message within {timeout} s")

    def _recv_bytes(self, sentinel: int | None = None) -> bytes:
        try:
            return self._conn.recv_bytes()
        except (EOFError, OSError) as exc:
            if sentinel is not None and wait([sentinel], 1.0):
                raise PeerDied("the process at the other end of the link exited") from exc
            raise LinkClosed("the other end of the link is closed") from exc


def make_link(ctx: Any, capacity: int = 1 << 20, spin_s: float | None = None) -> tuple[Link, Link]:
    """Two connected ends (side 0 for the parent, side 1 for the child), ``capacity`` bytes each way.

    ``spin_s`` (seconds a reader polls before sleeping) defaults to 2 ms where spinning is safe
    (:func:`spinning_is_safe`) and to 0 (pipe only) elsewhere.
    """
    if spin_s is None:
        spin_s = 0.002 if spinning_is_safe() else 0.0
    if spin_s < 0:
        raise ValueError(f"spin_s must be >= 0, got {spin_s!r}")
    header = ctx.RawArray("q", _HEADER)
    buffers = (ctx.RawArray("b", capacity), ctx.RawArray("b", capacity))
    a, b = ctx.Pipe(duplex=True)
    return Link(0, header, buffers, a, spin_s), Link(1, header, buffers, b, spin_s)
