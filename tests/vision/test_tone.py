"""A photo's tone curve: colours read under another camera's contrast.

Cameras and renderers differ in contrast; a steeper curve than the nominal
colours assume turned blue towers into empty sites. The reader fits one tone
exponent to the tops it reads surely and reads again under it.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.colours import (
    ColourModel,
    _colours_key,
    _toned_stack,
    fit_tone,
    srgb_to_feature,
    toned_rgb,
)
from companion.vision.evaluate import compare
from companion.vision.reader import read_image
from companion.vision.settings import section

CLASSIC = {"red": (190, 35, 40), "blue": (35, 75, 170), "green": (40, 140, 70),
           "black": (35, 35, 38)}


def _steeper(image: np.ndarray, exponent: float) -> np.ndarray:
    lut = (255 * (np.arange(256) / 255.0) ** exponent).round().astype(np.uint8)
    return cv2.LUT(image, lut)


def test_a_toned_colour_is_the_nominal_one_raised_relative_to_the_paper() -> None:
    assert toned_rgb((245, 122.5, 0), 1.0) == [245.0, 122.5, 0.0]
    assert toned_rgb((245, 122.5, 0), 2.0) == [245.0, 61.25, 0.0]
    # a lift adds a share of the paper to everything, the paper staying the paper
    assert toned_rgb((245, 122.5, 0), 1.0, 0.1) == pytest.approx([245.0, 134.75, 24.5])


def test_a_raised_black_the_tops_were_made_with_is_found() -> None:
    samples = [(n, srgb_to_feature(toned_rgb(c, 1.0, 0.12))) for n, c in CLASSIC.items()
               for _ in range(2)]
    found, lift, cost, at_one = fit_tone(samples, CLASSIC, section("tone"))
    assert (found, lift) == (1.0, 0.12)
    assert cost < 0.05 < 1.0 < at_one
    # without lifts to try, a flatter curve is the best it can say
    found, lift, _, _ = fit_tone(samples, CLASSIC, {**section("tone"), "lifts": None})
    assert lift == 0.0 and found < 0.85


def test_a_steeper_curve_with_a_lift_is_not_taken_for_haze() -> None:
    # black plastic with a sheen looks lifted in an otherwise contrasty photo
    samples = [(n, srgb_to_feature(toned_rgb(c, 1.3, 0.1))) for n, c in CLASSIC.items()
               for _ in range(2)]
    found, lift, _, _ = fit_tone(samples, CLASSIC, section("tone"))
    assert (found, lift) == (1.0, 0.0)


@pytest.mark.parametrize(("ink", "colours", "expected"), [
    (0.25, CLASSIC, [0.08, 0.18, 0.02]),  # the ink lifted 0.19 over its own 0.06
    (0.10, CLASSIC, None),  # ink as dark as ink is: a washed-out photo, not a hazy one
    (0.45, CLASSIC, [0.08, 0.2, 0.02]),
    (0.25, {"orange": (235, 120, 30), "yellow": (240, 200, 40)}, None),  # nothing dark
])
def test_lifts_are_tried_only_as_far_as_the_markers_ink_is_lifted(
        ink: float, colours: dict[str, tuple[int, int, int]], expected: list[float] | None
        ) -> None:
    from companion.vision.colours import WhiteBalance
    from companion.vision.reader import _lift_range

    wb = WhiteBalance(np.full(3, 200.0), np.full(3, 200.0 * ink))
    got = _lift_range(colours, wb, section("tone"))
    assert got == (pytest.approx(expected) if expected else None)


@pytest.mark.parametrize("exponent", [0.7, 1.0, 1.4])
def test_the_exponent_the_tops_were_made_with_is_found(exponent: float) -> None:
    # every top exactly as its colour looks under the exponent
    samples = [(n, srgb_to_feature(toned_rgb(c, exponent))) for n, c in CLASSIC.items()
               for _ in range(2)]
    found, lift, cost, at_one = fit_tone(samples, CLASSIC, section("tone"))
    assert (found, lift) == (exponent, 0.0)
    assert cost < 0.05  # black's own faint tint, against a grey class
    assert (at_one > 1.0) == (exponent != 1.0)


def test_one_exponent_fits_all_colours_so_one_odd_top_cannot_drag_it() -> None:
    samples = [(n, srgb_to_feature(toned_rgb(c, 1.3))) for n, c in CLASSIC.items()]
    samples += [(n, srgb_to_feature(toned_rgb(c, 1.3))) for n, c in CLASSIC.items()]
    samples.append(("green", srgb_to_feature((200, 200, 60))))  # a sheened, yellowed green
    found, lift, _, _ = fit_tone(samples, CLASSIC, section("tone"))
    assert (found, lift) == (1.3, 0.0)


def _tone_cost_curve_by_curve(samples, colours, exponent: float, lift: float) -> float:
    """fit_tone's cost of one curve, made with each colour class's own distance."""
    cfg = section("tone")
    spread = np.array([*[cfg["centre_sigma"][0]] * 2, cfg["centre_sigma"][1]])
    classes = ColourModel.from_rgb({n: toned_rgb(c, exponent, lift)
                                    for n, c in colours.items()}).classes
    total = 0.0
    for j, name in enumerate(colours):
        x = np.array([f for n, f in samples if n == name]).reshape(-1, 3)
        if len(x):
            e2 = (((x - classes[j].mean) / spread) ** 2).sum(axis=1)
            total += float(np.minimum(classes[j].distance2(x), cfg["cap_d2"]).sum()
                           + cfg["centre_weight"] * np.minimum(e2, cfg["centre_cap"]).sum())
    return total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_whole_grid_scored_at_once_costs_what_each_curve_does(seed: int) -> None:
    # the grid of curves is scored as arrays; each curve must cost (to the bit) what
    # its colour classes' own distances give, or the fit could pick another curve
    rng = np.random.default_rng(seed)
    colours = {**CLASSIC, "yellow": (230, 200, 40)}
    samples = [(n, srgb_to_feature(toned_rgb(c, 1.2)) + rng.normal(0, [0.05, 0.05, 0.4]))
               for n, c in colours.items() for _ in range(int(rng.integers(1, 6)))]
    cfg = section("tone")
    for lift in (0.0, 0.12):
        extra = {"lifts": None} if lift == 0 else {"lifts": [lift, lift, 0.02],
                                                   "lifts_only": True, "lift_max_exponent": 2.0}
        found, got_lift, cost, _ = fit_tone(samples, colours, {**cfg, **extra})
        lo, hi, step = cfg["exponents"]
        grid = np.round(np.arange(lo, hi + step / 2, step), 6)
        costs = [_tone_cost_curve_by_curve(samples, colours, float(p), lift) for p in grid]
        k = int(np.argmin(costs))
        assert (found, got_lift, cost) == (float(grid[k]), lift, costs[k])
    # and each top's distance itself, to the bit, at every curve of the grid
    x = np.array([f for _, f in samples])
    ps = tuple(float(p) for p in grid)
    for j, name in enumerate(colours):
        stack = _toned_stack(_colours_key(colours), ps, 0.0, j).distance2(x)
        for k, p in enumerate(ps):
            own = ColourModel.from_rgb({n: toned_rgb(c, p) for n, c in colours.items()})
            assert np.array_equal(stack[k], own.classes[j].distance2(x)), (name, p)


def test_the_toned_model_is_the_nominal_model_at_exponent_one() -> None:
    a = ColourModel.from_rgb(CLASSIC)
    b = ColourModel.from_rgb({n: toned_rgb(c, 1.0) for n, c in CLASSIC.items()})
    for x, y in zip(a.classes, b.classes, strict=True):
        assert np.allclose(x.mean, y.mean)


@pytest.fixture(scope="module")
def steep_photo():
    """A mounted frame (seed 7) shown with a tone curve 1.4 times steeper."""
    r = sample_photo(7, "mounted")
    return r, _steeper(r.image, 1.4)


def test_a_steeper_camera_is_read_as_the_nominal_one_is(steep_photo) -> None:
    r, steep = steep_photo
    cols = r.truth["expected"]["colors"]
    nominal = read_image(r.image, r.truth["camera"], cols)
    toned = read_image(steep, r.truth["camera"], cols)
    assert nominal.tone == 1.0
    assert toned.tone == 1.3
    # both (1, 0) before a storey more or less within a point of the reading made it
    # unseen (sites.storey_doubt_margin): three heights each, the nominal one's wrong
    # one among them; (0, 3), (1, 3) before a narrow tower whose side is nearly as
    # bright as its top went to unseen (sites.bright_side_margin: a right 2-storey
    # black in the nominal one, the toned one's wrong 7-storey black); the toned one
    # (0, 4) before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight)
    got = [compare(reading.to_json(), r.truth) for reading in (nominal, toned)]
    assert [(res["wrong"], res["unseen_visible"]) for res in got] == [(0, 4), (0, 3)]


def test_without_the_tone_fit_the_steeper_camera_loses_towers(steep_photo) -> None:
    r, steep = steep_photo
    cols = r.truth["expected"]["colors"]
    off = read_image(steep, r.truth["camera"], cols, {"tone": {"enabled": False}})
    assert off.tone == 1.0
    res = compare(off.to_json(), r.truth)
    # (7, 4) before a reading that beat a far different one by a hair went to unseen
    # (sites.empty_doubt_margin, tower_doubt_margin); (4, 8) before
    # sites.storey_doubt_margin; (4, 11) before a narrow tower whose side is nearly as
    # bright as its top went to unseen (sites.bright_side_margin: three wrong black
    # towers and a right one): 15 sites unseen against the nominal read's 4
    assert (res["wrong"], res["unseen_visible"]) == (1, 15)


def test_a_calibrated_colour_model_is_read_as_given(steep_photo) -> None:
    # a model calibrated from samples already has the camera's curve: no second guess
    r, steep = steep_photo
    from companion.vision.geometry import board_geometry

    model = ColourModel.for_colours(board_geometry(), r.truth["expected"]["colors"])
    reading = read_image(steep, r.truth["camera"], model)
    assert reading.tone == 1.0


def _hazy(image: np.ndarray) -> np.ndarray:
    """Flare: a fifth of the paper's level added to everything, the rest dimmed."""
    return np.clip(0.8 * image.astype(np.float32) + 40, 0, 255).astype(np.uint8)


