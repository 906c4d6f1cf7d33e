"""The new block between two still scenes (companion.vision.newblock)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.rules import Build, Site, SiteView
from companion.simtable import SimTable
from companion.vision.colours import ColourModel
from companion.vision.geometry import Intrinsics, Pose, board_geometry, storey_shift_mm
from companion.vision.newblock import (
    BlockFit,
    contradicts,
    doubt_totals,
    fit_new_block,
    fit_stacks,
    reconsider,
    settle,
    split,
    steep_site,
)


def _pose(table: SimTable) -> Pose:
    cam = table.camera
    return Pose(cam.rvec, cam.tvec, Intrinsics(cam.K, cam.dist, (cam.width, cam.height)))


def _stills(table: SimTable, builds: int) -> list[tuple[np.ndarray, int]]:
    """The still scene before the first build and after each: (image, builds so far)."""
    out: list[tuple[np.ndarray, int]] = []
    while True:
        frame = table.read()
        if frame is None or frame.ply > builds:
            return out
        if frame.phase == "still" and (not out or out[-1][1] != frame.ply):
            out.append((frame.image, frame.ply))


def test_each_block_of_a_game_is_fitted_exactly() -> None:
    # SimTable seed 3's first ten builds: blocks of 1 to 4 storeys on towers of
    # 0 to 6. Read from the after-frame alone, three of them came out a storey low.
    table = SimTable(seed=3, hand_frames=1, still_frames=1)
    stills = _stills(table, 10)
    colours = list(table.companion_config().colors)
    model = ColourModel.for_colours(board_geometry(), colours)
    pose = _pose(table)
    heights: dict[Site, int] = {}
    got, want = [], []
    for (before, _), (after, ply) in zip(stills[:-1], stills[1:], strict=True):
        move = table.moves[ply - 1]
        assert isinstance(move, Build)
        base = heights.get(move.site, 0)
        fit = fit_new_block(before, after, pose, move.site, base, colours, model, towers=heights)
        got.append(None if fit is None else (fit.storeys, fit.colour))
        want.append((move.block.storeys, move.block.color))
        heights[move.site] = base + move.block.storeys
    assert len(want) == 10
    assert {s for s, _ in want} == {1, 2, 3, 4}
    assert got == want


def test_two_blocks_stacked_at_once_are_told_from_one_by_the_lower_ones_sides() -> None:
    # SimTable seed 4's first builds: South's red 1 and West's blue 1 at Hong Kong W,
    # fitted across both (the still between them left out): as tall as a blue 2,
    # but only the red under the blue shows a red storey
    table = SimTable(seed=4, hand_frames=1, still_frames=1)
    stills = _stills(table, 2)
    assert [str(m) for m in table.moves[:2]] == ["S c10 red1@3W", "W c21 blue1@3W"]
    colours = list(table.companion_config().colors)
    model = ColourModel.for_colours(board_geometry(), colours)
    pose, site = _pose(table), Site.parse("3W")
    (before, _), (after, ply) = stills[0], stills[-1]
    assert ply == 2
    single, pair, upside_down = fit_stacks(
        before, after, pose, site, 0,
        [[("blue", 2)], [("red", 1), ("blue", 1)], [("blue", 1), ("red", 1)]], model)
    assert pair > single > upside_down
    assert 100 * (pair - single) / abs(single) > 5  # the controller's pair_lead
    # one block is a stack of one: the same scores as the fit of a new block
    fit = fit_new_block(before, after, pose, site, 0, ["red", "blue"], model)
    assert fit is not None
    one = fit_stacks(before, after, pose, site, 0,
                     [[(c, k)] for c in ("red", "blue") for k in (1, 2, 3, 4)], model)
    assert one == pytest.approx([fit.scores[(c, k)] for c in ("red", "blue")
                                 for k in (1, 2, 3, 4)])


def test_nothing_changed_is_no_fit() -> None:
    table = SimTable(seed=3, hand_frames=1, still_frames=1)
    (image, _), = _stills(table, 0)
    colours = list(table.companion_config().colors)
    model = ColourModel.for_colours(board_geometry(), colours)
    assert fit_new_block(image, image.copy(), _pose(table), Site.parse("0C"), 0, colours,
                         model) is None


def test_frames_of_two_sizes_are_a_clear_error() -> None:
    table = SimTable(seed=3, hand_frames=1, still_frames=1)
    (image, _), = _stills(table, 0)
    model = ColourModel.for_colours(board_geometry(), ["red"])
    with pytest.raises(ValueError, match="the two frames differ in size"):
        fit_new_block(image, image[:-2], _pose(table), Site.parse("0C"), 0, ["red"], model)


def test_colours_not_in_the_model_are_no_fit() -> None:
    table = SimTable(seed=3, hand_frames=1, still_frames=1)
    (image, _), = _stills(table, 0)
    model = ColourModel.for_colours(board_geometry(), ["red", "blue"])
    assert fit_new_block(image, image, _pose(table), Site.parse("0C"), 0, ["green"],
                         model) is None


def _fit(scores: dict[tuple[str, int], float]) -> BlockFit:
    (colour, storeys), best = max(scores.items(), key=lambda kv: kv[1])
    second = max(v for (c, k), v in scores.items() if k != storeys)
    return BlockFit(storeys, colour, best, (best - second) / best, scores)


def test_the_fit_alone_decides_past_keep_reading() -> None:
    """Without the reader's scores: the fit's best (one storey, 4% ahead of two)
    overrules the reading of two storeys on a tower of three."""
    fit = _fit({("black", 1): 100.0, ("black", 2): 96.0, ("black", 3): 80.0})
    assert settle(fit, SiteView(5, "black"), 3) == (SiteView(4, "black"), False, True)


def test_the_fit_and_the_reading_are_weighed_together() -> None:
    """One storey: 0 (the best fit) + 1 x (5 - 10) = -5; two: -4 + 0 = -4; three:
    -20 and, unlisted by the reader, (5 - 5) - 10 = -10. Two storeys win by one
    point, under ``weighed_doubt`` (3): doubtful, and the reading stands."""
    fit = _fit({("black", 1): 100.0, ("black", 2): 96.0, ("black", 3): 80.0})
    read = {(5, "black"): 10.0, (4, "black"): 5.0, (0, ""): 7.0}
    assert settle(fit, SiteView(5, "black"), 3, read_scores=read) == (
        SiteView(5, "black"), True, False)
    # a reading far surer of four storeys: one storey is the fit's and the reader's
    read = {(4, "black"): 20.0, (5, "black"): 10.0}
    assert settle(fit, SiteView(4, "black"), 3, read_scores=read) == (
        SiteView(4, "black"), False, False)
    # another colour read: the colours weighed as the heights are
    fit = _fit({("black", 1): 100.0, ("red", 1): 99.0, ("black", 2): 50.0, ("red", 2): 50.0})
    assert settle(fit, SiteView(4, "red"), 3, read_scores={(4, "red"): 9.0,
                                                          (4, "black"): 4.0}) == (
        SiteView(4, "red"), False, False)
    # a reading of two red storeys the fit does not explain: weighed, red 1 scores
    # -1 + (8 - 9) = -2 and black 1, listed there only in red, 0 + (8 - 5 - 9) = -6;
    # by the fit alone (weight 0) black 1 wins
    read = {(5, "red"): 9.0, (4, "red"): 8.0}
    assert settle(fit, SiteView(5, "red"), 3, read_scores=read) == (
        SiteView(4, "red"), False, True)
    assert settle(fit, SiteView(5, "red"), 3, {"reading_weight": 0.0}, read) == (
        SiteView(4, "black"), False, True)


def test_a_height_read_in_another_colour_still_counts_for_the_block() -> None:
    """Ray-traced stand seed 53's third move (58 degrees), South's red 3 on an empty
    site: the reader's best at 3 storeys was black (17.78), and it listed red only at
    2 (7.6) and 1 (-2.05). Red 3, the fit's best (867 of 867), counted as unlisted:
    100 + (-2.05 - 5) = 92.95 against red 2's 802 / 867 x 100 + 7.6 = 100.10, and
    the live table recorded a red 2. Listed in black, 3 storeys now count 5 under
    that: 100 + 12.78 = 112.78, a red 3 by 12.7 points."""
    fit = _fit({("red", 1): 679.0, ("red", 2): 802.0, ("red", 3): 867.0, ("red", 4): 720.0})
    read = {(3, "black"): 17.78, (0, ""): 11.79, (2, "red"): 7.6, (1, "red"): -2.05}
    totals = doubt_totals(fit, read, 0)
    assert totals is not None
    assert {k: round(v, 2) for k, v in totals.items()} == {
        (1, "red"): 76.27, (2, "red"): 100.10, (3, "red"): 112.78, (4, "red"): 75.99}
    assert settle(fit, SiteView(3, "black"), 0, read_scores=read) == (
        SiteView(3, "red"), False, True)


def test_a_block_weighed_by_under_five_points_is_marked_for_the_players() -> None:
    """The fit in percent of its best plus the reader's points: one storey 100 + 10,
    two 90 + 14 (or 16). One storey winning by six points is sure; by four, under
    ``check_margin`` (5), it is doubtful. The old mark (3 points) left builds won
    by 3.4-4.8 points unmarked, and wrong (SimTable seeds 33, 44, 52, 64)."""
    fit = _fit({("black", 1): 100.0, ("black", 2): 90.0})
    read = {(4, "black"): 10.0, (5, "black"): 14.0}
    totals = doubt_totals(fit, read, 3)
    assert totals == {(1, "black"): 110.0, (2, "black"): 104.0}
    # 110 against 104: six points, sure
    assert settle(fit, SiteView(4, "black"), 3, read_scores=read) == (
        SiteView(4, "black"), False, False)
    read = {(4, "black"): 10.0, (5, "black"): 16.0}  # 110 against 106: four points
    assert settle(fit, SiteView(4, "black"), 3, read_scores=read) == (
        SiteView(4, "black"), True, False)
    assert settle(fit, SiteView(4, "black"), 3, {"check_margin": 3.0}, read) == (
        SiteView(4, "black"), False, False)


def test_a_steep_build_the_fit_and_the_reading_rank_apart_is_marked() -> None:
    """Ray-traced stand seed 94's first move (2017 edition, 79.5 degrees), South's
    orange 1 on an empty site. The fit counted the block's shadow, lit by a warm
    lamp, as a taller orange top and put 3 storeys first (976 of 976); the reader
    put 1 first (17.75, 2: 17.56). Weighed: 1 storey 89.32 + 17.75 = 107.07, 2
    storeys 97.61 + 17.56 = 115.17, 3 storeys 100 + 9.11 = 109.11: a 2 by 6.06
    points, sure by ``check_margin`` (5), and wrong. A storey moves the top by
    less than a block may stand off its site there (steep), and the fit and the
    reading each put another count first: marked for the players."""
    fit = _fit({("orange", 1): 872.1, ("orange", 2): 953.1, ("orange", 3): 976.4,
                ("orange", 4): 926.7})
    read = {(1, "orange"): 17.75, (2, "orange"): 17.56, (3, "orange"): 9.11}
    totals = doubt_totals(fit, read, 0)
    assert totals is not None
    assert {k: round(v, 2) for k, v in totals.items()} == {
        (1, "orange"): 107.07, (2, "orange"): 115.17, (3, "orange"): 109.11,
        (4, "orange"): 99.02}
    assert split(fit, read, 0, "orange")
    assert settle(fit, SiteView(1, "orange"), 0, read_scores=read) == (
        SiteView(2, "orange"), False, True)
    assert settle(fit, SiteView(1, "orange"), 0, read_scores=read, steep=True) == (
        SiteView(2, "orange"), True, True)
    # a replay's sure fit ('weighed_doubt' points) is no sure evidence there either
    assert settle(fit, SiteView(1, "orange"), 0, read_scores=read, sure=3.0, steep=True) == (
        SiteView(2, "orange"), True, True)
    # the two agree on 3 storeys: no split, however steep the view
    read = {(3, "orange"): 25.0, (2, "orange"): 17.56}
    assert not split(fit, read, 0, "orange")
    assert settle(fit, SiteView(3, "orange"), 0, read_scores=read, steep=True) == (
        SiteView(3, "orange"), False, False)
    # the reader listed no orange height: its best in any colour counts
    assert split(fit, {(3, "yellow"): 12.0, (1, "purple"): 4.0}, 0, "orange") is False
    assert split(fit, {(1, "yellow"): 12.0, (3, "purple"): 4.0}, 0, "orange") is True
    assert split(fit, None, 0, "orange") is False


def test_a_site_is_steep_where_a_storey_moves_its_top_less_than_a_blocks_placement() -> None:
    """SimTable seed 2's camera looks down at 79 degrees, 982 mm up and 186 mm off the
    board's centre: at Sydney NW a storey moves a top by 1.8 mm as the camera sees
    it, under the 4 mm a block may stand off its site (the
    reference board's 3 mm placement jitter, and a third more for the reader's own
    error). Seed 1's camera is lower and farther off: a storey moves a top by 6.2 mm
    or more everywhere, nowhere steep. The limit is the site
    reader's own unless ``split_storey_mm`` says otherwise (0: never steep)."""
    g = board_geometry()
    steep = _pose(SimTable(seed=2))
    nw = Site.parse("2NW")
    assert round(storey_shift_mm(g, steep.camera_centre, nw, 1), 2) == 1.80
    assert steep_site(steep, nw, 0)
    assert not steep_site(steep, nw, 0, {"split_storey_mm": 0.0})
    assert not steep_site(steep, nw, 0, {"split_storey_mm": 1.7})
    # a taller tower's top is nearer the camera: a storey moves it further
    assert storey_shift_mm(g, steep.camera_centre, nw, 20) > 1.80
    low = _pose(SimTable(seed=1))
    assert not any(steep_site(low, site, 0) for site in g.sites)
    # straight above a site a storey does not move its top at all
    x, y = (float(v) for v in g.site_xy[nw.index])
    assert storey_shift_mm(g, np.array([x, y, 900.0]), nw, 1) == 0.0
    # a camera below the top sees no storey shift to speak of: not steep
    assert not steep_site(steep, nw, 200)


