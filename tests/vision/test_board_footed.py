"""A one-storey tower read on a footprint that looks like the board, not plastic.

A block covers its footprint, so the samples there are its own plastic. Where they
look like the board (``sites.board_foot_doubt``), a one-storey reading is as often
the print itself (a blue lamp over pale print, dark print under black) as a block
coloured like the board: reported ``unseen`` (reason "board"), the guess kept in
``unresolved`` for the replay and the live table.
"""

from __future__ import annotations

import itertools

from companion.rules import Site
from companion.sim import labelled_set
from companion.vision.geometry import board_geometry
from companion.vision.reader import read_image
from companion.vision.sites import SiteReader, SiteResult


def _board_footed(least: float | None, *results: SiteResult) -> set[Site]:
    """The sites the reader's doubts send to unseen as "board" (fresh copies read)."""
    fresh = [SiteResult(r.site, r.height, r.color, foot_board=r.foot_board) for r in results]
    SiteReader(board_geometry(), {"board_foot_doubt": least})._doubt_close_readings(fresh)
    return {r.site for r in fresh if r.reason == "board"}


def test_only_one_storey_towers_on_a_board_like_footprint() -> None:
    a, b, c, d, e = (Site.from_index(k) for k in range(5))
    results = (SiteResult(a, 1, "blue", foot_board=0.7),
               SiteResult(b, 1, "blue", foot_board=0.69),
               SiteResult(c, 2, "blue", foot_board=0.95),
               SiteResult(d, 0, None, foot_board=0.95),
               SiteResult(e, None, None, foot_board=0.95))
    assert _board_footed(0.7, *results) == {a}
    assert _board_footed(None, *results) == set()


def test_a_hidden_sites_one_storey_reading_on_the_board_goes_to_unseen() -> None:
    # companion/sim phone 500-0006: Cairo NW holds a 7-storey orange tower that the
    # towers in front hide; its footprint's samples look like the board (1.0) and it
    # was read as a one-storey orange tower
    [(_, shot)] = list(itertools.islice(labelled_set(7, 500, "phone"), 6, 7))
    colors = shot.truth["expected"]["colors"]
    site = Site(5, 0, 0)
    # (on the pose of the markers found, as measured: fitted with a missed marker's
    # edges too, outline.refine_by_marker_edges, nothing is read there even without
    # the rule)
    alone = {"marker_edges": {"enabled": False}}
    before = read_image(shot.image, None, colors,
                        {"sites": {"board_foot_doubt": None}, **alone})
    after = read_image(shot.image, None, colors, alone)
    edged = read_image(shot.image, None, colors, {"sites": {"board_foot_doubt": None}})
    assert site not in edged.sites
    assert before.sites[site].height == 1 and before.sites[site].owner == "orange"
    [detail] = [d for d in after.details if d.site == site]
    assert (detail.reason, detail.height, round(detail.foot_board, 2)) == ("board", 1, 1.0)
    assert site in after.unseen and site not in after.sites
    assert after.unresolved[site].height == 1 and after.unresolved[site].owner == "orange"
    assert [d.site for d in after.details if d.reason == "board"] == [site]
    assert {**site.to_json(), "height": 1, "owner": "orange", "doubtful": False,
            "reason": "board"} in after.to_json()["unresolved"]
    # the other sites are read as before
    assert {s: v for s, v in before.sites.items() if s != site} == after.sites
