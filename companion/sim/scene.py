"""What is on the table (Scene), how it is lit (Lighting) and the hands in the way (Hand).

These are plain values: the renderer turns them into pixels, the scene generators in
``companion.sim.scenes`` draw them at random. Jitter that must stay put between the frames
of a video (where each tower stands, where each card stack lies) derives from
``Scene.layout_seed``, not from the render's random generator.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from companion.rules.board import Block, Board, Site
from companion.rules.topology import Seat
from companion.sim.layout import SEAT_FORWARD, Layout, default_layout, seat_right

RGB = tuple[int, int, int]

#: Skin tones (sRGB) from light to dark.
SKIN_TONES: tuple[RGB, ...] = (
    (236, 200, 176), (224, 178, 150), (210, 160, 125), (190, 140, 105),
    (160, 112, 80), (128, 86, 60), (96, 64, 45), (70, 48, 36),
)
SLEEVES: tuple[RGB, ...] = (
    (30, 40, 70), (200, 200, 205), (120, 30, 40), (60, 60, 60), (40, 90, 60), (220, 180, 60),
    (90, 70, 50), (235, 235, 235),
)
TABLES: dict[str, RGB] = {
    "oak": (196, 156, 110), "walnut": (118, 82, 56), "pine": (214, 184, 140),
    "grey": (150, 148, 144), "white": (210, 206, 198), "dark": (70, 56, 46),
}


@dataclass(frozen=True)
class Thing:
    """A loose box lying on the board or the table (mm, the board frame): a block
    fallen off its tower onto its side, a cup, a phone."""

    x: float
    y: float
    size: tuple[float, float, float]  # along its own x and y, and its height
    rgb: RGB
    angle_deg: float = 0.0


@dataclass(frozen=True)
class Scene:
    """The physical table: board towers, colours, each seat's top played card."""

    board: Board
    colors: Mapping[str, RGB]
    cards: Mapping[Seat, tuple[int, int] | None] = field(default_factory=dict)
    stack_counts: Mapping[Seat, int] = field(default_factory=dict)
    layout_seed: int = 0
    table: str = "oak"
    deck: bool = True  # a face-down draw pile beside the board (a distractor)
    #: each block's own placement error on top of its tower's (mm, degrees): players
    #: stack blocks one by one, so a top block can sit a few mm off the foot
    block_jitter: tuple[float, float] = (0.0, 0.0)
    layout: Layout = field(default_factory=default_layout, compare=False, repr=False)
    things: tuple[Thing, ...] = ()  # loose on the board or the table

    def colour_names(self) -> list[str]:
        return list(self.colors)

    def tower_pose(self, site: Site) -> tuple[float, float, float]:
        """(x, y, angle_deg) of the tower at ``site``: placement jitter from the layout seed."""
        return _tower_pose(self.layout, self.layout_seed, site.index)

    def block_poses(self, site: Site) -> list[tuple[float, float, float]]:
        """(x, y, angle_deg) of each block at ``site``, bottom first.

        Without ``block_jitter`` every block stands at the tower's pose (one prism).
        """
        x, y, ang = self.tower_pose(site)
        n = len(self.board.tower(site))
        mm, deg = self.block_jitter
        if mm <= 0 and deg <= 0:
            return [(x, y, ang)] * n
        lay = self.layout
        out = []
        for k in range(n):
            rng = np.random.default_rng([self.layout_seed, 13, site.index, k])
            a = ang + float(rng.uniform(-deg, deg))
            dx, dy = (float(v) for v in rng.uniform(-mm, mm, 2))
            half = lay.footprint / 2 * (abs(math.cos(math.radians(a)))
                                        + abs(math.sin(math.radians(a))))
            room = max(0.0, lay.pitch / 2 - 0.75 - half)
            cx, cy = lay.site_xy[site.index]
            out.append((float(cx + np.clip(x + dx - cx, -room, room)),
                        float(cy + np.clip(y + dy - cy, -room, room)), a))
        return out

    def top_pose(self, site: Site) -> tuple[float, float, float]:
        """(x, y, angle_deg) of the top block at ``site`` (the tower's pose when empty)."""
        poses = self.block_poses(site)
        return poses[-1] if poses else self.tower_pose(site)

    def stack_pose(self, seat: Seat) -> tuple[float, float]:
        """(offset along the edge mm, angle deg) of a seat's played-card stack."""
        return _stack_pose(self.layout, self.layout_seed, "SWNE".index(seat.value))


