"""StopSignals: the first signal asks to stop at the next step boundary, unless the run waits on a model."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from odyssey_eval.stopping import StopSignals


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_first_signal_asks_and_the_second_stops_at_once(sig):
    with StopSignals() as stop:
        os.kill(os.getpid(), sig)
        assert stop.requested == sig and stop.name == signal.Signals(sig).name
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), sig)


def test_waiting_on_a_model_stops_at_once():
    waiting = [False]
    with StopSignals(lambda: waiting[0]) as stop:
        waiting[0] = True
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
        assert stop.requested is None


def test_handlers_are_put_back():
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with StopSignals():
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before


def test_outside_the_main_thread_nothing_is_installed():
    before = signal.getsignal(signal.SIGINT)
    seen = []

    def body():
        with StopSignals() as stop:
            seen.append((signal.getsignal(signal.SIGINT), stop.requested))

    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == [(before, None)]
