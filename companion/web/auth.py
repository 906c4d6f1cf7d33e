"""Who may change the game: the table PIN, CSRF protection and JSON errors.

Anyone on the network may look; only people at the table (who know the PIN
shown on the companion's console) may change things. API clients send the PIN
in ``X-Table-PIN``; the page logs in once with a PIN form and then sends its
per-session CSRF token in ``X-CSRF-Token``. Changing API calls must be JSON,
carry one of these custom headers and come from this origin, so a foreign
page cannot forge them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import deque
from typing import Any, NoReturn

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    jsonify,
    redirect,
    request,
    session,
)
from werkzeug.exceptions import HTTPException

from companion.session import JournalFailure

PIN_HEADER = "X-Table-PIN"
CSRF_HEADER = "X-CSRF-Token"

bp = Blueprint("auth", __name__)


class ApiError(Exception):
    """A client error answered as ``{"error": message, ...extra}`` with ``status``."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.extra = extra


MAX_ERROR = 300  # characters of an error line


def fail(status: int, message: str, **extra: Any) -> NoReturn:
    raise ApiError(status, message, **extra)


def error_response(status: int, message: str, **extra: Any) -> Response:
    """One line, always, and short: the page shows it as is (a 10 MB move text came
    back whole in its refusal)."""
    line = " ".join(str(message)[:4 * MAX_ERROR].split()) or "error"
    if len(line) > MAX_ERROR:
        line = line[:MAX_ERROR - 3] + "..."
    resp = jsonify({"error": line, **extra})
    resp.status_code = status
    resp.headers["Cache-Control"] = "no-store"
    return resp


class Throttle:
    """Counts wrong PINs per client so six digits cannot be guessed by brute force."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str, window: float, now: float) -> deque[float]:
        q = self._failures.setdefault(client, deque())
        while q and q[0] < now - window:
            q.popleft()
        return q

    def blocked(self, client: str, limit: int, window: float) -> bool:
        with self._lock:
            return len(self._recent(client, window, time.monotonic())) >= limit

    def failed(self, client: str, window: float) -> None:
        with self._lock:
            self._recent(client, window, time.monotonic()).append(time.monotonic())

    def reset(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)


def _throttle() -> Throttle:
    return current_app.extensions["companion"].throttle  # type: ignore[no-any-return]


def _client() -> str:
    return request.remote_addr or "?"


def _pin_tag() -> str:
    """What the session cookie stores: proof of the PIN, never the PIN itself.
    A new PIN (or a restart with a new secret) locks every phone again."""
    key = str(current_app.config["SECRET_KEY"]).encode()
    return hmac.new(key, str(current_app.config["PIN"]).encode(), hashlib.sha256).hexdigest()[:32]


def csrf_token() -> str:
    """The per-session CSRF token (created on first use)."""
    token = session.get("csrf")
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        session["csrf"] = token
    return token


def is_unlocked() -> bool:
    tag = session.get("table")
    return isinstance(tag, str) and hmac.compare_digest(tag, _pin_tag())


def verify_pin(pin: str) -> None:
    """Raise 403 for a wrong PIN, 429 after too many wrong ones."""
    cfg = current_app.config
    limit, window = int(cfg["PIN_MAX_FAILURES"]), float(cfg["PIN_FAILURE_WINDOW"])
    throttle = _throttle()
    if throttle.blocked(_client(), limit, window):
        fail(429, "too many wrong PINs: wait a few minutes and try again")
    if not hmac.compare_digest(pin.strip().encode(), str(cfg["PIN"]).encode()):
        throttle.failed(_client(), window)
        fail(403, "wrong table PIN")
    throttle.reset(_client())


def check_origin() -> None:
    """Refuse requests a page of another site made the browser send."""
    origin = request.headers.get("Origin")
    if origin is not None:
        own = request.host_url.rstrip("/")
        if origin.rstrip("/") != own:
            fail(403, "cross-origin request refused")
    elif request.headers.get("Sec-Fetch-Site") == "cross-site":
        fail(403, "cross-origin request refused")


def _check_csrf(token: str | None) -> None:
    expected = session.get("csrf")
    if not token or not isinstance(expected, str) or not hmac.compare_digest(token, expected):
        fail(403, "missing or stale CSRF token: reload the page")


def require_table(*, form_ok: bool = False) -> None:
    """Gate for every changing action.

    ``form_ok`` lets a plain HTML form (multipart upload) give the PIN or the
    CSRF token as fields instead of headers.
    """
    check_origin()
    pin = request.headers.get(PIN_HEADER)
    if pin is None and form_ok:
        pin = request.form.get("pin") or None
    if pin is not None:
        verify_pin(pin)
        return
    if not is_unlocked():
        fail(403, "this needs the table PIN: unlock the table controls on the page, "
                  f"or send the {PIN_HEADER} header")
    token = request.headers.get(CSRF_HEADER)
    if token is None and form_ok:
        token = request.form.get("csrf_token")
    _check_csrf(token)


def require_json() -> dict[str, Any]:
    """API posts are JSON objects: the content type alone stops simple cross-site forms."""
    if not request.is_json:
        fail(415, "send JSON with Content-Type: application/json")
    try:
        data = request.get_json(silent=True)
    except RecursionError:  # silent covers ValueError only: nested 100000 deep was a 500
        fail(400, "malformed JSON in the request body (nested too deeply)")
    if data is None:
        if not request.get_data():
            return {}
        fail(400, "malformed JSON in the request body")
    if not isinstance(data, dict):
        fail(400, "the request body must be a JSON object")
    return data


# -- log in and out -------------------------------------------------------------

@bp.post("/api/login")
def api_login() -> Response:
    """The page's PIN form: remembers the table in the (signed) session cookie."""
    check_origin()
    _check_csrf(request.headers.get(CSRF_HEADER))
    data = require_json()
    pin = data.get("pin")
    if not isinstance(pin, str | int) or not str(pin).strip():
        fail(400, "give the table PIN")
    verify_pin(str(pin))
    _unlock()
    return jsonify({"unlocked": True})


