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


@pytest.mark.parametrize("spin_s", [0.0, 0.0005])
def test_sending_to_a_closed_other_end_says_closed_not_broken_pipe(spin_s):
    parent, child = make_link(CTX, 16, spin_s)  # 16 bytes: every message below goes through the pipe
    child.close()
    with pytest.raises(LinkClosed):
        for _ in range(100):  # the first sends may still fit the socket's buffer
            parent.send("x" * 64)
    parent.close()


def test_bad_arguments_and_the_default_spin():
    with pytest.raises(ValueError, match="spin_s"):
        make_link(CTX, 16, -1.0)
    a, b = make_link(CTX, 16)
    assert (a.spin_s > 0) == spinning_is_safe()
    a.close()
    b.close()


# ---------------------------------------------------------------------- how messages are pickled
class _Tagged(np.ndarray):
    """An ndarray subclass: must keep its class (numpy's own reduce), not come back a plain array."""


def _arrays():
    from hypothesis.extra import numpy as hnp

    dtypes = (
        hnp.boolean_dtypes()
        | hnp.integer_dtypes()
        | hnp.unsigned_integer_dtypes()
        | hnp.floating_dtypes()
        | hnp.complex_number_dtypes()
        | hnp.datetime64_dtypes()
        | hnp.unicode_string_dtypes()
        | hnp.byte_string_dtypes()
    )
    return hnp.arrays(dtypes, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))


def _same_array(a, b) -> bool:
    return (
        type(a) is type(b)
        and a.dtype == b.dtype
        and a.shape == b.shape
        and a.tobytes(order="A") == b.tobytes(order="A")
        and a.flags.f_contiguous == b.flags.f_contiguous
        and a.flags.c_contiguous == b.flags.c_contiguous
    )


from hypothesis import given, settings  # noqa: E402 - the tests below only
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(_arrays(), st.sampled_from(["as is", "fortran", "strided", "read-only"]))
def test_arrays_cross_a_link_as_pickle_would_carry_them(array, layout):
    import pickle

    from odyssey_env.vector.channel import _Encoder

    if layout == "fortran":
        array = np.asfortranarray(array)
    elif layout == "strided" and array.ndim:
        array = array[::2]
    elif layout == "read-only":
        array = array.copy()
        array.flags.writeable = False
    message = ("ok", [array, {"mask": array}], array.copy())
    encode = _Encoder()
    encode(message)  # an earlier message: each one must stand alone
    ours, theirs = pickle.loads(encode(message)), pickle.loads(pickle.dumps(message, protocol=5))
    for a, b in ((ours[1][0], theirs[1][0]), (ours[1][1]["mask"], theirs[1][1]["mask"]), (ours[2], theirs[2])):
        assert _same_array(a, b) and a.flags.writeable == b.flags.writeable
    assert ours[1][0] is ours[1][1]["mask"] and ours[1][0] is not ours[2]  # shared within a message, as pickle's


def test_arrays_numpy_must_reduce_itself_keep_their_kind():
    import pickle

    from odyssey_env.vector.channel import _Encoder

    encode = _Encoder()
    structured = np.array([(1, 2.5)], dtype=[("a", "i4"), ("b", "f8")])
    objects = np.array([[1], "x", None], dtype=object)
    tagged = np.arange(3).view(_Tagged)
    for array in (structured, objects, tagged):
        back = pickle.loads(encode(array))
        assert type(back) is type(array) and back.dtype == array.dtype
        assert back.tolist() == array.tolist()
    assert pickle.loads(encode({"again": structured}))["again"].dtype.names == ("a", "b")


def test_a_message_is_encoded_alone_whatever_came_before():
    """The encoder reuses one buffer: a short message after a long one must not carry the long one's tail."""
    from odyssey_env.vector.channel import _Encoder

    encode = _Encoder()
    encode(("x" * 1000, np.arange(100)))
    assert encode(None) == _Encoder()(None)
    assert encode(np.arange(3)) == _Encoder()(np.arange(3))
