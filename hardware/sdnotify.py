"""A tiny sd_notify(3) in pure Python, for the Type=notify service with a watchdog.

The app sends READY=1 once the camera delivers frames and WATCHDOG=1 only while
frames keep arriving, so systemd restarts a companion whose camera hung. Outside
systemd (NOTIFY_SOCKET unset) every call is a no-op returning False, so the same
code runs on a laptop.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

NOTIFY_SOCKET = "NOTIFY_SOCKET"


def _address(environ: Mapping[str, str]) -> str | None:
    addr = environ.get(NOTIFY_SOCKET, "")
    if addr.startswith("@"):
        return "\0" + addr[1:]  # abstract namespace socket
    if addr.startswith("/"):
        return addr
    return None  # unset, or a transport we don't speak (vsock:)


class Notifier:
    """Sends notifications to the socket named by ``NOTIFY_SOCKET`` in ``environ``.

    Errors are kept in ``last_error`` rather than raised: a failed notification
    must not crash the app; systemd's watchdog will notice if it keeps failing.
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.address = _address(env)
        self._watchdog_usec = env.get("WATCHDOG_USEC", "")
        self._watchdog_pid = env.get("WATCHDOG_PID", "")
        self.last_error: OSError | None = None

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *assignments: str) -> bool:
        """Send "KEY=value" lines in one datagram; True if it was sent."""
        if self.address is None:
            return False
        message = "\n".join(assignments).encode("utf-8")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.connect(self.address)
                sock.sendall(message)
        except OSError as exc:
            self.last_error = exc
            return False
        self.last_error = None
        return True

    def ready(self, status: str | None = None) -> bool:
        """Startup is complete (Type=notify units count as started from here)."""
        return self.notify("READY=1", *([_status(status)] if status else []))

    def watchdog(self) -> bool:
        """Keep-alive; send more often than WatchdogSec (see :meth:`watchdog_interval`)."""
        return self.notify("WATCHDOG=1")

    def status(self, text: str) -> bool:
        """One line shown by `systemctl status`."""
        return self.notify(_status(text))

    def stopping(self) -> bool:
        return self.notify("STOPPING=1")

    def watchdog_interval(self) -> float | None:
        """Seconds between keep-alives (half the watchdog timeout), or None if no watchdog."""
        try:
            usec = int(self._watchdog_usec)
        except ValueError:
            return None
        if usec <= 0:
            return None
        if self._watchdog_pid:
            try:
                if int(self._watchdog_pid) != os.getpid():
                    return None  # the watchdog is meant for another process
            except ValueError:
                return None
        return usec / 2_000_000


def _status(text: str) -> str:
    return "STATUS=" + " ".join(str(text).split())


def notify(*assignments: str, environ: Mapping[str, str] | None = None) -> bool:
    """One-shot :meth:`Notifier.notify` using the current environment."""
    return Notifier(environ).notify(*assignments)


def ready(status: str | None = None) -> bool:
    return Notifier().ready(status)


def watchdog() -> bool:
    return Notifier().watchdog()


def status(text: str) -> bool:
    return Notifier().status(text)


def stopping() -> bool:
    return Notifier().stopping()
