"""Tracking a game, the reader scores only the heights the record allows.

The live table reads every still scene with each site held to its recorded
tower and up to one block more (``height_range``); the other heights used to
be scored and then ruled out. Each (height, depth) hypothesis is scored on
its own evidence, so the heights kept score exactly as among all 33, and the
reading is the same to the last bit (``sites.ranged_heights_only``). The
strips' rows past the tallest allowed top (and the edge windows round it)
are then never looked at, and are left out of the per-row sums too.
"""

from __future__ import annotations

import numpy as np

from companion.rules.board import Site
from companion.sim import sample_photo
from companion.vision.geometry import board_geometry
from companion.vision.reader import read_image
from companion.vision.sites import SiteReader, _heights_of, _peak_reach, _rows_needed

ALL = {"sites": {"ranged_heights_only": False}}


def _details(reading):
    return [(r.site, r.height, r.color, r.score, r.margin, r.reason, r.rivals,
             r.tower[:4] if r.tower else None) for r in reading.details]


def test_a_ranged_read_scores_the_allowed_heights_exactly_as_among_all():
    g = board_geometry()
    rng = np.random.default_rng(7)
    for seed, kind in ((61, "phone"), (66, "mounted")):
        shot = sample_photo(seed, kind)
        truth = {Site.from_json(e): e["height"] for e in shot.truth["board"]["sites"]}
        colors = list(shot.truth["expected"]["colors"])
        # the record one build behind the photo here and there (the move to find)
        ranges = {}
        for site in g.sites:
            h = truth.get(site, 0)
            base = max(0, h - int(rng.integers(1, 3))) if h and rng.random() < 0.3 else h
            ranges[site] = (base, base + 4)
        fast = read_image(shot.image, None, colors, None, height_range=ranges)
        full = read_image(shot.image, None, colors, ALL, height_range=ranges)
        assert _details(fast) == _details(full)
        assert fast.to_json() == full.to_json()
        # and the range still rules: no site read above what its record allows
        for site, view in fast.sites.items():
            assert ranges[site][0] <= view.height <= ranges[site][1]


def test_the_heights_scored_are_the_empty_site_and_every_allowed_one():
    reader = SiteReader(board_geometry())
    idx = np.array([0, 1, 2])
    assert reader._scored_heights(idx, 32) is None  # no record: every height
    reader._range = {0: (0, 4), 1: (3, 7), 2: (12, 16)}
    assert reader._scored_heights(idx, 32).tolist() == [0, 1, 2, 3, 4, 5, 6, 7,
                                                        12, 13, 14, 15, 16]
    # a site without a range, or one allowed more than every height: all of them
    assert reader._scored_heights(np.array([0, 3]), 32) is None
    reader._range[3] = (0, 40)
    assert reader._scored_heights(np.array([0, 3]), 32) is None
    reader._range[3] = (30, 34)
    assert reader._scored_heights(np.array([3]), 32).tolist() == [0, 30, 31, 32]
    # a range with no height in it rules nothing out when deciding: all are scored
    for empty in ((33, 36), (5, 3), (-3, -1)):
        reader._range[3] = empty
        assert reader._scored_heights(np.array([0, 3]), 32) is None


def _phone_pose():
    """A phone photo's pose as the reader finds it (sim seed 61)."""
    shot = sample_photo(61, "phone")
    return read_image(shot.image, None, list(shot.truth["expected"]["colors"])).pose


def test_a_board_of_low_towers_looks_at_the_first_rows_of_each_strip_only():
    g, pose = board_geometry(), _phone_pose()
    reader = SiteReader(g)
    strips = reader.strips(pose)
    geo = reader._geometry(strips)
    sel = np.arange(54)
    reach = _peak_reach(reader.cfg["edge_peak_px"] / strips.px_row)
    rows_all, last_all = _rows_needed(geo, sel, strips.rows, reach)
    low = _heights_of(geo, np.arange(6), int(reader.cfg["max_height"]) + 1)
    rows_low, last_low = _rows_needed(low, sel, strips.rows, reach)
    # the strips are made for tops of 32 storeys: all heights look at nearly every row
    assert 0.9 * strips.rows < rows_all <= strips.rows
    assert rows_low < 0.6 * strips.rows and last_low < rows_low
    # every row index of the hypotheses up to 5 storeys lies before the last boundary
    assert max(int(a.max()) for a in (low["top_b"], low["t1"], low["tb"])) < last_low - reach
    # the strips are sampled that far only, over all sites (none without a record)
    assert reader._rows_to_read(strips) is None
    reader._range = {i: (0, 5) for i in range(54)}
    assert reader._rows_to_read(strips) == rows_low


def test_readers_of_other_settings_do_not_share_a_pose_s_strips():
    # an A/B evaluation reads each photo under two configs in one process: the
    # strips cached for the pose must be each config's own
    g, pose = board_geometry(), _phone_pose()
    reader = SiteReader(g)
    tall = reader.strips(pose)
    assert SiteReader(g).strips(pose) is tall  # the same settings: kept for the pose
    low = SiteReader(g, {"max_height": 8}).strips(pose)
    narrow = SiteReader(g, {"lateral_mm": [-2.0, 0.0, 2.0]}).strips(pose)
    assert low is not tall and narrow is not tall
    assert low.rows < tall.rows  # the strips reach only as high as 8 storeys
    assert narrow.offsets.tolist() == [-2.0, 0.0, 2.0]
    assert tall.offsets.tolist() == list(reader.offsets) != [-2.0, 0.0, 2.0]


def test_boards_that_differ_off_the_sites_do_not_share_a_pose_s_board_samples():
    # the board model samples the board off the markers and the card stacks:
    # a profile with its markers elsewhere must not take the other's samples
    from dataclasses import replace

    g, pose = board_geometry(), _phone_pose()
    moved = replace(g, marker_centres={k: (x * 0.9, y * 0.9)
                                        for k, (x, y) in g.marker_centres.items()})
    assert moved.fingerprint != g.fingerprint
    assert board_geometry().fingerprint == g.fingerprint
    a = SiteReader(g)._board_points(pose, (720, 1280))
    b = SiteReader(moved)._board_points(pose, (720, 1280))
    assert SiteReader(moved).strips(pose) is not SiteReader(g).strips(pose)
    assert len(a) != len(b) or not np.array_equal(a, b)
