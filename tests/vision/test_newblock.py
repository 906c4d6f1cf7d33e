"""The new block between two still scenes (companion.vision.newblock)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.rules import Build, Site
from companion.simtable import SimTable
from companion.vision.colours import ColourModel
from companion.vision.geometry import Intrinsics, Pose, board_geometry
from companion.vision.newblock import fit_new_block


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
