"""`companion replay GAME.zip`: a zip of a game's photos, as a phone shares an album.

The page's upload took zips; the command line took only a folder, so a zip
had to be unpacked by hand first (and `store.safety.safe_extract_zip`, the
checked unpacking, served no caller). A zip is now unpacked into a temporary
folder through it and replayed as that folder would be.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from tests.replay.photogame import copy_photos

COLORS = ["--colors", "red,blue,green,black"]


def _replay(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["replay", *args, "--json", "--workers", "1"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_a_zip_replays_as_its_folder(classic_game, tmp_path, capsys) -> None:
    folder, names = classic_game
    # an album exported with its folder, and the files a phone or a Mac adds
    members = {f"Manhattan game/{n}": (folder / n).read_bytes() for n in names}
    members["Manhattan game/notes.txt"] = b"round one"
    members["__MACOSX/Manhattan game/._IMG_000.jpg"] = b"\x00\x05\x16\x07"
    game = _zip(tmp_path / "game.zip", members)
    from_zip = _replay(capsys, str(game), *COLORS)
    from_folder = _replay(capsys, str(folder), *COLORS)
    assert [m["notation"] for m in from_zip["moves"]] == [
        m["notation"] for m in from_folder["moves"]] == [
        "S c12 red1@0E", "N c10 green1@0E", "S c12 red1@0E", "N c01 black3@1S",
        "S c21 red3@1S", "N c11 green1@3C"]
    assert from_zip["rounds"] == from_folder["rounds"]
    assert from_zip["warnings"] == from_folder["warnings"]


def test_a_zips_game_json_names_the_players(classic_game, tmp_path, capsys) -> None:
    from tests.replay.photogame import play

    folder, names = classic_game
    config = play(2, 5, turns=6).config
    players = [p.to_json() for p in config.players]
    members = {n: (folder / n).read_bytes() for n in names}
    members["game.json"] = json.dumps({"players": players,
                                       "edition": config.edition.name}).encode()
    out = _replay(capsys, str(_zip(tmp_path / "game.zip", members)))
    assert [p["name"] for p in out["players"]] == [p["name"] for p in players]
    assert not [w for w in out["warnings"] if w["reason"] == "inferred-players"]


@pytest.mark.parametrize("members,message", [
    ({"../IMG_001.jpg": b"\xff\xd8\xff"},
     "refused: path '../IMG_001.jpg' climbs out of the folder"),
    ({"a/IMG_001.jpg": b"\xff\xd8\xff", "b/IMG_001.jpg": b"\xff\xd8\xff"},
     "refused: two files would be named 'IMG_001.jpg'"),
    ({"notes.txt": b"no photos here"}, "no photos (jpg, png, heic, ...) in this zip"),
    ({"IMG_001.jpg": b"not a jpeg at all"}, "no photos (jpg, png, heic, ...) in this zip"),
])
def test_a_zip_it_cannot_replay_is_one_line(tmp_path, capsys, members, message) -> None:
    game = _zip(tmp_path / "game.zip", members)
    spool = Path(tempfile.gettempdir())
    before = set(spool.glob("companion-replay-*"))
    assert main(["replay", str(game), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"companion replay: {game}: {message}\n"
    assert set(spool.glob("companion-replay-*")) == before  # nothing left unpacked


def test_a_file_that_is_no_zip_is_said(tmp_path, capsys) -> None:
    photo = tmp_path / "IMG_001.jpg"
    photo.write_bytes(b"\xff\xd8\xff\xe0")
    assert main(["replay", str(photo)]) == 1
    assert capsys.readouterr().err == (
        f"companion replay: {photo}: not a folder or a zip of photos\n")


def test_a_damaged_photo_is_replayed_and_said(classic_game, tmp_path, capsys) -> None:
    # the photos are read in worker processes: libjpeg's words are caught there
    folder, names = classic_game
    copy = copy_photos(folder, names, tmp_path / "game")
    data = (copy / names[2]).read_bytes()
    k = int(len(data) * 0.9)  # an end-of-image marker over the photo's last tenth
    (copy / names[2]).write_bytes(data[:k] + b"\xff\xd9" + data[k + 2:])
    assert main(["replay", str(copy), "--json", "--workers", "2", *COLORS]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [w for w in out["warnings"] if w["reason"] == "damaged"] == [
        {"photo": names[2], "reason": "damaged",
         "message": f"{names[2]}: the photo's data is damaged (Corrupt JPEG data: premature "
                    "end of data segment): the sites and cards it shows past the damage may "
                    "be read wrong or unseen"}]
    assert [m["notation"] for m in out["moves"]] == [
        "S c12 red1@0E", "N c10 green1@0E", "S c12 red1@0E", "N c01 black3@1S",
        "S c21 red3@1S", "N c11 green1@3C"]
