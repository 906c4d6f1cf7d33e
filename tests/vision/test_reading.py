"""The reader on rendered frames (companion.sim): every camera side, low (40 deg) and
high (82 deg) cameras, warm and cold lamps, tall occluding towers and both colour
sets; a hand over the board; clean errors when there is no board.

Each frame is seeded. Where the reader is exact the test says so; elsewhere it pins
the error counts measured when the test was written (``BOUNDS``), so any regression
fails. Known weaknesses, on this renderer:
- at 82 deg the side faces are a few pixels tall: heights come out one or two
  storeys short (cases W82, E82, S82), and where a storey moves a top by under
  2 mm of placement and a tower a storey off scores close, the site is reported
  unseen (``sites.steep_storey_mm``): 19 of the 28 wrong sites, with 8 right ones;
- at 40-45 deg behind tall towers a few hidden sites are still guessed
  (``hidden_read`` 2 in E45; the goal is 0), and towers whose foot is
  hidden are reported unseen even when their top is in view (``unseen``) unless
  that top fits very well (``sites.foot_hidden_score``: E45 1 unseen, 2 guessed,
  against 2 and 1 without it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from companion.controller import DiffMotionGate
from companion.rules.board import Site
from companion.rules.topology import Seat
from companion.sim import Lighting, look_at_camera, render
from companion.sim.camera import SEAT_AZIMUTH, intrinsics_matrix, spherical_eye
from companion.sim.scene import random_hand
from companion.sim.scenes import random_scene
from companion.vision.change import ArmWatch
from companion.vision.errors import BoardNotFoundError, VisionError
from companion.vision.evaluate import compare
from companion.vision.reader import read_image

# name: seat, elevation (deg), lamp (K), colour set, tall towers, seed
CASES: dict[str, tuple[str, float, float, str, bool, int]] = {
    "S40-warm-classic-tall": ("S", 40, 2700, "classic", True, 1),
    "W82-cold-2017": ("W", 82, 6500, "2017", False, 2),
    "N60-warm-2017-tall": ("N", 60, 2900, "2017", True, 3),
    "E82-cold-classic-tall": ("E", 82, 6300, "classic", True, 4),
    "S82-cold-2017-tall": ("S", 82, 6500, "2017", True, 5),
    "W40-warm-classic-tall": ("W", 40, 2800, "classic", True, 6),
    "N40-cold-classic": ("N", 40, 6500, "classic", False, 7),
    "E45-warm-2017-tall": ("E", 45, 2700, "2017", True, 8),
}

#: measured (wrong visible sites, visible sites reported unseen, hidden sites guessed);
#: "close:" what the case read before a reading that beat a far different one by a
#: hair went to unseen (sites.empty_doubt_margin, tower_doubt_margin)
BOUNDS: dict[str, tuple[int, int, int]] = {
    # (2, 7, 2) before the board's outline refined the pose of its two markers;
    # close: (3, 2, 0); (1, 4, 0) before a tower that beat the empty site by under
    # half a point went to unseen (sites.tower_empty_doubt_margin: a wrong one);
    # (0, 5, 0) before the other two markers' edges were fitted too (the camera 9.8
    # mm off, now 0.3: outline.refine_by_marker_edges), where 5W, hidden, is read a
    # 10-storey red
    "S40-warm-classic-tall": (0, 4, 1),
    # (9, 1, 0) before sites.steep_storey_mm; (3, 12, 0) while it was 2 mm, not the
    # profile's placement jitter (3 mm)
    "W82-cold-2017": (3, 14, 0),
    "N60-warm-2017-tall": (0, 1, 0),  # (0, 0, 0) before sites.storey_doubt_margin
    # (14, 4, 0) before sites.steep_storey_mm; (13, 2, 0) with its k1 fitted (-0.095);
    # close: (6, 15, 0); (4, 17, 0) while sites.steep_storey_mm was 2 mm
    "E82-cold-classic-tall": (3, 18, 0),
    # (5, 0, 0) before sites.steep_storey_mm; (0, 5, 0) at the profile's jitter, not a
    # third more (sites.steep_jitter_factor: two right heights unresolved)
    "S82-cold-2017-tall": (0, 7, 0),
    # close: (1, 4, 0); (0, 5, 0) before a cast was fitted to the tops (tone.gains:
    # 1.15 red here)
    "W40-warm-classic-tall": (0, 5, 1),
    "N40-cold-classic": (0, 0, 0),
    # (0, 1, 2) with its k1 fitted (-0.154); close: (1, 1, 2); (0, 4, 2) before a
    # storey more or less within a point of the reading made it unseen
    # (sites.storey_doubt_margin)
    "E45-warm-2017-tall": (0, 4, 1),
}

#: measured card stacks the reader left out (a card is never misread)
CARDS_MISSED = {"N40-cold-classic": 1}


def _camera(seat: str, elevation: float) -> Any:
    w, h = 1280, 720
    eye = spherical_eye(900.0, elevation, SEAT_AZIMUTH[Seat(seat)])
    return look_at_camera(eye, (0.0, 0.0, 0.0), width=w, height=h,
                          K=intrinsics_matrix(w, h, 64.0),
                          dist=np.array([-0.03, 0.01, 0.0, 0.0, 0.0]))


def _render(name: str, hands: int = 0) -> Any:
    seat, elevation, kelvin, colours, tall, seed = CASES[name]
    rng = np.random.default_rng([seed, 7])
    scene = random_scene(rng, colours, tall)
    light = Lighting(kelvin=kelvin, ambient_kelvin=kelvin, light_pos=(200.0, -300.0, 1200.0),
                     awb=0.5)
    hand_list = [random_hand(np.random.default_rng([seed, 8, k]), scene.board)
                 for k in range(hands)]
    return render(scene, _camera(seat, elevation), light, rng=rng, hands=hand_list,
                  noise=0.006, blur=0.6)


@pytest.fixture(scope="module")
def readings() -> dict[str, tuple[Any, Any]]:
    out = {}
    for name in CASES:
        r = _render(name)
        out[name] = (r, read_image(r.image, None, r.truth["expected"]["colors"]))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_reading_errors_stay_within_the_measured_bounds(readings, name):
    rendered, reading = readings[name]
    res = compare(reading.to_json(), rendered.truth)
    wrong, unseen, hidden_read = BOUNDS[name]
    assert res["visible_sites"] >= 36  # the set really covers most of the board
    assert res["wrong"] <= wrong
    assert res["unseen_visible"] <= unseen
    assert res["hidden_read"] <= hidden_read
    # cards: never misread, never invented; a stack the reader is unsure of is left out
    assert res["cards_wrong"] == 0 and res["cards_extra"] == 0
    assert res["cards_missed"] <= CARDS_MISSED.get(name, 0)


def test_the_set_covers_sides_elevations_lamps_colour_sets_and_tall_towers(readings):
    seats = {c[0] for c in CASES.values()}
    assert seats == {"S", "W", "N", "E"}
    assert {c[1] for c in CASES.values()} >= {40, 82}
    assert min(c[2] for c in CASES.values()) <= 2800 and max(c[2] for c in CASES.values()) >= 6300
    assert {c[3] for c in CASES.values()} == {"classic", "2017"}
    for name, (rendered, reading) in readings.items():
        assert reading.colors == rendered.truth["expected"]["colors"]
        if CASES[name][4]:
            assert max(s["height"] for s in rendered.truth["board"]["sites"]) >= 15
            assert rendered.truth["expected"]["unseen"] or CASES[name][1] >= 80


def test_an_unoccluded_board_is_read_exactly(readings):
    rendered, reading = readings["N40-cold-classic"]
    expected = {Site(e["city"], e["row"], e["col"]): (e["height"], e["owner"])
                for e in rendered.truth["expected"]["sites"]}
    got = {s: (v.height, v.owner) for s, v in reading.sites.items()}
    assert got == expected
    assert reading.unseen == []


def test_top_colours_hold_under_warm_and_cold_lamps(readings):
    # wherever the height is right, the colour is right too (colour is the easy half)
    for name, (rendered, reading) in readings.items():
        truth = {Site(e["city"], e["row"], e["col"]): (e["height"], e["owner"])
                 for e in rendered.truth["expected"]["sites"]}
        for site, view in reading.sites.items():
            if site in truth and truth[site][0] == view.height:
                assert view.owner == truth[site][1], (name, site)


# -- hands ---------------------------------------------------------------------

#: measured towers read on sites a hand covers, in a photo (replay); the goal is 0.
#: Skin under a warm lamp is close to the 2017 set's orange, and the hand's shadow
#: to black: the empty-site check (sites.py) catches most, not all.
HAND_TOWERS = {"S40-warm-classic-tall": 0, "N60-warm-2017-tall": 1, "S82-cold-2017-tall": 3}


def test_a_top_whose_foot_is_hidden_is_reported_when_it_fits_very_well(readings):
    # E45 behind tall towers: six tops whose feet nearer towers hide. Three fit
    # well enough (score 14 or more): two are right, one is a farther top seen
    # over a hidden empty site (the gate's known cost); the three that fit less
    # stay unseen, as every one of them did before the gate. (Since the fitted k1 is
    # left out, 4NW's foot shows and 4W's does not: it was measured with 4NW among them)
    rendered, reading = readings["E45-warm-2017-tall"]
    colours = rendered.truth["expected"]["colors"]
    before = read_image(rendered.image, None, colours, {"sites": {
        "foot_hidden_score": 1e9, "foot_hidden_keep_score": None}})
    names = sorted(str(r.site) for r in before.details if r.reason == "foot hidden")
    assert names == ["0SW", "3NE", "3S", "4W", "5C", "5W"]
    got = {str(s): (v.height, v.owner) for s, v in reading.sites.items()}
    assert (got["0SW"], got["4NW"], got["3S"]) == ((5, "blue"), (6, "purple"), (7, "yellow"))
    assert sorted(str(s) for s in reading.unseen if str(s) in names) == ["3NE", "4W", "5C", "5W"]
    truth = {str(Site.from_json(e)): (e["height"], e["owner"])
             for e in rendered.truth["board"]["sites"]}
    assert (truth["0SW"], truth["4NW"], truth.get("3S")) == ((5, "blue"), (6, "purple"), None)


@pytest.mark.parametrize("name", list(HAND_TOWERS))
def test_a_hand_over_the_board_is_never_read_as_towers(name):
    still = _render(name)
    hand = _render(name, hands=1)
    assert hand.truth["hands"]
    # the live path: the controller's motion gate flags the hand, so that frame is not read
    live = DiffMotionGate()
    live.update(still.image, 0.0)  # the first frame has nothing to compare with
    assert not live.update(still.image, 1 / 15)
    assert live.update(hand.image, 2 / 15)
    # a hand resting still passes that gate: the arm watch, against the last scene
    # read, holds it back
    arm = ArmWatch()
    arm.settle(still.image, read_image(still.image, None, still.truth["expected"]["colors"]).pose)
    assert not arm.check(still.image)
    assert arm.check(hand.image), arm.last
    # a photo with a hand in it: what the hand covers should be unseen, not towers
    reading = read_image(hand.image, None, hand.truth["expected"]["colors"])
    board = {Site(e["city"], e["row"], e["col"]): (e["height"], e["owner"])
             for e in hand.truth["board"]["sites"]}
    covered = ({Site(e["city"], e["row"], e["col"]) for e in hand.truth["expected"]["unseen"]}
               - {Site(e["city"], e["row"], e["col"]) for e in still.truth["expected"]["unseen"]})
    assert covered, "the hand should cover some sites"
    invented = [s for s in covered if s in reading.sites
                and (reading.sites[s].height, reading.sites[s].owner) != board.get(s)]
    assert len(invented) <= HAND_TOWERS[name], invented


# -- no board ------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["grey", "noise", "table"])
def test_no_board_is_a_clean_vision_error(kind):
    rng = np.random.default_rng(5)
    if kind == "grey":
        image = np.full((540, 960, 3), 128, np.uint8)
    elif kind == "noise":
        image = rng.integers(0, 256, (540, 960, 3), dtype=np.uint8)
    else:  # the table with the board out of frame: the camera looks away
        rendered = _render("N40-cold-classic")
        image = rendered.image[:200, :200].copy()
    with pytest.raises(BoardNotFoundError) as info:
        read_image(image)
    assert isinstance(info.value, VisionError) and isinstance(info.value, ValueError)
    assert "\n" not in str(info.value) and "board" in str(info.value)
