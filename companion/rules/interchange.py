"""The ``manhattan-board/1`` interchange: validation and ``companion score`` output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.rules.board import SiteView, Tower, parse_board_json
from companion.rules.editions import EDITIONS, STANDARD_SUPPLY
from companion.rules.errors import InvalidBoardError
from companion.rules.scoring import score_views
from companion.rules.topology import Seat

KNOWN_COLORS: tuple[str, ...] = tuple(dict.fromkeys(c for e in EDITIONS.values() for c in e.colors))


def colors_in_play(declared: list[str] | None, views: Mapping[Any, SiteView]) -> list[str]:
    """The declared colours, or the edition colour set that covers the board."""
    if declared is not None:
        return declared
    present = {v.owner for v in views.values()}
    for edition in EDITIONS.values():
        if present <= set(edition.colors):
            return list(edition.colors)
    # (reported as those alone, red and orange scored as if a game had them both)
    raise InvalidBoardError(f"colours of no one edition: {', '.join(sorted(present))} (name "
                            "the colours in play with 'colors')")


def check_possible(views: Mapping[Any, SiteView], towers: Mapping[Any, Tower],
                   colors: list[str]) -> None:
    """Refuse boards no box could build: more storeys or blocks than a colour owns, or
    more in all than the ``colors`` in play own together."""
    per_color = sum(s * n for s, n in STANDARD_SUPPLY)
    supply = dict(STANDARD_SUPPLY)
    storeys: dict[str, int] = {}
    sizes: dict[str, dict[int, int]] = {}
    for site, view in views.items():
        tower = towers.get(site)
        if tower is None:
            storeys[view.owner] = storeys.get(view.owner, 0) + 1  # at least its top storey
            continue
        for b in tower:
            storeys[b.color] = storeys.get(b.color, 0) + b.storeys
            d = sizes.setdefault(b.color, {})
            d[b.storeys] = d.get(b.storeys, 0) + 1
    for color, n in storeys.items():
        if n > per_color:
            raise InvalidBoardError(f"impossible board: {color} has {n} storeys, a colour has "
                                    f"only {per_color}")
    for color, d in sizes.items():
        for size, n in d.items():
            if n > supply[size]:
                raise InvalidBoardError(f"impossible board: {n} {color} blocks of {size} storeys,"
                                        f" a colour has only {supply[size]}")
    total_height = sum(v.height for v in views.values())
    n_colors = len(colors)
    if total_height > per_color * n_colors:
        raise InvalidBoardError(f"impossible board: {total_height} storeys in all, "
                                f"{n_colors} colour(s) have only {per_color * n_colors}")


def score_json(data: Any) -> dict[str, Any]:
    """The ``companion score --json`` object for one ``manhattan-board/1`` document."""
    known = None if isinstance(data, dict) and data.get("colors") is not None else KNOWN_COLORS
    views, towers, declared, _unseen = parse_board_json(data, known_colors=known)
    colors = colors_in_play(declared, views)
    check_possible(views, towers, colors)
    score = score_views(views, colors)
    out: dict[str, Any] = {"colors": {c: score.colors[c].to_json() for c in colors}}
    players = data.get("players") if isinstance(data, dict) else None
    if players is not None:
        out["players"] = _player_totals(players, colors, score.colors)
    out["breakdown"] = score.to_json()["breakdown"]
    return out


def _player_totals(players: Any, colors: list[str], scores: Mapping[str, Any]) -> dict[str, int]:
    if not isinstance(players, list):
        raise InvalidBoardError("'players' must be a list")
    out: dict[str, int] = {}
    seen: set[str] = set()
    for n, p in enumerate(players):
        if not isinstance(p, dict):
            raise InvalidBoardError(f"players[{n}] must be an object")
        name, pcolors, seat = p.get("name"), p.get("colors"), p.get("seat")
        if not isinstance(name, str) or not name:
            raise InvalidBoardError(f"players[{n}]: missing name")
        if name in out:
            raise InvalidBoardError(f"players[{n}]: player {name!r} is listed twice")
        if seat is not None and (not isinstance(seat, str)
                                 or seat not in {s.value for s in Seat}):
            raise InvalidBoardError(f"players[{n}]: unknown seat {seat!r}")
        if not isinstance(pcolors, list) or not pcolors:
            raise InvalidBoardError(f"players[{n}]: 'colors' must be a non-empty list")
        for c in pcolors:
            if not isinstance(c, str):
                raise InvalidBoardError(f"players[{n}]: colours must be names, not {c!r}")
            if c not in colors:
                raise InvalidBoardError(f"players[{n}]: unknown colour {c!r}")
            if c in seen:
                raise InvalidBoardError(f"players[{n}]: colour {c!r} belongs to two players")
            seen.add(c)
        out[name] = sum(scores[c].total for c in pcolors)
    return out