def test_a_doubtful_block_seen_only_past_a_tower_is_kept_by_its_fit_alone() -> None:
    """A block the reader listed no heights for (its site seen only past a nearer
    tower) is still kept to weigh again: by the fit alone, in percent of its best.
    With the reader's scores, as settle weighed it: 96 % + (10 - 4) for two storeys."""
    fit = _fit({("black", 1): 100.0, ("black", 2): 96.0})
    assert doubt_totals(fit, None, 3) == {(1, "black"): 100.0, (2, "black"): 96.0}
    assert doubt_totals(fit, {}, 3) == {(1, "black"): 100.0, (2, "black"): 96.0}
    read = {(5, "black"): 10.0, (4, "black"): 4.0}
    assert doubt_totals(fit, read, 3) == {(1, "black"): 104.0, (2, "black"): 106.0}
    # nothing is weighed (reading_weight 0): nothing kept, as before
    assert doubt_totals(fit, None, 3, {"reading_weight": 0.0}) is None


def test_a_doubtful_block_is_reconsidered_when_the_block_built_on_it_contradicts_it() -> None:
    """Blue 2 was recorded over blue 1 by one point. The green block now built on
    it fits best as a green 1 (95 fit points), which the rules refuse on blue 2;
    on blue 1 it fits as a green 1 better still (100). Jointly blue 1 + green 1
    scores 9 + 100 = 109, blue 2 + the green 2 the rules allow 10 + 90 = 100."""
    first = {(2, "blue"): 10.0, (1, "blue"): 9.0, (3, "blue"): 2.0}
    fits = {(2, "blue"): _fit({("green", 1): 95.0, ("green", 2): 90.0}),
            (1, "blue"): _fit({("green", 1): 100.0, ("green", 2): 70.0})}
    allowed = {(2, "blue"): {(2, "green")}, (1, "blue"): {(1, "green"), (2, "green")}}
    assert reconsider(first, (2, "blue"), fits, allowed, None, 1) == (1, "blue")
    # a revision must win by revise_margin (9 points here)
    assert reconsider(first, (2, "blue"), fits, allowed, None, 1, {"revise_margin": 9.5}) is None
    assert reconsider(first, (2, "blue"), fits, allowed, None, 1, {"revise_margin": 8.5}) == (
        1, "blue")
    # the recorded block holds where the new block fits the other tower no better:
    # on one scale (100 / 95 points per fit point) 10 + 94.7 against 9 + 94.7
    even = {**fits, (1, "blue"): _fit({("green", 1): 90.0, ("green", 2): 70.0})}
    assert reconsider(first, (2, "blue"), even, allowed, None, 1) is None
    # asked only where the rules refuse the new block on the recorded tower (3
    # storeys): the green 1 the fit makes of the change there ...
    assert contradicts(fits[(2, "blue")], None, 3, allowed[(2, "blue")])
    assert not contradicts(fits[(2, "blue")], None, 3, {(1, "green"), (2, "green")})
    # ... or the green 1 the fit and the reading make of it: a reading of 5 storeys
    # (a green 2) makes it 90 + 30 against the green 1's 95 + (10 - 5)
    read = {(5, "green"): 30.0, (3, "green"): 10.0}
    assert not contradicts(fits[(2, "blue")], read, 3, allowed[(2, "blue")])
    assert contradicts(fits[(2, "blue")], read, 3, allowed[(2, "blue")], {"reading_weight": 0.1})
