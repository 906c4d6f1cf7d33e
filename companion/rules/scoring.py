"""Round scoring: unique tallest building 3, city majority 2, each building 1.

Scoring needs only each site's height and owner, so it works on a photo's
reading as well as on a game's board.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.rules.board import Board, Site, SiteView
from companion.rules.topology import default_topology

TALLEST_POINTS = 3
MAJORITY_POINTS = 2
BUILDING_POINTS = 1


@dataclass(frozen=True)
class ColorScore:
    tallest: int = 0
    majorities: int = 0
    buildings: int = 0

    @property
    def total(self) -> int:
        return self.tallest + self.majorities + self.buildings

    def to_json(self) -> dict[str, int]:
        return {"tallest": self.tallest, "majorities": self.majorities,
                "buildings": self.buildings, "total": self.total}


@dataclass(frozen=True)
class Score:
    """One scoring of a board, with the reasons behind each point."""

    colors: dict[str, ColorScore]
    tallest_height: int
    tallest_sites: tuple[Site, ...]  # every building of the greatest height
    tallest_owner: str | None  # set only when the tallest building is unique
    majorities: tuple[str | None, ...]  # per city: the colour with the majority, or None
    city_counts: tuple[dict[str, int], ...] = field(default=())

    def total(self, color: str) -> int:
        return self.colors[color].total

    def players(self, players: Iterable[tuple[str, Sequence[str]]]) -> dict[str, int]:
        """Totals per player, summing a two-colour player's colours."""
        return {name: sum(self.colors[c].total for c in colors if c in self.colors)
                for name, colors in players}

    def to_json(self) -> dict[str, Any]:
        topo = default_topology()
        return {
            "colors": {c: s.to_json() for c, s in self.colors.items()},
            "breakdown": {
                "tallest": {
                    "height": self.tallest_height,
                    "sites": [s.name for s in self.tallest_sites],
                    "owner": self.tallest_owner,
                    "tie": len(self.tallest_sites) > 1,
                },
                "majorities": {
                    topo.city_names[i]: {"owner": owner, "counts": dict(self.city_counts[i])}
                    for i, owner in enumerate(self.majorities)
                } if self.city_counts else {},
            },
        }


def score_views(views: Mapping[Site, SiteView], colors: Sequence[str]) -> Score:
    """Score a board given as height and owner per occupied site.

    ``colors`` are the colours in play; each appears in the result, zeros
    included. A colour on the board but not in ``colors`` is scored too, so
    no point is silently dropped.
    """
    order = list(colors) + sorted({v.owner for v in views.values()} - set(colors))
    tallest = {c: 0 for c in order}
    majorities = {c: 0 for c in order}
    buildings = {c: 0 for c in order}
    for view in views.values():
        buildings[view.owner] += BUILDING_POINTS
    best = max((v.height for v in views.values()), default=0)
    top_sites = tuple(sorted(s for s, v in views.items() if v.height == best)) if best else ()
    top_owner = None
    if len(top_sites) == 1:
        top_owner = views[top_sites[0]].owner
        tallest[top_owner] += TALLEST_POINTS
    topo = default_topology()
    city_owner: list[str | None] = []
    city_counts: list[dict[str, int]] = [{} for _ in range(topo.cities)]
    for site, view in views.items():
        counts = city_counts[site.city]
        counts[view.owner] = counts.get(view.owner, 0) + 1
    for counts in city_counts:
        winner = _strict_max(counts)
        city_owner.append(winner)
        if winner is not None:
            majorities[winner] += MAJORITY_POINTS
    scores = {c: ColorScore(tallest[c], majorities[c], buildings[c]) for c in order}
    return Score(scores, best, top_sites, top_owner, tuple(city_owner), tuple(city_counts))


def score_board(board: Board, colors: Sequence[str]) -> Score:
    return score_views(board.views(), colors)


def _strict_max(counts: Mapping[str, int]) -> str | None:
    """The key with more than any other single key, or None on a tie."""
    if not counts:
        return None
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]
