"""How well a card must explain its window: a whole card less than one seen in part.

The score is the share of the window's variance the printed pattern explains
(cards.min_grid_score). A checked or grained tablecloth around a card is
variance no hypothesis explains, so a card wholly in view on one scores
0.26-0.27 (raycast mounted 9809, 9908, phone 9921) where one on a plain table
scores 0.3 or more. A window the photo shows only in part (a tower before it,
the photo's edge through it) holds fewer of the pattern's points, and a chance
pair of red things explains them as well: there the bar is partial_grid_score.
"""

from __future__ import annotations

from companion.rules.topology import Seat
from companion.vision.evaluate import compare
from companion.vision.reader import read_image

#: the thresholds before the window's share in view was weighed
ONE_BAR = {"cards": {"min_grid_score": 0.28, "partial_grid_score": None}}


def _cells(truth: dict) -> dict[str, tuple[int, int]]:
    return {k: tuple(v["cell"]) for k, v in truth["expected"]["cards"].items()}


def test_a_whole_card_on_a_checked_cloth_is_read():
    from tests.vision.raycast import shoot

    image, truth = shoot(9809, "mounted")  # 67 degrees, a blue gingham cloth
    cols = truth["expected"]["colors"]
    now = read_image(image, None, cols)
    was = read_image(image, None, cols, ONE_BAR)
    assert _cells(truth) == {"S": (2, 2), "W": (1, 1), "N": (1, 0)}
    assert {s.name: c for s, c in now.cards.items()} == _cells(truth)
    assert {s.name: c for s, c in was.cards.items()} == {"S": (2, 2), "W": (1, 1)}
    a = compare(now.to_json(), truth)
    assert (a["cards_missed"], a["cards_wrong"], a["cards_extra"]) == (0, 0, 0)
    # the sites are read as before: the cards come after them
    assert now.to_json()["sites"] == was.to_json()["sites"]


def test_a_card_seen_in_part_must_explain_its_window_better():
    from tests.vision.raycast import shoot

    image, truth = shoot(9204, "mounted")
    cols = truth["expected"]["colors"]
    # the S stack's grids are 41% in view: too little to expect its card
    assert truth["card_stacks"]["S"]["cell"] == [0, 0]
    assert "S" not in truth["expected"]["cards"]
    now = read_image(image, None, cols)
    was = read_image(image, None, cols, ONE_BAR)
    assert was.cards[Seat.S] == (2, 0)  # a wrong cell, by 0.287 over the bar of 0.28
    assert Seat.S not in now.cards
    assert {s: c for s, c in now.cards.items() if s != Seat.S} == {
        s: c for s, c in was.cards.items() if s != Seat.S}
    a, b = compare(now.to_json(), truth), compare(was.to_json(), truth)
    assert (a["cards_extra"], b["cards_extra"]) == (0, 1)
