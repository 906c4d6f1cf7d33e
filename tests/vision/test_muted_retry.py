"""A card next to a red checked cloth, in a photo whose tops look muted.

Raycast mounted 15012 (59 degrees, a shaded 4,279 K lamp and a second lamp, a
night-style board on a red gingham cloth): the sure tops show 0.8 of their
colours' saturation, so the card reader took the camera for a muted one and
lowered its red threshold. The cloth's lighter squares then passed for red as
well: the S stack, in plain view, showed red over a third of its grids and was
taken for cloth. A seat that shows no card at the lowered threshold is now
read again at the plain one (`cards.muted_retry`).
"""

from __future__ import annotations

from companion.vision.evaluate import compare
from companion.vision.reader import read_image


def test_a_card_lost_to_a_lowered_threshold_is_read_at_the_plain_one() -> None:
    from tests.vision.raycast import shoot

    image, truth = shoot(15012, "mounted")
    assert truth["meta"]["table"] == "gingham"
    cols = truth["expected"]["colors"]
    # (the sites read as before the empty site lost points on a plastic footprint,
    # sites.empty_plastic_weight: with the tops read since, the camera is not taken
    # for a muted one and all three cards are read, retry or not)
    before = {"sites": {"empty_plastic_weight": 0.0}}
    shipped = read_image(image, None, cols)
    now = read_image(image, None, cols, before)
    was = read_image(image, None, cols, {"cards": {"muted_retry": False}, **before})
    cells = {k: tuple(v["cell"]) for k, v in truth["expected"]["cards"].items()}
    assert cells == {"S": (1, 2), "N": (0, 2), "E": (1, 0)}
    assert {s.value: c for s, c in was.cards.items()} == {"N": (0, 2)}
    # S is read; E stays out (a pair of the cloth's squares outscores its red cells
    # at either threshold, and its grids are then too red to be a card's)
    assert {s.value: c for s, c in now.cards.items()} == {"S": (1, 2), "N": (0, 2)}
    a, b = compare(now.to_json(), truth), compare(was.to_json(), truth)
    assert (a["cards_missed"], a["cards_wrong"], a["cards_extra"]) == (1, 0, 0)
    assert (b["cards_missed"], b["cards_wrong"], b["cards_extra"]) == (2, 0, 0)
    # the sites are read as before: the cards come after them
    assert now.to_json()["sites"] == was.to_json()["sites"]
    assert {s.value: c for s, c in shipped.cards.items()} == cells
