"""A tower the checks after the occlusion rounds find hides the sites behind it:
the towers read there are read again under its silhouette (sites.cover_margin)."""

from __future__ import annotations

import pytest

from companion.rules import Site
from companion.sim.scenes import labelled_photo
from companion.vision.evaluate import compare, site_verdicts
from companion.vision.reader import read_image

BEHIND, TOWER = Site(3, 1, 1), Site(3, 1, 2)  # Frankfurt C, and E in front of it


@pytest.fixture(scope="module")
def photo():
    # companion/sim phone photo (labelled_set seed 605, photo 5, 42 degrees): 3E, a
    # 4-storey blue, was read empty in the occlusion rounds, so 3C behind it (empty,
    # and hidden by it) was read on its faces as a 2-storey blue
    _, rendered = labelled_photo(605, 5, "phone")
    return rendered


def _read(rendered, config=None):
    return read_image(rendered.image, None, list(rendered.truth["expected"]["colors"]), config)


def _detail(reading, site):
    return next(d for d in reading.details if d.site == site)


def test_a_phantom_behind_a_tower_the_checks_found_is_read_again(photo) -> None:
    now, before = _read(photo), _read(photo, {"sites": {"cover_margin": None}})
    # the tower in front: found by the print check, its best tower a clear lead
    for reading in (now, before):
        front = _detail(reading, TOWER)
        assert front.reason == "covered" and front.tower[:2] == (4, "blue")
        assert TOWER in reading.unseen
    was = _detail(before, BEHIND)
    assert (before.sites[BEHIND].height, before.sites[BEHIND].owner) == (2, "blue")
    assert was.reason == "" and round(was.margin, 2) == 2.96 and was.visible == 1.0
    # read under 3E's guess its foot is out of view: unseen, as the site is hidden
    read = _detail(now, BEHIND)
    assert BEHIND in now.unseen and read.reason == "foot hidden"
    assert round(read.foot_visible, 2) == 0.0
    v_now, v_before = site_verdicts(now.to_json(), photo.truth), site_verdicts(
        before.to_json(), photo.truth)
    assert {s: (v_before[s], v_now[s]) for s in v_now if v_now[s] != v_before[s]} == {
        BEHIND: (("2 blue", "hidden_read"), ("unseen", "hidden"))}
    assert [compare(r.to_json(), photo.truth)["hidden_read"] for r in (now, before)] == [1, 2]


def test_a_reading_that_won_by_the_margin_stays(photo) -> None:
    # 3C won by 2.96: a margin of 2.5 leaves it as the rounds read it
    strict = _read(photo, {"sites": {"cover_margin": 2.5}})
    assert (strict.sites[BEHIND].height, strict.sites[BEHIND].owner) == (2, "blue")
    assert _detail(strict, BEHIND).reason == ""


def test_a_covered_guess_the_rescue_would_not_take_hides_no_reading(photo) -> None:
    # with the rescue's lead raised past 3E's (7.15 - 3.11 = 4.04), 3E's guess is no
    # longer trusted to hide what was read behind it
    loose = _read(photo, {"sites": {"covered_tower_margin": 4.5}})
    assert _detail(loose, TOWER).reason == "covered"
    assert (loose.sites[BEHIND].height, loose.sites[BEHIND].owner) == (2, "blue")
