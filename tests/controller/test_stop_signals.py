"""The stop the demo and `companion run` wait for: SIGINT or SIGTERM, as often as sent."""

from __future__ import annotations

import os
import signal
import threading
import time

from companion.live import StopSignals


def test_two_signals_at_once_stop_and_the_handlers_are_put_back() -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with StopSignals() as stop:
        assert not stop.asked and stop.wait(0.05) is False
        # Ctrl-C pressed twice, then a service manager's SIGTERM: each handled in the
        # main thread, the later ones while the first may still run (a handler that
        # took a lock, as threading.Event.set does, could wait for itself forever)
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGTERM)
        t = time.monotonic()
        assert stop.wait(5.0) is True
        assert time.monotonic() - t < 1.0
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_a_signal_sent_while_waiting_ends_the_wait() -> None:
    with StopSignals() as stop:
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        t = time.monotonic()
        try:
            assert stop.wait() is True  # no timeout: until asked
        finally:
            timer.cancel()
        assert 0.25 < time.monotonic() - t < 2.0
