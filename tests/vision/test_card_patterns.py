"""A checked tablecloth's red squares are no card (cards.max_red_share).

A card's two grids are grey but for its two red cells (2 of 18). On a red
gingham tablecloth any two red squares a cell's width apart look like a
card's red pair, and the printed pattern check (a low bar, for cards far
away and blurred) lets some through: cards were read at seats where no
stack lies. Measured over 24 raycast sets (440 photos, 1,411 cards read
right): the read cards' grids are at most 0.144 red, the nine cards read
off the cloth 0.201-0.453.
"""

from __future__ import annotations

import numpy as np
import pytest

from companion.rules.topology import Seat
from companion.vision.cards import CardRead, _red_share, read_card
from companion.vision.geometry import board_geometry
from companion.vision.reader import read_image


def test_no_card_is_read_off_a_checked_tablecloth():
    # raycast mounted 9405: one stack (N) on a red gingham cloth; without the limit
    # the cloth gave cards at S, W and E too
    from tests.vision.raycast import shoot

    image, truth = shoot(9405, "mounted")
    assert truth["meta"]["table"] == "gingham"
    assert set(truth["card_stacks"]) == {"N"}
    cols = truth["expected"]["colors"]
    now = read_image(image, None, cols)
    assert {s.name: c for s, c in now.cards.items()} == {"N": (2, 2)}
    was = read_image(image, None, cols, {"cards": {"max_red_share": None}})
    assert {s.name: c for s, c in was.cards.items()} == {
        "S": (2, 0), "W": (2, 0), "N": (2, 2), "E": (2, 2)}
    # the cloth's "cards" are red all over their grids, the real one is not
    shares = {}
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        debug: dict = {}
        read = read_card(image, was.pose, board_geometry(), seat, was.wb,
                         {"max_red_share": None}, debug, tone=was.tone)
        assert read is not None
        shares[seat.name] = debug["red_share"]
    assert shares["N"] < 0.15
    assert min(shares["S"], shares["W"], shares["E"]) > 0.2


def _rect(shape: tuple[int, int]) -> np.ndarray:
    return np.zeros(shape, bool)


def test_the_red_share_is_the_red_part_of_both_grids() -> None:
    # a card lying straight in its seat's rectified frame (4 px a mm), its red
    # pair in cell (1, 2): the pair's two squares against both grids' area
    g = board_geometry()
    s, a0, b0 = 4.0, -60.0, 60.0
    shape = (int(120 * s), int(120 * s))
    cell = g.card.cell
    lo, hi = sorted(g.card.grid_offsets)
    r, c = 1, 2
    read = CardRead(Seat.S, (r, c), 1.0, 1.0, (5.0, -3.0), 0.0)
    rx, ry = (c - 1) * cell, g.card.top_offset + cell / 2 + r * cell

    def pixel(x: float, y: float) -> tuple[float, float]:
        """Card-local mm (x right, y down from the card's top) -> rectified pixels."""
        pa, pb = read.centre_ab[0] + (x - rx), read.centre_ab[1] - (y - ry)
        return (pa - a0) * s, (b0 - pb) * s

    red = np.zeros(shape, bool)
    for off in (lo, hi):
        px, py = pixel(off + (c - 1) * cell, ry)
        h = int(round(cell * s / 2))
        red[int(round(py)) - h:int(round(py)) + h, int(round(px)) - h:int(round(px)) + h] = True
    inside = np.ones(shape, bool)
    area = (hi - lo + 3 * cell) * 3 * cell
    assert _red_share(read, red, inside, None, (a0, b0), s, g) == pytest.approx(
        2 * cell * cell / area, rel=0.03)
    assert _red_share(read, _rect(shape), inside, None, (a0, b0), s, g) == 0.0
    # a checked cloth, squares a cell wide: half of it red
    yy, xx = np.indices(shape)
    checks = ((xx // int(cell * s)) + (yy // int(cell * s))) % 2 == 0
    assert _red_share(read, checks, inside, None, (a0, b0), s, g) == pytest.approx(
        0.5, abs=0.08)
    # a tower hiding the left half: the share is of what shows
    hidden = np.zeros(shape, bool)
    hidden[:, : int(round(pixel(0.0, 0.0)[0]))] = True
    assert _red_share(read, red, inside, hidden, (a0, b0), s, g) == pytest.approx(
        cell * cell / (area / 2), rel=0.05)
