"""The app factory and the services the table injects into the page.

Modelled on the Flask tutorial: :func:`create_app` builds the app from a
config and the services the table provides (the live :class:`GameSession`,
the camera view, the replay handler, the LED strip, photo crops), so tests and
the demo inject fakes and the Pi injects the real ones. Changing actions need
the table PIN; every error is a JSON ``{"error": "one line"}``.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import Flask

from companion.session import GameSession


class UploadedFile:
    """One file handed to the replay service (zips are unpacked first): its bytes, or
    where the upload spooled them (read only when wanted: an upload of 200 MB is not
    held in the Pi's memory)."""

    __slots__ = ("name", "_data", "path")

    def __init__(self, name: str, data: bytes | None = None, *,
                 path: Path | None = None) -> None:
        if (data is None) == (path is None):
            raise ValueError("an uploaded file has its bytes or a path, not both")
        self.name = name
        self._data = data
        self.path = path

    @property
    def data(self) -> bytes:
        return self._data if self._data is not None else Path(str(self.path)).read_bytes()

    def save(self, dest: Path) -> None:
        """Put the file at ``dest``: a second name for its spooled copy where the file
        system allows (no photo written twice to the Pi's card), else copied."""
        if self.path is None:
            dest.write_bytes(self.data)
            return
        try:
            os.link(self.path, dest)
        except OSError:  # another file system, or one without hard links
            shutil.copyfile(self.path, dest)

    def __repr__(self) -> str:
        return f"UploadedFile({self.name!r})"


#: Returns the latest camera JPEG with the detected board drawn on it, or None.
CameraView = Callable[[], bytes | None]
#: Replays uploaded photos (as uploaded; order them by name, plus an optional game.json);
#: returns a JSON-able summary. Raise ValueError for bad input (shown as a 400).
ReplayHandler = Callable[[Sequence[UploadedFile]], Mapping[str, Any]]
#: The LED strip's current frame: one colour per LED, "#rrggbb" or (r, g, b).
LedFrame = Callable[[], Sequence[Any] | None]
#: A photo crop (JPEG bytes) by evidence id, or None if unknown.
Evidence = Callable[[str], bytes | None]
#: The plies of the doubtful builds the camera will weigh again when the next block
#: is built on them (companion.controller.Controller.second_looks).
SecondLooks = Callable[[], Sequence[int]]
#: Puts the table's game in play back on the page (after a replay from photos took
#: its place); its id, or None when there is none.
TableGame = Callable[[], str | None]


@dataclass
class Services:
    """What the table provides to the page; every one is optional."""

    camera_view: CameraView | None = None
    replay: ReplayHandler | None = None
    leds: LedFrame | None = None
    evidence: Evidence | None = None
    second_looks: SecondLooks | None = None
    table_game: TableGame | None = None

    @classmethod
    def coerce(cls, value: Services | Mapping[str, Any] | None) -> Services:
        """Accept a Services, a plain dict of the same names, or None."""
        if value is None:
            return cls()
        if isinstance(value, Services):
            return value
        unknown = set(value) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown services: {', '.join(sorted(unknown))}")
        return cls(**dict(value))

    def flags(self) -> dict[str, bool]:
        return {"camera": self.camera_view is not None, "replay": self.replay is not None,
                "leds": self.leds is not None, "evidence": self.evidence is not None,
                "table_game": self.table_game is not None}


def generate_pin() -> str:
    """A fresh six-digit table PIN (printed on the console, never on the page)."""
    return f"{secrets.randbelow(10**6):06d}"


DEFAULTS: dict[str, Any] = {
    "MAX_CONTENT_LENGTH": 200 * 1024 * 1024,  # a game's worth of phone photos
    # werkzeug's own limit of 1000 parts made 3000 tiny photos "too large"; the upload
    # counts the photos itself (uploads.MAX_FILES) and says so
    "MAX_FORM_PARTS": 2100,
    "SSE_HEARTBEAT": 15.0,
    "SSE_MAX_EVENTS": None,  # tests: end a stream after this many events
    "SSE_TIMEOUT": None,  # tests: end a stream after this many seconds
    # each open page holds a server thread: past this many, a page is asked to come back
    # later (and refreshes every 10 s meanwhile), so the others' requests still get one
    "SSE_MAX_STREAMS": 16,
    "PIN_MAX_FAILURES": 10,  # wrong PINs per client before a pause
    "PIN_FAILURE_WINDOW": 300.0,
    "SESSION_COOKIE_SAMESITE": "Strict",
    "SESSION_COOKIE_HTTPONLY": True,
    "PERMANENT_SESSION_LIFETIME": timedelta(hours=12),
    "SEND_FILE_MAX_AGE_DEFAULT": 86400,  # the page links static files with ?v=<hash>
}


def create_app(config: Mapping[str, Any] | None = None, *, session: GameSession | None = None,
               services: Services | Mapping[str, Any] | None = None) -> Flask:
    """Build the page's app around a live session (a fresh, empty one if none)."""
    from companion.web import api, auth, events, pages

    app = Flask(__name__)
    app.config.update(DEFAULTS)
    app.config.update(dict(config or {}))
    if not app.config.get("PIN"):
        app.config["PIN"] = generate_pin()
    app.config["PIN"] = str(app.config["PIN"])
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secrets.token_hex(32)
    app.json.sort_keys = False  # type: ignore[attr-defined]

    sess = session if session is not None else GameSession()
    app.extensions["companion"] = Table(sess, Services.coerce(services),
                                        events.EventHub(sess), auth.Throttle())
    auth.init_app(app)
    app.register_blueprint(pages.bp)
    app.register_blueprint(auth.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(events.bp)
    return app


@dataclass
class Table:
    """Everything a request handler needs, kept in ``app.extensions``."""

    session: GameSession
    services: Services
    events: Any  # events.EventHub (typed loosely to avoid an import cycle)
    throttle: Any  # auth.Throttle
    #: the failures of the page's optional providers already logged (each once)
    failures_logged: set[str] = field(default_factory=set)


def table() -> Table:
    """The current app's table (inside a request)."""
    from flask import current_app

    return current_app.extensions["companion"]  # type: ignore[no-any-return]


__all__ = ["DEFAULTS", "Services", "Table", "UploadedFile", "create_app", "generate_pin",
           "table"]
