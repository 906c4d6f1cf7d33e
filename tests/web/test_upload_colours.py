"""A photo upload whose game.json names colours the photos do not show is told so
(tests/replay/test_colour_mismatch.py: the replay's own check)."""

from __future__ import annotations

import io
import json

from companion.replay_service import make_replay_service
from companion.session import GameSession
from tests.replay.test_colour_mismatch import WARNING


def test_the_page_upload_says_it_too(classic_game, make_app, pin) -> None:
    folder, names = classic_game
    session = GameSession()
    client = make_app(session, services={"replay": make_replay_service(session)}).test_client()
    game = {"players": [{"name": "Ann", "seat": "S", "colors": ["orange", "yellow"]},
                        {"name": "Bo", "seat": "N", "colors": ["purple", "blue"]}],
            "edition": "2017"}
    files = [(io.BytesIO((folder / n).read_bytes()), n) for n in names]
    files.append((io.BytesIO(json.dumps(game).encode()), "game.json"))
    resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data", data={"photos": files})
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["warnings"][0] == {"photo": None, "reason": "colours",
                                             "message": WARNING}
