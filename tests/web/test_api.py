"""The JSON API: every route, its status codes and its one-line error messages."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest

from companion.rules import Build, RulesError, Site, legal_moves, parse_move
from companion.session import GameSession

# -- reading ---------------------------------------------------------------------


def test_state_without_a_game(make_app: Any) -> None:
    client = make_app(GameSession()).test_client()
    resp = client.get("/api/state")
    assert resp.status_code == 200
    data = resp.get_json()
    assert data["game"] is None
    assert data["board"] == {"format": "manhattan-board/1", "sites": []}
    assert data["table"]["unlocked"] is False
    assert resp.headers["Cache-Control"] == "no-store"


def test_state_is_the_session_snapshot(client: Any, driver: Any, session: GameSession) -> None:
    driver.play(8)
    data = client.get("/api/state").get_json()
    assert set(data) >= {"board", "moves", "scores", "game", "warnings", "guidance", "version"}
    assert data["board"]["format"] == "manhattan-board/1"
    assert len(data["moves"]) == 8
    assert data["game"]["plies"] == 8 and data["game"]["ply"] == 8
    assert data["table"]["live"] is True
    assert data["leds"] is None  # no strip: the page draws a virtual one
    snap = session.snapshot()
    assert data["board"] == snap["board"] and data["moves"] == snap["moves"]


def test_state_stepping(client: Any, driver: Any) -> None:
    driver.play(12)
    start = client.get("/api/state?ply=0").get_json()
    assert start["game"]["ply"] == 0 and start["board"]["sites"] == []
    assert start["table"]["live"] is False
    assert len(start["moves"]) == 12  # the log is always whole
    mid = client.get("/api/state?ply=6").get_json()
    assert mid["game"]["ply"] == 6
    assert sum(s["height"] for s in mid["board"]["sites"]) < sum(
        s["height"] for s in client.get("/api/state").get_json()["board"]["sites"])
    beyond = client.get("/api/state?ply=999").get_json()
    assert beyond["game"]["ply"] == 12 and beyond["table"]["live"] is True


def test_state_bad_ply(client: Any) -> None:
    for bad in ("abc", "-1", "1.5"):
        resp = client.get(f"/api/state?ply={bad}")
        assert resp.status_code == 400
        assert resp.get_json() == {"error": f"ply must be a whole number from 0, not '{bad}'"}


def test_record_download(client: Any, driver: Any) -> None:
    driver.play(5)
    resp = client.get("/api/record")
    assert resp.status_code == 200
    assert resp.mimetype == "application/json"
    disposition = resp.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="manhattan-')
    assert disposition.endswith('.json"')
    data = json.loads(resp.get_data(as_text=True))
    assert data["format"] == "manhattan-game/1"
    assert len(data["entries"]) == 5


def test_record_without_a_game(make_app: Any) -> None:
    resp = make_app(GameSession()).test_client().get("/api/record")
    assert resp.status_code == 409
    assert resp.get_json() == {"error": "no game is set up yet"}


def test_meta(client: Any) -> None:
    data = client.get("/api/meta").get_json()
    assert data["cities"][2] == "Frankfurt"
    assert [e["name"] for e in data["editions"]] == ["classic", "2017", "mayfair"]
    assert "anti-trust" in data["variants"]
    assert data["reasons"]["wrong-turn"]


def test_unknown_route_and_method_are_json(client: Any) -> None:
    resp = client.get("/api/nothing")
    assert resp.status_code == 404
    assert set(resp.get_json()) == {"error"}
    resp = client.get("/api/undo")
    assert resp.status_code == 405
    assert set(resp.get_json()) == {"error"}


# -- moves -----------------------------------------------------------------------


def test_play_a_move(client: Any, session: GameSession, pin_headers: dict[str, str]) -> None:
    resp = client.post("/api/moves", json={"move": "S commit ?"}, headers=pin_headers)
    assert resp.status_code == 201
    assert resp.get_json() == {"ply": 0, "move": "S commit ?", "legal": True, "warning": None}
    assert [str(m) for m in session.record.moves] == ["S commit ?"]


def test_a_move_the_journal_refuses(make_app: Any, pin_headers: dict[str, str]) -> None:
    """A full SD card: the page hears why in one line (503, not the 500 of a crash),
    and the game is as it was, so the move can be sent again."""
    import sqlite3

    from companion.rules import make_config

    class FullCard:
        full = False

        def begin_game(self, header: dict[str, Any]) -> str:
            return "g1"

        def append(self, game_id: str, entry: dict[str, Any]) -> None:
            if self.full:
                raise sqlite3.OperationalError("database or disk is full")

    card = FullCard()
    session = GameSession(make_config(2), journal=card)
    client = make_app(session).test_client()
    card.full = True
    resp = client.post("/api/moves", json={"move": "S commit ?"}, headers=pin_headers)
    assert resp.status_code == 503
    assert resp.get_json() == {"error": "the game could not be saved (database or disk is "
                                        "full)"}
    assert session.record.moves == []
    card.full = False
    resp = client.post("/api/moves", json={"move": "S commit ?"}, headers=pin_headers)
    assert resp.status_code == 201
    assert [str(m) for m in session.record.moves] == ["S commit ?"]


def test_play_bad_notation(client: Any, pin_headers: dict[str, str]) -> None:
    resp = client.post("/api/moves", json={"move": "S plays red"}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "cannot read move 'S plays red'"}
    resp = client.post("/api/moves", json={}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": 'give the move in notation, e.g. "S c02 red1@1NE"'}


def test_play_illegal_move(client: Any, pin_headers: dict[str, str]) -> None:
    resp = client.post("/api/moves", json={"move": "W commit ?"}, headers=pin_headers)
    assert resp.status_code == 409
    assert resp.get_json() == {"error": "Player 1 (S) chooses blocks now", "reason": "wrong-turn"}
    resp = client.post("/api/moves", json={"move": "S c02 red1@1NE"}, headers=pin_headers)
    assert resp.status_code == 409
    assert resp.get_json() == {"error": "every player must first choose this round's blocks",
                               "reason": "wrong-phase"}


def test_play_illegal_but_it_happened(client: Any, driver: Any, session: GameSession,
                                      pin_headers: dict[str, str]) -> None:
    driver.to_build_phase()
    state = session.state
    hand = state.hand(state.to_move)
    assert hand
    card = hand[0]
    row, col = card.site_cell(state.seat)
    wrong = Site(0, (row + 1) % 3, col)  # not the site the card gives
    block = (state.remaining_blocks() or ())[-1]
    text = f"{state.seat.value} {card} {block}@{wrong.code}"
    resp = client.post("/api/moves", json={"move": text, "allow_illegal": True},
                       headers=pin_headers)
    assert resp.status_code == 201
    data = resp.get_json()
    assert data["legal"] is False
    assert data["warning"]["reason"] == "wrong-site"
    assert data["warning"]["site"] == wrong.name
    warnings = client.get("/api/state").get_json()["warnings"]
    assert [w["id"] for w in warnings] == [data["warning"]["id"]]


def test_play_without_a_game(make_app: Any, pin_headers: dict[str, str]) -> None:
    client = make_app(GameSession()).test_client()
    resp = client.post("/api/moves", json={"move": "S commit ?"}, headers=pin_headers)
    assert resp.status_code == 409
    assert resp.get_json() == {"error": "no game is set up yet"}


def test_see_card_lights_sites(client: Any, driver: Any, session: GameSession,
                               pin_headers: dict[str, str]) -> None:
    driver.to_build_phase()
    seat = session.state.seat.value
    resp = client.post("/api/cards", json={"seat": seat, "card": "c11"}, headers=pin_headers)
    assert resp.status_code == 200
    guidance = resp.get_json()["guidance"]
    assert guidance["card"] == "c11" and len(guidance["lit"]) + len(guidance["dim"]) == 6
    resp = client.post("/api/cards", json={"seat": "Q", "card": "c11"}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "unknown seat 'Q' (expected S, W, N or E)"}


# -- corrections -------------------------------------------------------------------


def test_correct_a_move(client: Any, driver: Any, session: GameSession,
                        pin_headers: dict[str, str]) -> None:
    driver.to_build_phase()
    driver.play(2)
    n = len(session.record.moves)
    first_build = session.record.moves[n - 2]
    assert isinstance(first_build, Build)
    resp = client.post(f"/api/moves/{n - 1}/correct", json={"move": None, "note": "wrong"},
                       headers=pin_headers)
    assert resp.status_code == 200
    assert resp.get_json() == {"ply": n - 1, "move": None, "rechecked": [], "flagged": []}
    assert len(session.record.moves) == n - 1
    # the same move again, as a replacement of itself
    resp = client.post(f"/api/moves/{n - 2}/correct", json={"move": str(first_build)},
                       headers=pin_headers)
    assert resp.status_code == 200
    assert resp.get_json() == {"ply": n - 2, "move": str(first_build), "rechecked": [],
                               "flagged": []}


def test_a_warning_about_an_earlier_move_is_resolved_by_correcting_it(
        client: Any, driver: Any, session: GameSession, pin_headers: dict[str, str]) -> None:
    # the camera revised an earlier build: the warning belongs to that move
    driver.to_build_phase()
    driver.play(2)
    n = len(session.record.moves)
    build = session.record.moves[n - 2]
    assert isinstance(build, Build)
    warning = session.report("revised", "blue 2 at Cairo S revised to blue 1", "Cairo S",
                             ply=n - 2)
    shown = client.get("/api/state").get_json()["warnings"]
    assert [(w["id"], w["ply"], w["reason"], w["resolved"]) for w in shown] == [
        (warning.id, n - 2, "revised", False)]
    resp = client.post(f"/api/moves/{n - 2}/correct", json={"move": str(build)},
                       headers=pin_headers)
    assert resp.status_code == 200
    assert client.get("/api/state").get_json()["warnings"][0]["resolved"] is True
    # the camera corrects a move only if it is still the one it revised
    other = session.record.moves[n - 1]
    with pytest.raises(RulesError, match=f"^move {n - 2} is no longer {other}$"):
        session.correct(n - 2, other, "revised by the camera", expect=other)
    assert session.record.moves[n - 2] == build
    session.correct(n - 2, build, "revised by the camera", expect=build)


def test_correct_errors(client: Any, driver: Any, pin_headers: dict[str, str]) -> None:
    driver.play(3)
    resp = client.post("/api/moves/3/correct", json={"move": None}, headers=pin_headers)
    assert resp.status_code == 404
    assert resp.get_json() == {"error": "no move number 3 to correct (the game has 3)"}
    resp = client.post("/api/moves/0/correct", json={"move": "nonsense"}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "cannot read move 'nonsense'"}
    resp = client.post("/api/moves/0/correct", json={"note": "?"}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": 'give the corrected move, or "move": null to delete it'}


def test_insert_a_move_the_camera_missed(client: Any, driver: Any, session: GameSession,
                                         pin_headers: dict[str, str]) -> None:
    driver.to_build_phase()
    k = len(session.record.moves)
    missed, seen = driver.play(2)
    session.undo()
    session.undo()  # the camera never saw ``missed``
    outcome = session.play(seen, allow_illegal=True)  # out of turn: the move before is missing
    assert outcome.warning is not None and outcome.warning.reason == "wrong-turn"
    resp = client.post(f"/api/moves/{k}/insert", json={"move": str(missed), "note": "missed"},
                       headers=pin_headers)
    assert resp.status_code == 200
    assert resp.get_json() == {"ply": k, "move": str(missed), "rechecked": [k + 1],
                               "flagged": []}
    data = client.get("/api/state").get_json()
    assert [(m["notation"], m.get("forced", False)) for m in data["moves"][k:]] == [
        (str(missed), False), (str(seen), False)]
    assert [(w["ply"], w["reason"], w["resolved"]) for w in data["warnings"]] == [
        (k + 1, "wrong-turn", True)]
    assert data["game"]["to_move_seat"] == session.state.seat.value


def test_an_inserted_move_flags_a_later_move_it_makes_illegal(
        client: Any, driver: Any, session: GameSession, pin_headers: dict[str, str]) -> None:
    driver.to_build_phase()
    k = len(session.record.moves)
    first, second = driver.play(2)
    assert isinstance(first, Build)
    # the same seat building twice in a row: its own next move comes out of turn
    extra = next(m for m in legal_moves(session.record.state_at(k))
                 if isinstance(m, Build) and m.site != first.site and m.card != first.card)
    resp = client.post(f"/api/moves/{k}/insert", json={"move": str(extra)}, headers=pin_headers)
    assert resp.status_code == 200
    assert resp.get_json() == {"ply": k, "move": str(extra), "rechecked": [],
                               "flagged": [k + 1]}
    data = client.get("/api/state").get_json()
    assert [(m["notation"], m.get("forced", False)) for m in data["moves"][k:]] == [
        (str(extra), False), (str(first), True), (str(second), False)]
    [warning] = data["warnings"]
    assert (warning["ply"], warning["reason"], warning["site"], warning["resolved"]) == (
        k + 1, "wrong-turn", first.site.name, False)
    assert session.record.replay() == session.state


def test_insert_errors(client: Any, driver: Any, pin_headers: dict[str, str]) -> None:
    driver.play(3)
    resp = client.post("/api/moves/4/insert", json={"move": "S commit ?"}, headers=pin_headers)
    assert resp.status_code == 404
    assert resp.get_json() == {"error": "no place 4 to insert a move (the game has 3)"}
    resp = client.post("/api/moves/0/insert", json={"note": "?"}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "give the missing move in the move notation"}
    resp = client.post("/api/moves/0/insert", json={"move": "S c11 red1@0C"},
                       headers=pin_headers)
    assert resp.status_code == 409
    assert resp.get_json() == {"error": "cannot insert that move: every player must first "
                                        "choose this round's blocks"}


def test_undo(client: Any, driver: Any, session: GameSession,
              pin_headers: dict[str, str]) -> None:
    moves = driver.play(2)
    resp = client.post("/api/undo", json={}, headers=pin_headers)
    assert resp.status_code == 200
    assert resp.get_json() == {"undone": str(moves[1]), "ply": 1}
    assert session.record.moves == [moves[0]]
    client.post("/api/undo", json={}, headers=pin_headers)
    resp = client.post("/api/undo", json={}, headers=pin_headers)
    assert resp.status_code == 409
    assert resp.get_json() == {"error": "there is no move to undo"}


def test_two_phones_acting_at_once_change_only_the_move_they_saw(
        client: Any, driver: Any, session: GameSession, pin_headers: dict[str, str]) -> None:
    """Each phone names the move it showed (``expect``): the second of two undos, or
    a delete of a move another phone took back, is refused instead of landing on
    another move."""
    moves = [str(m) for m in driver.play(3)]
    last = {"expect": moves[2]}
    resp = client.post("/api/undo", json=last, headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (200, {"undone": moves[2], "ply": 2})
    resp = client.post("/api/undo", json=last, headers=pin_headers)  # the other phone
    assert (resp.status_code, resp.get_json()) == (409, {
        "error": f"the last move is no longer {moves[2]}: the game changed meanwhile "
                 "(another phone or the camera); look again"})
    assert [str(m) for m in session.record.moves] == moves[:2]
    resp = client.post("/api/moves/2/correct", json={"move": None, "expect": moves[2]},
                       headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (404, {
        "error": "no move number 2 to correct (the game has 2)"})
    resp = client.post("/api/moves/1/correct", json={"move": None, "expect": moves[0]},
                       headers=pin_headers)
    assert resp.status_code == 409 and resp.get_json()["error"].startswith(
        f"move 2 is no longer {moves[0]}: the game changed")
    resp = client.post("/api/moves/1/keep", json={"expect": moves[0]}, headers=pin_headers)
    assert resp.status_code == 409
    resp = client.post("/api/moves/1/keep", json={"expect": 7}, headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (
        400, {"error": "'expect' must be the move's notation"})
    assert [str(m) for m in session.record.moves] == moves[:2]
    # the move it names is there: done
    resp = client.post("/api/moves/1/correct", json={"move": None, "expect": moves[1]},
                       headers=pin_headers)
    assert resp.status_code == 200
    assert [str(m) for m in session.record.moves] == moves[:1]


def test_undo_with_an_empty_json_body(client: Any, driver: Any,
                                      pin_headers: dict[str, str]) -> None:
    driver.play(1)
    resp = client.post("/api/undo", data=b"", headers=pin_headers)
    assert resp.status_code == 200


def test_resolve_warning(client: Any, driver: Any, session: GameSession,
                         pin_headers: dict[str, str]) -> None:
    driver.play(1)
    warning = session.report("unexplained", "Sydney NE grew by one storey", "Sydney NE")
    resp = client.post(f"/api/warnings/{warning.id}/resolve", json={}, headers=pin_headers)
    assert resp.status_code == 200
    assert resp.get_json() == {"id": warning.id, "resolved": True}
    assert client.get("/api/state").get_json()["warnings"][0]["resolved"] is True
    resp = client.post("/api/warnings/99/resolve", json={}, headers=pin_headers)
    assert resp.status_code == 404
    assert resp.get_json() == {"error": "no warning 99"}


def test_a_report_about_no_move_is_not_taken_by_the_move_recorded_after_it(
        client: Any, driver: Any, session: GameSession, pin_headers: dict[str, str]) -> None:
    driver.play(1)
    report = session.report("several", "two sites changed at once")
    (move,) = driver.play(1)
    shown = client.get("/api/state").get_json()["warnings"]
    assert [(w["ply"], w["about_move"], w["resolved"]) for w in shown] == [(1, False, False)]
    # correcting move 1 (to itself) is no answer to the report ...
    resp = client.post("/api/moves/1/correct", json={"move": str(move)}, headers=pin_headers)
    assert resp.status_code == 200
    assert client.get("/api/state").get_json()["warnings"][0]["resolved"] is False
    # ... and resolving the report does not keep move 1
    resp = client.post(f"/api/warnings/{report.id}/resolve", json={}, headers=pin_headers)
    assert resp.status_code == 200
    assert "agreed" not in client.get("/api/state").get_json()["moves"][1]


# -- set-up ----------------------------------------------------------------------------


def test_setup_a_game(make_app: Any, pin_headers: dict[str, str]) -> None:
    session = GameSession()
    client = make_app(session).test_client()
    body = {"edition": "2017", "variants": ["anti-trust"],
            "players": [{"name": "Ann", "seat": "S", "colors": ["orange", "yellow"]},
                        {"name": "Bo", "seat": "N", "colors": ["purple", "blue"]}]}
    resp = client.post("/api/setup", json=body, headers=pin_headers)
    assert resp.status_code == 201
    header = resp.get_json()["game"]
    assert header["edition"] == "2017" and header["variants"] == ["anti-trust"]
    assert [p["name"] for p in header["players"]] == ["Ann", "Bo"]
    game = client.get("/api/state").get_json()["game"]
    assert game["rounds"] == 6 and game["to_move"] == "Ann"


def test_setup_by_player_count(make_app: Any, pin_headers: dict[str, str]) -> None:
    session = GameSession()
    client = make_app(session).test_client()
    resp = client.post("/api/setup", json={"players": 3, "edition": "mayfair"},
                       headers=pin_headers)
    assert resp.status_code == 201
    assert len(session.state.config.players) == 3


def test_setup_errors(client: Any, pin_headers: dict[str, str]) -> None:
    resp = client.post("/api/setup", json={"edition": "x", "players": 4}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "unknown edition 'x' (known: classic, 2017, mayfair)"}
    body = {"players": [{"name": "A", "seat": "S", "colors": ["red"]},
                        {"name": "B", "seat": "S", "colors": ["blue"]}]}
    resp = client.post("/api/setup", json=body, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "each player needs a different side of the board"}
    resp = client.post("/api/setup", json={}, headers=pin_headers)
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "the set-up needs a list of players"}


# -- uploads -------------------------------------------------------------------------


def _jpeg() -> bytes:
    return b"\xff\xd8\xff\xe0" + b"\x00" * 64 + b"\xff\xd9"


def test_upload_without_replay_service(client: Any, pin: str) -> None:
    resp = client.post("/api/upload", data={"photos": (io.BytesIO(_jpeg()), "a.jpg")},
                       headers={"X-Table-PIN": pin}, content_type="multipart/form-data")
    assert resp.status_code == 501
    assert resp.get_json() == {"error": "replaying photos is not available here: this "
                                        "companion has no replay service"}


def test_upload_photos_and_zip(upload_client: Any, pin: str) -> None:
    client, seen = upload_client
    resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data",
                       data={"photos": [(io.BytesIO(_jpeg()), "IMG_2.jpg"),
                                        (io.BytesIO(_jpeg()), "IMG_10.JPG"),
                                        (io.BytesIO(b"heic"), "IMG_11.HEIC"),
                                        (io.BytesIO(b"notes"), "notes.txt")]})
    assert resp.status_code == 200
    assert resp.get_json() == {"files": 3, "moves": 0, "warnings": []}
    assert seen[-1] == ["IMG_2.jpg", "IMG_10.JPG", "IMG_11.HEIC"]  # an iPhone's photos too
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("game/IMG_1.jpg", _jpeg())
        zf.writestr("game/game.json", "{}")
        zf.writestr("__MACOSX/._IMG_1.jpg", b"junk")
        zf.writestr("game/readme.md", "hi")
    resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(buf.getvalue()), "game.zip")})
    assert resp.status_code == 200
    assert seen[-1] == ["IMG_1.jpg", "game.json"]


def test_upload_errors(make_app: Any, session: GameSession, pin: str) -> None:
    def replay(files: Any) -> dict[str, Any]:
        raise ValueError("IMG_1.jpg: board not found")

    client = make_app(session, services={"replay": replay},
                      MAX_CONTENT_LENGTH=4096).test_client()
    headers = {"X-Table-PIN": pin}
    resp = client.post("/api/upload", headers=headers, content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(b"x" * 10000), "big.jpg")})
    assert resp.status_code == 413
    assert resp.get_json() == {"error": "the upload is too large (at most 4 KB)"}
    resp = client.post("/api/upload", headers=headers, content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(b"hello"), "notes.txt")})
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "no photos in the upload: send JPEG, PNG or HEIC files, "
                                        "or a zip of them"}
    resp = client.post("/api/upload", headers=headers, content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(b"PK\x03\x04broken"), "game.zip")})
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "game.zip: not a readable zip file"}
    resp = client.post("/api/upload", headers=headers, content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(_jpeg()), "IMG_1.jpg")})
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "IMG_1.jpg: board not found"}
    resp = client.post("/api/upload", headers={**headers, "Content-Type": "application/json"},
                       data="{}")
    assert resp.status_code == 415
    assert resp.get_json() == {"error": "send the photos as multipart/form-data"}


def test_upload_size_limit_in_megabytes(make_app: Any, session: GameSession, pin: str) -> None:
    client = make_app(session, services={"replay": lambda files: {}},
                      MAX_CONTENT_LENGTH=1024 * 1024).test_client()
    resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data",
                       data={"photos": (io.BytesIO(b"x" * (1024 * 1024 + 10)), "big.jpg")})
    assert resp.status_code == 413
    assert resp.get_json() == {"error": "the upload is too large (at most 1 MB)"}


# -- images and LEDs ---------------------------------------------------------------


def test_camera_and_evidence(make_app: Any, session: GameSession) -> None:
    plain = make_app(session).test_client()
    assert plain.get("/camera.jpg").status_code == 404
    assert plain.get("/camera.jpg").get_json() == {"error": "this companion has no camera view"}
    assert plain.get("/evidence/1.jpg").get_json() == {
        "error": "this companion keeps no photo crops"}
    crops = {"7": b"\xff\xd8crop"}
    client = make_app(session, services={"camera_view": lambda: b"\xff\xd8frame",
                                         "evidence": crops.get}).test_client()
    resp = client.get("/camera.jpg")
    assert resp.status_code == 200 and resp.mimetype == "image/jpeg"
    assert resp.data == b"\xff\xd8frame"
    assert client.get("/evidence/7.jpg").data == b"\xff\xd8crop"
    resp = client.get("/evidence/8.jpg")
    assert resp.status_code == 404 and resp.get_json() == {"error": "no crop 8"}
    flags = client.get("/api/state").get_json()["table"]["services"]
    assert flags == {"camera": True, "replay": False, "leds": False, "evidence": True,
                     "table_game": False}


def test_camera_without_a_frame_yet(make_app: Any, session: GameSession) -> None:
    client = make_app(session, services={"camera_view": lambda: None}).test_client()
    resp = client.get("/camera.jpg")
    assert resp.status_code == 404 and resp.get_json() == {"error": "no camera frame yet"}


def test_led_frame_is_normalised(make_app: Any, session: GameSession) -> None:
    frame = [(255, 0, 0), "#00FF00", [0, 0, 300], "bad"]
    client = make_app(session, services={"leds": lambda: frame}).test_client()
    assert client.get("/api/leds").get_json() == {
        "leds": ["#ff0000", "#00ff00", "#0000ff", "#000000"]}
    assert client.get("/api/state").get_json()["leds"][0] == "#ff0000"


def test_unknown_service_name(make_app: Any, session: GameSession) -> None:
    try:
        make_app(session, services={"camera": lambda: b""})
    except ValueError as exc:
        assert str(exc) == "unknown services: camera"
    else:
        raise AssertionError("an unknown service must be refused")


def test_moves_seen_in_state_match_notation(client: Any, driver: Any) -> None:
    moves = driver.play(6)
    data = client.get("/api/state").get_json()
    assert [m["notation"] for m in data["moves"]] == [str(m) for m in moves]
    assert all(parse_move(m["notation"]) == mv for m, mv in zip(data["moves"], moves,
                                                                 strict=True))


def test_a_move_keeps_its_photo_crop_when_moves_before_it_are_deleted_or_inserted(
        driver: Any, session: GameSession) -> None:
    driver.to_build_phase()
    k = len(session.record.moves)
    first = driver.next_move()
    session.play(first, evidence="crop-a")
    second = driver.next_move()
    session.play(second, evidence="crop-b")

    def crops() -> list[tuple[str, str | None, bool]]:
        return [(m["notation"], m.get("crop"), m.get("forced", False))
                for m in session.snapshot()["moves"][k:]]

    # the first build deleted: the second is now out of turn, kept and flagged
    assert session.correct(k, None, "nobody built there") == {"rechecked": [], "flagged": [k]}
    assert crops() == [(str(second), "crop-b", True)]
    assert [(w["ply"], w["reason"]) for w in session.snapshot()["warnings"]] == [
        (k, "wrong-turn")]
    # put back: the second is in turn again
    assert session.insert(k, first, "it was there after all") == {"rechecked": [k + 1],
                                                                  "flagged": []}
    assert crops() == [(str(first), None, False), (str(second), "crop-b", False)]
    assert [(w["ply"], w["reason"], w["resolved"]) for w in session.snapshot()["warnings"]] == [
        (k + 1, "wrong-turn", True)]
