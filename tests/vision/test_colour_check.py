"""`companion read` says when the colours named are not the ones the photo shows.

The reader compares each top only with the colours it is told: a 1994 photo
read with the 2017 colours named came out as blue and purple towers, silently.
The photo's sites are now also scored with every colour, and the set its
towers take is checked against the colours named (`colour_check`).
"""

from __future__ import annotations

import json

import pytest

from companion.cli import main

WRONG = "orange,yellow,purple,blue"
WARNING = ("the photo shows the classic colours (red, blue, green, black), not the colours "
           "named (orange, yellow, purple, blue): the towers read with those may be wrong")


def _read(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["read", *args, "--json"]) == 0
    out: dict = json.loads(capsys.readouterr().out)
    return out


def test_the_other_editions_colours_named_are_said(classic_game, capsys) -> None:
    folder, names = classic_game
    last = str(folder / names[-1])
    out = _read(capsys, last, "--colors", WRONG)
    assert out["warnings"] == [{"reason": "colours", "message": WARNING}]
    assert out["colors"] == WRONG.split(",")  # read as asked, and said
    # in the text output, a line of its own after the photo's
    assert main(["read", last, "--colors", WRONG]) == 0
    assert capsys.readouterr().out.splitlines()[1] == f"{last}: warning: {WARNING}"


def test_the_right_colours_or_none_named_say_nothing(classic_game, capsys) -> None:
    folder, names = classic_game
    last = str(folder / names[-1])
    assert _read(capsys, last, "--colors", "red,blue,green,black")["warnings"] == []
    assert _read(capsys, last)["warnings"] == []
    # colours of no one set, or of every set: nothing to check them against
    for colors in ("red,orange", "blue"):
        assert _read(capsys, last, "--colors", colors)["warnings"] == []
    # a photo of two towers tells too little to judge
    assert _read(capsys, str(folder / names[-2]), "--colors", WRONG)["warnings"] == []


def test_the_check_leaves_the_reading_as_it_was(classic_game) -> None:
    from companion.vision.reader import load_image, read_image

    folder, names = classic_game
    image = load_image(folder / names[-1])
    for colors in (WRONG.split(","), ["red", "blue", "green", "black"]):
        plain = read_image(image, None, colors)
        checked = read_image(image, None, colors, check_colours=True)
        assert plain.colours_shown is None and checked.colours_shown == "classic"
        assert checked.to_json() == plain.to_json()
        assert "colour_check" in checked.timings and "colour_check" not in plain.timings
        assert [d.score for d in checked.details] == [d.score for d in plain.details]


def _tops(*reads: tuple[str, float]) -> list:
    from companion.rules import Site
    from companion.vision.sites import SiteResult

    return [SiteResult(Site(0, 0, k % 3), 2, key, margin=m) for k, (key, m) in enumerate(reads)]


def test_a_colour_both_sets_have_does_not_pick_the_set() -> None:
    from companion.vision.geometry import board_geometry
    from companion.vision.reader import _voted_set

    g = board_geometry()
    # raycast phone 9507: a 2017 game whose seven blue tops the every-colour read took
    # for the 1994 blue, beside two plainly yellow ones (their margins as read)
    tops = _tops(("yellow", 6.0), ("blue", 5.1), ("blue", 4.0), ("blue", 6.8), ("blue", 3.6),
                 ("yellow", 8.8), ("blue", 3.2), ("blue", 1.7), ("blue", 6.3))
    assert _voted_set(g, tops) == "2017"
    assert _voted_set(g, tops, telling_only=True) == "2017"
    # only blue read: the shades decide a photo read without colours named, and the
    # check against the colours named says nothing
    assert _voted_set(g, _tops(("blue2017", 2.0), ("blue", 1.0))) == "2017"
    assert _voted_set(g, _tops(("blue", 2.0), ("blue2017", 1.0))) == "classic"
    assert _voted_set(g, _tops(("blue", 2.0)), telling_only=True) is None
    # nothing read: the first set, as before
    assert _voted_set(g, []) == "classic"
    assert _voted_set(g, [], telling_only=True) is None
    # margins weigh the votes; a margin at or under 0 still counts a little
    assert _voted_set(g, _tops(("red", 0.5), ("purple", 2.0))) == "2017"
    assert _voted_set(g, _tops(("red", -1.0), ("green", -1.0), ("purple", 0.15))) == "classic"


def test_only_colours_a_photo_could_tell_against_are_checked(classic_game) -> None:
    from companion.vision.reader import load_image, read_image

    folder, names = classic_game
    image = load_image(folder / names[-1])
    assert read_image(image, None, ["red", "orange"], check_colours=True).colours_shown is None
    assert read_image(image, None, ["blue"], check_colours=True).colours_shown is None
    assert read_image(image, None, ["blue", "green"], check_colours=True).colours_shown == (
        "classic")


def test_the_check_scores_from_the_photos_own_evidence(classic_game, monkeypatch) -> None:
    """The check's reader starts from the photo's board model and hypothesis evidence
    (the colour-free part of a scoring): the same scores as a reader of its own, with
    the first round's evidence not gathered again."""
    import cv2

    from companion.vision import reader as rd
    from companion.vision.geometry import board_geometry
    from companion.vision.reader import load_image
    from companion.vision.settings import merged_config
    from companion.vision.sites import SiteReader

    folder, names = classic_game
    image = load_image(folder / names[-1])
    g, cfg = board_geometry(), merged_config(None)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    view = rd._locate(image, gray, rd.detect_markers(gray, g), None, g, cfg, None, "photo")
    sites = rd._read_sites(g, cfg, view, WRONG.split(","), {})
    before = list(sites.reader._evidence_made)
    model, _ = rd._colour_model(g, None)
    args = (view.work, view.wpose, view.wb, model, sites.strips)
    gathered: list[int] = []
    real = SiteReader._evidence

    def counted(self: SiteReader, idx, *rest):  # type: ignore[no-untyped-def]
        gathered.append(len(idx))
        return real(self, idx, *rest)

    monkeypatch.setattr(SiteReader, "_evidence", counted)
    own, _, _ = SiteReader(g, cfg.get("sites")).read(*args)
    alone, gathered[:] = list(gathered), []
    sharing = sites.reader.sharing_photo()
    shared, _, _ = sharing.read(*args)
    assert alone[0] == 54 and gathered == alone[1:]  # all 54 sites' first round reused
    assert sharing._photo is sites.reader._photo  # nor the board model made again
    assert [(r.height, r.color, r.score, r.margin, r.reason) for r in shared] == [
        (r.height, r.color, r.score, r.margin, r.reason) for r in own]
    assert sites.reader._evidence_made == before  # the photo's own reader left as it was
    assert rd.colour_set_shown(g, cfg, view.work, view.wpose, view.wb, sites.strips, None,
                               sites.reader) == "classic"
