"""LED maps: the built-in layouts, JSON round trip and validation messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hardware.leds import FORMAT, LedMap, builtin, edges, serpentine, site_coords, site_index


def test_site_numbering_matches_the_spec() -> None:
    assert site_index(0, 0, 0) == 0
    assert site_index(2, 0, 2) == 20  # "Frankfurt NE"
    assert site_index(5, 2, 2) == 53
    assert site_coords(40) == (4, 1, 1)
    with pytest.raises(ValueError):
        site_index(6, 0, 0)
    with pytest.raises(ValueError):
        site_coords(54)


def test_serpentine_layout() -> None:
    m = serpentine()
    assert m.count == 58 and m.layout == "serpentine"
    # North row of sites, west to east: Manhattan, Sydney, Frankfurt row 0.
    assert [m.site_leds(site_index(c, 0, col))[0] for c in (0, 1, 2) for col in (0, 1, 2)] == list(
        range(9)
    )
    # Second global row runs back east to west.
    assert m.site_leds(site_index(2, 1, 2)) == (9,)
    assert m.site_leds(site_index(0, 1, 0)) == (17,)
    # South row of cities.
    assert m.site_leds(site_index(3, 0, 0)) == (35,)
    assert m.site_leds(site_index(3, 2, 0)) == (53,)
    assert m.site_leds(site_index(5, 2, 2)) == (45,)
    assert sorted(m.site_leds(s)[0] for s in range(54)) == list(range(54))
    assert [m.seat_leds(s) for s in "SWNE"] == [(54,), (55,), (56,), (57,)]


def test_serpentine_from_another_corner_and_seat_order() -> None:
    m = serpentine(start="SE", seats=("N", "S"))
    assert m.site_leds(site_index(5, 2, 2)) == (0,)
    assert m.site_leds(site_index(3, 2, 0)) == (8,)
    assert m.site_leds(site_index(3, 1, 0)) == (9,)
    assert m.count == 56
    assert m.seat_leds("N") == (54,) and m.seat_leds("S") == (55,) and m.seat_leds("E") == ()
    with pytest.raises(ValueError, match="start"):
        serpentine(start="middle")


def test_edges_layout() -> None:
    m = edges()
    assert m.count == 40 and m.layout == "edges"
    assert m.site_leds(site_index(0, 0, 0)) == (0, 3)
    assert m.site_leds(site_index(4, 1, 2)) == (25, 29)
    assert m.site_leds(site_index(5, 2, 0)) == (32, 33)
    assert m.city_leds(1) == (6, 9, 10, 11, 7, 8)
    assert m.seat_leds("E") == (39,)
    assert builtin("edges") == m
    with pytest.raises(ValueError, match="unknown LED layout"):
        builtin("spiral")


def test_save_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "leds.json"
    for m in (serpentine(), edges()):
        m.save(path)
        doc = json.loads(path.read_text())
        assert doc["format"] == FORMAT == "companion-ledmap/1"
        assert len(doc["sites"]) == 54
        assert LedMap.load(path) == m


def good_doc() -> dict[str, Any]:
    return serpentine().to_json()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="companion-ledmap/2"), "'format' must be 'companion-ledmap/1'"),
        (lambda d: d.pop("count"), "'count' .* is missing"),
        (lambda d: d.update(count=0), "'count' must be a positive integer"),
        (lambda d: d.update(count="58"), "'count' must be a positive integer"),
        (lambda d: d.update(count=100_000_000),
         r"'count' 100000000 is more LEDs than a strip drives \(at most 10,000\)"),
        (lambda d: d.pop("sites"), "'sites' is missing"),
        (lambda d: d["sites"].pop(), "'sites' must list 54 sites, got 53"),
        (lambda d: d["sites"].__setitem__(12, []), r"site 12 \(city 1, row 1, col 0\) has no LED"),
        (lambda d: d["sites"].__setitem__(3, [58]), r"site 3 .* uses LED 58, outside 0..57"),
        (lambda d: d["sites"].__setitem__(3, [-1]), "uses LED -1"),
        (lambda d: d["sites"].__setitem__(3, [1.5]), "non-integer LED index 1.5"),
        (lambda d: d["sites"].__setitem__(3, [4, 4]), "lists an LED twice"),
        (lambda d: d["sites"].__setitem__(3, 4), "must be a list of LED indices"),
        (lambda d: d["seats"].__setitem__("X", [1]), "unknown seat 'X'"),
        (lambda d: d["seats"].__setitem__("S", [99]), "seat S uses LED 99"),
        (lambda d: d.update(seats=[54]), "'seats' must be an object"),
        (lambda d: d.update(colour="red"), "unknown keys 'colour'"),
    ],
)
def test_validation_messages(change: Any, message: str) -> None:
    doc = good_doc()
    change(doc)
    with pytest.raises(ValueError, match=message):
        LedMap.from_json(doc)


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="bad.json: not valid JSON"):
        LedMap.load(bad)
    bad.write_text(json.dumps({"format": FORMAT, "count": 3, "sites": []}))
    with pytest.raises(ValueError, match="bad.json: ledmap: 'sites' must list 54"):
        LedMap.load(bad)
    with pytest.raises(ValueError, match="must be a JSON object"):
        LedMap.from_json([1, 2])


def test_seats_may_be_missing_and_shared_leds_are_allowed() -> None:
    doc = {"format": FORMAT, "count": 1, "sites": [[0]] * 54}
    m = LedMap.from_json(doc)
    assert m.seats == {} and m.seat_leds("S") == ()
    assert m.city_leds(3) == (0,)
    with pytest.raises(ValueError, match="seat must be one of"):
        m.seat_leds("X")
