"""Building cards: nine kinds, named by the red cell from the holder's view."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from companion.rules.errors import NotationError
from companion.rules.topology import Seat, default_topology


@dataclass(frozen=True, order=True)
class Card:
    """A card kind: the red cell (row, col); row 0 is the far row, col 0 the left."""

    row: int
    col: int

    def __post_init__(self) -> None:
        if not (0 <= self.row < 3 and 0 <= self.col < 3):
            raise NotationError(f"a card cell is (0..2, 0..2), not ({self.row}, {self.col})")

    @property
    def kind(self) -> int:
        return self.row * 3 + self.col

    @property
    def is_centre(self) -> bool:
        return self.row == 1 and self.col == 1

    def site_cell(self, seat: Seat) -> tuple[int, int]:
        """The (row, col) this card gives in every city when played from ``seat``."""
        return default_topology().site_for_card(seat, self.row, self.col)

    @classmethod
    def for_site(cls, seat: Seat, row: int, col: int) -> Card:
        r, c = default_topology().card_for_site(seat, row, col)
        return cls(r, c)

    @classmethod
    def parse(cls, text: str) -> Card:
        m = re.fullmatch(r"c?([0-2])([0-2])", text.strip().lower())
        if not m:
            raise NotationError(f"cannot read card {text!r} (expected c<row><col>, e.g. c02)")
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"c{self.row}{self.col}"

    def __repr__(self) -> str:
        return f"Card({self.row}, {self.col})"


ALL_CARDS: tuple[Card, ...] = tuple(Card(r, c) for r in range(3) for c in range(3))


def full_deck(copies: int = 5) -> tuple[Card, ...]:
    return tuple(card for card in ALL_CARDS for _ in range(copies))


def shuffled(cards: tuple[Card, ...], seed: int, salt: str) -> tuple[Card, ...]:
    """Deterministic shuffle: a game record replays the same draws from its seed."""
    out = list(cards)
    random.Random(f"{seed}:{salt}").shuffle(out)
    return tuple(out)
