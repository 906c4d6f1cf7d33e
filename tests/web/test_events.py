"""Server-Sent Events: a move reaches a waiting stream; streams end cleanly."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from companion.rules import Card
from companion.session import GameSession
from companion.web.events import EventHub, format_event


def _events(chunks: Iterator[Any], out: queue.Queue[Any]) -> None:
    """Collect SSE text chunks (bytes or str) into a queue, then a None at the end."""
    try:
        for chunk in chunks:
            out.put(chunk.decode() if isinstance(chunk, bytes) else chunk)
    finally:
        out.put(None)


def _read_until(out: queue.Queue[Any], predicate: Any, timeout: float = 5.0) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = out.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            break
        if chunk is None:
            return seen
        seen.append(chunk)
        if predicate(chunk):
            return seen
    raise AssertionError(f"no matching event within {timeout} s; got {seen}")


def _drain(out: queue.Queue[Any], timeout: float = 5.0) -> None:
    """Wait for the end-of-stream marker."""
    deadline = time.monotonic() + timeout
    while out.get(timeout=max(0.01, deadline - time.monotonic())) is not None:
        pass


def _data(chunk: str) -> dict[str, Any]:
    line = next(x for x in chunk.splitlines() if x.startswith("data: "))
    return json.loads(line[6:])  # type: ignore[no-any-return]


def test_format_event() -> None:
    assert format_event({"type": "move", "version": 3}) == (
        'id: 3\ndata: {"type":"move","version":3}\n\n')


def test_stream_yields_a_move(session: GameSession, driver: Any) -> None:
    hub = EventHub(session)
    out: queue.Queue[Any] = queue.Queue()
    stream = hub.stream(heartbeat=5, max_events=1, timeout=5)
    reader = threading.Thread(target=_events, args=(stream, out), daemon=True)
    reader.start()
    hello = _read_until(out, lambda c: c.startswith("id:"))
    assert _data(hello[-1])["type"] == "hello"
    driver.play(1, show_card=False)
    got = _read_until(out, lambda c: "data:" in c)
    event = _data(got[-1])
    assert event["type"] == "move" and event["ply"] == 0
    assert out.get(timeout=5) is None  # max_events reached: the stream ended
    reader.join(5)
    assert hub.listeners == 0
    assert session._subscribers == []  # unsubscribed


def test_sse_route_streams_events(make_app: Any, session: GameSession, driver: Any) -> None:
    app = make_app(session, SSE_MAX_EVENTS=2, SSE_TIMEOUT=10)
    client = app.test_client()
    resp = client.get("/events", buffered=False)
    assert resp.status_code == 200
    assert resp.mimetype == "text/event-stream"
    assert resp.headers["Cache-Control"].startswith("no-cache")
    out: queue.Queue[Any] = queue.Queue()
    reader = threading.Thread(target=_events, args=(resp.response, out), daemon=True)
    reader.start()
    _read_until(out, lambda c: '"hello"' in c)
    driver.play(1, show_card=False)  # a commit
    driver.to_build_phase()
    got = _read_until(out, lambda c: '"move"' in c)
    assert _data(got[-1])["type"] == "move" and _data(got[-1])["ply"] == 0
    rest = _read_until(out, lambda c: '"move"' in c)
    assert _data(rest[-1])["type"] == "move"
    assert out.get(timeout=5) is None  # two events: the stream ended by itself
    resp.close()


def test_heartbeat_and_timeout(session: GameSession) -> None:
    hub = EventHub(session)
    started = time.monotonic()
    chunks = list(hub.stream(heartbeat=0.05, timeout=0.3))
    assert time.monotonic() - started < 2
    assert chunks[0].startswith("retry:")
    assert ": heartbeat\n\n" in chunks
    assert hub.listeners == 0


def test_waiting_streams_do_not_hold_the_session_lock(session: GameSession,
                                                      driver: Any) -> None:
    hub = EventHub(session)
    outs = []
    for _ in range(5):
        out: queue.Queue[Any] = queue.Queue()
        threading.Thread(target=_events, args=(hub.stream(heartbeat=30, timeout=10), out),
                         daemon=True).start()
        _read_until(out, lambda c: '"hello"' in c)
        outs.append(out)
    assert hub.listeners == 5
    started = time.monotonic()
    driver.play(3, show_card=False)
    assert time.monotonic() - started < 0.5  # the table never waits for the pages
    for out in outs:
        _read_until(out, lambda c: '"move"' in c)
    hub.close()
    for out in outs:
        _drain(out)
    deadline = time.monotonic() + 5
    while hub.listeners and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hub.listeners == 0


def test_close_ends_a_stream_at_once(session: GameSession) -> None:
    hub = EventHub(session)
    out: queue.Queue[Any] = queue.Queue()
    t = threading.Thread(target=_events, args=(hub.stream(heartbeat=60), out), daemon=True)
    t.start()
    _read_until(out, lambda c: '"hello"' in c)
    started = time.monotonic()
    hub.close()
    t.join(5)
    assert not t.is_alive() and time.monotonic() - started < 1


def test_stalled_stream_drops_events_but_not_the_table(session: GameSession,
                                                       driver: Any) -> None:
    hub = EventHub(session)
    stream = hub.stream(heartbeat=60, timeout=10)
    next(stream), next(stream)  # subscribed, then never read again
    driver.to_build_phase()
    seat = session.state.seat
    started = time.monotonic()
    for _ in range(400):  # far more events than a stream's queue holds
        session.see_card(seat, Card(1, 1))
    assert time.monotonic() - started < 1
    hub.close()
    rest = list(stream)
    assert len(rest) <= 256


def test_past_the_stream_limit_a_page_is_asked_to_come_back(make_app: Any,
                                                             session: GameSession) -> None:
    """Every open page holds a server thread: without a limit, stale tabs (or someone
    on the table's Wi-Fi opening many streams) took every thread and the page froze
    for everyone. Past the limit a stream says "busy" and ends; the browser comes back
    in 30 s and the page refreshes every 10 s meanwhile."""
    app = make_app(session, SSE_MAX_STREAMS=2, SSE_TIMEOUT=2.0)  # pages that leave in 2 s
    client = app.test_client()
    hub: EventHub = app.extensions["companion"].events
    outs = []
    for _ in range(2):
        resp = client.get("/events", buffered=False)
        out: queue.Queue[Any] = queue.Queue()
        threading.Thread(target=_events, args=(resp.response, out), daemon=True).start()
        _read_until(out, lambda c: '"hello"' in c)
        outs.append(out)
    assert hub.listeners == 2
    resp = client.get("/events", buffered=False)
    assert resp.status_code == 200
    chunks = [c.decode() if isinstance(c, bytes) else c for c in resp.response]
    assert chunks == ["retry: 30000\n\n", 'data: {"type":"busy","streams":2}\n\n']
    assert hub.listeners == 2 and len(session._subscribers) == 2
    for out in outs:  # the two pages leave: the next one is let in
        _drain(out)
    assert hub.listeners == 0
    again = client.get("/events", buffered=False)
    out = queue.Queue()
    threading.Thread(target=_events, args=(again.response, out), daemon=True).start()
    assert _data(_read_until(out, lambda c: '"hello"' in c)[-1])["type"] == "hello"
    _drain(out)


def test_the_server_leaves_threads_for_the_page(make_app: Any, session: GameSession) -> None:
    from companion.web.server import WebServer

    app = make_app(session)
    server = WebServer(app, "127.0.0.1", 0, threads=20)
    try:
        assert app.config["SSE_MAX_STREAMS"] == 12  # 20 threads, 8 kept for requests
    finally:
        server.stop()
    small = make_app(session, SSE_MAX_STREAMS=4)
    server = WebServer(small, "127.0.0.1", 0, threads=32)
    try:
        assert small.config["SSE_MAX_STREAMS"] == 4
    finally:
        server.stop()
