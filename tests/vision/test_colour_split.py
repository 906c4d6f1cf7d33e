"""A photo's tops of one colour in two distinct groups: one of them is another colour."""

from __future__ import annotations

from typing import Any

import numpy as np

from companion.rules.board import Site
from companion.vision.colours import ColourModel, toned_model
from companion.vision.geometry import board_geometry
from companion.vision.settings import section
from companion.vision.sites import SiteResult, claim_split_colour

# top features (chroma r-g, g-b, log brightness) of the ray-traced renderer's mounted
# frame 9216 (a warm lamp, a flat tone curve): its black tops lie at the neutral
# point, its blue ones pale and lamp-tinted, a little chroma off it, and all read black
BLACK_TOPS = [(0.015, 0.020, -0.393), (0.017, 0.020, -0.300), (0.011, 0.018, -0.608),
              (0.018, 0.021, -0.348), (0.014, 0.021, -0.457)]
PALE_BLUE_TOPS = [(0.002, -0.094, -0.234), (0.003, -0.088, -0.216),
                  (0.004, -0.095, -0.263), (-0.009, -0.137, -0.409)]
RED_TOPS = [(0.167, 0.012, -0.292), (0.136, 0.014, -0.209), (0.279, -0.004, -0.531),
            (0.193, 0.009, -0.338)]


def _tops(groups: list[tuple[str, list[tuple[float, float, float]]]]) -> list[SiteResult]:
    out = []
    i = 0
    for colour, feats in groups:
        for f in feats:
            out.append(SiteResult(Site.from_index(i), 3, colour, margin=5.0, uniform=0.95,
                                  top_feature=np.array(f)))
            i += 1
    return out


def _model(*names: str, tone: float = 0.55) -> ColourModel:
    """The colours under the frame's flat tone curve (the reader's toned model)."""
    g = board_geometry()
    return toned_model({n: g.colours[n] for n in names}, tone)


def _cfg(**over: Any) -> dict[str, Any]:
    return {**section("sites"), **over}


def test_a_pale_blue_group_read_black_is_blue_when_no_top_reads_blue():
    tops = _tops([("black", BLACK_TOPS), ("black", PALE_BLUE_TOPS), ("red", RED_TOPS)])
    model = _model("red", "blue", "black")
    # (in the frame, black re-centred on its tops fitted the pale blue ones as well as
    # blue did: black takes any top with a little chroma)
    assert claim_split_colour(tops, model, _cfg()) == 4
    assert [r.color for r in tops] == ["black"] * 5 + ["blue"] * 4 + ["red"] * 4
    # off
    tops = _tops([("black", BLACK_TOPS), ("black", PALE_BLUE_TOPS)])
    assert claim_split_colour(tops, model, _cfg(split_min_tops=0)) == 0
    assert {r.color for r in tops} == {"black"}


def test_a_colour_with_tops_of_its_own_takes_no_second_group():
    own_blue = [(-0.12, -0.25, -0.6), (-0.10, -0.22, -0.55)]
    tops = _tops([("black", BLACK_TOPS), ("black", PALE_BLUE_TOPS), ("blue", own_blue)])
    assert claim_split_colour(tops, _model("red", "blue", "black"), _cfg()) == 0
    # one top of its own (read by a hair) does not settle it
    tops = _tops([("black", BLACK_TOPS), ("black", PALE_BLUE_TOPS), ("blue", own_blue[:1])])
    assert claim_split_colour(tops, _model("red", "blue", "black"), _cfg()) == 4


def test_lit_and_shaded_tops_of_one_colour_stay_that_colour():
    # red tops in two groups of saturation (a lamp's pool of light and the shade beyond
    # it): the step lies along red's hue, and black is in play with no tops
    pale = [(0.12, 0.004, -0.30), (0.125, 0.0, -0.28), (0.118, 0.006, -0.33)]
    deep = [(0.30, -0.01, -0.60), (0.31, -0.005, -0.62), (0.29, -0.012, -0.58)]
    tops = _tops([("red", pale), ("red", deep)])
    assert claim_split_colour(tops, _model("red", "blue", "black"), _cfg()) == 0
    assert {r.color for r in tops} == {"red"}


