"""Photos uploaded while a game is in play at the table.

The replay used to take the table game's place on the page without a word, and
the camera then went on recording the table into the replayed game (with wrong
turn warnings), and a restart came back on the replay. Now the upload is
refused unless the players confirm, the replayed game is marked as such (the
camera records nothing into it), and a restart resumes the table's game.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

from companion import commands
from companion.controller import Controller
from companion.replay_service import make_replay_service
from companion.rules import make_config, parse_move
from companion.session import GameSession
from companion.store import Journal, resume_or_start, table_game_service
from tests.controller.test_controller_fake_reader import Reading, _film
from tests.web.test_doubtful import _photos


def _upload(client: Any, pin: str, **form: str) -> Any:
    return client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data",
                       data={"photos": [(io.BytesIO(b"\xff\xd8\xff\xd9"), f"IMG_{k}.jpg")
                                        for k in range(7)], **form})


@pytest.fixture
def table(make_app: Any, pin: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Any:
    """A journaled table game two builds in, and the page's client."""
    journal = Journal(tmp_path / "games.sqlite")
    session = GameSession(make_config(4), journal=journal)
    for move in ("S commit ?", "W commit ?", "N commit ?", "E commit ?", "S c11 red1@0C",
                 "W c11 blue1@1C"):
        session.play(parse_move(move))
    monkeypatch.setattr(commands, "read_folder", lambda *a, **k: (_photos(), [], "file names"))
    client = make_app(session, services={
        "replay": make_replay_service(session, journal=journal),
        "table_game": table_game_service(session, journal)}).test_client()
    yield client, session, journal
    journal.close()


def test_photos_uploaded_while_a_game_is_in_play_need_the_players_word(
        table: Any, pin: str) -> None:
    client, session, journal = table
    table_game = session.game_id
    resp = _upload(client, pin)
    assert (resp.status_code, resp.get_json()) == (409, {
        "error": "a game is in play at the table: its replay from photos would take its "
                 "place on the page (the journal keeps it); send replace=1 to go on"})
    assert session.game_id == table_game and not session.from_photos
    resp = _upload(client, pin, replace="1")
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["opened"] is True
    state = client.get("/api/state").get_json()
    assert session.game_id != table_game and state["game"]["from_photos"] is True
    assert state["game"]["plies"] == 10  # the replay's four commits and six builds
    # a replayed game on the page is no reason to ask again
    assert _upload(client, pin).status_code == 200
    # a restart comes back on the table's game, the newer replays kept
    assert journal.latest_unfinished() == table_game
    fresh = GameSession(journal=journal)
    assert resume_or_start(fresh, journal, lambda: pytest.fail("must resume")) == (
        table_game, True)
    assert not fresh.from_photos and len(fresh.record.effective()) == 6


def test_the_camera_records_nothing_into_a_game_replayed_from_photos(
        table: Any, pin: str) -> None:
    client, session, _ = table
    assert _upload(client, pin, replace="1").status_code == 200
    before, told = session.record, session.snapshot()["warnings"]
    # the table as the camera sees it: the replay's first two photos, say
    scenes = [Reading(p.sites, cards=dict(p.cards)) for p in _photos()[:2]]

    def reader(image: np.ndarray, previous_pose: Any = None) -> Reading:
        return scenes[int(image[0, 0, 0])]

    ctl = Controller(session, reader)
    _film(ctl, 2)
    assert ctl.stats.readings == 2
    assert session.record == before and session.snapshot()["warnings"] == told


def test_the_page_goes_back_to_the_tables_game(table: Any, pin: str, pin_headers: dict,
                                               make_app: Any) -> None:
    client, session, journal = table
    table_game = session.game_id
    assert _upload(client, pin, replace="1").status_code == 200
    assert client.get("/api/state").get_json()["table"]["services"]["table_game"] is True
    resp = client.post("/api/table-game", json={}, headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (200, {"game": table_game})
    state = client.get("/api/state").get_json()
    assert state["game"]["from_photos"] is False and state["game"]["plies"] == 6
    assert [m["notation"] for m in state["moves"][4:]] == ["S c11 red1@0C", "W c11 blue1@1C"]
    # the table's game over, the journal has none to go back to
    journal.finish(table_game)
    resp = client.post("/api/table-game", json={}, headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (
        404, {"error": "the journal has no game of the table in play"})
    bare = make_app(GameSession()).test_client()
    resp = bare.post("/api/table-game", json={}, headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (
        501, {"error": "this companion keeps no journal to go back to the table's game from"})
    assert bare.post("/api/table-game", json={}).status_code == 403  # the PIN first