def test_a_hazy_photo_has_its_raised_black_taken_off() -> None:
    # sim frame of seed 13 (classic colours): the flattened blacks read as a flatter curve
    # alone cost five towers; the lift taken off the photo reads it as the nominal one
    r = sample_photo(13, "mounted")
    cols = r.truth["expected"]["colors"]
    assert "black" in cols
    hazy = _hazy(r.image)
    nominal = read_image(r.image, r.truth["camera"], cols)
    lifted = read_image(hazy, r.truth["camera"], cols)
    curve = read_image(hazy, r.truth["camera"], cols, {"tone": {"lifts": None}})
    assert (nominal.lift, nominal.tone) == (0.0, 1.0)
    assert (lifted.lift, lifted.tone) == (0.2, 1.0)
    # (0, 2) lifted and a curve of 0.7 before a lone tower the print check refutes
    # the empty site for was read (sites.covered_tower_margin): one more top to fit.
    # A pair of covered neighbours is read as towers too (sites.covered_tower_cluster:
    # (1, 2) and (6, 5) while any covered neighbour kept a site unseen)
    assert (curve.lift, curve.tone) == (0.0, 0.65)
    got = [compare(x.to_json(), r.truth) for x in (nominal, lifted, curve)]
    # [(1, 1), (0, 1), (6, 3)] before a reading that beat a far different one by a hair
    # went to unseen (sites.empty_doubt_margin, tower_doubt_margin); [(0, 3), (0, 3),
    # (6, 5)] before a storey more or less within a point of the reading made it
    # unseen (sites.storey_doubt_margin); [(0, 4), (0, 4), (3, 9)] while every top
    # seen without its foot and scoring under 14 was unseen
    # (sites.foot_hidden_keep_score: right ones here); (3, 8) read by the curve
    # before a cast was fitted with it (tone.gains); (3, 6) before a one-storey tower
    # on a footprint that looks like the board went to unseen (sites.board_foot_doubt:
    # a right one here); (3, 7) by the curve before a narrow tower whose side is
    # nearly as bright as its top went to unseen (sites.bright_side_margin: two wrong
    # black towers and a right one)
    assert [(c["wrong"], c["unseen_visible"]) for c in got] == [(0, 4), (0, 3), (1, 10)]
    assert [c["cards_missed"] for c in got] == [0, 0, 0]


