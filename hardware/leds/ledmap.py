"""Which LEDs light which building site and which seat.

Sites are numbered as in the board spec: ``site = city * 9 + row * 3 + col`` with
cities 0..5 (north row 0, 1, 2 west to east, south row 3, 4, 5 as seen from the
South seat), row 0 the northernmost and col 0 the westernmost row/column of a city.
Seats are "S", "W", "N", "E".

A map is a JSON file so a builder can wire the strip however suits the table and
calibration can write the result::

    {"format": "companion-ledmap/1", "layout": "serpentine", "count": 58,
     "sites": [[0], [1], ...54 lists...], "seats": {"S": [54], "W": [55], ...}}

A site may use several LEDs and LEDs may be shared between sites (the "edges"
layout lights a site by its row LED and its column LED).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

FORMAT = "companion-ledmap/1"
CITIES = 6
ROWS = 3
COLS = 3
SITES = CITIES * ROWS * COLS  # 54
SEATS: tuple[str, ...] = ("S", "W", "N", "E")
CORNERS = ("NW", "NE", "SW", "SE")


def site_index(city: int, row: int, col: int) -> int:
    """The canonical site number of (city, row, col)."""
    if not (0 <= city < CITIES and 0 <= row < ROWS and 0 <= col < COLS):
        raise ValueError(f"no site at city {city}, row {row}, col {col}")
    return city * ROWS * COLS + row * COLS + col


def site_coords(site: int) -> tuple[int, int, int]:
    """(city, row, col) of a site number."""
    check_site(site)
    city, rest = divmod(site, ROWS * COLS)
    row, col = divmod(rest, COLS)
    return city, row, col


def check_site(site: Any) -> int:
    if isinstance(site, bool) or not isinstance(site, int) or not 0 <= site < SITES:
        raise ValueError(f"site must be an int 0..{SITES - 1}, got {site!r}")
    return site


def check_seat(seat: Any) -> str:
    if seat not in SEATS:
        raise ValueError(f"seat must be one of {', '.join(SEATS)}, got {seat!r}")
    return str(seat)


def _describe_site(site: int) -> str:
    city, rest = divmod(site, ROWS * COLS)
    row, col = divmod(rest, COLS)
    return f"site {site} (city {city}, row {row}, col {col})"


@dataclass(frozen=True)
class LedMap:
    """A validated LED map; build with :func:`serpentine`, :func:`edges` or :meth:`load`."""

    count: int
    sites: tuple[tuple[int, ...], ...]
    seats: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    layout: str = "custom"
    description: str = ""

    def __post_init__(self) -> None:
        _check_count(self.count)
        if len(self.sites) != SITES:
            raise ValueError(f"ledmap: 'sites' must list {SITES} sites, got {len(self.sites)}")
        sites = tuple(
            _check_leds(leds, self.count, _describe_site(i), allow_empty=False)
            for i, leds in enumerate(self.sites)
        )
        seats: dict[str, tuple[int, ...]] = {}
        for seat, leds in self.seats.items():
            if seat not in SEATS:
                raise ValueError(
                    f"ledmap: unknown seat {seat!r} in 'seats' (seats are {', '.join(SEATS)})"
                )
            seats[seat] = _check_leds(leds, self.count, f"seat {seat}", allow_empty=True)
        object.__setattr__(self, "sites", sites)
        object.__setattr__(self, "seats", {s: seats[s] for s in SEATS if s in seats})

    def site_leds(self, site: int) -> tuple[int, ...]:
        """LED indices lighting a site."""
        return self.sites[check_site(site)]

    def seat_leds(self, seat: str) -> tuple[int, ...]:
        """LED indices lighting a seat (empty when the build has no seat LED there)."""
        return self.seats.get(check_seat(seat), ())

    def city_leds(self, city: int) -> tuple[int, ...]:
        """Every LED lighting some site of a city, in first-use order."""
        if not 0 <= city < CITIES:
            raise ValueError(f"city must be 0..{CITIES - 1}, got {city!r}")
        seen: dict[int, None] = {}
        for site in range(city * 9, city * 9 + 9):
            for led in self.sites[site]:
                seen.setdefault(led, None)
        return tuple(seen)

    def to_json(self) -> dict[str, Any]:
        """The JSON document (plain dicts and lists)."""
        return {
            "format": FORMAT,
            "layout": self.layout,
            "description": self.description,
            "count": self.count,
            "sites": [list(leds) for leds in self.sites],
            "seats": {seat: list(leds) for seat, leds in self.seats.items()},
        }

    @classmethod
    def from_json(cls, doc: Any) -> LedMap:
        """Validate and build from a parsed JSON document; ValueError says what is wrong."""
        if not isinstance(doc, dict):
            raise ValueError("ledmap: the document must be a JSON object")
        if doc.get("format") != FORMAT:
            raise ValueError(f"ledmap: 'format' must be {FORMAT!r}, got {doc.get('format')!r}")
        unknown = sorted(set(doc) - {"format", "layout", "description", "count", "sites", "seats"})
        if unknown:
            raise ValueError(f"ledmap: unknown keys {', '.join(map(repr, unknown))}")
        if "count" not in doc:
            raise ValueError("ledmap: 'count' (number of LEDs on the strip) is missing")
        if "sites" not in doc:
            raise ValueError("ledmap: 'sites' is missing")
        sites = doc["sites"]
        if not isinstance(sites, list):
            raise ValueError("ledmap: 'sites' must be a list of LED lists, one per site")
        seats = doc.get("seats", {})
        if not isinstance(seats, dict):
            raise ValueError("ledmap: 'seats' must be an object like {\"S\": [54]}")
        for key in ("layout", "description"):
            if not isinstance(doc.get(key, ""), str):
                raise ValueError(f"ledmap: {key!r} must be a string")
        return cls(
            count=doc["count"],
            sites=tuple(_as_led_list(v, _describe_site(i)) for i, v in enumerate(sites)),
            seats={k: _as_led_list(v, f"seat {k}") for k, v in seats.items()},
            layout=doc.get("layout", "custom"),
            description=doc.get("description", ""),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LedMap:
        """Read a ledmap file; errors name the file."""
        if os.path.exists(path) and not os.path.isfile(path):
            raise ValueError(f"{os.fspath(path)}: not a regular file")  # a pipe would wait
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh, object_pairs_hook=_unique_keys)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{os.fspath(path)}: not valid JSON: {exc}") from exc
        except _DuplicateKey as exc:
            raise ValueError(f"{os.fspath(path)}: not valid JSON: {exc}") from None
        except RecursionError:
            raise ValueError(f"{os.fspath(path)}: not valid JSON: nested too deeply") from None
        try:
            return cls.from_json(doc)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(path)}: {exc}") from exc

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the map as indented JSON (atomically, so a crash leaves the old map)."""
        target = os.fspath(path)
        tmp = f"{target}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(self.to_json(), fh, indent=1)
            fh.write("\n")
        os.replace(tmp, target)


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are unique: json keeps the last of two, which would
    drop a site's LEDs the file's writer meant (the package cannot import companion's)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"key {json.dumps(key)[:40]} given twice")
        out[key] = value
    return out


#: More LEDs than a table's strip has: a frame of WS2812 data takes 30 us per LED,
#: so 10,000 already refresh at 3 frames a second (a typo of a count, not a strip)
MAX_LEDS = 10_000


def _check_count(count: Any) -> None:
    if isinstance(count, bool) or not isinstance(count, int) or count <= 0:
        raise ValueError(f"ledmap: 'count' must be a positive integer, got {count!r}")
    if count > MAX_LEDS:
        raise ValueError(f"ledmap: 'count' {count} is more LEDs than a strip drives "
                         f"(at most {MAX_LEDS:,})")


def _as_led_list(value: Any, what: str) -> tuple[int, ...]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"ledmap: {what} must be a list of LED indices, got {value!r}")
    leds: tuple[int, ...] = tuple(value)
    return leds