def test_a_group_the_other_colour_fits_far_worse_stays():
    # after raycast phone 9216: black tops in two tight groups (a cool cast on most of
    # them), the farther toward blue, but far darker and paler than any blue: black
    cast = [(0.030, -0.075, -1.509), (0.033, -0.063, -1.48), (0.028, -0.075, -1.448),
            (0.027, -0.075, -1.415), (0.015, -0.091, -1.342), (0.013, -0.076, -1.264)]
    plain = [(0.028, -0.005, -0.946), (0.027, -0.012, -0.991)]
    tops = _tops([("black", cast), ("black", plain)])
    model = _model("blue", "black", tone=1.0)
    assert claim_split_colour(tops, model, _cfg()) == 0
    # the fit check is what keeps them: the cast group lies 4.6-8.5 further from blue
    # than from black, the plain one 9.7-10.3
    assert claim_split_colour(tops, model, _cfg(split_fit_d2=9.0)) == 6


def test_too_few_or_too_close_groups_stay():
    model = _model("red", "blue", "black")
    tops = _tops([("black", BLACK_TOPS), ("black", PALE_BLUE_TOPS[:1])])
    assert claim_split_colour(tops, model, _cfg()) == 0
    tops = _tops([("black", BLACK_TOPS), ("black", PALE_BLUE_TOPS)])
    assert claim_split_colour(tops, model, _cfg(split_chroma=0.2)) == 0
    # doubtful tops (a band of several colours) do not count
    for r in tops[5:]:
        r.uniform = 0.3
    assert claim_split_colour(tops, model, _cfg()) == 0


def test_a_third_group_read_the_same_colour_does_not_hide_the_second():
    # the same frame 1.3 times brighter: the pale blue tops and two washed red ones
    # all read black beside the black ones. The blue group is the tops blue fits about
    # as well as black, apart from all the rest; the reds stay (red has tops of its own)
    black = [(0.019, 0.043, -0.315), (0.021, 0.043, -0.221), (0.015, 0.040, -0.532),
             (0.019, 0.043, -0.379), (0.019, 0.041, -0.375), (0.010, 0.040, -0.593)]
    blue = [(0.006, -0.069, -0.161), (0.007, -0.063, -0.143), (0.007, -0.070, -0.191),
            (0.009, -0.065, -0.152), (-0.006, -0.111, -0.341)]
    washed_red = [(0.110, 0.035, -0.164), (0.105, 0.034, -0.156)]
    tops = _tops([("black", black), ("black", blue), ("black", washed_red),
                  ("red", RED_TOPS)])
    assert claim_split_colour(tops, _model("red", "blue", "black", tone=0.5), _cfg()) == 5
    assert [r.color for r in tops] == (["black"] * 6 + ["blue"] * 5 + ["black"] * 2
                                       + ["red"] * 4)


def test_orange_tops_a_warm_mix_turned_yellow_are_orange():
    # raycast phone 9406 (a 2,880 K lamp over cooler room light): three of its orange
    # tops come out at hues near yellow's, and only 0W is read orange; two of them
    # (2C, 2S) lie apart from the true yellow tops, orange fitting them within 2.7 and
    # 3.8 of yellow: within split_fit_d2 (4; at 2 they stayed yellow)
    from companion.rules.board import Site
    from companion.vision.reader import read_image
    from tests.vision.raycast import shoot

    image, truth = shoot(9406, "phone")
    cols = truth["expected"]["colors"]
    towers = {Site.from_json(e): (e["height"], e["owner"]) for e in truth["board"]["sites"]}
    sites = (Site(2, 1, 1), Site(2, 2, 1))
    assert [towers[s] for s in sites] == [(2, "orange"), (5, "orange")]
    now = read_image(image, None, cols)
    assert [(now.sites[s].height, now.sites[s].owner) for s in sites] == [
        (2, "orange"), (5, "orange")]
    before = read_image(image, None, cols, {"sites": {"split_fit_d2": 2.0}})
    assert [(before.sites[s].height, before.sites[s].owner) for s in sites] == [
        (2, "yellow"), (5, "yellow")]