@bp.post("/login")
def form_login() -> Response:
    """The same as a plain form post (works without JavaScript)."""
    check_origin()
    _check_csrf(request.form.get("csrf_token"))
    verify_pin(request.form.get("pin", ""))
    _unlock()
    return redirect("/", code=303)  # type: ignore[return-value]


@bp.post("/api/logout")
def api_logout() -> Response:
    check_origin()
    _check_csrf(request.headers.get(CSRF_HEADER))
    session.pop("table", None)
    return jsonify({"unlocked": False})


def _unlock() -> None:
    session["table"] = _pin_tag()
    session.permanent = True


# -- errors ----------------------------------------------------------------------

def init_app(app: Flask) -> None:
    """Every error, from any route, as one line of JSON."""

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Response:
        return error_response(exc.status, exc.message, **exc.extra)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        if status == 413:
            limit = current_app.config.get("MAX_CONTENT_LENGTH")
            msg = "the upload is too large" + (f" (at most {_size(int(limit))})" if limit else "")
            return error_response(413, msg)
        return error_response(status, _short(exc.description) or exc.name)

    @app.errorhandler(JournalFailure)
    def _not_saved(exc: JournalFailure) -> Response:
        # the card is full or failing: the change was not made, and can be sent again
        current_app.logger.error("%s", exc)
        return error_response(503, str(exc))

    @app.errorhandler(Exception)
    def _crash(exc: Exception) -> Response:
        current_app.logger.exception("unexpected error")
        return error_response(500, "internal error: see the companion's log")


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.0f} MB"
    return f"{max(1, round(n / 1024))} KB"


def _short(text: str | None) -> str:
    """Werkzeug's descriptions are paragraphs; keep the first sentence."""
    if not text:
        return ""
    first = " ".join(text.split()).split(". ")[0]
    return first.rstrip(".")
