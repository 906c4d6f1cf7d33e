"""The colours re-centred on a photo's tops decide again only the tops the scorer gave
their nearest colour: a washed top that took its side face's colour keeps it."""

from __future__ import annotations

import numpy as np
import pytest

from companion.rules import Site
from companion.vision import sites
from companion.vision.colours import ColourModel, srgb_to_feature
from companion.vision.evaluate import compare
from companion.vision.reader import read_image
from companion.vision.sites import SiteResult, recolour_tops
from tests.vision.readings import recolour_all_by_nearness

SHIPPED = {"red": (190, 35, 40), "black": (35, 35, 38)}
#: the colours as a photo's confident tops re-centred them: red darker, black greyer
REFITTED = {"red": (120, 50, 55), "black": (90, 85, 88)}
PINK = (240, 200, 205)  # a red top in a lamp's mirror image: nearest black
DARK_RED = (70, 40, 42)  # nearest black under the shipped colours, red under the refit


def _top(site: str, height: int, colour: str | None, rgb: tuple[int, int, int]) -> SiteResult:
    return SiteResult(Site.parse(site), height, colour, top_feature=srgb_to_feature(rgb))


def test_only_a_top_given_its_nearest_colour_is_decided_again() -> None:
    model, fitted = ColourModel.from_rgb(SHIPPED), ColourModel.from_rgb(REFITTED)
    pink, dark = (srgb_to_feature(c)[None] for c in (PINK, DARK_RED))
    # the premises: which colour is nearest each top, before and after the refit
    assert [int(np.argmin(m.distance2(pink))) for m in (model, fitted)] == [1, 1]
    assert [int(np.argmin(m.distance2(dark))) for m in (model, fitted)] == [1, 0]
    results = [_top("1NE", 2, "red", PINK),  # red from its side face, not nearness
               _top("2SW", 1, "black", DARK_RED),  # black as the nearest colour
               SiteResult(Site.parse("0C"), 0, None)]
    recolour_tops(results, model, fitted)
    assert [(r.height, r.color) for r in results] == [(2, "red"), (1, "red"), (0, None)]


def test_a_pink_washed_red_top_keeps_its_side_faces_red(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    from tests.vision.raycast import shoot

    image, truth = shoot(14, "mounted")  # 72 degrees, a warm lamp's mirror image
    cols = truth["expected"]["colors"]
    site = Site.parse("1NE")
    assert {Site.from_json(e): (e["height"], e["owner"])
            for e in truth["board"]["sites"]}[site] == (2, "red")
    reading = read_image(image, None, cols)
    assert (reading.sites[site].height, reading.sites[site].owner) == (2, "red")
    monkeypatch.setattr(sites, "recolour_tops", recolour_all_by_nearness)
    before = read_image(image, None, cols)
    assert (before.sites[site].height, before.sites[site].owner) == (2, "black")
    now, was = (compare(x.to_json(), truth) for x in (reading, before))
    assert (now["wrong"], now["unseen_visible"]) == (was["wrong"] - 1, was["unseen_visible"])
