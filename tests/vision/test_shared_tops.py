"""Two tops cannot both show at one place in the photo: of two tower readings whose
tops do, in one colour, the one that won by less goes to unseen
(sites.shared_top_share)."""

from __future__ import annotations

from companion.rules import Site, SiteView
from companion.sim.scenes import labelled_photo
from companion.vision.evaluate import compare
from tests.vision.readings import detail as _detail
from tests.vision.readings import read_rendered as _read
from tests.vision.readings import verdict_changes as _changes

OFF = {"sites": {"shared_top_share": None}}


def test_a_low_tower_read_tall_on_a_farther_top_goes_to_unseen() -> None:
    # companion/sim mounted photo (labelled_set seed 603, photo 14, 58 degrees): 2S, a
    # 3-storey blue, is read as an 8-storey blue (margin 5.09) whose top is 2C's, a
    # 4-storey blue behind it read right (margin 5.50)
    _, rendered = labelled_photo(603, 14, "mounted")
    near, far = Site(2, 2, 1), Site(2, 1, 1)
    now, before = _read(rendered), _read(rendered, OFF)
    assert (before.sites[near].height, before.sites[near].owner) == (8, "blue")
    assert round(_detail(before, near).margin, 2) == 5.09
    assert round(_detail(before, far).margin, 2) == 5.5
    assert near in now.unseen and _detail(now, near).reason == "shared"
    # kept apart as a guess, like the other doubts; the farther tower stays read
    assert now.unresolved[near] == SiteView(8, "blue")
    assert now.sites[far] == SiteView(4, "blue") and _detail(now, far).reason == ""
    assert _changes(now, before, rendered.truth) == {
        near: (("8 blue", "wrong"), ("unseen", "unseen"))}
    assert [(c["wrong"], c["unseen_visible"]) for c in (
        compare(now.to_json(), rendered.truth),
        compare(before.to_json(), rendered.truth))] == [(0, 1), (1, 0)]


def test_a_hidden_site_read_on_the_top_in_front_of_it_goes_to_unseen() -> None:
    # companion/sim mounted photo (labelled_set seed 605, photo 20, 58 degrees): 4C,
    # empty and hidden behind 4W (a 5-storey red read right, margin 6.93), was read as
    # a 1-storey red on 4W's top (margin 1.91): the farther one won by less
    _, rendered = labelled_photo(605, 20, "mounted")
    far, near = Site(4, 1, 1), Site(4, 1, 0)
    now, before = _read(rendered), _read(rendered, OFF)
    assert (before.sites[far].height, before.sites[far].owner) == (1, "red")
    assert _detail(now, far).reason == "shared" and _detail(now, near).reason == ""
    assert now.sites[near] == SiteView(5, "red")
    assert _changes(now, before, rendered.truth) == {
        far: (("1 red", "hidden_read"), ("unseen", "hidden"))}


def test_a_right_tower_can_be_sent_to_unseen_too() -> None:
    # what the rule costs: companion/sim mounted photo (labelled_set seed 605, photo 5):
    # 3W, a right 1-storey green (margin 5.32), shares its top with 3C in front of it,
    # an empty site read as a 4-storey green that won by more (6.79)
    _, rendered = labelled_photo(605, 5, "mounted")
    now, before = _read(rendered), _read(rendered, OFF)
    site = Site(3, 1, 0)
    assert _changes(now, before, rendered.truth) == {
        site: (("1 green", "right"), ("unseen", "unseen"))}
    assert _detail(now, site).reason == "shared"


def test_off_reads_no_site_shared() -> None:
    _, rendered = labelled_photo(603, 14, "mounted")
    assert all(d.reason != "shared" for d in _read(rendered, OFF).details)
