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


def test_the_page_upload_says_a_damaged_and_a_mirrored_photo(classic_game, make_app,
                                                             pin) -> None:
    """The page's server has threads, where libjpeg's words are not caught: the damaged
    photo is told by the grey it ends in."""
    import threading

    import cv2
    import numpy as np

    folder, names = classic_game
    session = GameSession()
    client = make_app(session, services={"replay": make_replay_service(session)}).test_client()
    data = {n: (folder / n).read_bytes() for n in names}
    k = int(len(data[names[2]]) * 0.8)  # an end-of-image marker over the photo's data
    data[names[2]] = data[names[2]][:k] + b"\xff\xd9" + data[names[2]][k + 2:]
    image = cv2.imdecode(np.frombuffer(data[names[4]], np.uint8), cv2.IMREAD_COLOR)
    data[names[4]] = cv2.imencode(".png", image[:, ::-1])[1].tobytes()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # a server's threads, whatever runs the test
    other.start()
    try:
        resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                           content_type="multipart/form-data",
                           data={"photos": [(io.BytesIO(b), n) for n, b in data.items()]})
    finally:
        stop.set()
        other.join()
    assert resp.status_code == 200, resp.get_json()
    said = [(w["photo"], w["reason"], w["message"].split(": ", 1)[1])
            for w in resp.get_json()["warnings"] if w["reason"] in ("damaged", "mirrored")]
    assert said[0][:2] == (names[2], "damaged")
    assert said[0][2].startswith("the photo's data is damaged (its last ")
    assert said[0][2].endswith(" lines decoded grey: the data stops early): the sites and "
                               "cards it shows past the damage may be read wrong or unseen")
    assert said[1:] == [(names[4], "mirrored", "the photo is mirrored (a front camera's, "
                         "saved as previewed): it was read flipped back")]
    # and the page's list shows them (the upload's note counts them there)
    listed = [(w["reason"], w["message"]) for w in client.get("/api/state").get_json()[
        "warnings"]]
    replayed = [(w["reason"], w["message"]) for w in resp.get_json()["warnings"]
                if w["reason"] != "never-shown"]
    assert listed == replayed and ("mirrored", f"{names[4]}: {said[1][2]}") in listed
    assert resp.get_json()["listed"] == len(listed)


def test_what_several_uploaded_photos_share_is_listed_once(classic_game, make_app,
                                                           pin) -> None:
    import cv2
    import numpy as np

    folder, names = classic_game
    session = GameSession()
    client = make_app(session, services={"replay": make_replay_service(session)}).test_client()
    data = {n: (folder / n).read_bytes() for n in names}
    for n in names[2:5]:
        image = cv2.imdecode(np.frombuffer(data[n], np.uint8), cv2.IMREAD_COLOR)
        data[n] = cv2.imencode(".png", image[:, ::-1])[1].tobytes()
    resp = client.post("/api/upload", headers={"X-Table-PIN": pin},
                       content_type="multipart/form-data",
                       data={"photos": [(io.BytesIO(b), n) for n, b in data.items()]})
    assert resp.status_code == 200, resp.get_json()
    out = resp.get_json()
    assert [w["photo"] for w in out["warnings"] if w["reason"] == "mirrored"] == names[2:5]
    listed = [w["message"] for w in client.get("/api/state").get_json()["warnings"]
              if w["reason"] == "mirrored"]
    assert listed == [f"{names[2]}, {names[3]} and {names[4]}: the photo is mirrored (a "
                      "front camera's, saved as previewed): it was read flipped back"]
    # the upload's answer says them so too (its note, when no game was opened)
    assert [m for m in out["grouped"] if "mirrored" in m] == listed


def test_the_page_upload_takes_no_appledouble_file_for_a_photo(classic_game) -> None:
    """A folder copied from a Mac holds "._X.jpg" beside each photo (its metadata): a
    folder or a zip leaves them out; the page's upload read them as photos too."""
    from types import SimpleNamespace

    import pytest

    from companion.replay_service import ReplayUploadError

    folder, names = classic_game
    replay = make_replay_service(GameSession())
    metadata = [SimpleNamespace(name=f"._{n}", data=b"\x00\x05\x16\x07" + bytes(80))
                for n in names]
    with pytest.raises(ReplayUploadError, match="^no photos in the upload"):
        replay(metadata)