@lru_cache(maxsize=4096)
def _tower_pose(lay: Layout, layout_seed: int, index: int) -> tuple[float, float, float]:
    """:meth:`Scene.tower_pose`, kept: a video's frames and the truth ask it again and
    again, and each answer seeds a generator. (The cache holds the layout itself.)"""
    rng = np.random.default_rng([layout_seed, 11, index])
    ang = float(rng.uniform(-lay.jitter_deg, lay.jitter_deg))
    r = lay.jitter_mm * math.sqrt(float(rng.random()))
    phi = float(rng.uniform(0, 2 * math.pi))
    dx, dy = r * math.cos(phi), r * math.sin(phi)
    # never let a rotated footprint reach into the neighbouring site
    half = lay.footprint / 2 * (abs(math.cos(math.radians(ang)))
                                + abs(math.sin(math.radians(ang))))
    room = max(0.0, lay.pitch / 2 - 0.75 - half)
    dx, dy = float(np.clip(dx, -room, room)), float(np.clip(dy, -room, room))
    x, y = lay.site_xy[index]
    return float(x + dx), float(y + dy), ang


@lru_cache(maxsize=1024)
def _stack_pose(lay: Layout, layout_seed: int, k: int) -> tuple[float, float]:
    """:meth:`Scene.stack_pose` of seat ``k`` (S W N E), kept like :func:`_tower_pose`."""
    rng = np.random.default_rng([layout_seed, 23, k])
    return (float(rng.uniform(-lay.card_along, lay.card_along)),
            float(rng.uniform(-lay.card_angle, lay.card_angle)))


def kelvin_to_rgb(kelvin: float) -> np.ndarray:
    """Linear RGB of a black body (Tanner Helland's fit), scaled to unit luminance."""
    t = kelvin / 100.0
    if t <= 66:
        r = 255.0
        g = 99.4708025861 * math.log(t) - 161.1195681661
        b = 0.0 if t <= 19 else 138.5177312231 * math.log(t - 10) - 305.0447927307
    else:
        r = 329.698727446 * (t - 60) ** -0.1332047592
        g = 288.1221695283 * (t - 60) ** -0.0755148492
        b = 255.0
    srgb = np.clip(np.array([r, g, b]) / 255.0, 0, 1)
    lin = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    lum = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return lin / max(lum, 1e-6)


@dataclass(frozen=True)
class Lighting:
    """One lamp (point light, colour temperature) plus ambient room light, and the camera's
    white balance and exposure."""

    kelvin: float = 4000.0
    ambient_kelvin: float = 5500.0
    ambient: float = 0.35
    direct: float = 0.75
    light_pos: tuple[float, float, float] = (250.0, -350.0, 1300.0)
    softness_mm: float = 6.0  # penumbra width on the table; ~1 = hard shadows
    specular: float = 0.3
    shininess: float = 150.0
    exposure: float = 1.0
    awb: float = 0.7  # 0 = camera keeps the lamp's cast, 1 = fully white-balanced

    @property
    def lamp_rgb(self) -> np.ndarray:
        return kelvin_to_rgb(self.kelvin)

    @property
    def ambient_rgb(self) -> np.ndarray:
        return kelvin_to_rgb(self.ambient_kelvin)

    @property
    def white_balance(self) -> np.ndarray:
        """Per-channel camera gain: undoes part of the mixed light's cast."""
        mix = (self.lamp_rgb * self.direct + self.ambient_rgb * self.ambient) / (
            self.direct + self.ambient)
        g = mix ** -self.awb
        lum = 0.2126 * g[0] + 0.7152 * g[1] + 0.0722 * g[2]
        return g / lum

    def to_json(self) -> dict[str, Any]:
        return {"kelvin": self.kelvin, "ambient_kelvin": self.ambient_kelvin,
                "ambient": self.ambient, "direct": self.direct,
                "light_pos_mm": list(self.light_pos), "softness_mm": self.softness_mm,
                "specular": self.specular, "exposure": self.exposure, "awb": self.awb}


def random_lighting(rng: np.random.Generator) -> Lighting:
    """Warm ~2700 K to cold ~6500 K lamps, hard or soft shadows, dim to bright rooms."""
    kelvin = float(rng.uniform(2700, 6500))
    amb_k = float(rng.uniform(4500, 7500)) if rng.random() < 0.6 else kelvin
    az = rng.uniform(0, 2 * math.pi)
    horiz = rng.uniform(0, 900)
    pos = (float(horiz * math.cos(az)), float(horiz * math.sin(az)), float(rng.uniform(700, 1800)))
    soft = float(rng.uniform(0.5, 2.0)) if rng.random() < 0.4 else float(rng.uniform(4, 22))
    return Lighting(kelvin=kelvin, ambient_kelvin=amb_k, ambient=float(rng.uniform(0.15, 0.5)),
                    direct=float(rng.uniform(0.4, 1.0)), light_pos=pos, softness_mm=soft,
                    specular=float(rng.uniform(0.05, 0.4)),
                    shininess=float(rng.uniform(80, 400)),
                    exposure=float(np.clip(rng.normal(1.0, 0.12), 0.75, 1.3)),
                    awb=float(rng.uniform(0.4, 0.95)))


