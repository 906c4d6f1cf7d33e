"""Live updates: Server-Sent Events, one ``data: {json}`` per session event.

Each stream holds its own queue from ``session.subscribe()`` and waits on it
without the session lock, so a slow phone never slows the table. A comment
line every ``SSE_HEARTBEAT`` seconds keeps proxies awake and lets the server
notice a phone that went away. :meth:`EventHub.close` ends every stream at
shutdown.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app

from companion.session import GameSession

bp = Blueprint("events", __name__)

_CLOSE: dict[str, Any] = {"type": "_close"}
BUSY_RETRY_MS = 30000  # a page turned away tries its stream again this much later


def format_event(event: dict[str, Any]) -> str:
    """One SSE message; the version is the event id so a page can tell what it missed."""
    head = f"id: {event['version']}\n" if "version" in event else ""
    return f"{head}data: {json.dumps(event, separators=(',', ':'))}\n\n"


class EventHub:
    """Hands out event streams and closes them all at shutdown."""

    def __init__(self, session: GameSession) -> None:
        self.session = session
        self._lock = threading.Lock()
        self._queues: list[queue.Queue[dict[str, Any]]] = []
        self._closed = threading.Event()

    @property
    def listeners(self) -> int:
        with self._lock:
            return len(self._queues)

    def stream(self, *, heartbeat: float = 15.0, max_events: int | None = None,
               timeout: float | None = None, max_streams: int | None = None) -> Iterator[str]:
        """The SSE text of one client's stream.

        ``max_events`` and ``timeout`` end the stream early (tests, benchmarks);
        a real page keeps it open until it leaves or the server stops. Past
        ``max_streams`` open streams (each holds a server thread: a phone's stale
        tabs, or someone on the table's Wi-Fi opening many) the stream says
        ``busy`` and ends, asking the browser to come back in ``BUSY_RETRY_MS``.
        """
        with self._lock:  # a page turned away is never subscribed
            busy = max_streams is not None and len(self._queues) >= max_streams
            if not busy:
                q = self.session.subscribe()
                self._queues.append(q)
        if busy:
            yield f"retry: {BUSY_RETRY_MS}\n\n"
            yield format_event({"type": "busy", "streams": max_streams})
            return
        try:
            yield "retry: 2000\n\n"
            yield format_event({"type": "hello", "version": self.session.version})
            sent = 0
            deadline = None if timeout is None else time.monotonic() + timeout
            while not self._closed.is_set():
                wait = heartbeat
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    wait = min(wait, left)
                try:
                    event = q.get(timeout=wait)
                except queue.Empty:
                    if deadline is not None and time.monotonic() >= deadline:
                        break
                    yield ": heartbeat\n\n"
                    continue
                if event is _CLOSE:
                    break
                yield format_event(event)
                sent += 1
                if max_events is not None and sent >= max_events:
                    break
        finally:
            self.session.unsubscribe(q)
            with self._lock:
                if q in self._queues:
                    self._queues.remove(q)

    def close(self) -> None:
        """End every open stream now (server shutdown)."""
        self._closed.set()
        with self._lock:
            queues = list(self._queues)
        for q in queues:
            try:
                q.put_nowait(_CLOSE)
            except queue.Full:  # a stalled stream: make room for the close marker
                try:
                    q.get_nowait()
                    q.put_nowait(_CLOSE)
                except (queue.Empty, queue.Full):
                    pass  # it sees _closed after its current wait


@bp.get("/events")
def events() -> Response:
    cfg = current_app.config
    hub: EventHub = current_app.extensions["companion"].events
    stream = hub.stream(heartbeat=float(cfg["SSE_HEARTBEAT"]), max_events=cfg["SSE_MAX_EVENTS"],
                        timeout=cfg["SSE_TIMEOUT"], max_streams=cfg.get("SSE_MAX_STREAMS"))
    resp = Response(stream, mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-cache, no-store"
    resp.headers["X-Accel-Buffering"] = "no"  # no proxy buffering
    return resp
