"""A cast the markers' white balance leaves on the plastic is fitted to the tops.

The markers' paper sets the white balance, but the plastic may be lit by
another mix of lamp and room light, or come out of another camera's (or
renderer's) colour pipeline: its colours keep a cast. The reader fits red and
blue gains (relative to green) on the nominal colours to its surest tops,
each top counted at the colour it fits best, and reads the sites again under
them when they fit clearly better (``tone.gains``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from companion.vision.colours import (
    _colours_key,
    _toned_classes,
    features,
    fit_gains,
    gains_costs,
    toned_rgb,
)
from companion.vision.evaluate import compare
from companion.vision.geometry import board_geometry
from companion.vision.reader import _fit_gains, read_image
from companion.vision.reductions import min_last, sum_last

CONFIG = json.loads((Path(__file__).parents[2] / "companion" / "vision" / "config.json")
                    .read_text(encoding="utf-8"))["tone"]


def _colours(*names: str) -> dict[str, tuple[int, int, int]]:
    g = board_geometry()
    return {n: g.colours[n] for n in names}


def _tops(colours: dict[str, tuple[int, int, int]], gains: tuple[float, float], n: int,
          seed: int) -> list[np.ndarray]:
    """Top features of each colour under a cast, lit as the paper, a little noisy.
    (Shade pales a top a little, and the fit's small pull to each colour's centre
    then takes a little red away: 0.1 of red gain for tops at 0.6-1.0 of the light.)"""
    rng = np.random.default_rng(seed)
    out = []
    for rgb in colours.values():
        r, g, b = toned_rgb(rgb, 1.0, 0.0, gains)
        f = features(np.array([[b, g, r]]) / 245.0)[0].astype(np.float64)
        for _ in range(n):
            out.append(f + rng.normal(0, [0.01, 0.01, 0.05]))
    return out


@pytest.mark.parametrize("gains", [(1.2, 0.9), (0.8, 1.0), (1.0, 1.15)])
@pytest.mark.parametrize("names", [("red", "blue", "green", "black"),
                                   ("orange", "yellow", "purple", "blue2017")])
def test_the_cast_of_the_tops_is_found(gains: tuple[float, float],
                                       names: tuple[str, ...]) -> None:
    colours = _colours(*names)
    tops = _tops(colours, gains, 4, seed=7)
    found, cost, at_one = fit_gains(tops, colours, 1.0, 0.0, {**CONFIG, "gains": [0.6, 1.6, 0.05]})
    assert found == pytest.approx(gains, abs=0.051)
    assert cost <= CONFIG["gains_gain"] * at_one


def test_tops_without_a_cast_keep_the_nominal_colours() -> None:
    colours = _colours("red", "blue", "green", "black")
    tops = _tops(colours, (1.0, 1.0), 4, seed=3)
    found, cost, at_one = fit_gains(tops, colours, 1.0, 0.0, CONFIG)
    # whatever the grid's best, it is no clear gain: the colours are read as they are
    assert cost > CONFIG["gains_gain"] * at_one or max(abs(found[0] - 1), abs(found[1] - 1)) < 0.1
    samples = [("red", t) for t in tops]
    assert _fit_gains(samples, colours, 1.0, CONFIG) == (1.0, 1.0)


def test_each_top_counts_at_the_colour_it_fits_best() -> None:
    # orange tops under a cast that takes red away look yellow, and a reader at the
    # nominal colours reads them so, surely: labelled by that reading they would vote
    # for no cast. Counted at their best colour under each gains, they find it.
    colours = _colours("orange", "yellow", "purple", "blue2017")
    tops = _tops(colours, (0.7, 1.0), 4, seed=11)
    nominal = _toned_classes(_colours_key(colours), 1.0, 0.0, (1.0, 1.0))
    orange = np.array(tops[:4])
    as_read = np.argmin(np.stack([c.distance2(orange) for c in nominal]), axis=0)
    assert [nominal[k].name for k in as_read] == ["yellow"] * 4
    samples = [("yellow" if k < 4 else "other", t) for k, t in enumerate(tops)]
    assert _fit_gains(samples, colours, 1.0, {**CONFIG, "gains": [0.6, 1.6, 0.05]}) == (
        pytest.approx(0.7), 1.0)


@pytest.mark.parametrize(("names", "exponent", "gr", "gb"), [
    (("orange", "yellow", "purple", "blue2017", "black"), 0.9,
     [1.0, 0.8, 1.2, 0.6, 1.6], [1.0, 1.1, 0.75, 1.3, 0.9]),
    # casts that take green's chroma under the grey line, or nearly all of it, and
    # give black more than that (tests/vision/test_toned_grey.py): grey or not, and the
    # least saturation, as ColourModel.from_rgb makes them
    (("red", "blue", "green", "black"), 0.5, [1.0, 1.3, 1.4, 1.6, 0.8],
     [1.0, 1.1, 1.4, 1.6, 1.2]),
])
def test_the_grid_costs_are_the_colour_classes_distances(
        names: tuple[str, ...], exponent: float, gr: list[float], gb: list[float]) -> None:
    # gains_costs builds every gains' classes at once; each must cost what the
    # classes ColourModel.from_rgb makes of the toned colours say
    colours = _colours(*names)
    rng = np.random.default_rng(5)
    tops = list(rng.normal(size=(30, 3)) * [0.25, 0.25, 0.5] + [0.1, 0.0, -0.7])
    got = gains_costs(tops, colours, exponent, 0.0, np.array(gr), np.array(gb), CONFIG)
    X = np.array(tops)
    spread = np.array([CONFIG["centre_sigma"][0]] * 2 + [CONFIG["centre_sigma"][1]])
    want = []
    for a, b in zip(gr, gb, strict=True):
        classes = _toned_classes(_colours_key(colours), exponent, 0.0, (float(a), float(b)))
        each = np.stack([np.minimum(c.distance2(X), CONFIG["cap_d2"]) + CONFIG["centre_weight"]
                         * np.minimum(sum_last(((X - c.mean) / spread) ** 2),
                                      CONFIG["centre_cap"]) for c in classes])
        want.append(float(min_last(each.T).sum()))
    assert got == pytest.approx(want, rel=1e-6)


def test_too_few_tops_or_a_small_cast_change_nothing() -> None:
    colours = _colours("red", "blue", "green", "black")
    tops = _tops(colours, (1.3, 1.0), 2, seed=4)  # eight tops
    cfg = {**CONFIG, "gains": [0.6, 1.6, 0.05]}
    samples = [("red", t) for t in tops]
    assert _fit_gains(samples, colours, 1.0, cfg) == (1.3, 1.0)
    assert _fit_gains(samples, colours, 1.0, {**cfg, "gains_min_samples": 9}) == (1.0, 1.0)
    assert _fit_gains(samples, colours, 1.0, {**cfg, "gains_keep": 0.35}) == (1.0, 1.0)
    assert _fit_gains(samples, colours, 1.0, {**cfg, "gains_gain": 0.2}) == (1.0, 1.0)
    assert _fit_gains(samples, colours, 1.0, {**cfg, "gains": None}) == (1.0, 1.0)


def test_a_photo_read_under_its_cast() -> None:
    # the ray-traced renderer's mounted frame 9211 (classic colours): its tops are
    # redder against the marker paper than the nominal colours; read under the
    # cast (red 1.35) three more towers are read. (Before the empty site lost points
    # on a plastic footprint, sites.empty_plastic_weight: red 1.4, tone 0.8, and
    # [(49, 0, 4, 0), (49, 0, 7, 1)] below)
    from tests.vision.raycast import shoot

    image, truth = shoot(9211, "mounted")
    cols = truth["expected"]["colors"]
    cast = read_image(image, None, cols)
    plain = read_image(image, None, cols, {"tone": {"gains": None}})
    assert (cast.gains, plain.gains) == ((1.35, 1.0), (1.0, 1.0))
    assert cast.tone == plain.tone == 0.75
    got = [compare(r.to_json(), truth) for r in (cast, plain)]
    assert [(c["visible_sites"], c["wrong"], c["unseen_visible"], c["hidden_read"])
            for c in got] == [(49, 0, 5, 0), (49, 0, 8, 0)]
