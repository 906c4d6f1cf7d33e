"""Board-profile geometry the renderer needs, read once from the profile (no numbers in code)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from companion.profiles import load_profile
from companion.rules.topology import Seat

#: Unit vector from a seat toward the board centre (the holder's "forward").
SEAT_FORWARD: dict[Seat, tuple[float, float]] = {
    Seat.S: (0.0, 1.0), Seat.N: (0.0, -1.0), Seat.W: (1.0, 0.0), Seat.E: (-1.0, 0.0),
}


def seat_right(seat: Seat) -> tuple[float, float]:
    """The holder's right hand: forward turned 90 degrees clockwise seen from above."""
    fx, fy = SEAT_FORWARD[seat]
    return (fy, -fx)


@dataclass(frozen=True, eq=False)
class Layout:
    """Every physical number of the board, in millimetres, from a board profile."""

    profile: dict[str, Any]
    board_size: tuple[float, float]
    city_centres: np.ndarray  # (6, 2)
    city_names: tuple[str, ...]
    rows: int
    cols: int
    pitch: float
    site_xy: np.ndarray  # (54, 2)
    footprint: float
    storey: float
    jitter_mm: float
    jitter_deg: float
    marker_size: float
    marker_quiet: float
    marker_centres: dict[int, tuple[float, float]]
    marker_dictionary: str
    card_size: tuple[float, float]
    card_cell: float
    card_top_offset: float
    card_grid_offsets: tuple[float, ...]
    card_marked_rgb: tuple[int, int, int]
    card_edge_gap: float
    card_along: float
    card_angle: float

    @property
    def site_count(self) -> int:
        return int(self.site_xy.shape[0])

    def colour_set(self, name: str) -> dict[str, tuple[int, int, int]]:
        """Colour names in play -> sRGB, e.g. the 2017 set maps 'blue' to 'blue2017'."""
        sets = self.profile["colour_sets"]
        if name not in sets:
            raise ValueError(f"unknown colour set {name!r} (have {', '.join(sets)})")
        cols = self.profile["colours"]
        return {k: tuple(int(c) for c in cols[v]) for k, v in sets[name].items()}  # type: ignore[misc]

    def marker_corners(self, marker_id: int) -> np.ndarray:
        """(4, 3) corners TL, TR, BR, BL with the marker's top facing +y."""
        cx, cy = self.marker_centres[marker_id]
        s = self.marker_size / 2
        return np.array([[cx - s, cy + s, 0], [cx + s, cy + s, 0],
                         [cx + s, cy - s, 0], [cx - s, cy - s, 0]], np.float64)

    def board_edge_point(self, seat: Seat) -> np.ndarray:
        fx, fy = SEAT_FORWARD[seat]
        w, h = self.board_size
        return np.array([-fx * w / 2, -fy * h / 2])

    def card_frame(self, seat: Seat, along: float, angle_deg: float,
                   gap: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(centre, right, forward) of a card lying in front of ``seat``, top edge to the board."""
        fx, fy = SEAT_FORWARD[seat]
        rx, ry = seat_right(seat)
        g = self.card_edge_gap if gap is None else gap
        e = self.board_edge_point(seat)
        centre = np.array([e[0] - fx * (g + self.card_size[1] / 2) + rx * along,
                           e[1] - fy * (g + self.card_size[1] / 2) + ry * along])
        t = np.deg2rad(angle_deg)
        c, s = np.cos(t), np.sin(t)
        right = np.array([c * rx - s * ry, s * rx + c * ry])
        fwd = np.array([c * fx - s * fy, s * fx + c * fy])
        return centre, right, fwd


def layout_from_profile(profile: dict[str, Any]) -> Layout:
    cities = profile["cities"]
    rows, cols = int(profile["sites"]["rows"]), int(profile["sites"]["cols"])
    pitch = float(profile["sites"]["pitch_mm"])
    xy = []
    for cx, cy in cities["centres_mm"]:
        for r in range(rows):
            for c in range(cols):
                xy.append((cx + (c - (cols - 1) / 2) * pitch, cy + ((rows - 1) / 2 - r) * pitch))
    blocks, markers, cards = profile["blocks"], profile["markers"], profile["cards"]
    return Layout(
        profile=profile,
        board_size=(float(profile["board"]["size_mm"][0]), float(profile["board"]["size_mm"][1])),
        city_centres=np.asarray(cities["centres_mm"], np.float64),
        city_names=tuple(str(n) for n in cities["names"]),
        rows=rows, cols=cols, pitch=pitch,
        site_xy=np.asarray(xy, np.float64),
        footprint=float(blocks["footprint_mm"]),
        storey=float(blocks["storey_mm"]),
        jitter_mm=float(blocks.get("jitter_mm", 0.0)),
        jitter_deg=float(blocks.get("jitter_deg", 0.0)),
        marker_size=float(markers["size_mm"]),
        marker_quiet=float(markers["quiet_zone_mm"]),
        marker_centres={int(k): (float(v[0]), float(v[1]))
                        for k, v in markers["centres_mm"].items()},
        marker_dictionary=str(markers["dictionary"]),
        card_size=(float(cards["size_mm"][0]), float(cards["size_mm"][1])),
        card_cell=float(cards["grid_cell_mm"]),
        card_top_offset=float(cards["grid_top_offset_mm"]),
        card_grid_offsets=tuple(float(v) for v in cards["grid_centre_offsets_mm"]),
        card_marked_rgb=tuple(int(v) for v in cards["marked_rgb"]),  # type: ignore[arg-type]
        card_edge_gap=float(cards["stack_edge_gap_mm"]),
        card_along=float(cards["stack_along_edge_mm"]),
        card_angle=float(cards["stack_angle_deg"]),
    )


@lru_cache(maxsize=4)
def default_layout() -> Layout:
    """The reference board's layout."""
    return layout_from_profile(load_profile())
