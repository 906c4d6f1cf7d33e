"""sd_notify against a real AF_UNIX datagram socket."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator

import pytest

from hardware import sdnotify
from hardware.sdnotify import Notifier


@pytest.fixture
def listener() -> Iterator[tuple[str, socket.socket]]:
    # A short directory: AF_UNIX paths are limited to 107 bytes.
    directory = tempfile.mkdtemp(prefix="sdn-", dir="/tmp")
    path = os.path.join(directory, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(2)
    try:
        yield path, sock
    finally:
        sock.close()
        shutil.rmtree(directory)


def test_messages_arrive(listener: tuple[str, socket.socket]) -> None:
    path, sock = listener
    n = Notifier({"NOTIFY_SOCKET": path})
    assert n.enabled
    assert n.ready("camera ok\n30 fps")
    assert sock.recv(4096) == b"READY=1\nSTATUS=camera ok 30 fps"
    assert n.watchdog()
    assert sock.recv(4096) == b"WATCHDOG=1"
    assert n.status("waiting for frames")
    assert sock.recv(4096) == b"STATUS=waiting for frames"
    assert n.stopping()
    assert sock.recv(4096) == b"STOPPING=1"


def test_module_functions_use_the_environment(
    listener: tuple[str, socket.socket], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, sock = listener
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    assert sdnotify.ready()
    assert sock.recv(4096) == b"READY=1"
    assert sdnotify.notify("EXTEND_TIMEOUT_USEC=5000000")
    assert sock.recv(4096) == b"EXTEND_TIMEOUT_USEC=5000000"


def test_abstract_socket() -> None:
    name = f"companion-test-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).watchdog()
        assert sock.recv(64) == b"WATCHDOG=1"


def test_no_op_without_notify_socket() -> None:
    assert not Notifier({}).enabled
    assert Notifier({}).ready() is False
    assert sdnotify.watchdog() is False  # the conftest removes NOTIFY_SOCKET
    assert Notifier({"NOTIFY_SOCKET": "vsock:2:1234"}).watchdog() is False


def test_send_errors_are_kept_not_raised(tmp_path: os.PathLike[str]) -> None:
    n = Notifier({"NOTIFY_SOCKET": os.path.join(tmp_path, "gone")})
    assert n.watchdog() is False
    assert isinstance(n.last_error, OSError)


def test_watchdog_interval() -> None:
    assert Notifier({"WATCHDOG_USEC": "30000000"}).watchdog_interval() == 15.0
    pid = str(os.getpid())
    env = {"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": pid}
    assert Notifier(env).watchdog_interval() == 5.0
    assert Notifier({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}).watchdog_interval() is None
    assert Notifier({}).watchdog_interval() is None
    assert Notifier({"WATCHDOG_USEC": "soon"}).watchdog_interval() is None
