"""Where the sites are: cities, site names, seats and the card-to-site mapping.

The numbers come from a board profile file so a table with other art can be
described without touching code.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from companion.rules.errors import InvalidBoardError, NotationError


class Seat(str, enum.Enum):
    """A board edge a player sits at."""

    S = "S"
    W = "W"
    N = "N"
    E = "E"

    def __repr__(self) -> str:
        return f"Seat.{self.value}"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: str) -> Seat:
        try:
            return cls(text.strip().upper())
        except ValueError:
            raise NotationError(f"unknown seat {text!r} (expected S, W, N or E)") from None


CLOCKWISE: tuple[Seat, ...] = (Seat.S, Seat.W, Seat.N, Seat.E)


@dataclass(frozen=True)
class Topology:
    """The abstract layout of a board: 6 cities of 3 x 3 sites by default."""

    city_names: tuple[str, ...]
    city_grid: tuple[int, int]
    rows: int
    cols: int
    site_names: tuple[tuple[str, ...], ...]
    card_to_site: dict[Seat, tuple[tuple[int, int], ...]]

    @property
    def cities(self) -> int:
        return len(self.city_names)

    @property
    def sites_per_city(self) -> int:
        return self.rows * self.cols

    @property
    def site_count(self) -> int:
        return self.cities * self.sites_per_city

    @classmethod
    def from_profile(cls, profile: dict[str, Any]) -> Topology:
        try:
            cities = profile["cities"]
            sites = profile["sites"]
            mapping = profile["seats"]["card_to_site"]
            names = tuple(str(n) for n in cities["names"])
            grid = (int(cities["grid"][0]), int(cities["grid"][1]))
            rows, cols = int(sites["rows"]), int(sites["cols"])
            site_names = tuple(tuple(str(n) for n in row) for row in sites["names"])
            card_map = {
                Seat(seat): tuple((int(rc[0]), int(rc[1])) for rc in entries)
                for seat, entries in mapping.items()
            }
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InvalidBoardError(f"board profile is incomplete: {exc}") from None
        if grid[0] * grid[1] != len(names):
            raise InvalidBoardError("board profile: city grid does not match the city count")
        for seat, entries in card_map.items():
            if sorted(entries) != [(r, c) for r in range(rows) for c in range(cols)]:
                raise InvalidBoardError(
                    f"board profile: card mapping for {seat} is not a permutation")
        return cls(names, grid, rows, cols, site_names, card_map)

    def site_for_card(self, seat: Seat, card_row: int, card_col: int) -> tuple[int, int]:
        """The (row, col) a card's red cell gives from ``seat``, in any city."""
        return self.card_to_site[seat][card_row * self.cols + card_col]

    def card_for_site(self, seat: Seat, row: int, col: int) -> tuple[int, int]:
        """Inverse of :meth:`site_for_card`: the card cell that reaches (row, col)."""
        k = self.card_to_site[seat].index((row, col))
        return divmod(k, self.cols)

    def city_index(self, name: str) -> int:
        key = name.strip().lower().replace(" ", "")
        for i, city in enumerate(self.city_names):
            if city.lower().replace(" ", "") == key:
                return i
        raise NotationError(f"unknown city {name!r}")

    def site_name_index(self, name: str) -> tuple[int, int]:
        key = name.strip().upper()
        for r, row in enumerate(self.site_names):
            for c, n in enumerate(row):
                if n.upper() == key:
                    return r, c
        raise NotationError(f"unknown site name {name!r}")

    def city_cell(self, city: int) -> tuple[int, int]:
        """(row, col) of a city in the city grid (north row first)."""
        return divmod(city, self.city_grid[1])


@lru_cache(maxsize=1)
def default_topology() -> Topology:
    """The reference board's topology, read once from its profile file."""
    from companion.profiles import load_profile

    return Topology.from_profile(load_profile())
