"""Sites, blocks, towers and the board: small immutable values."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from companion.rules import jsonkeys
from companion.rules.errors import InvalidBoardError, NotationError
from companion.rules.topology import Topology, default_topology

BOARD_FORMAT = "manhattan-board/1"
MAX_STOREYS = 4


@dataclass(frozen=True, order=True)
class Site:
    """A building site: city index, row (0 = north) and column (0 = west)."""

    city: int
    row: int
    col: int
    # worked out once: a replay's search looks sites up in dicts millions of times
    _hash: int = field(init=False, repr=False, compare=False)
    _index: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        topo = default_topology()
        if not (0 <= self.city < topo.cities and 0 <= self.row < topo.rows
                and 0 <= self.col < topo.cols):
            raise InvalidBoardError(
                f"site out of range: city {self.city}, row {self.row}, col {self.col}"
            )
        # the hash a frozen dataclass would give (so sets and dicts order as before)
        object.__setattr__(self, "_hash", hash((self.city, self.row, self.col)))
        object.__setattr__(self, "_index", self.city * topo.sites_per_city
                           + self.row * topo.cols + self.col)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Site], tuple[int, int, int]]:
        return Site, (self.city, self.row, self.col)

    @property
    def index(self) -> int:
        """0..53: city * 9 + row * 3 + col."""
        return self._index

    @classmethod
    def from_index(cls, index: int) -> Site:
        topo = default_topology()
        if not 0 <= index < topo.site_count:
            raise InvalidBoardError(f"site index out of range: {index}")
        city, rest = divmod(index, topo.sites_per_city)
        row, col = divmod(rest, topo.cols)
        return cls(city, row, col)

    @property
    def local_name(self) -> str:
        """Compass name inside the city: NW, N, NE, W, C, E, SW, S, SE."""
        return default_topology().site_names[self.row][self.col]

    @property
    def name(self) -> str:
        """Board-absolute display name, e.g. ``Frankfurt NE``."""
        return f"{default_topology().city_names[self.city]} {self.local_name}"

    @property
    def code(self) -> str:
        """Compact notation: city index then local name, e.g. ``2NE``."""
        return f"{self.city}{self.local_name}"

    def to_json(self) -> dict[str, int]:
        """The site as formats.md references it: ``{"city", "row", "col"}``."""
        return {"city": self.city, "row": self.row, "col": self.col}

    @classmethod
    def from_json(cls, entry: Any, where: str = "site") -> Site:
        """The inverse of :meth:`to_json`; a malformed reference raises InvalidBoardError."""
        return _parse_site_ref(entry, where)

    @classmethod
    def parse(cls, text: str) -> Site:
        """Parse ``2NE``, ``Frankfurt NE``, ``2:0:2`` or a bare index ``20``."""
        topo = default_topology()
        s = text.strip()
        m = re.fullmatch(r"(\d+)\s*([A-Za-z]{1,2})", s)
        if m:
            r, c = topo.site_name_index(m.group(2))
            return cls._checked(int(m.group(1)), r, c, text)
        m = re.fullmatch(r"(\d+)[:,/](\d+)[:,/](\d+)", s)
        if m:
            return cls._checked(int(m.group(1)), int(m.group(2)), int(m.group(3)), text)
        if s.isdigit():
            return cls.from_index(int(s))
        parts = s.rsplit(None, 1)
        if len(parts) == 2:
            city = topo.city_index(parts[0])
            r, c = topo.site_name_index(parts[1])
            return cls(city, r, c)
        raise NotationError(f"cannot read site {text!r}")

    @classmethod
    def _checked(cls, city: int, row: int, col: int, text: str) -> Site:
        try:
            return cls(city, row, col)
        except InvalidBoardError:
            raise NotationError(f"site out of range: {text!r}") from None

    def __repr__(self) -> str:
        return f"Site({self.city}, {self.row}, {self.col})"

    def __str__(self) -> str:
        return self.code


def all_sites(topology: Topology | None = None) -> tuple[Site, ...]:
    if topology is None:
        return _default_sites()
    return tuple(Site.from_index(i) for i in range(topology.site_count))


@lru_cache(maxsize=1)
def _default_sites() -> tuple[Site, ...]:
    """Every site of the default board, by index (sites are immutable: shared freely)."""
    return tuple(Site.from_index(i) for i in range(default_topology().site_count))


@dataclass(frozen=True, order=True)
class Block:
    """One building block: a colour and 1..4 storeys."""

    color: str
    storeys: int
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.storeys, int) or not 1 <= self.storeys <= MAX_STOREYS:
            raise InvalidBoardError(f"a block has 1 to 4 storeys, not {self.storeys!r}")
        if not isinstance(self.color, str) or not self.color:
            raise InvalidBoardError(f"a block needs a colour name, not {self.color!r}")
        # a board's hash hashes every block on it (see Site)
        object.__setattr__(self, "_hash", hash((self.color, self.storeys)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Block], tuple[str, int]]:
        # not the cached hash: a string's hash differs from one process to the next
        return Block, (self.color, self.storeys)

    def __repr__(self) -> str:
        return f"Block({self.color!r}, {self.storeys})"

    def __str__(self) -> str:
        return f"{self.color}{self.storeys}"


Tower = tuple[Block, ...]


def tower_height(tower: Sequence[Block]) -> int:
    return sum(b.storeys for b in tower)


def tower_owner(tower: Sequence[Block]) -> str | None:
    return tower[-1].color if tower else None


def storeys_of(tower: Sequence[Block], color: str) -> int:
    return sum(b.storeys for b in tower if b.color == color)


@dataclass(frozen=True)
class SiteView:
    """What a photo can tell of a site: height and top colour, no stack."""

    height: int
    owner: str


@dataclass(frozen=True)
class Board:
    """The 54 towers, bottom block first. Immutable: changes return a new board."""

    towers: tuple[Tower, ...]

    def __post_init__(self) -> None:
        if len(self.towers) != default_topology().site_count:
            raise InvalidBoardError(f"a board has {default_topology().site_count} sites")

    def __hash__(self) -> int:
        # kept once worked out: a replay's search keys its hypotheses by board
        cached: int | None = self.__dict__.get("_hash")
        if cached is None:
            cached = hash((self.towers,))
            object.__setattr__(self, "_hash", cached)
        return cached

    def __reduce__(self) -> tuple[type[Board], tuple[tuple[Tower, ...]]]:
        return Board, (self.towers,)

    @classmethod
    def empty(cls) -> Board:
        return cls(tuple(() for _ in range(default_topology().site_count)))

    @classmethod
    def from_towers(cls, towers: Mapping[Site, Iterable[Block]]) -> Board:
        cells: list[Tower] = [() for _ in range(default_topology().site_count)]
        for site, blocks in towers.items():
            cells[site.index] = tuple(blocks)
        return cls(tuple(cells))

    def tower(self, site: Site) -> Tower:
        return self.towers[site.index]

    def height(self, site: Site) -> int:
        return tower_height(self.towers[site.index])

    def owner(self, site: Site) -> str | None:
        return tower_owner(self.towers[site.index])

    def occupied(self) -> Iterator[Site]:
        sites = _default_sites()
        for i, t in enumerate(self.towers):
            if t:
                yield sites[i]

    def with_tower(self, site: Site, tower: Iterable[Block]) -> Board:
        cells = list(self.towers)
        new = cells[site.index] = tuple(tower)
        board = Board(tuple(cells))
        known: dict[Site, SiteView] | None = self.__dict__.get("_views")
        if known is not None:
            # this board's views but one: the next board's without a pass over the
            # towers (in site order, as worked out from the towers)
            if site in known or not new:
                views = dict(known)
                if new:
                    views[site] = SiteView(tower_height(new), new[-1].color)
                else:
                    views.pop(site, None)
            else:
                at = site.index
                views = {s: v for s, v in known.items() if s.index < at}
                views[site] = SiteView(tower_height(new), new[-1].color)
                views.update((s, v) for s, v in known.items() if s.index > at)
            object.__setattr__(board, "_views", views)
        return board

    def with_block(self, site: Site, block: Block) -> Board:
        return self.with_tower(site, self.towers[site.index] + (block,))

    def storeys_by_color(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.towers:
            for b in t:
                out[b.color] = out.get(b.color, 0) + b.storeys
        return out

    def blocks_by_color(self) -> dict[str, dict[int, int]]:
        out: dict[str, dict[int, int]] = {}
        for t in self.towers:
            for b in t:
                sizes = out.setdefault(b.color, {})
                sizes[b.storeys] = sizes.get(b.storeys, 0) + 1
        return out

    def views(self) -> dict[Site, SiteView]:
        """Height and owner of every occupied site: what scoring needs (a copy of the
        board's own, kept once worked out: a replay's search asks tens of thousands of
        boards, each one build from a board it asked before)."""
        cached: dict[Site, SiteView] | None = self.__dict__.get("_views")
        if cached is None:
            sites = _default_sites()
            cached = {sites[i]: SiteView(tower_height(t), t[-1].color)
                      for i, t in enumerate(self.towers) if t}
            object.__setattr__(self, "_views", cached)
        return dict(cached)

    def to_json(self, colors: Sequence[str] | None = None, *,
                blocks: bool = True) -> dict[str, Any]:
        sites = []
        for site in self.occupied():
            t = self.tower(site)
            entry: dict[str, Any] = {
                **site.to_json(), "height": tower_height(t), "owner": t[-1].color,
            }
            if blocks:
                entry["blocks"] = [{"color": b.color, "storeys": b.storeys} for b in t]
            sites.append(entry)
        out: dict[str, Any] = {"format": BOARD_FORMAT}
        if colors is not None:
            out["colors"] = list(colors)
        out["sites"] = sites
        return out

    def __repr__(self) -> str:
        occupied = {s: self.tower(s) for s in self.occupied()}
        return f"Board.from_towers({occupied!r})"


def _letter(color: str) -> str:
    return "k" if color == "black" else color[0]


def board_text_diagram(board: Board) -> str:
    """A terminal picture: each site as height + owner initial, cities in their grid."""
    topo = default_topology()
    width = topo.cols * 4
    lines: list[str] = []
    for crow in range(topo.city_grid[0]):
        cities = [crow * topo.city_grid[1] + cc for cc in range(topo.city_grid[1])]
        lines.append("   ".join(f"{topo.city_names[c][:width]:<{width}}" for c in cities))
        for r in range(topo.rows):
            cells = []
            for city in cities:
                row = ""
                for c in range(topo.cols):
                    t = board.tower(Site(city, r, c))
                    row += f"{tower_height(t):>3}{_letter(t[-1].color)}" if t else "   ."
                cells.append(row)
            lines.append("   ".join(cells))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


#: the longest colour name a board may declare (one column of the score table)
MAX_COLOR_NAME = 20


def parse_board_json(data: Any, *, known_colors: Sequence[str] | None = None) -> tuple[
    dict[Site, SiteView], dict[Site, Tower], list[str] | None, list[Site]
]:
    """Validate a ``manhattan-board/1`` object.

    Returns (views, towers-with-blocks, declared colours, unseen sites). Every
    problem raises :class:`InvalidBoardError` with a one-line message.
    """
    if not isinstance(data, dict):
        raise InvalidBoardError("board JSON must be an object")
    fmt = data.get("format", BOARD_FORMAT)
    if fmt != BOARD_FORMAT:
        raise InvalidBoardError(f"unsupported board format {fmt!r} (expected {BOARD_FORMAT})")
    colors_raw = data.get("colors")
    colors: list[str] | None = None
    if colors_raw is not None:
        if not isinstance(colors_raw, list) or not all(
                isinstance(c, str) and c for c in colors_raw):
            raise InvalidBoardError("'colors' must be a list of colour names")
        odd = next((c for c in colors_raw if len(c) > MAX_COLOR_NAME or not c.isprintable()
                    or c != c.strip()), None)
        if odd is not None:
            # (a name with a line break or a terminal's escape codes broke the score table)
            raise InvalidBoardError(f"'colors': {odd[:MAX_COLOR_NAME]!r} is no colour name "
                                    f"(printable, at most {MAX_COLOR_NAME} characters)")
        if len(set(colors_raw)) != len(colors_raw):
            raise InvalidBoardError("'colors' names a colour twice")
        colors = list(colors_raw)
    allowed = set(colors) if colors is not None else (set(known_colors) if known_colors else None)
    sites_raw = data.get("sites", [])
    if not isinstance(sites_raw, list):
        raise InvalidBoardError("'sites' must be a list")
    views: dict[Site, SiteView] = {}
    towers: dict[Site, Tower] = {}
    for n, entry in enumerate(sites_raw):
        site = _parse_site_ref(entry, f"sites[{n}]")
        if site in views:
            raise InvalidBoardError(f"sites[{n}]: site {site.name} is listed twice")
        height = entry.get("height")
        owner = entry.get("owner")
        blocks_raw = entry.get("blocks")
        tower: Tower | None = None
        if blocks_raw is not None:
            if not isinstance(blocks_raw, list) or not blocks_raw:
                raise InvalidBoardError(f"sites[{n}]: 'blocks' must be a non-empty list")
            parsed = []
            for k, b in enumerate(blocks_raw):
                if not isinstance(b, dict):
                    raise InvalidBoardError(f"sites[{n}].blocks[{k}] must be an object")
                color, storeys = b.get("color"), b.get("storeys")
                if (not isinstance(storeys, int) or isinstance(storeys, bool)
                        or not 1 <= storeys <= MAX_STOREYS):
                    raise InvalidBoardError(
                        f"sites[{n}].blocks[{k}]: storeys must be 1 to 4, not {storeys!r}")
                if not isinstance(color, str) or not color:
                    raise InvalidBoardError(f"sites[{n}].blocks[{k}]: missing colour")
                _check_color(color, allowed, f"sites[{n}].blocks[{k}]")
                parsed.append(Block(color, storeys))
            tower = tuple(parsed)
            if height is None:
                height = tower_height(tower)
            if owner is None:
                owner = tower[-1].color
            if height != tower_height(tower):
                raise InvalidBoardError(
                    f"sites[{n}] ({site.name}): height {height} disagrees with its blocks "
                    f"({tower_height(tower)} storeys)")
            if owner != tower[-1].color:
                raise InvalidBoardError(
                    f"sites[{n}] ({site.name}): owner {owner!r} is not the top block's colour "
                    f"{tower[-1].color!r}")
        if not isinstance(height, int) or isinstance(height, bool) or height < 1:
            raise InvalidBoardError(
                f"sites[{n}] ({site.name}): height must be a positive whole number, not {height!r}")
        if not isinstance(owner, str) or not owner:
            raise InvalidBoardError(f"sites[{n}] ({site.name}): missing owner colour")
        _check_color(owner, allowed, f"sites[{n}] ({site.name})")
        views[site] = SiteView(height, owner)
        if tower is not None:
            towers[site] = tower
    unseen: list[Site] = []
    unseen_raw = data.get("unseen", []) or []
    if not isinstance(unseen_raw, list):
        raise InvalidBoardError("'unseen' must be a list")
    for n, entry in enumerate(unseen_raw):
        site = _parse_site_ref(entry, f"unseen[{n}]")
        if site in views:
            raise InvalidBoardError(f"unseen[{n}]: {site.name} is also listed in 'sites'")
        if site in unseen:
            raise InvalidBoardError(f"unseen[{n}]: {site.name} is listed twice")
        unseen.append(site)
    return views, towers, colors, unseen


def _parse_site_ref(entry: Any, where: str) -> Site:
    if not isinstance(entry, dict):
        raise InvalidBoardError(f"{where} must be an object")
    vals = []
    for key in ("city", "row", "col"):
        v = entry.get(key)
        if not isinstance(v, int) or isinstance(v, bool):
            raise InvalidBoardError(f"{where}: '{key}' must be a whole number, not {v!r}")
        vals.append(v)
    try:
        return Site(vals[0], vals[1], vals[2])
    except InvalidBoardError as exc:
        raise InvalidBoardError(f"{where}: {exc}") from None


def _check_color(color: str, allowed: set[str] | None, where: str) -> None:
    if allowed is not None and color not in allowed:
        raise InvalidBoardError(
            f"{where}: unknown colour {color!r} (colours in play: {', '.join(sorted(allowed))})")


def load_board_json(text: str, **kw: Any) -> tuple[
    dict[Site, SiteView], dict[Site, Tower], list[str] | None, list[Site]
]:
    try:
        data = jsonkeys.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidBoardError(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except jsonkeys.DuplicateKeyError as exc:
        raise InvalidBoardError(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise InvalidBoardError("malformed JSON: nested too deeply") from None
    except ValueError:  # Python's own limit on a number's digits (4300)
        raise InvalidBoardError("malformed JSON: a number of thousands of digits") from None
    return parse_board_json(data, **kw)
