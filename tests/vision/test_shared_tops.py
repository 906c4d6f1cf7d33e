"""Two tops cannot both show at one place in the photo: a tower reading whose top
lies on a farther tower's top of its colour goes to unseen (sites.shared_top_share)."""

from __future__ import annotations

import pytest

from companion.rules import Site, SiteView
from companion.sim.scenes import labelled_photo
from companion.vision.evaluate import compare, site_verdicts
from companion.vision.reader import read_image

OFF = {"sites": {"shared_top_share": None}}


def _read(rendered, config=None):
    return read_image(rendered.image, None, list(rendered.truth["expected"]["colors"]), config)


def _changes(now, before, truth):
    v_now, v_before = site_verdicts(now.to_json(), truth), site_verdicts(
        before.to_json(), truth)
    return {s: (v_before[s], v_now[s]) for s in v_now if v_now[s] != v_before[s]}


def _detail(reading, site):
    return next(d for d in reading.details if d.site == site)


@pytest.fixture(scope="module")
def low_read_tall():
    # companion/sim mounted photo (labelled_set seed 603, photo 14, 58 degrees): 2S, a
    # 3-storey blue, is read as an 8-storey blue whose top is 2C's (a 4-storey blue
    # behind it)
    _, rendered = labelled_photo(603, 14, "mounted")
    return rendered


def test_a_low_tower_read_tall_on_a_farther_top_goes_to_unseen(low_read_tall) -> None:
    site = Site(2, 2, 1)
    now, before = _read(low_read_tall), _read(low_read_tall, OFF)
    assert (before.sites[site].height, before.sites[site].owner) == (8, "blue")
    assert _detail(before, site).reason == ""
    assert site in now.unseen and _detail(now, site).reason == "shared"
    # kept apart as a guess, like the other doubts
    assert now.unresolved[site] == SiteView(8, "blue")
    # the farther tower it shares its top with is read, and right
    assert (now.sites[Site(2, 1, 1)].height, now.sites[Site(2, 1, 1)].owner) == (4, "blue")
    assert _changes(now, before, low_read_tall.truth) == {
        site: (("8 blue", "wrong"), ("unseen", "unseen"))}
    assert [(c["wrong"], c["unseen_visible"]) for c in (
        compare(now.to_json(), low_read_tall.truth),
        compare(before.to_json(), low_read_tall.truth))] == [(0, 1), (1, 0)]


def test_hidden_sites_read_on_a_nearer_tower_go_to_unseen() -> None:
    # companion/sim mounted photo (labelled_set seed 604, photo 5, 53 degrees): 2N and 2C,
    # empty and hidden, were read as 6- and 7-storey blues on a blue tower's top
    _, rendered = labelled_photo(604, 5, "mounted")
    now, before = _read(rendered), _read(rendered, OFF)
    north, centre = Site(2, 0, 1), Site(2, 1, 1)
    assert [(before.sites[s].height, before.sites[s].owner) for s in (north, centre)] == [
        (6, "blue"), (7, "blue")]
    assert [_detail(now, s).reason for s in (north, centre)] == ["shared", "shared"]
    assert _changes(now, before, rendered.truth) == {
        north: (("6 blue", "hidden_read"), ("unseen", "hidden")),
        centre: (("7 blue", "hidden_read"), ("unseen", "hidden"))}


def test_a_right_tower_can_be_sent_to_unseen_too() -> None:
    # what the rule costs: companion/sim phone photo (labelled_set seed 601, photo 7):
    # 2W, a right 5-storey yellow, has its top on a farther yellow's as read there
    _, rendered = labelled_photo(601, 7, "phone")
    now, before = _read(rendered), _read(rendered, OFF)
    site = Site(2, 1, 0)
    assert _changes(now, before, rendered.truth) == {
        site: (("5 yellow", "right"), ("unseen", "unseen"))}
    assert _detail(now, site).reason == "shared"


def test_off_reads_no_site_shared(low_read_tall) -> None:
    before = _read(low_read_tall, OFF)
    assert all(d.reason != "shared" for d in before.details)
