"""Guidance patterns, frame by frame, on both built-in layouts."""

from __future__ import annotations

import pytest

from hardware.leds import edges, patterns, serpentine

SERP = serpentine()
EDGES = edges()
OFF = (0, 0, 0)
RED = (190, 35, 40)
RED_DIM = (47, 8, 10)  # floor(0.25 * RED)


def expect(count: int, lit: dict[int, tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    frame = [OFF] * count
    for led, rgb in lit.items():
        frame[led] = rgb
    return frame


def test_card_guidance_serpentine() -> None:
    # A card giving the NE site (row 0, col 2) of every city; legal in the north cities only.
    frame = patterns.card_guidance(SERP, [2, 11, 20], [29, 38, 47], RED, "W")
    assert frame == expect(
        58, {2: RED, 5: RED, 8: RED, 33: RED_DIM, 30: RED_DIM, 27: RED_DIM, 55: RED}
    )


def test_card_guidance_edges_shows_row_and_column() -> None:
    # Centre site of Manhattan (legal) and of Cairo (not legal), South to move.
    frame = patterns.card_guidance(EDGES, [4], [49], (0, 100, 200), "S")
    assert frame == expect(
        40,
        {1: (0, 100, 200), 4: (0, 100, 200), 31: (0, 25, 50), 34: (0, 25, 50), 36: (0, 100, 200)},
    )


def test_card_guidance_full_colour_wins_on_shared_leds_and_no_seat() -> None:
    # Manhattan NW legal, Manhattan NE not: they share the row-0 LED (0) in the edges layout.
    frame = patterns.card_guidance(EDGES, [0], [2], (200, 200, 200), None, dim=0.5)
    assert frame == expect(40, {0: (200, 200, 200), 3: (200, 200, 200), 5: (100, 100, 100)})


def test_card_guidance_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="both legal and not legal"):
        patterns.card_guidance(SERP, [1], [1], RED, "S")
    with pytest.raises(ValueError, match="site must be"):
        patterns.card_guidance(SERP, [54], [], RED, "S")
    with pytest.raises(ValueError, match="seat must be"):
        patterns.card_guidance(SERP, [1], [], RED, "Q")
    with pytest.raises(ValueError, match="0..255"):
        patterns.card_guidance(SERP, [1], [], (300, 0, 0), "S")


def test_warning_blinks_red_then_white() -> None:
    site = 13  # Sydney C -> LED 13 in the serpentine
    assert patterns.warning(SERP, site, 0.0) == expect(58, {13: (255, 0, 0)})
    assert patterns.warning(SERP, site, 0.49) == expect(58, {13: (255, 0, 0)})
    assert patterns.warning(SERP, site, 0.5) == expect(58, {13: (255, 255, 255)})
    assert patterns.warning(SERP, site, 3.75) == expect(58, {13: (255, 255, 255)})
    assert patterns.warning(SERP, site, -0.25) == expect(58, {13: (255, 255, 255)})


def test_warning_without_site_blinks_every_site() -> None:
    assert patterns.warning(SERP, None, 0.2) == [(255, 0, 0)] * 54 + [OFF] * 4
    assert patterns.warning(EDGES, None, 0.7) == [(255, 255, 255)] * 36 + [OFF] * 4
    with pytest.raises(ValueError, match="finite"):
        patterns.warning(SERP, 1, float("nan"))


def test_round_end_majorities_and_tallest_flash() -> None:
    blue = (35, 75, 170)
    city0 = [0, 1, 2, 15, 16, 17, 18, 19, 20]
    city4 = [30, 31, 32, 39, 40, 41, 48, 49, 50]
    lit = {led: RED for led in city0} | {led: blue for led in city4}
    on = patterns.round_end(SERP, {0: RED, 4: blue}, 40, 0.1)
    assert on == expect(58, lit | {40: (255, 255, 255)})
    off = patterns.round_end(SERP, {0: RED, 4: blue}, 40, 0.6)
    assert off == expect(58, lit | {40: OFF})
    assert patterns.round_end(SERP, {}, None, 0.0) == [OFF] * 58
    with pytest.raises(ValueError, match="city"):
        patterns.round_end(SERP, {6: RED}, None, 0.0)


def test_round_end_edges() -> None:
    frame = patterns.round_end(EDGES, {1: (1, 2, 3)}, 10, 0.0)  # site 10 = Sydney row 0 col 1
    assert frame == expect(
        40,
        {
            6: (255, 255, 255),
            7: (1, 2, 3),
            8: (1, 2, 3),
            9: (1, 2, 3),
            10: (255, 255, 255),
            11: (1, 2, 3),
        },
    )


def test_monster_and_seat_only() -> None:
    assert patterns.monster(SERP, 53) == expect(58, {53 - 8: (0, 255, 0)})
    assert patterns.monster(EDGES, 0, (9, 9, 9)) == expect(40, {0: (9, 9, 9), 3: (9, 9, 9)})
    assert patterns.seat_only(SERP, "E", (5, 5, 5)) == expect(58, {57: (5, 5, 5)})
    assert patterns.blank(EDGES) == [OFF] * 40
