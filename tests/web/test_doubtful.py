"""A replayed move whose site its photo read narrowly is marked "check this site" on the page."""

from __future__ import annotations

import io
import logging
from dataclasses import replace
from typing import Any

import pytest

from companion import commands
from companion import replay as replay_module
from companion.bots import GreedyBot
from companion.replay import Observation, exact_photos
from companion.replay_service import make_replay_service
from companion.rules import Site, make_config
from companion.session import GameSession
from companion.store.journal import Journal

DOUBTFUL_MOVE = "N c10 green2@2E"  # the 3rd build of the seeded game, on Frankfurt E


def _photos(n_builds: int = 6) -> list[Observation]:
    """Exact photos of a seeded 4-player bot game, one per build; photo 3 reads 2E narrowly."""
    photos, _, _ = exact_photos(make_config(4, seed=5, track_cards=True),
                                [GreedyBot(50 + i) for i in range(4)], n_builds)
    photos[3] = replace(photos[3], doubtful=frozenset({Site.parse("2E")}))
    return photos


def _upload(client: Any, pin: str, names: list[str]) -> Any:
    """Post files of these names (their bytes a stub: the tests fake the reader)."""
    return client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data",
                       data={"photos": [(io.BytesIO(b"\xff\xd8\xff\xd9"), name)
                                        for name in names]})


@pytest.fixture
def uploaded(make_app: Any, pin: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, dict]:
    """The page's client after uploading photos that the (faked) reader reads as _photos()."""
    session = GameSession()
    monkeypatch.setattr(commands, "read_folder", lambda *a, **k: (_photos(), [], "file names"))
    client = make_app(session, services={"replay": make_replay_service(session)}).test_client()
    resp = _upload(client, pin, [f"IMG_{k}.jpg" for k in range(7)])
    assert resp.status_code == 200, resp.get_json()
    return client, resp.get_json()


def test_the_upload_names_the_doubtful_move_and_the_page_marks_its_ply(uploaded: Any) -> None:
    client, result = uploaded
    assert result["opened"] is True and result["moves"] == 6
    assert result["doubtful"] == [DOUBTFUL_MOVE]
    moves = client.get("/api/state").get_json()["moves"]
    marked = [m["notation"] for m in moves if "doubtful" in m]
    assert marked == [DOUBTFUL_MOVE]
    # the record has the round's four commits before the builds: the ply is the record's
    ply = next(m["ply"] for m in moves if m.get("doubtful"))
    assert ply == 6 and moves[ply]["doubtful"] is True
    assert [m["type"] for m in moves[:4]] == ["commit"] * 4


def test_undo_keeps_the_mark_and_a_correction_of_that_move_clears_it(uploaded: Any,
                                                                    pin_headers: dict) -> None:
    client, _ = uploaded

    def marked() -> list[int]:
        return [m["ply"] for m in client.get("/api/state").get_json()["moves"]
                if m.get("doubtful")]

    assert marked() == [6]
    resp = client.post("/api/undo", json={}, headers=pin_headers)
    assert resp.status_code == 200, resp.get_json()
    assert marked() == [6]
    # the players looked and confirm (or fix) the move: the mark goes
    resp = client.post("/api/moves/6/correct", json={"move": DOUBTFUL_MOVE, "note": "looked"},
                       headers=pin_headers)
    assert resp.status_code == 200, resp.get_json()
    assert marked() == []


@pytest.fixture
def journaled(make_app: Any, pin: str, monkeypatch: pytest.MonkeyPatch,
              tmp_path: Any) -> Any:
    """The page's client after the upload, on a table that journals its game; and the journal."""
    journal = Journal(tmp_path / "games.sqlite")
    session = GameSession(journal=journal)
    monkeypatch.setattr(commands, "read_folder", lambda *a, **k: (_photos(), [], "file names"))
    client = make_app(session, services={
        "replay": make_replay_service(session, journal=journal)}).test_client()
    resp = _upload(client, pin, [f"IMG_{k}.jpg" for k in range(7)])
    assert resp.status_code == 200, resp.get_json()
    yield client, journal
    journal.close()


def test_the_mark_is_journaled_and_a_restarted_table_shows_it(journaled: Any) -> None:
    _, journal = journaled
    # the table restarts: a new session takes the game back from the journal
    game_id, record = journal.current_game()
    fresh = GameSession(journal=journal)
    fresh.resume(record, game_id)
    marked = [m["notation"] for m in fresh.snapshot()["moves"] if m.get("doubtful")]
    assert marked == [DOUBTFUL_MOVE]