def _check_leds(value: Any, count: int, what: str, allow_empty: bool) -> tuple[int, ...]:
    leds: tuple[int, ...] = tuple(value)
    if not leds and not allow_empty:
        raise ValueError(f"ledmap: {what} has no LED")
    for led in leds:
        if isinstance(led, bool) or not isinstance(led, int):
            raise ValueError(f"ledmap: {what} has a non-integer LED index {led!r}")
        if not 0 <= led < count:
            raise ValueError(f"ledmap: {what} uses LED {led}, outside 0..{count - 1}")
    if len(set(leds)) != len(leds):
        raise ValueError(f"ledmap: {what} lists an LED twice: {list(leds)}")
    return leds


def _seat_leds(first: int, seats: Sequence[str]) -> dict[str, tuple[int, ...]]:
    for seat in seats:
        check_seat(seat)
    if len(set(seats)) != len(seats):
        raise ValueError(f"seat order lists a seat twice: {list(seats)}")
    return {seat: (first + i,) for i, seat in enumerate(seats)}


def serpentine(start: str = "NW", seats: Sequence[str] = SEATS) -> LedMap:
    """One LED per site, snaking over the 6 x 9 grid of all sites, then one LED per seat.

    The board's sites form 6 rows (north to south) of 9 columns (west to east).
    From the ``start`` corner the strip runs along that corner's row, turns and
    comes back along the next row, and so on: 54 LEDs. The seat LEDs follow,
    numbered 54.. in ``seats`` order (S, W, N, E by default).
    """
    start = start.upper()
    if start not in CORNERS:
        raise ValueError(f"start must be one of {', '.join(CORNERS)}, got {start!r}")
    sites: list[tuple[int, ...]] = [()] * SITES
    for city in range(CITIES):
        for row in range(ROWS):
            for col in range(COLS):
                grow = (city // 3) * ROWS + row  # 0..5, north to south
                gcol = (city % 3) * COLS + col  # 0..8, west to east
                if start[0] == "S":
                    grow = 5 - grow
                if start[1] == "E":
                    gcol = 8 - gcol
                along = gcol if grow % 2 == 0 else 8 - gcol
                sites[site_index(city, row, col)] = (grow * 9 + along,)
    return LedMap(
        count=SITES + len(seats),
        sites=tuple(sites),
        seats=_seat_leds(SITES, seats),
        layout="serpentine",
        description=f"one LED per site, serpentine from the {start} corner; then seats",
    )


def edges(seats: Sequence[str] = SEATS) -> LedMap:
    """Six LEDs per city along two edges; a site is lit by its row LED and its column LED.

    For city ``c`` the LEDs ``6c .. 6c+5`` run as one L: down the city's west edge
    (``6c + row`` for rows 0, 1, 2, north to south), then along its south edge
    (``6c + 3 + col`` for columns 0, 1, 2, west to east). 36 LEDs, then the seat
    LEDs (36.. in ``seats`` order). The lit row and column cross at the site.
    """
    sites: list[tuple[int, ...]] = [()] * SITES
    for city in range(CITIES):
        base = city * 6
        for row in range(ROWS):
            for col in range(COLS):
                sites[site_index(city, row, col)] = (base + row, base + 3 + col)
    return LedMap(
        count=CITIES * 6 + len(seats),
        sites=tuple(sites),
        seats=_seat_leds(CITIES * 6, seats),
        layout="edges",
        description="per city: row LEDs on the west edge, column LEDs on the south edge; seats",
    )


LAYOUTS: dict[str, Callable[[], LedMap]] = {"serpentine": serpentine, "edges": edges}


def builtin(name: str) -> LedMap:
    """A built-in layout by name ("serpentine" or "edges")."""
    try:
        return LAYOUTS[name]()
    except KeyError:
        raise ValueError(
            f"unknown LED layout {name!r}: expected one of {', '.join(LAYOUTS)}"
        ) from None
