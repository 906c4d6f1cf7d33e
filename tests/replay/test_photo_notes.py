"""A game's photo that shows the board small, or mirrored, is replayed with a warning
naming it; a thumbnail among the photos is skipped with the reader's one-line reason."""

from __future__ import annotations

import json

import cv2

from companion.cli import main
from companion.replay import Observation, replay
from companion.rules import Site, SiteView
from tests.replay.photogame import copy_photos

COLORS = ["--colors", "red,blue,green,black"]


def test_small_and_thumbnail_photos_are_said(classic_game, tmp_path, capsys) -> None:
    folder, names = classic_game
    copy = copy_photos(folder, names, tmp_path / "game")
    for name, f in ((names[1], 0.3), (names[3], 0.3)):
        image = cv2.imread(str(folder / name))
        small = cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        assert cv2.imwrite(str(copy / name), small)
    assert main(["replay", str(copy), "--json", "--workers", "2", *COLORS]) == 0
    out = json.loads(capsys.readouterr().out)
    said = {w["reason"]: w for w in out["warnings"] if w["reason"] in ("small", "bad-photo")}
    assert said["bad-photo"]["photo"] == names[1]
    assert said["bad-photo"]["message"] == (
        f"{names[1]}: the board shows too small to be read (a site is 4.9 pixels across, 6 "
        "or more are needed): take it closer or at a higher resolution; the builds it would "
        "show are recovered from the next photo; skipped")
    assert said["small"]["photo"] == names[3]
    assert said["small"]["message"] == (
        f"{names[3]}: the board is small in this photo (a site is 9.2 pixels across, under "
        "10): more sites may be read wrong or unseen than in a larger one")


def test_mirrored_photos_replay_as_the_photos_themselves(classic_game, tmp_path,
                                                         capsys) -> None:
    folder, names = classic_game
    copy = copy_photos(folder, names, tmp_path / "game")
    for name in names[2::3]:
        image = cv2.imread(str(folder / name))
        assert cv2.imwrite(str(copy / name), image[:, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert main(["replay", str(copy), "--json", "--workers", "2", *COLORS]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [w for w in out["warnings"] if w["reason"] == "mirrored"] == [
        {"photo": name, "reason": "mirrored", "message": f"{name}: the photo is mirrored (a "
         "front camera's, saved as previewed): it was read flipped back"}
        for name in names[2::3]]
    assert [m["notation"] for m in out["moves"]] == [
        "S c12 red1@0E", "N c10 green1@0E", "S c12 red1@0E", "N c01 black3@1S",
        "S c21 red3@1S", "N c11 green1@3C"]


def test_the_replay_names_each_photo_of_note() -> None:
    site = Site(0, 1, 1)
    photos = [Observation("a.jpg", {}, frozenset(), {}),
              Observation("b.jpg", {site: SiteView(1, "red")}, frozenset(), {},
                          notes=(("small", "the board is small"), ("mirrored", "mirrored")))]
    result = replay(photos, colors=["red", "blue"])
    assert [w for w in result.warnings if w["reason"] in ("small", "mirrored")] == [
        {"photo": "b.jpg", "reason": "small", "message": "b.jpg: the board is small"},
        {"photo": "b.jpg", "reason": "mirrored", "message": "b.jpg: mirrored"}]
