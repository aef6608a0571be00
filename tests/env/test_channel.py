"""The shared-memory link between the main process and a vector env's workers.

Its speed is measured in ``benchmarks/vector_envs.py``; these tests pin down that every message
arrives whole, once and in order, whichever way it travels (shared memory, the pipe for big ones,
pipes only with ``spin_s=0``), and that a dead or closed peer and a timeout are reported, not waited
on forever.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import numpy as np
import pytest

from odyssey_env.vector.channel import LinkClosed, PeerDied, make_link, spinning_is_safe

CTX = mp.get_context("fork")


def _echo(link, other_end, delay_s: float = 0.0) -> None:
    """Send back every message received, until ``None``."""
    other_end.close()
    while True:
        try:
            message = link.recv()
        except LinkClosed:
            return
        if delay_s:
            time.sleep(delay_s)
        link.send(message)
        if message is None:
            return


def _start(spin_s, capacity=1 << 12, delay_s=0.0):
    parent, child = make_link(CTX, capacity, spin_s)
    process = CTX.Process(target=_echo, args=(child, parent, delay_s), daemon=True)
    process.start()
    child.close()
    return parent, process


@pytest.mark.parametrize("spin_s", [0.002, 0.0])
def test_messages_come_back_whole_and_in_order_small_and_big(spin_s):
    link, process = _start(spin_s, capacity=1 << 12)
    try:
        messages = [("step", [1, 2, 3]), "x" * 10_000, np.arange(3000), {"a": [None] * 5}, b"", 0]
        for message in messages:  # one at a time, then several in flight
            link.send(message)
            back = link.recv(timeout=10, sentinel=process.sentinel)
            assert type(back) is type(message)
            assert np.array_equal(back, message) if isinstance(message, np.ndarray) else back == message
        for message in messages:
            link.send(message)
        for message in messages:
            back = link.recv(timeout=10, sentinel=process.sentinel)
            assert np.array_equal(back, message) if isinstance(message, np.ndarray) else back == message
        link.send(None)
        assert link.recv(timeout=10) is None
    finally:
        process.join(5)
        link.close()


def test_a_reader_that_fell_asleep_is_woken_by_the_next_message():
    link, process = _start(0.0005, delay_s=0.05)  # the echo answers long after the poller gave up
    try:
        start = time.perf_counter()
        link.send("late")
        assert link.recv(timeout=10, sentinel=process.sentinel) == "late"
        assert time.perf_counter() - start < 5
        link.send(None)
        link.recv(timeout=10)
    finally:
        process.join(5)
        link.close()


def test_a_timeout_raises_and_the_message_can_still_be_read():
    link, process = _start(0.0005, delay_s=0.3)
    try:
        link.send("slow")
        with pytest.raises(mp.TimeoutError):
            link.recv(timeout=0.01, sentinel=process.sentinel)
        assert link.recv(timeout=10, sentinel=process.sentinel) == "slow"
        link.send(None)
        link.recv(timeout=10)
    finally:
        process.join(5)
        link.close()


@pytest.mark.parametrize("spin_s", [0.002, 0.0])
def test_a_peer_that_dies_is_reported_instead_of_waited_for(spin_s):
    link, process = _start(spin_s, delay_s=30)
    try:
        link.send("never answered")
        time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        with pytest.raises(PeerDied):
            link.recv(timeout=20, sentinel=process.sentinel)
    finally:
        process.join(5)
        link.close()


def test_a_closed_other_end_reads_as_closed():
    parent, child = make_link(CTX, 1 << 10, 0.0005)
    child.close()
    with pytest.raises(LinkClosed):
        parent.recv(timeout=5)
    parent.close()


def test_bad_arguments_and_the_default_spin():
    with pytest.raises(ValueError, match="spin_s"):
        make_link(CTX, 16, -1.0)
    a, b = make_link(CTX, 16)
    assert (a.spin_s > 0) == spinning_is_safe()
    a.close()
    b.close()
