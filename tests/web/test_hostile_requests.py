"""Requests a sweep of the API found mishandled: each a 4xx with a short one-line
error (never the companion's 500), and a refused request changes nothing."""

from __future__ import annotations

import io
from typing import Any

import pytest

from companion.rules import GameRecord, RecordError, RulesError, legal_moves, make_config
from companion.session import GameSession
from companion.store.journal import Journal


def _post(client: Any, url: str, headers: dict[str, str], body: Any) -> Any:
    if isinstance(body, str):
        return client.post(url, data=body, headers=headers)
    return client.post(url, json=body, headers=headers)


def test_json_nested_too_deeply_is_a_400(client: Any, session: GameSession,
                                         pin_headers: dict[str, str]) -> None:
    """request.get_json(silent=True) lets json's RecursionError through: a 500 on
    every JSON route."""
    deep = "[" * 100000 + "]" * 100000
    for url in ("/api/undo", "/api/moves", "/api/setup", "/api/cards"):
        resp = _post(client, url, pin_headers, deep)
        assert (resp.status_code, resp.get_json()) == (
            400, {"error": "malformed JSON in the request body (nested too deeply)"}), url
    assert session.record.moves == []


@pytest.mark.parametrize(("seed", "message"), [
    ("1e400", "seed must be a whole number"),
    ("1.9", "seed must be a whole number"),
    ("true", "seed must be a whole number"),
    ("-1", "the seed must be a whole number from 0 to 2**63-1, not '-1'"),
    ("9223372036854775808", "the seed must be a whole number from 0 to 2**63-1, not "
                            "'9223372036854775808'"),
])
def test_a_new_games_seed_is_the_records(make_app: Any, pin_headers: dict[str, str],
                                         seed: str, message: str) -> None:
    """1e400 was a 500; -1 made a game whose journal could not be read back (lost at
    the next restart); 1.9 and true were taken as 1."""
    session = GameSession(make_config(2))
    client = make_app(session).test_client()
    before = session.game_id, session.version
    resp = _post(client, "/api/setup", pin_headers, f'{{"players": 4, "seed": {seed}}}')
    assert (resp.status_code, resp.get_json()) == (400, {"error": message})
    assert (session.game_id, session.version) == before


@pytest.mark.parametrize("name", ["x" * 41, "Ann\nBob", "\x1b[31mred"])
def test_a_players_name_is_short_and_printable(make_app: Any, pin_headers: dict[str, str],
                                               name: str) -> None:
    """Names of a megabyte made every phone's state 20 MB; a line break or an escape
    code broke `companion games` and reached the terminal."""
    session = GameSession(make_config(2))
    client = make_app(session).test_client()
    players = [{"name": name, "seat": "S", "colors": ["red", "green"]},
               {"name": "Bo", "seat": "N", "colors": ["blue", "black"]}]
    resp = _post(client, "/api/setup", pin_headers, {"players": players})
    assert resp.status_code == 400
    assert resp.get_json()["error"].startswith("a player's name is at most 40 printable "
                                               "characters: ")


def test_a_card_for_a_seat_nobody_sits_at_is_refused(make_app: Any,
                                                     pin_headers: dict[str, str]) -> None:
    """It was kept, and then every phone's /api/state was a 500 until the next move."""
    from companion.bots import GreedyBot

    session = GameSession(make_config(2))
    bot = GreedyBot(1)
    while session.state.phase.value == "commit":
        session.play(bot.choose(session.state))
    client = make_app(session).test_client()
    version = session.version
    resp = _post(client, "/api/cards", pin_headers, {"seat": "E", "card": "c00"})
    assert (resp.status_code, resp.get_json()) == (409, {"error": "nobody sits at E"})
    assert session.version == version
    assert client.get("/api/state").status_code == 200


