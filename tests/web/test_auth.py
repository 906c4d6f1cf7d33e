"""The table PIN and CSRF protection of every changing action."""

from __future__ import annotations

import re
from typing import Any

import pytest

from companion.session import GameSession
from companion.web import create_app, generate_pin

NEEDS_PIN = ("this needs the table PIN: unlock the table controls on the page, or send the "
             "X-Table-PIN header")
STALE = "missing or stale CSRF token: reload the page"

CHANGING = [
    ("/api/setup", {"players": 4}),
    ("/api/moves", {"move": "S commit ?"}),
    ("/api/cards", {"seat": "S", "card": "c11"}),
    ("/api/moves/0/correct", {"move": None}),
    ("/api/moves/0/insert", {"move": "S commit ?"}),
    ("/api/moves/0/keep", {}),
    ("/api/undo", {}),
    ("/api/warnings/1/resolve", {}),
]


@pytest.mark.parametrize(("path", "body"), CHANGING)
def test_changing_actions_need_the_pin(client: Any, path: str, body: dict[str, Any]) -> None:
    resp = client.post(path, json=body)
    assert resp.status_code == 403
    assert resp.get_json() == {"error": NEEDS_PIN}
    resp = client.post(path, json=body, headers={"X-Table-PIN": "000000"})
    assert resp.status_code == 403
    assert resp.get_json() == {"error": "wrong table PIN"}


def test_upload_needs_the_pin(client: Any) -> None:
    resp = client.post("/api/upload", data={}, content_type="multipart/form-data")
    assert resp.status_code == 403
    assert resp.get_json() == {"error": NEEDS_PIN}


def test_api_posts_must_be_json(client: Any, pin: str) -> None:
    resp = client.post("/api/moves", data={"move": "S commit ?"},
                       headers={"X-Table-PIN": pin})
    assert resp.status_code == 415
    assert resp.get_json() == {"error": "send JSON with Content-Type: application/json"}
    resp = client.post("/api/moves", data="{not json", headers={"X-Table-PIN": pin},
                       content_type="application/json")
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "malformed JSON in the request body"}
    resp = client.post("/api/moves", json=["S commit ?"], headers={"X-Table-PIN": pin})
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "the request body must be a JSON object"}


def test_cross_origin_requests_are_refused(client: Any, pin_headers: dict[str, str]) -> None:
    resp = client.post("/api/moves", json={"move": "S commit ?"},
                       headers={**pin_headers, "Origin": "http://evil.example"})
    assert resp.status_code == 403
    assert resp.get_json() == {"error": "cross-origin request refused"}
    resp = client.post("/api/moves", json={"move": "S commit ?"},
                       headers={**pin_headers, "Sec-Fetch-Site": "cross-site"})
    assert resp.status_code == 403
    resp = client.post("/api/moves", json={"move": "S commit ?"},
                       headers={**pin_headers, "Origin": "http://localhost"})
    assert resp.status_code == 201  # our own origin


def test_page_login_then_csrf_token(unlocked: Any, session: GameSession) -> None:
    client, headers = unlocked
    assert client.get("/api/state").get_json()["table"]["unlocked"] is True
    resp = client.post("/api/moves", json={"move": "S commit ?"}, headers=headers)
    assert resp.status_code == 201
    # the cookie alone is not enough: a forged request has no token
    resp = client.post("/api/moves", json={"move": "W commit ?"})
    assert resp.status_code == 403
    assert resp.get_json() == {"error": STALE}
    resp = client.post("/api/moves", json={"move": "W commit ?"},
                       headers={"X-CSRF-Token": "guess"})
    assert resp.status_code == 403
    assert resp.get_json() == {"error": STALE}
    resp = client.post("/api/logout", json={}, headers=headers)
    assert resp.status_code == 200
    resp = client.post("/api/moves", json={"move": "W commit ?"}, headers=headers)
    assert resp.status_code == 403
    assert resp.get_json() == {"error": NEEDS_PIN}
    assert len(session.record.moves) == 1


def test_login_needs_the_csrf_token(client: Any, pin: str, get_csrf: Any) -> None:
    resp = client.post("/api/login", json={"pin": pin})
    assert resp.status_code == 403
    assert resp.get_json() == {"error": STALE}
    token = get_csrf(client)
    resp = client.post("/api/login", json={"pin": "111111"}, headers={"X-CSRF-Token": token})
    assert resp.status_code == 403
    assert resp.get_json() == {"error": "wrong table PIN"}
    resp = client.post("/api/login", json={}, headers={"X-CSRF-Token": token})
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "give the table PIN"}


