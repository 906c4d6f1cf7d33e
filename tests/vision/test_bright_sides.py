"""A tower whose side face is as bright as its top: most often another top.

Below a top the tower's own side face shows, a vertical face the light reaches
less than the top. Where the reading's "side" is nearly as bright as its top
(under ``sites.bright_side_share`` of the step the photo's sure towers show), a
reading won by under ``sites.bright_side_margin`` is reported ``unseen`` (reason
"side"), its guess kept in ``unresolved`` for the replay and the live table.
"""

from __future__ import annotations

from typing import Any

from companion.rules import Site
from companion.sim.scenes import labelled_photo
from companion.vision.geometry import board_geometry
from companion.vision.reader import read_image
from companion.vision.sites import SiteReader, SiteResult


def _sided(cfg: dict[str, Any], *results: SiteResult) -> set[Site]:
    """The sites the reader's doubts send to unseen as "side" (fresh copies read, the
    other doubts first, as the reader has them)."""
    fresh = [SiteResult(r.site, r.height, r.color, margin=r.margin, side_step=r.side_step)
             for r in results]
    reader = SiteReader(board_geometry(), cfg)
    reader._doubt_close_readings(fresh)
    reader._doubt_bright_sides(fresh)
    return {r.site for r in fresh if r.reason == "side"}


def test_only_narrow_towers_whose_side_is_nearly_as_bright_as_the_top() -> None:
    s = [Site.from_index(k) for k in range(10)]
    sure = (SiteResult(s[0], 3, "red", margin=5.0, side_step=0.6),
            SiteResult(s[1], 2, "blue", margin=4.0, side_step=0.8),
            SiteResult(s[2], 7, "red", margin=9.0, side_step=1.0))
    # the photo's step: the sure towers' median, 0.8; a quarter of it is 0.2
    results = (*sure,
               SiteResult(s[3], 5, "red", margin=2.9, side_step=0.19),
               SiteResult(s[4], 5, "red", margin=2.9, side_step=0.21),
               SiteResult(s[5], 5, "red", margin=3.0, side_step=-0.5),
               SiteResult(s[6], 0, None, margin=0.5, side_step=-0.5),
               SiteResult(s[7], 4, "blue", margin=0.5, side_step=float("nan")),
               SiteResult(s[8], None, None, margin=0.5, side_step=-0.5),
               SiteResult(s[9], 1, "blue", margin=1.0, side_step=-0.1))
    assert _sided({}, *results) == {s[3], s[9]}
    assert _sided({"bright_side_share": 0.3}, *results) == {s[3], s[4], s[9]}
    assert _sided({"bright_side_margin": None}, *results) == set()
    # fewer than three sure towers with their side in view: the photo's step is unknown
    assert _sided({}, *sure[:2], *results[3:]) == set()
    assert _sided({"bright_side_sure_margin": 4.5}, *results) == set()
    # under flat light the sure towers' tops are no brighter than their sides: no cue
    assert _sided({"bright_side_least_step": 0.81}, *results) == set()
    assert _sided({"bright_side_least_step": 0.8}, *results) == {s[3], s[9]}


def test_a_reading_two_storeys_too_tall_goes_to_unseen() -> None:
    # companion/sim phone 500-0011: Hong Kong N holds a 4-storey yellow tower, read
    # as 6 storeys by 2.1 points; just below that reading's top band the photo shows
    # the true top, as bright as the band itself (the photo's sure towers: 0.36-0.49)
    _, shot = labelled_photo(500, 11, "phone")
    colors = shot.truth["expected"]["colors"]
    site = Site(3, 0, 1)
    before = read_image(shot.image, None, colors, {"sites": {"bright_side_margin": None}})
    after = read_image(shot.image, None, colors)
    assert (before.sites[site].height, before.sites[site].owner) == (6, "yellow")
    assert {(e["height"], e["owner"]) for e in shot.truth["board"]["sites"]
            if (e["city"], e["row"], e["col"]) == (3, 0, 1)} == {(4, "yellow")}
    [detail] = [d for d in after.details if d.site == site]
    assert detail.reason == "side" and detail.height == 6
    assert 2.0 < detail.margin < 2.1 and abs(detail.side_step) < 0.02
    assert site in after.unseen and site not in after.sites
    assert (after.unresolved[site].height, after.unresolved[site].owner) == (6, "yellow")
    entry = next(e for e in after.to_json()["unresolved"] if Site.from_json(e) == site)
    assert entry["reason"] == "side"
    # the other sites are read as before, and the doubt sends no other site to unseen
    assert {s: v for s, v in before.sites.items() if s != site} == after.sites
    assert set(after.unseen) == set(before.unseen) | {site}
    assert [d.site for d in after.details if d.reason == "side"] == [site]
