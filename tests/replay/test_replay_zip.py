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


def _timed(jpeg: bytes, when: str) -> bytes:
    """The photo with an EXIF DateTimeOriginal, as a phone writes it."""
    import struct

    text = when.encode() + b"\x00"
    ifd0 = struct.pack("<H", 1) + struct.pack("<HHII", 0x8769, 4, 1, 26) + struct.pack("<I", 0)
    sub = struct.pack("<H", 1) + struct.pack("<HHII", 0x9003, 2, len(text), 44) + \
        struct.pack("<I", 0)
    app1 = b"Exif\x00\x00" + b"II*\x00" + struct.pack("<I", 8) + ifd0 + sub + text
    return b"\xff\xd8\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpeg[2:]


def _two_phones_replayed(out: dict[str, Any]) -> None:
    """The first six photos of the classic game, taken in turn by two phones, replayed
    in the order they were taken, each named with its album."""
    assert out["order"] == "EXIF time"
    assert [m["notation"] for m in out["moves"]] == [
        "S c12 red1@0E", "N c10 green1@0E", "S c12 red1@0E", "N c01 black3@1S",
        "S c21 red3@1S"]
    assert {m["photo"] for m in out["moves"]} <= {
        f"phone {k % 2 + 1}-IMG_{k // 2 + 1:04d}.jpg" for k in range(6)}


def test_two_phones_albums_in_one_zip_are_ordered_by_time(classic_game, tmp_path,
                                                           capsys) -> None:
    # the game's photos taken in turn by two phones, each album with its own
    # IMG_0001.jpg: by name one phone's photos would all come first
    folder, names = classic_game
    members = {f"phone {k % 2 + 1}/IMG_{k // 2 + 1:04d}.jpg":
               _timed((folder / n).read_bytes(), f"2026:11:28 20:{k:02d}:00")
               for k, n in enumerate(names[:6])}
    assert "phone 2/IMG_0001.jpg" in members and "phone 1/IMG_0001.jpg" in members
    _two_phones_replayed(_replay(capsys, str(_zip(tmp_path / "game.zip", members)), *COLORS))


def test_a_folder_of_two_phones_albums_replays_as_their_zip(classic_game, tmp_path,
                                                             capsys) -> None:
    # the albums copied side by side into one folder, with nothing of its own
    folder, names = classic_game
    game = tmp_path / "game"
    for k, n in enumerate(names[:6]):
        album = game / f"phone {k % 2 + 1}"
        album.mkdir(parents=True, exist_ok=True)
        (album / f"IMG_{k // 2 + 1:04d}.jpg").write_bytes(
            _timed((folder / n).read_bytes(), f"2026:11:28 20:{k:02d}:00"))
    (game / "phone 1" / ".hidden.jpg").write_bytes(b"\xff\xd8\xff")  # left out
    _two_phones_replayed(_replay(capsys, str(game), *COLORS))
    # a folder with neither photos nor albums is still said in one line
    empty = tmp_path / "empty"
    (empty / "notes").mkdir(parents=True)
    assert main(["replay", str(empty)]) == 1
    assert capsys.readouterr().err == (
        f"companion replay: {empty}: no photos (jpg, png, heic, ...) in this folder\n")


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
    ({"a/game.json": b"{}", "b/game.json": b"{}", "a/IMG_001.jpg": b"\xff\xd8\xff"},
     "refused: two files would be named 'game.json'"),
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


def test_a_folder_of_many_albums_is_not_read_whole(tmp_path) -> None:
    from companion.commands import CommandError, _album_photos

    for k in range(3):
        (tmp_path / f"album {k}").mkdir()
        (tmp_path / f"album {k}" / "IMG_0001.jpg").write_bytes(b"\xff\xd8\xff")
    assert len(_album_photos(tmp_path, most=3)) == 3
    with pytest.raises(CommandError, match=r"more than 2 photos in its folders: give the "
                                           r"folder of one game$"):
        _album_photos(tmp_path, most=2)


def test_photos_in_a_folders_folders_are_said_not_read(classic_game, tmp_path, capsys,
                                                       monkeypatch) -> None:
    # a folder with the game's photos and older ones put aside in a folder of it: the
    # folder's own are replayed (as before), the players told of the others
    from companion.commands import _photos_below

    folder, names = classic_game
    game = copy_photos(folder, names[:4], tmp_path / "game")
    (game / "earlier").mkdir()
    for n in names[4:6]:
        (game / "earlier" / n).write_bytes((folder / n).read_bytes())
    (game / "earlier" / ".hidden.jpg").write_bytes(b"\xff\xd8\xff")  # not counted
    out = _replay(capsys, str(game), *COLORS)
    assert out["warnings"][0] == {
        "photo": None, "reason": "left-out",
        "message": f"{game}: 2 photos in its folders not read (only the folder's own "
                   "photos are replayed): give the folder that holds the game's photos, or "
                   "put them all in one folder"}
    assert [m["notation"] for m in out["moves"]] == [
        "S c12 red1@0E", "N c10 green1@0E", "S c12 red1@0E"]
    # the folder named as it was given ("." when run in it)
    monkeypatch.chdir(game)
    out = _replay(capsys, ".", *COLORS)
    assert out["warnings"][0]["message"].startswith(".: 2 photos in its folders not read")
    # a photo library below is not walked to its end
    assert _photos_below(game, most=1) == 1
    (game / "earlier" / names[4]).unlink()
    (game / "earlier" / names[5]).unlink()
    assert _photos_below(game) == 0
