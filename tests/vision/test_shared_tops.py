"""Two tops cannot both show at one place in the photo: of two tower readings whose
tops do, in one colour, the one that won by less goes to unseen
(sites.shared_top_share); so does a tower read on the top of a farther tower it
leaves hidden, when that farther site's own first reading scored more
(sites.shared_hidden_lead)."""

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


def test_a_low_tower_read_tall_on_a_hidden_towers_top_goes_to_unseen() -> None:
    # companion/sim mounted photo (labelled_set seed 603, photo 67, 68 degrees): 5S, a
    # 1-storey red, is read as a 15-storey blue (score 14.62) whose top is that of 5E,
    # a 7-storey blue beside and behind it; read so, 5S hides 5E, so no second reading
    # shares the top. In the first round (nothing in front of it) 5E read the 7-storey
    # blue, scoring 16.94: more than 5S's reading by over the lead (2 points).
    _, rendered = labelled_photo(603, 67, "mounted")
    near, far = Site(5, 2, 1), Site(5, 1, 2)
    no_lead = {"sites": {"shared_hidden_lead": None}}
    now, before = _read(rendered), _read(rendered, no_lead)
    assert (before.sites[near].height, before.sites[near].owner) == (15, "blue")
    assert round(_detail(before, near).score, 2) == 14.62
    assert far in before.unseen and _detail(before, far).reason == "hidden"
    assert _detail(now, near).reason == "shared"
    assert now.unresolved[near] == SiteView(15, "blue")  # kept apart as a guess
    # the farther site stays hidden: read as its first reading it is as often a
    # site truly hidden (docs/vision-errors.md, eightieth session)
    assert far in now.unseen and _detail(now, far).reason == "hidden"
    assert _changes(now, before, rendered.truth) == {
        near: (("15 blue", "wrong"), ("unseen", "unseen"))}
    assert [(c["wrong"], c["unseen_visible"]) for c in (
        compare(now.to_json(), rendered.truth),
        compare(before.to_json(), rendered.truth))] == [(0, 11), (1, 10)]
    # by 2.32 points: a lead of 2.5 leaves the tall reading as it was
    led = _read(rendered, {"sites": {"shared_hidden_lead": 2.5}})
    assert led.sites[near] == SiteView(15, "blue") and _detail(led, near).reason == ""


def test_off_reads_no_site_shared() -> None:
    _, rendered = labelled_photo(603, 14, "mounted")
    assert all(d.reason != "shared" for d in _read(rendered, OFF).details)
