"""How fast the page hears of a move: session.play() -> SSE event -> fresh state.

The goal is a page update within 200 ms of the move being recorded. This runs
the real server (waitress on a free localhost port), a real HTTP client on
``/events`` and bot moves, and measures each step with ``perf_counter``.
"""

from __future__ import annotations

import http.client
import json
import statistics
import time
from typing import Any

GOAL_MS = 200.0


def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {"median": 0.0, "mean": 0.0, "p95": 0.0, "max": 0.0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"median": round(statistics.median(ordered), 3),
            "mean": round(statistics.fmean(ordered), 3),
            "p95": round(p95, 3), "max": round(ordered[-1], 3)}


class _SseReader:
    """Reads ``data:`` messages from a streamed HTTP response."""

    def __init__(self, resp: http.client.HTTPResponse) -> None:
        self.resp = resp

    def next_event(self) -> dict[str, Any]:
        data: list[str] = []
        while True:
            raw = self.resp.readline()
            if not raw:
                raise EOFError("the event stream ended")
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].strip())
            elif line == "" and data:
                return json.loads("\n".join(data))  # type: ignore[no-any-return]


def measure_update_latency(samples: int = 30, *, seed: int = 1, host: str = "127.0.0.1",
                           timeout: float = 5.0) -> dict[str, Any]:
    """Time ``samples`` bot moves from ``session.play()`` to the SSE event at a client
    (``event_ms``) and to the client holding the new ``/api/state`` (``update_ms``)."""
    from companion.bots import GreedyBot
    from companion.demo import demo_config
    from companion.session import GameSession
    from companion.web.app import create_app
    from companion.web.server import WebServer

    session = GameSession(demo_config(seed))
    app = create_app({"PIN": "000000"}, session=session)
    bot = GreedyBot(seed)
    event_ms: list[float] = []
    update_ms: list[float] = []
    state_bytes = 0
    with WebServer(app, host, 0, threads=16) as server:
        stream = http.client.HTTPConnection(host, server.port, timeout=timeout)
        stream.request("GET", "/events", headers={"Accept": "text/event-stream"})
        reader = _SseReader(stream.getresponse())
        reader.next_event()  # hello: subscribed
        fetch = http.client.HTTPConnection(host, server.port, timeout=timeout)
        try:
            while len(event_ms) < samples:
                if session.state.is_over:
                    seed += 1
                    session.new_game(demo_config(seed))
                    reader.next_event()  # the set-up event
                move = bot.choose(session.state)
                t0 = time.perf_counter()
                session.play(move)
                while reader.next_event().get("type") != "move":
                    pass
                t1 = time.perf_counter()
                fetch.request("GET", "/api/state")
                body = fetch.getresponse().read()
                t2 = time.perf_counter()
                state_bytes = len(body)
                event_ms.append((t1 - t0) * 1000)
                update_ms.append((t2 - t0) * 1000)
        finally:
            fetch.close()
            stream.close()
    upd = _stats(update_ms)
    return {"samples": len(event_ms), "event_ms": _stats(event_ms), "update_ms": upd,
            "state_bytes": state_bytes, "goal_ms": GOAL_MS, "ok": upd["p95"] < GOAL_MS}


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(measure_update_latency()))