def test_a_flat_cameras_cards_are_read_under_its_tone() -> None:
    # the sim frame of seed 4 under a curve half as steep: the red cells wash out
    # to pink below the cards' red threshold, unless taken back to the nominal curve
    from companion.rules import Seat
    from companion.vision.cards import read_cards
    from companion.vision.geometry import board_geometry

    r = sample_photo(4, "mounted")
    flat = _steeper(r.image, 0.5)
    reading = read_image(flat, r.truth["camera"], r.truth["expected"]["colors"])
    assert (reading.tone, reading.lift) == (0.5, 0.0)
    expected = {Seat(s): tuple(c["cell"]) for s, c in r.truth["expected"]["cards"].items()}
    assert len(expected) == 4 and reading.cards == expected
    untoned = read_cards(flat, reading.pose, board_geometry(), reading.wb,
                         {"weak_pair_margin": None}, tone=1.0)
    assert untoned == {}
    # the pale pairs (cards.weak_pair_margin) read two of them even so, right
    pale = read_cards(flat, reading.pose, board_geometry(), reading.wb, tone=1.0)
    assert pale == {Seat.W: expected[Seat.W], Seat.N: expected[Seat.N]}


def _muted(image: np.ndarray, factor: float = 0.6) -> np.ndarray:
    """A muted camera: every colour's saturation (HSV) times ``factor``."""
    hsv = cv2.cvtColor(image, cv2.COLOR_BGR2HSV).astype(np.float32)
    hsv[..., 1] *= factor
    return cv2.cvtColor(np.clip(hsv, 0, 255).astype(np.uint8), cv2.COLOR_HSV2BGR)