def test_looks_right_keeps_the_move_for_good(journaled: Any, pin_headers: dict) -> None:
    client, journal = journaled
    resp = client.post("/api/moves/6/keep", json={}, headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (200, {"ply": 6, "kept": True})
    move = client.get("/api/state").get_json()["moves"][6]
    assert (move["notation"], "doubtful" in move, move["agreed"]) == (DOUBTFUL_MOVE, False, True)
    resp = client.post("/api/moves/10/keep", json={}, headers=pin_headers)
    assert (resp.status_code, resp.get_json()) == (
        404, {"error": "no move number 10 to keep (the game has 10)"})
    game_id, record = journal.current_game()
    fresh = GameSession(journal=journal)
    fresh.resume(record, game_id)
    assert [m["ply"] for m in fresh.snapshot()["moves"] if m.get("doubtful")] == []
    assert fresh.snapshot()["moves"][6]["agreed"] is True


def test_uploaded_photos_keep_their_own_names(make_app: Any, pin: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The service reads the upload from a folder; the page names the photos as the
    player's phone did, also when two of them clash (two phones' IMG_1) and the folder
    holds them under order-prefixed names."""
    session = GameSession()
    folders: list[list[str]] = []
    several: list[Any] = []

    def read_folder(folder: Any, *args: Any, **kwargs: Any) -> Any:
        """The faked reader: the folder's photos read as _photos(), the last one not."""
        files = sorted(p.name for p in folder.iterdir())
        folders.append(files)
        several.append(kwargs.get("several_cameras"))
        photos = [replace(p, name=f) for p, f in zip(_photos(), files[:-1], strict=True)]
        return photos, [(files[-1], "board not found")], "file names"

    monkeypatch.setattr(commands, "read_folder", read_folder)
    replayed: list[list[str]] = []
    real_replay = replay_module.replay

    def replay(observations: Any, *args: Any, **kwargs: Any) -> Any:
        replayed.append([o.name for o in observations])
        return real_replay(observations, *args, **kwargs)

    monkeypatch.setattr(replay_module, "replay", replay)
    client = make_app(session, services={"replay": make_replay_service(session)}).test_client()
    names = [f"IMG_{k}.jpg" for k in range(8)]
    resp = _upload(client, pin, names)
    assert resp.status_code == 200, resp.get_json()
    assert folders[-1] == names  # their own names: the folder orders them as the CLI's
    assert replayed[-1] == names[:7]
    assert {"photo": "IMG_7.jpg", "reason": "bad-photo",
            "message": "IMG_7.jpg: board not found; skipped"} in resp.get_json()["warnings"]
    clash = ["IMG_0.jpg", "IMG_1.jpg", "IMG 1.jpg", *names[3:]]  # "IMG 1" is kept as IMG_1
    resp = _upload(client, pin, clash)
    assert resp.status_code == 200, resp.get_json()
    assert folders[-1] == [f"{k:04d}-{n.replace(' ', '_')}"
                           for k, n in enumerate(["IMG_0.jpg", "IMG 1.jpg", "IMG_1.jpg",
                                                  *names[3:]])]
    assert replayed[-1] == ["IMG_0.jpg", "IMG_1.jpg", "IMG_1.jpg", *names[3:7]]
    # names that clash come from two cameras: ordered by the photos' times, not names
    assert several == [False, True]
    monkeypatch.setattr(commands, "read_folder",
                        lambda *a, **k: ([], [("IMG_7.jpg", "board not found")], "file names"))
    resp = _upload(client, pin, ["IMG_7.jpg"])
    assert resp.status_code == 400
    assert resp.get_json() == {"error": "no photo showed the board: IMG_7.jpg: board not found"}


def test_the_page_says_which_doubtful_moves_the_camera_looks_at_again(
        make_app: Any, monkeypatch: pytest.MonkeyPatch, pin: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """The live camera's second looks (Controller.second_looks) mark only doubtful
    moves of the game as it stands; a past position and a broken provider mark none."""
    session = GameSession()
    monkeypatch.setattr(commands, "read_folder", lambda *a, **k: (_photos(), [], "file names"))
    looks: list[Any] = [[6, 7, 99, -4]]  # 7 is not doubtful, 99 and -4 no move at all

    def second_looks() -> list[Any]:
        if isinstance(looks[0], Exception):
            raise looks[0]
        return looks[0]

    client = make_app(session, services={"replay": make_replay_service(session),
                                         "second_looks": second_looks}).test_client()
    assert _upload(client, pin, [f"IMG_{k}.jpg" for k in range(7)]).status_code == 200

    def looked(query: str = "") -> list[int]:
        moves = client.get(f"/api/state{query}").get_json()["moves"]
        return [m["ply"] for m in moves if m.get("second_look")]

    assert looked() == [6]
    assert looked("?ply=8") == []  # the past: what the camera does now is not shown
    looks[0] = [-4]  # counted from the end it would be ply 6
    assert looked() == []
    looks[0] = RuntimeError("the controller is gone")
    with caplog.at_level(logging.WARNING, logger="companion.web.api"):
        assert looked() == []
        assert looked() == []  # logged once, not on every update
    assert [r.getMessage() for r in caplog.records] == [
        "the page goes on without the second looks: RuntimeError: the controller is gone"]
