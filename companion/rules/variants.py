"""Variants from the rulebooks: Anti-trust, Slow Growth, the Monsters, Godzilla."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from companion.rules.board import Board, Site
from companion.rules.errors import SetupError
from companion.rules.topology import default_topology


class Variant(str, enum.Enum):
    ANTI_TRUST = "anti-trust"  # Mayfair: no piece on top of one's own building
    SLOW_GROWTH = "slow-growth"  # Mayfair: 3 cities in round 1, one more each round
    MONSTER = "monster"  # Mayfair: the monster destroys whole buildings
    BABY_MONSTER = "baby-monster"  # Mayfair: removes the top piece only
    GODZILLA = "godzilla"  # Bankler & Moore: wrapping 2 x 3 city grid

    def __repr__(self) -> str:
        return f"Variant.{self.name}"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: str) -> Variant:
        key = text.strip().lower().replace("_", "-").replace(" ", "-")
        key = {"antitrust": "anti-trust", "slowgrowth": "slow-growth",
               "babymonster": "baby-monster", "baby": "baby-monster"}.get(key, key)
        try:
            return cls(key)
        except ValueError:
            known = ", ".join(v.value for v in cls)
            raise SetupError(f"unknown variant {text!r} (known: {known})") from None


MONSTERS = frozenset({Variant.MONSTER, Variant.BABY_MONSTER, Variant.GODZILLA})


def check_variants(variants: frozenset[Variant]) -> None:
    if len(variants & MONSTERS) > 1:
        names = ", ".join(sorted(v.value for v in variants & MONSTERS))
        raise SetupError(f"only one monster at a time: {names}")


def default_monster_start(variant: Variant) -> Site:
    """Mayfair: the lower-left corner of Soho (the south-west city, seen from
    the South seat). Godzilla: the centre of a city (the first one)."""
    topo = default_topology()
    if variant is Variant.GODZILLA:
        return Site(0, topo.rows // 2, topo.cols // 2)
    sw_city = (topo.city_grid[0] - 1) * topo.city_grid[1]
    return Site(sw_city, topo.rows - 1, 0)


@dataclass(frozen=True)
class MonsterStep:
    """What one monster move did: where it went and which blocks it removed."""

    start: Site
    end: Site
    removed: tuple[tuple[Site, int], ...]  # (site, number of top blocks removed)


def step_site(site: Site, d_row: int, d_col: int, wrap: bool) -> Site:
    """Move one square on the whole-board grid of sites (cities side by side).

    Without ``wrap`` a step that would leave the board is not made: the
    monster stops at the outer edge (also for a diagonal step along an edge,
    which must not turn into a sideways slide).
    """
    topo = default_topology()
    crow, ccol = topo.city_cell(site.city)
    g_rows, g_cols = topo.city_grid[0] * topo.rows, topo.city_grid[1] * topo.cols
    gr, gc = crow * topo.rows + site.row + d_row, ccol * topo.cols + site.col + d_col
    if wrap:
        gr, gc = gr % g_rows, gc % g_cols
    elif not (0 <= gr < g_rows and 0 <= gc < g_cols):
        return site
    city = (gr // topo.rows) * topo.city_grid[1] + gc // topo.cols
    return Site(city, gr % topo.rows, gc % topo.cols)


def monster_move(variant: Variant, board: Board, monster: Site, direction: tuple[int, int],
                 wrap: bool) -> tuple[Board, MonsterStep]:
    """Move the monster in the card's direction and apply the destruction.

    A centre card gives no direction: the monster stays; the Baby Monster then
    removes another piece of the building it stands on (Mayfair).
    """
    d_row, d_col = direction
    if (d_row, d_col) == (0, 0):
        if variant is Variant.BABY_MONSTER and board.tower(monster):
            tower = board.tower(monster)
            return (board.with_tower(monster, tower[:-1]),
                    MonsterStep(monster, monster, ((monster, 1),)))
        return board, MonsterStep(monster, monster, ())
    target = step_site(monster, d_row, d_col, wrap)
    tower = board.tower(target)
    if not tower or target == monster:
        return board, MonsterStep(monster, target, ())
    if variant is Variant.BABY_MONSTER:
        return board.with_tower(target, tower[:-1]), MonsterStep(monster, target, ((target, 1),))
    return board.with_tower(target, ()), MonsterStep(monster, target, ((target, len(tower)),))
