"""Moves: small immutable values; ``str(move)`` is the notation.

Notation (round-trips through :func:`companion.rules.notation.parse_move`):

- ``S commit red:4,3,2,1,1,1`` a block selection; two colours are separated by
  a space (``S commit red:4,4,1,1 green:3,2,2,1``); ``S commit ?`` when the
  table did not declare it (a live game where the camera did not see it).
- ``W c00 blue3@2NE`` seat W played card c00 (red cell row 0, col 0 from the
  holder's view, which from the West seat is the NE site) and built a
  3-storey blue block on city 2, site NE.
- ``N c11 pass`` no legal build with that card: the card is discarded;
  ``N c11 pass -green1`` also forfeits a block (house rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.rules.board import Block, Site
from companion.rules.cards import Card
from companion.rules.topology import Seat


@dataclass(frozen=True)
class Commit:
    """A player's block selection for the round; ``blocks=None`` if undeclared."""

    seat: Seat
    blocks: tuple[Block, ...] | None

    def __post_init__(self) -> None:
        # a selection is a set of blocks: kept in its notation's order (colours as
        # first given, each largest first), so "red:1,2" is the commit "red:2,1" is
        # and a record read back replays to the live game's very state
        if self.blocks is not None:
            first = {b.color: n for n, b in reversed(list(enumerate(self.blocks)))}
            object.__setattr__(self, "blocks", tuple(sorted(
                self.blocks, key=lambda b: (first[b.color], -b.storeys))))

    def __str__(self) -> str:
        if self.blocks is None:
            return f"{self.seat} commit ?"
        by_color: dict[str, list[int]] = {}
        for b in self.blocks:
            by_color.setdefault(b.color, []).append(b.storeys)
        parts = [f"{c}:{','.join(str(s) for s in sorted(v, reverse=True))}"
                 for c, v in by_color.items()]
        return f"{self.seat} commit {' '.join(parts)}"

    def __repr__(self) -> str:
        return f"Commit({self.seat!r}, {self.blocks!r})"


@dataclass(frozen=True)
class Build:
    """Play ``card`` from ``seat`` and put ``block`` on ``site``."""

    seat: Seat
    card: Card
    site: Site
    block: Block

    def __str__(self) -> str:
        return f"{self.seat} {self.card} {self.block}@{self.site.code}"

    def __repr__(self) -> str:
        return f"Build({self.seat!r}, {self.card!r}, {self.site!r}, {self.block!r})"


@dataclass(frozen=True)
class Pass:
    """No legal build: discard ``card`` (and, by house rule, forfeit a block)."""

    seat: Seat
    card: Card
    forfeit: Block | None = None

    def __str__(self) -> str:
        tail = f" -{self.forfeit}" if self.forfeit else ""
        return f"{self.seat} {self.card} pass{tail}"

    def __repr__(self) -> str:
        return f"Pass({self.seat!r}, {self.card!r}, {self.forfeit!r})"


Move = Commit | Build | Pass
