"""Game end: standings and the edition's tie-break."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.rules.editions import TieBreak
from companion.rules.state import GameState


@dataclass(frozen=True)
class Standing:
    rank: int
    name: str
    colors: tuple[str, ...]
    points: int
    highest: int  # the player's highest building now on the board
    buildings: int  # buildings the player owns now

    def to_json(self) -> dict[str, Any]:
        return {"rank": self.rank, "name": self.name, "colors": list(self.colors),
                "points": self.points, "highest": self.highest, "buildings": self.buildings}


def standings(state: GameState) -> list[Standing]:
    """Rank players by points; the 2017 edition breaks ties by the highest
    building, then by the number of buildings. Other editions share the rank."""
    totals = state.player_totals()
    views = state.board.views()
    rows = []
    for p in state.config.players:
        mine = [v for v in views.values() if v.owner in p.colors]
        rows.append((p, totals[p.name], max((v.height for v in mine), default=0), len(mine)))

    def key(row: tuple[Any, int, int, int]) -> tuple[int, ...]:
        if state.config.edition.tie_break is TieBreak.HIGHEST_THEN_MOST:
            return (row[1], row[2], row[3])
        return (row[1],)

    rows.sort(key=lambda r: key(r), reverse=True)
    out: list[Standing] = []
    for i, row in enumerate(rows):
        rank = i + 1
        if i and key(rows[i - 1]) == key(row):
            rank = out[-1].rank
        p, points, highest, count = row
        out.append(Standing(rank, p.name, p.colors, points, highest, count))
    return out