def test_a_muted_cameras_cards_are_read_at_its_saturation() -> None:
    # the sim frame of seed 4 with every colour at 0.6 of its saturation: the red
    # cells fall below the cards' red threshold unless it is lowered with the tops'
    from companion.rules import Seat
    from companion.vision.reader import _saturation
    from companion.vision.settings import merged_config

    r = sample_photo(4, "mounted")
    cols = r.truth["expected"]["colors"]
    expected = {Seat(s): tuple(c["cell"]) for s, c in r.truth["expected"]["cards"].items()}
    tone = merged_config(None)["tone"]
    nominal = read_image(r.image, r.truth["camera"], cols)
    assert nominal.cards == expected and len(expected) == 4
    assert 0.95 < _saturation(nominal.details, nominal.model, tone) < 1.05
    muted = _muted(r.image)
    reading = read_image(muted, r.truth["camera"], cols)
    assert 0.6 < _saturation(reading.details, reading.model, tone) < 0.75
    assert reading.cards == expected
    fixed = read_image(muted, r.truth["camera"], cols, {"cards": {"saturation_keep": 0.0,
                                                                  "red_grow": 1.0}})
    assert fixed.cards == {}
    # the red cells' cores grown (cards.red_grow) read the N card even so, right
    grown = read_image(muted, r.truth["camera"], cols, {"cards": {
        "saturation_keep": 0.0, "weak_pair_margin": None}})
    assert grown.cards == {Seat.N: expected[Seat.N]}
    # and the pale pairs (cards.weak_pair_margin) the other three, right
    pale = read_image(muted, r.truth["camera"], cols, {"cards": {"saturation_keep": 0.0}})
    assert pale.cards == expected


@pytest.mark.parametrize(("floor", "expected"), [
    (1.0, [0.08, 0.18, 0.02]),  # only the ink bounds it
    (0.17, [0.08, 0.16, 0.02]),  # no pixel darker than 0.17 of the paper: at most 0.16
    (0.15, None),  # the darkest pixels well below the ink (0.25): dark print, not flare
    (0.05, None),  # deep shadows nearly black: no flare lifts this photo
])
def test_lifts_are_tried_only_as_far_as_the_darkest_pixels_are_lifted(
        floor: float, expected: list[float] | None) -> None:
    from companion.vision.colours import WhiteBalance
    from companion.vision.reader import _lift_range

    wb = WhiteBalance(np.full(3, 200.0), np.full(3, 50.0))
    got = _lift_range(CLASSIC, wb, section("tone"), floor)
    assert got == (pytest.approx(expected) if expected else None)


def test_the_dark_floor_is_the_darkest_half_percent_against_the_paper() -> None:
    from companion.vision.colours import WhiteBalance
    from companion.vision.reader import _dark_floor

    wb = WhiteBalance(np.array([200.0, 200.0, 250.0]), np.full(3, 50.0))
    rng = np.random.default_rng(3)
    image = rng.integers(60, 256, (100, 200, 3)).astype(np.uint8)
    assert _dark_floor(image, wb, section("tone")) == pytest.approx(
        np.mean([60 / 200, 60 / 200, 60 / 250]), abs=0.01)
    image[:2, :] = 0  # 2% of the photo black: a deep shadow
    assert _dark_floor(image, wb, section("tone")) == 0.0
    assert _dark_floor(image, wb, {**section("tone"), "lift_floor_percent": 0}) == 1.0


