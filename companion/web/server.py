"""Serving the page with waitress in a thread, and stopping it cleanly.

Used by ``companion demo``, the browser tests and the latency benchmark (and
by the live ``run`` command): every open event stream holds a waitress
thread, so there are plenty of threads, and stopping first ends the streams.
"""

from __future__ import annotations

import logging
import threading

from flask import Flask
from waitress.server import create_server  # type: ignore[import-untyped]

log = logging.getLogger(__name__)


class WebServer:
    """waitress on ``host:port`` (port 0: any free one) in a background thread."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 8000, *,
                 threads: int = 24) -> None:
        self.app = app
        threads = max(16, threads)
        # the event streams leave 8 threads for the page's other requests
        streams = app.config.get("SSE_MAX_STREAMS")
        app.config["SSE_MAX_STREAMS"] = threads - 8 if streams is None else min(
            int(streams), threads - 8)
        # ident: no version in the Server header; channel_timeout > heartbeat
        # a body past the app's own limit is refused by waitress before it is read (by
        # default it would buffer up to 1 GB, PIN or not, before the app said 413)
        limit = app.config.get("MAX_CONTENT_LENGTH")
        body = {} if not limit else {"max_request_body_size": int(limit) + 64 * 1024}
        self._server = create_server(app, host=host, port=port, threads=threads, **body,
                                     ident="companion", channel_timeout=60,
                                     asyncore_loop_timeout=0.5, clear_untrusted_proxy_headers=True)
        self.host = str(self._server.effective_host)
        self.port = int(self._server.effective_port)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> WebServer:
        self._thread = threading.Thread(target=self._run, name="companion-web", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._server.run()
        except OSError:  # the map was closed under the loop while stopping
            pass

    def stop(self, timeout: float = 5.0) -> None:
        """End the event streams, then the server: no thread is left waiting."""
        table = self.app.extensions.get("companion")
        if table is not None:
            table.events.close()
        from waitress import wasyncore  # type: ignore[import-untyped]

        server = self._server
        try:
            server.task_dispatcher.shutdown(timeout=timeout)
        finally:
            wasyncore.close_all(server._map)
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> WebServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