def test_form_login(client: Any, pin: str, get_csrf: Any) -> None:
    token = get_csrf(client)
    resp = client.post("/login", data={"pin": pin})
    assert resp.status_code == 403 and resp.get_json() == {"error": STALE}
    resp = client.post("/login", data={"pin": "9", "csrf_token": token})
    assert resp.status_code == 403 and resp.get_json() == {"error": "wrong table PIN"}
    resp = client.post("/login", data={"pin": pin, "csrf_token": token})
    assert resp.status_code == 303 and resp.headers["Location"] == "/"
    assert client.get("/api/state").get_json()["table"]["unlocked"] is True


def test_upload_form_fields(make_app: Any, session: GameSession, pin: str,
                            get_csrf: Any) -> None:
    """A plain HTML form may give the PIN or (once logged in) the CSRF token as fields."""
    import io

    client = make_app(session, services={"replay": lambda files: {"ok": True}}).test_client()
    photo = b"\xff\xd8\xff\xd9"
    resp = client.post("/api/upload", content_type="multipart/form-data",
                       data={"pin": pin, "photos": (io.BytesIO(photo), "a.jpg")})
    assert resp.status_code == 200
    token = get_csrf(client)
    client.post("/api/login", json={"pin": pin}, headers={"X-CSRF-Token": token})
    resp = client.post("/api/upload", content_type="multipart/form-data",
                       data={"csrf_token": token, "photos": (io.BytesIO(photo), "a.jpg")})
    assert resp.status_code == 200
    resp = client.post("/api/upload", content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(photo), "a.jpg")})
    assert resp.status_code == 403 and resp.get_json() == {"error": STALE}


def test_wrong_pins_are_throttled(make_app: Any, session: GameSession, pin: str) -> None:
    client = make_app(session, PIN_MAX_FAILURES=3).test_client()
    for _ in range(3):
        resp = client.post("/api/undo", json={}, headers={"X-Table-PIN": "000000"})
        assert resp.status_code == 403
    resp = client.post("/api/undo", json={}, headers={"X-Table-PIN": pin})
    assert resp.status_code == 429
    assert resp.get_json() == {"error": "too many wrong PINs: wait a few minutes and try again"}


def test_a_new_pin_locks_the_phones_again(session: GameSession, get_csrf: Any) -> None:
    first = create_app({"TESTING": True, "PIN": "111111", "SECRET_KEY": "k"}, session=session)
    client = first.test_client()
    token = get_csrf(client)
    assert client.post("/api/login", json={"pin": "111111"},
                       headers={"X-CSRF-Token": token}).status_code == 200
    cookie = client.get_cookie("session")
    assert cookie is not None
    second = create_app({"TESTING": True, "PIN": "222222", "SECRET_KEY": "k"}, session=session)
    other = second.test_client()
    other.set_cookie("session", cookie.value)
    assert other.get("/api/state").get_json()["table"]["unlocked"] is False


def test_the_pin_is_never_on_the_page(client: Any, pin: str) -> None:
    html = client.get("/").get_data(as_text=True)
    assert pin not in html
    assert pin not in client.get("/api/state").get_data(as_text=True)
    assert pin not in client.get("/api/meta").get_data(as_text=True)


def test_generated_pin(session: GameSession) -> None:
    app = create_app(session=session)
    assert re.fullmatch(r"\d{6}", app.config["PIN"])
    assert re.fullmatch(r"\d{6}", generate_pin())
    assert len(app.config["SECRET_KEY"]) >= 32


def test_page_security_headers(client: Any) -> None:
    resp = client.get("/")
    assert resp.status_code == 200
    csp = resp.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert resp.headers["X-Frame-Options"] == "DENY"
    cookie = resp.headers.get("Set-Cookie", "")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_page_serves_no_external_resources(client: Any) -> None:
    html = client.get("/").get_data(as_text=True)
    assert not re.search(r"""(src|href)=["']https?://""", html)
    for asset in ("app.js", "board.js", "style.css", "icon.svg"):
        resp = client.get(f"/static/{asset}")
        assert resp.status_code == 200
        assert "http://" not in resp.get_data(as_text=True).replace(
            "http://www.w3.org/2000/svg", "")