@pytest.mark.parametrize(("url", "body", "key"), [
    ("/api/moves/0/correct", {"move": "S commit ?", "delete": "false"}, "delete"),
    ("/api/moves", {"move": "W commit ?", "allow_illegal": "false"}, "allow_illegal"),
    ("/api/setup", {"players": 4, "track_cards": "false"}, "track_cards"),
])
def test_yes_or_no_is_true_or_false(client: Any, session: GameSession,
                                    pin_headers: dict[str, str], url: str, body: Any,
                                    key: str) -> None:
    """The text "false" is truthy: it deleted the move, recorded an out-of-turn one."""
    session.play(next(iter(legal_moves(session.state))))
    moves = [str(m) for m in session.record.moves]
    resp = _post(client, url, pin_headers, body)
    assert (resp.status_code, resp.get_json()) == (400, {"error": f"'{key}' must be true or "
                                                                  "false"})
    assert [str(m) for m in session.record.moves] == moves


def test_keep_and_resolve_lost_to_another_phone_are_404(
        client: Any, session: GameSession, pin_headers: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked outside the session's lock, an undo from another phone can come between
    the check and the change: the session's refusal was a 500."""
    session.play(next(iter(legal_moves(session.state))))

    def undone(*args: Any) -> None:
        raise RecordError("no move number 0 to keep (the game has 0)")

    monkeypatch.setattr(session, "keep", undone)
    resp = _post(client, "/api/moves/0/keep", pin_headers, {})
    assert (resp.status_code, resp.get_json()) == (
        404, {"error": "no move number 0 to keep (the game has 0)"})
    warning = session.report("unexplained", "a change no move explains")

    def gone(*args: Any) -> None:
        raise RulesError(f"no warning {warning.id}")

    monkeypatch.setattr(session, "resolve_warning", gone)
    resp = _post(client, f"/api/warnings/{warning.id}/resolve", pin_headers, {})
    assert (resp.status_code, resp.get_json()) == (404, {"error": f"no warning {warning.id}"})


def test_an_evidence_id_past_sqlites_integers_is_not_found(make_app: Any, tmp_path) -> None:
    journal = Journal(tmp_path / "journal.sqlite")
    try:
        client = make_app(GameSession(make_config(4), journal=journal),
                          services={"evidence": journal.evidence}).test_client()
        for key in ("9999999999999999999", "-9999999999999999999"):
            resp = client.get(f"/evidence/{key}.jpg")
            assert resp.status_code == 404, key
    finally:
        journal.close()


def test_a_commits_blocks_in_any_order_are_one_selection(client: Any, session: GameSession,
                                                         pin_headers: dict[str, str]) -> None:
    """Kept in the typed order, the live game held red (1,1,1,1,1,2) while its record
    (and journal) said red:2,1,1,1,1,1: a resumed game was not the live one."""
    resp = _post(client, "/api/moves", pin_headers, {"move": "S commit red:1,1,1,1,1,2"})
    assert resp.status_code == 201
    saved = GameRecord.loads(client.get("/api/record").get_data(as_text=True))
    assert saved.replay() == session.state
    assert resp.get_json()["move"] == "S commit red:2,1,1,1,1,1"


def test_an_error_line_is_short(client: Any, pin_headers: dict[str, str]) -> None:
    """A 10 MB move text came back whole in its one-line refusal."""
    resp = _post(client, "/api/moves", pin_headers, {"move": "S " + "x" * 10_000_000})
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert len(error) == 300 and error.endswith("...")


def test_thousands_of_photos_are_counted_by_the_upload(upload_client: Any, pin: str) -> None:
    """Werkzeug's own limit of 1000 form parts called 1500 tiny photos "too large"."""
    client, seen = upload_client
    photos = [(io.BytesIO(b"\xff\xd8\xff\xd9"), f"IMG_{k}.jpg") for k in range(1500)]
    resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data", data={"photos": photos})
    assert resp.status_code == 200, resp.get_json()
    assert [len(names) for names in seen] == [1500]


def test_waitress_refuses_a_body_past_the_apps_limit_before_reading_it(make_app: Any) -> None:
    """By default waitress buffers up to 1 GB of body, PIN or not, before the app says 413."""
    from companion.web.server import WebServer

    app = make_app(GameSession(), MAX_CONTENT_LENGTH=4 * 1024 * 1024)
    server = WebServer(app, "127.0.0.1", 0)
    try:
        assert server._server.adj.max_request_body_size == 4 * 1024 * 1024 + 64 * 1024
    finally:
        server.stop()
