"""A new block whose glossy top mirrors the lamp (companion.vision.newblock).

The independent ray tracer's blocks have a glossy coat: under a lamp a black
top turns grey, a green one mint, and the fit of the block just built counted
every pixel of such a top against the block. A grey top over a pale print also
darkens it as a shadow does, so the change map saw nothing there either.
"""

from __future__ import annotations

import numpy as np

from companion.rules import Site, SiteView
from companion.vision.colours import ColourModel, features
from companion.vision.geometry import board_geometry
from companion.vision.newblock import _washed, change_map, fit_new_block, settle
from companion.vision.reader import read_image
from companion.vision.settings import section
from tests.replay.raygame import _table

OFF = {"washed_log": None, "shadow_dim_log": None}


def _feature(bgr: tuple[float, float, float]) -> np.ndarray:
    """The feature of a white-balanced pixel (1.0 is the marker paper)."""
    return features(np.array([bgr], np.float32))


def test_a_pale_top_of_a_colours_hue_is_that_colour_washed() -> None:
    model = ColourModel.for_colours(board_geometry(), ["red", "blue", "green", "black"])
    washed = {}
    # (B, G, R), the marker paper 1.0
    for name, bgr in (("mint", (0.70, 0.85, 0.72)),  # a green top mirroring a lamp
                      ("pink", (0.75, 0.70, 0.90)),  # a red one
                      ("lavender", (0.90, 0.70, 0.70)),  # a blue one
                      ("grey", (0.45, 0.45, 0.45)),  # a black one
                      ("pale", (0.75, 0.75, 0.75)),  # no hue left: any of them
                      ("dark", (0.05, 0.05, 0.05))):  # black plastic as it is
        f = _feature(bgr)
        washed[name] = [c.name for c in model.classes if bool(_washed(f, c, None)[0])]
    assert washed == {"mint": ["green"], "pink": ["red"], "lavender": ["blue"],
                      "grey": ["black"], "pale": ["red", "blue", "green", "black"],
                      "dark": []}
    assert _washed(_feature((0.70, 0.85, 0.72)), model.classes[0],
                   {**section("new_block"), **OFF}) is None


def test_a_shadow_is_told_by_its_darkening_with_the_hue_kept() -> None:
    before = np.full((8, 12, 3), 200, np.uint8)
    after = before.copy()
    after[:, :6] = 120  # darker by half a log unit, grey kept: a shadow or a grey top
    after[:, 6:] = (200, 120, 120)  # the hue changed: new plastic
    change, shaded = change_map(before, after)
    assert shaded[4].tolist() == [True] * 5 + [False] * 7  # (blurred across the seam)
    offset = float(section("new_block")["change_offset"])
    assert np.allclose(change[4, :5], -offset)
    assert (change[4, 7:] > 0).all()


def test_a_black_block_whose_top_turned_grey_is_read_with_the_reading() -> None:
    # ray-traced stand seed 57 (66 degrees, a pale board): North's black 3 on
    # Cairo S, a blue 3 there. Its top mirrors the lamp grey over the pale
    # print behind the tower; the fit took those pixels for the block's shadow
    # and preferred a black 1 by a fifth (942, 842, 733, 607 for 1 to 4 storeys),
    # and the live table recorded a black 1 the reader had read as the 3 it is.
    table = _table(2, 16, 57, "mounted")
    before, _ = table.shoot(9, 8)
    after, truth = table.shoot(10, 9)
    site = Site.parse("5S")
    colours = ["red", "black", "blue", "green"]
    reading = read_image(after, truth["camera"], colours)
    model = ColourModel.for_colours(board_geometry(), colours)
    scores = {}
    for name, over in (("now", {}), ("before", OFF)):
        config = {**section("new_block"), **over}
        fit = fit_new_block(before, after, reading.pose, site, 3, ["black"], model,
                            wb=reading.wb, config=config)
        assert fit is not None
        scores[name] = [round(fit.scores[("black", k)]) for k in (1, 2, 3, 4)]
        view, doubtful, _ = settle(fit, reading.sites.get(site), 3, config,
                                   reading.hypotheses()[site])
        scores[name + " settled"] = (view, doubtful)
    assert scores["before"] == [942, 842, 733, 607]
    assert scores["before settled"] == (SiteView(4, "black"), False)
    # the grey top tells nothing now: the fit is flat over 1-3 storeys, and the
    # reading, whose top edges find the 3, decides
    assert scores["now"] == [951, 959, 958, 899]
    assert scores["now settled"] == (SiteView(6, "black"), False)