@dataclass(frozen=True)
class Hand:
    """An arm reaching in from a board edge, palm down, fingertips at ``tip_xy``.

    The hand is a slightly tilted plane (rising toward the shoulder); it may hold a block
    under its fingers (for videos of a move being made).
    """

    seat: Seat
    tip_xy: tuple[float, float]
    tip_height: float = 80.0
    yaw_deg: float = 0.0
    tilt_deg: float = 15.0
    skin: RGB = SKIN_TONES[2]
    sleeve: RGB | None = SLEEVES[0]
    scale: float = 1.0
    right_handed: bool = True
    holding: Block | None = None
    holding_color: RGB | None = None

    def frame(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tip point 3D, unit 'forward' toward the tips, unit 'left') in board mm."""
        fx, fy = SEAT_FORWARD[self.seat]
        a = math.radians(self.yaw_deg)
        fwd = np.array([fx * math.cos(a) - fy * math.sin(a), fx * math.sin(a) + fy * math.cos(a),
                        0.0])
        left = np.array([-fwd[1], fwd[0], 0.0])
        tip = np.array([self.tip_xy[0], self.tip_xy[1], self.tip_height])
        return tip, fwd, left

    def point(self, u: float, v: float, lift: float = 0.0) -> np.ndarray:
        """Hand-plane point ``u`` mm along the arm (negative toward the shoulder), ``v`` left."""
        tip, fwd, left = self.frame()
        z = -u * math.tan(math.radians(self.tilt_deg)) + lift
        return tip + u * fwd + v * left + np.array([0.0, 0.0, z])


def _tower_top(scene_board: Board, layout: Layout, xy: np.ndarray, radius: float) -> float:
    """Highest tower top within ``radius`` of ``xy``."""
    best = 0.0
    for site in scene_board.occupied():
        if np.hypot(*(layout.site_xy[site.index] - xy)) < radius:
            best = max(best, scene_board.height(site) * layout.storey)
    return best


def random_hand(rng: np.random.Generator, board: Board | None = None, *,
                seat: Seat | None = None, target: tuple[float, float] | None = None,
                layout: Layout | None = None) -> Hand:
    """A hand reaching toward a site (or anywhere over the board) from a random edge,
    held high enough above the towers under it."""
    lay = layout or default_layout()
    seat = seat if seat is not None else Seat(rng.choice(["S", "W", "N", "E"]))
    if target is None:
        i = int(rng.integers(0, lay.site_count))
        target = (float(lay.site_xy[i][0] + rng.normal(0, 8)),
                  float(lay.site_xy[i][1] + rng.normal(0, 8)))
    hand = Hand(seat=seat, tip_xy=target, tip_height=0.0,
                yaw_deg=float(rng.uniform(-25, 25)), tilt_deg=float(rng.uniform(8, 25)),
                skin=SKIN_TONES[int(rng.integers(0, len(SKIN_TONES)))],
                sleeve=(SLEEVES[int(rng.integers(0, len(SLEEVES)))]
                        if rng.random() < 0.75 else None),
                scale=float(rng.uniform(0.88, 1.12)), right_handed=bool(rng.random() < 0.85))
    clearance = 0.0
    if board is not None:
        for u in np.arange(0.0, -420.0, -20.0):
            p = hand.point(float(u), 0.0)
            top = _tower_top(board, lay, p[:2], 80.0 * hand.scale)
            clearance = max(clearance, top - (p[2] - 0.0))
    h = clearance + float(rng.uniform(12, 70))
    return dataclasses.replace(hand, tip_height=h)


def tilt_to_clear(board: Board, hand: Hand, layout: Layout | None = None,
                  margin: float = 12.0, max_deg: float = 60.0) -> float:
    """The smallest arm tilt (deg, at least the hand's own) that keeps the arm above every
    tower between the fingertips and the player's edge."""
    lay = layout or default_layout()
    tip, fwd, _ = hand.frame()
    need = math.radians(hand.tilt_deg)
    for site in board.occupied():
        d = lay.site_xy[site.index] - tip[:2]
        u = -float(d @ fwd[:2])  # distance behind the fingertips
        across = abs(float(d[0] * fwd[1] - d[1] * fwd[0]))
        if u <= 5.0 or across > 80.0 * hand.scale:
            continue
        rise = board.height(site) * lay.storey + margin - hand.tip_height
        if rise > 0:
            need = max(need, math.atan2(rise, u - 18.0 if u > 30.0 else 12.0))
    return min(math.degrees(need), max_deg)


def seat_axes(seat: Seat) -> tuple[np.ndarray, np.ndarray]:
    """(forward, right) unit vectors of a seat, as arrays."""
    return np.asarray(SEAT_FORWARD[seat], np.float64), np.asarray(seat_right(seat), np.float64)