def test_a_camera_that_lifts_its_darks_but_not_its_shadows_is_not_dehazed() -> None:
    # the ray-traced renderer's mounted frame 14: a tone curve and a glossy black plastic
    # make the tops fit a lift of 0.2 of the paper, but its deep shadows are black;
    # taking the lift off crushes them and leaves 23 visible sites unseen. (Frame 16
    # was this case, 20 unseen, until the board's outline refined its pose from three
    # markers: the tops then fit a lift of 0.12, and taking it off costs one site.
    # (4, 11) and (7, 30) before a top brighter than its side was read by the side's
    # colour, sites.glare_log: 1NE, a 2-storey red washed pink, is unseen, not empty)
    from tests.vision.raycast import shoot

    image, truth = shoot(14, "mounted")
    cols = truth["expected"]["colors"]
    read = read_image(image, None, cols)
    old = read_image(image, None, cols, {"tone": {"lift_floor_percent": 0}})
    assert (read.lift, old.lift) == (0.0, 0.2)
    got = [compare(x.to_json(), truth) for x in (read, old)]
    # (7, 28) before the close rule (sites.tower_doubt_margin): one wrong site unseen
    # [(3, 12), (6, 29)] while sites.steep_storey_mm was 2 mm, not the profile's
    # placement jitter (3 mm); lifts 0.18 and [(3, 13), (6, 29)] while the print was
    # learnt from every site read empty, not the sure ones (sites.print_template_margin:
    # the towers it tells from the print join the tone fit); [(3, 14), (7, 23)] while
    # the steep-view limit was that jitter, not a third more (sites.steep_jitter_factor);
    # [(3, 21), (5, 26)] while the detector's finer look ran only with under two markers
    # found (pose.retry): marker 0 is now found too, the pose from four markers;
    # (2, 20) before a cast was fitted to the tops (tone.gains: red 1.35); (3, 28) before
    # a tower that beat the empty site by under half a point went to unseen
    # (sites.tower_empty_doubt_margin: a right one); (3, 29) for the lifted read while
    # an empty site won by a hair passed a half match of the print (a tower read empty
    # there, unseen since: sites.print_close_ncc)
    # (blue 1.05 before the empty site lost points on a plastic footprint, from the
    # tops read then: sites.empty_plastic_weight)
    assert read.gains == (1.35, 1.1)
    # [(3, 17), (2, 30)] before the empty site lost points on a plastic footprint
    # (sites.empty_plastic_weight); (2, 19) for the read while the refit decided every
    # top's colour again by nearness (sites.recolour_tops: 1NE, the 2-storey red washed
    # pink, read red by its side face and reported black)
    assert [(c["wrong"], c["unseen_visible"]) for c in got] == [(1, 19), (3, 28)]


def test_with_few_sure_tops_the_tops_won_by_a_little_fit_the_curve() -> None:
    # the ray-traced renderer's mounted frame 9206 (78 degrees, a night board, a flat
    # curve) compressed once more at JPEG quality 70: no top is won by the margin of
    # 3 under the nominal colours (three are in the frame as rendered), so no curve
    # was fitted and it was read at the nominal one. With fewer than three sure tops
    # the uniform tops won by 1 or more vote (tone.fallback_margin): 0.55, as the
    # frame itself reads at 0.5
    from tests.vision.raycast import shoot as raycast_shoot

    image, truth = raycast_shoot(9206, "mounted")
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 70])
    assert ok
    jpeg = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    tally = []
    for config in (None, {"tone": {"fallback_margin": None}}):
        reading = read_image(jpeg, None, truth["expected"]["colors"], config)
        out = compare(reading.to_json(), truth)
        tally.append((reading.tone, out["visible_sites"], out["wrong"], out["unseen_visible"]))
    # (0.55, 54, 6, 13) before a one-storey tower on a footprint that looks like the
    # board went to unseen (sites.board_foot_doubt: a right one here); (6, 14) while an
    # empty site that won by a hair was doubted whatever its footprint showed
    # (sites.empty_doubt_board: an empty site read, and a tower read empty); (7, 12)
    # before a site found hidden behind a first reading that later changed was read
    # again (sites.uncover_margin: a right one); the nominal curve's (11, 8) before the
    # empty site lost points on a plastic footprint (sites.empty_plastic_weight);
    # [(0.55, 54, 7, 11), (1.0, 54, 12, 7)] before marker 3's edges were fitted beside
    # the other three's corners (outline.refine_by_marker_edges: the sites' axes 300
    # mm up 14 -> 5 px off)
    assert tally == [(0.55, 54, 3, 13), (1.0, 54, 7, 9)]
