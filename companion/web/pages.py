"""The page itself, and the images it shows (camera view, photo crops).

The page is one HTML document; the board, scores and log are drawn by
``static/app.js`` from ``/api/state`` so it updates without a reload.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

from flask import Blueprint, Response, render_template

from companion.web.api import meta_json
from companion.web.app import table
from companion.web.auth import csrf_token, fail, is_unlocked

bp = Blueprint("pages", __name__)  # templates/ and static/ are the app's own folders

STATIC = Path(__file__).parent / "static"


@lru_cache(maxsize=32)
def _static_version(name: str, mtime: float) -> str:
    return hashlib.sha1((STATIC / name).read_bytes()).hexdigest()[:10]


def asset(name: str) -> str:
    """A static URL that changes when the file does (phones cache hard)."""
    path = STATIC / name
    return f"/static/{name}?v={_static_version(name, path.stat().st_mtime)}"


@bp.get("/")
def index() -> Response:
    resp = Response(render_template("index.html", csrf=csrf_token(), meta=meta_json(),
                                    unlocked=is_unlocked(), asset=asset))
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["X-Frame-Options"] = "DENY"
    resp.headers["Referrer-Policy"] = "same-origin"
    resp.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
        "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        "form-action 'self'")
    return resp


def _jpeg(data: bytes) -> Response:
    resp = Response(data, mimetype="image/jpeg")
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/camera.jpg")
def camera() -> Response:
    """The camera's latest frame with the detected board drawn on it."""
    provider = table().services.camera_view
    if provider is None:
        fail(404, "this companion has no camera view")
    data = provider()
    if not data:
        fail(404, "no camera frame yet")
    return _jpeg(data)


@bp.get("/evidence/<crop_id>.jpg")
def evidence(crop_id: str) -> Response:
    """The photo crop of a site the camera read (shown next to a move or warning)."""
    provider = table().services.evidence
    if provider is None:
        fail(404, "this companion keeps no photo crops")
    if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", crop_id):
        fail(400, "bad crop id")
    data = provider(crop_id)
    if not data:
        fail(404, f"no crop {crop_id}")
    resp = _jpeg(data)
    resp.headers["Cache-Control"] = "private, max-age=3600"  # a crop never changes
    return resp
