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
    # a player reads what several photos share once
    assert len(names[2::3]) == 2
    assert main(["replay", str(copy), "--workers", "2", *COLORS]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if "mirrored" in line]
    assert said == [f"warning: {names[2]} and {names[5]}: the photo is mirrored (a front "
                    "camera's, saved as previewed): it was read flipped back"]


def test_the_replay_names_each_photo_of_note() -> None:
    site = Site(0, 1, 1)
    photos = [Observation("a.jpg", {}, frozenset(), {}),
              Observation("b.jpg", {site: SiteView(1, "red")}, frozenset(), {},
                          notes=(("small", "the board is small"), ("mirrored", "mirrored")))]
    result = replay(photos, colors=["red", "blue"])
    assert [w for w in result.warnings if w["reason"] in ("small", "mirrored")] == [
        {"photo": "b.jpg", "reason": "small", "message": "b.jpg: the board is small"},
        {"photo": "b.jpg", "reason": "mirrored", "message": "b.jpg: mirrored"}]


def test_what_several_photos_share_is_said_once() -> None:
    from companion.replay import grouped_warnings
    from companion.report import replay_html

    def note(photo: str, reason: str, text: str) -> dict[str, str]:
        return {"photo": photo, "reason": reason, "message": f"{photo}: {text}"}

    shape = "the photo's shape (1202 x 845) is no camera's"
    warnings = [{"photo": None, "reason": "colours", "message": "four colours shown"},
                *(note(f"IMG_{k}.jpg", "cropped", shape) for k in range(1, 6)),
                note("IMG_2.jpg", "small", "the board is small"),
                note("IMG_7.jpg", "small", "the board is small"),
                note("IMG_8.jpg", "cropped", "the photo's shape (900 x 845) is no camera's"),
                note("IMG_9.jpg", "small", "the board is smaller")]
    grouped = grouped_warnings(warnings)
    assert [w["message"] for w in grouped] == [
        "four colours shown",
        f"IMG_1.jpg, IMG_2.jpg, IMG_3.jpg and 2 more photos: {shape}",
        "IMG_2.jpg and IMG_7.jpg: the board is small",
        "IMG_8.jpg: the photo's shape (900 x 845) is no camera's",
        "IMG_9.jpg: the board is smaller"]
    assert grouped[1]["photos"] == [f"IMG_{k}.jpg" for k in range(1, 6)]
    assert grouped[1]["photo"] == "IMG_1.jpg" and grouped[1]["reason"] == "cropped"
    assert grouped_warnings(warnings[:5])[1]["message"] == (
        f"IMG_1.jpg, IMG_2.jpg, IMG_3.jpg and IMG_4.jpg: {shape}")
    assert warnings[1]["message"] == f"IMG_1.jpg: {shape}"  # the JSON's own, untouched
    page = replay_html({"moves": [], "rounds": [], "warnings": warnings}, [])
    assert page.count("<li>") == 5 and "and 2 more photos" in page
