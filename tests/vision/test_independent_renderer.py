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

from typing import Any

import pytest

from companion.vision.reader import read_image
from tests.vision.synth import shoot

# name: kind, seed, lamp, colour set (elevations 51, 62, 81, 54, 43, 59 degrees)
CASES: dict[str, tuple[str, int, str, str]] = {
    "mounted-0": ("mounted", 0, "white", "classic"),
    "mounted-6": ("mounted", 6, "white", "classic"),
    "mounted-4": ("mounted", 4, "warm", "classic"),
    "phone-1": ("phone", 1, "warm", "2017"),
    "phone-5": ("phone", 5, "cold", "2017"),
    "phone-3": ("phone", 3, "white", "2017"),
}

#: measured (wrong, visible reported unseen, hidden guessed, card stacks left out).
#: At 81 degrees (mounted-4) a storey moves a top by about 2 px and per-block
#: jitter by as much: heights there are off by one to nine storeys.
MEASURED: dict[str, tuple[int, int, int, int]] = {
    "mounted-0": (0, 9, 2, 1),
    "mounted-6": (1, 9, 0, 0),
    "mounted-4": (16, 1, 0, 1),
    "phone-1": (0, 6, 2, 0),
    "phone-5": (1, 14, 2, 0),
    "phone-3": (3, 6, 1, 0),
}


def tally(shot: Any, reading: Any) -> dict[str, int]:
    """Errors of one reading against the renderer's truth (top face half visible = visible)."""
    truth = shot.scene.heights()
    unseen = set(reading.unseen)
    out = {"visible": 0, "wrong": 0, "unseen_visible": 0, "hidden_read": 0,
           "cards_wrong": 0, "cards_missed": 0, "cards_extra": 0}
    for site, vis in shot.visible.items():
        h, owner = truth.get(site, (0, None))
        if vis < 0.5:
            out["hidden_read"] += site not in unseen
            continue
        out["visible"] += 1
        if site in unseen:
            out["unseen_visible"] += 1
            continue
        got = reading.sites.get(site)
        read = (got.height, got.owner) if got is not None else (0, None)
        if read != ((h, owner) if h else (0, None)):
            out["wrong"] += 1
    for seat, cell in shot.scene.cards.items():
        got = reading.cards.get(seat)
        if got is None:
            out["cards_missed"] += 1
        elif tuple(got) != tuple(cell):
            out["cards_wrong"] += 1
    out["cards_extra"] = sum(1 for seat in reading.cards if seat not in shot.scene.cards)
    return out


@pytest.fixture(scope="module")
def tallies() -> dict[str, dict[str, int]]:
    out = {}
    for name, (kind, seed, light, colours) in CASES.items():
        shot = shoot(seed, kind=kind, light=light, colour_set=colours)
        out[name] = tally(shot, read_image(shot.image, None, shot.scene.colors))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_reading_errors_stay_within_the_measured_bounds(tallies, name):
    t = tallies[name]
    wrong, unseen, hidden_read, cards_missed = MEASURED[name]
    assert t["visible"] >= 35
    assert t["wrong"] <= wrong
    assert t["unseen_visible"] <= unseen
    assert t["hidden_read"] <= hidden_read
    # cards: never misread, never invented; a stack the reader is unsure of is left out
    assert t["cards_wrong"] == 0 and t["cards_extra"] == 0
    assert t["cards_missed"] <= cards_missed


def test_below_75_degrees_fewer_than_one_visible_site_in_twenty_is_wrong(tallies):
    low = [t for name, t in tallies.items() if name != "mounted-4"]
    wrong = sum(t["wrong"] for t in low)
    visible = sum(t["visible"] for t in low)
    assert visible >= 200
    assert wrong * 20 < visible
