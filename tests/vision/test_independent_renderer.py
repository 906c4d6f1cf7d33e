"""The reader on photos of the vision tests' own renderer (``synth.py``).

That renderer shares no drawing code with companion.sim (procedural board
print, per-block placement jitter and rotation, painter's algorithm, its own
lamps, lens distortion, noise and JPEG), so these photos stand in for the
independently rendered set the reader is judged on. The reader is not exact
there: the bounds below are the errors measured when this test was written,
so any regression fails. Where the errors come from is written up in
docs/vision-errors.md.
"""

from __future__ import annotations

import pytest

from companion.vision.evaluate import compare
from companion.vision.reader import read_image
from tests.vision.synth import shoot, truth_json

# name: kind, seed, lamp, colour set (elevations 51, 62, 81, 54, 43, 59 degrees)
CASES: dict[str, tuple[str, int, str, str]] = {
    "mounted-0": ("mounted", 0, "white", "classic"),
    "mounted-6": ("mounted", 6, "white", "classic"),
    "mounted-4": ("mounted", 4, "warm", "classic"),
    "phone-1": ("phone", 1, "warm", "2017"),
    "phone-5": ("phone", 5, "cold", "2017"),
    "phone-3": ("phone", 3, "white", "2017"),
}

#: measured (wrong, visible reported unseen, hidden sites read other than they are,
#: cards left out whose grids are 90% in view).
#: At 81 degrees (mounted-4) a storey moves a top by about 2 px and per-block
#: jitter by as much: heights there are off by one to nine storeys. Its marker 2
#: has a corner a shadow bent by 5 px; mending it (pose.repair_bent_corner) brought
#: the camera from 56 to 34 mm off the truth, and the sites from (16, 1) to (17, 2):
#: readings that near their decision boundary flip with any small change of pose.
#: Since the top block's side colour counts (``sites.side_colour_weight``): phone-5
#: (2, 11, 2) -> (3, 8, 4): a phantom nearer top that hid four sites is gone, the
#: 22-storey tower behind it shows and reads as 11, and two sites it truly hides are
#: read; phone-3 (3, 4, 0) -> (3, 1, 1): Manhattan E read empty, Manhattan C (26
#: storeys, its foot hidden) guessed as 10.
#: Since the board's outline refines a pose from few markers (outline.*; every case
#: here has two or three): mounted-0 (0, 4, 2) -> (1, 3, 1), mounted-6 (1, 5, 0) ->
#: (1, 3, 2), mounted-4 (11, 11) -> (9, 11), phone-5 (3, 8, 4) -> (2, 5, 1), phone-3
#: (3, 1, 1) -> (3, 1, 2).
#: Since a reading that beat a far different one by a hair is unseen ("close",
#: sites.empty_doubt_margin, tower_doubt_margin): mounted-0 (1, 3, 1) -> (1, 4, 0),
#: mounted-6 (1, 3, 2) -> (1, 3, 1), phone-5 (2, 5, 1) -> (0, 8, 1).
#: Since a storey more or less that scored within a point of the reading makes
#: it unseen too (sites.storey_doubt_margin): mounted-6 (1, 3, 1) -> (0, 4, 1),
#: mounted-4 (5, 19) -> (5, 20), phone-3 (3, 1, 2) -> (2, 3, 1).
#: Since the detector's finer look runs whenever a marker is missing, not only with
#: under two found (pose.retry): mounted-0 (1, 4, 0) -> (0, 7, 0), its marker 3 found
#: too (the camera 2.2 -> 1.1 mm off the truth).
#: Since of two tops of one colour at one place the one that won by less is unseen
#: (sites.shared_top_share): phone-3 (2, 3, 1) -> (2, 4, 1), Sydney W, a right
#: 1-storey yellow (margin 6.35), lost to Sydney C in front of it, a hidden site
#: read as a 5-storey yellow on its top (7.28).
MEASURED: dict[str, tuple[int, int, int, int]] = {
    "mounted-0": (0, 7, 0, 0),
    "mounted-6": (0, 4, 1, 0),
    # (19, 1) before sites.steep_storey_mm; 17 wrong while a k1 the markers cannot
    # tell from f was kept; (9, 11) while that limit was 2 mm, not the profile's
    # placement jitter (3 mm); (5, 17) at that jitter, not a third more
    # (sites.steep_jitter_factor)
    "mounted-4": (5, 20, 0, 0),
    "phone-1": (0, 4, 0, 0),
    "phone-5": (0, 8, 1, 0),
    "phone-3": (2, 4, 1, 0),
}


@pytest.fixture(scope="module")
def tallies() -> dict[str, dict[str, int]]:
    out = {}
    for name, (kind, seed, light, colours) in CASES.items():
        shot = shoot(seed, kind=kind, light=light, colour_set=colours)
        reading = read_image(shot.image, None, shot.scene.colors)
        out[name] = compare(reading.to_json(), truth_json(shot))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_reading_errors_stay_within_the_measured_bounds(tallies, name):
    t = tallies[name]
    wrong, unseen, hidden_read, cards_missed = MEASURED[name]
    assert t["visible_sites"] >= 35
    assert t["wrong"] <= wrong
    assert t["unseen_visible"] <= unseen
    assert t["hidden_read"] <= hidden_read
    # cards: never misread, never invented; a stack the reader is unsure of is left out
    assert t["cards_wrong"] == 0 and t["cards_extra"] == 0
    assert t["cards_missed"] <= cards_missed


def test_below_75_degrees_fewer_than_one_visible_site_in_twenty_is_wrong(tallies):
    low = [t for name, t in tallies.items() if name != "mounted-4"]
    wrong = sum(t["wrong"] for t in low)
    visible = sum(t["visible_sites"] for t in low)
    assert visible >= 200
    assert wrong * 20 < visible
