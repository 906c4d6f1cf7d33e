"""The new block between two still scenes (companion.vision.newblock)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.rules import Build, Site, SiteView
from companion.simtable import SimTable
from companion.vision.colours import ColourModel
from companion.vision.geometry import Intrinsics, Pose, board_geometry
from companion.vision.newblock import BlockFit, fit_new_block, settle


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
    # -1 + (8 - 9) = -2 and black 1, unlisted, 0 + (3 - 9) = -6; by the fit alone
    # (weight 0) black 1 wins
    read = {(5, "red"): 9.0, (4, "red"): 8.0}
    assert settle(fit, SiteView(5, "red"), 3, read_scores=read) == (
        SiteView(4, "red"), False, True)
    assert settle(fit, SiteView(5, "red"), 3, {"reading_weight": 0.0}, read) == (
        SiteView(4, "black"), False, True)
