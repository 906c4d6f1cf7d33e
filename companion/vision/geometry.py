"""Board-profile geometry in millimetres, and projection through a camera.

Every physical number (site pitch, block size, marker centres, card layout)
comes from the board profile so a table with other art only needs a new
profile file. Frame: origin at the board centre, +x East, +y North, +z up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.profiles import load_profile
from companion.rules import jsonkeys
from companion.rules.board import Site
from companion.rules.topology import Seat

FloatArray = np.ndarray

#: Unit vector from a seat toward the board centre ("forward" for the holder).
SEAT_FORWARD: dict[Seat, tuple[float, float]] = {
    Seat.S: (0.0, 1.0), Seat.N: (0.0, -1.0), Seat.W: (1.0, 0.0), Seat.E: (-1.0, 0.0),
}


def seat_right(seat: Seat) -> tuple[float, float]:
    """The holder's right hand: forward turned 90 degrees clockwise."""
    fx, fy = SEAT_FORWARD[seat]
    return (fy, -fx)


#: How far a picture's width-to-height ratio may differ from its camera file's (a
#: share) for the file to be scaled to it: 1280x720 and 1920x1080 are one shape,
#: 1366x768 is 0.05% off it; 4:3 against 16:9 is 25%
_SHAPE_TOLERANCE = 0.02


#: the widest picture a camera file may be for (a 48-megapixel phone is 8064 wide)
_MOST_PIXELS = 100_000
#: how many distortion coefficients OpenCV takes (none: no distortion)
_DIST_COUNTS = frozenset({0, 4, 5, 8, 12, 14})


def _all_numbers(value: Any) -> bool:
    """A list (of lists) of JSON numbers, none of them true or false."""
    if isinstance(value, list):
        return all(_all_numbers(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Intrinsics:
    """Pinhole camera with OpenCV distortion (k1, k2, p1, p2, k3)."""

    K: FloatArray
    dist: FloatArray
    size: tuple[int, int]  # (width, height)
    estimated: bool = False

    @classmethod
    def from_json(cls, data: dict[str, Any] | str | Path) -> Intrinsics:
        """Read the formats.md camera JSON (a dict, or a path to a file)."""
        if not isinstance(data, (dict, str, Path)):
            raise ValueError(f"malformed camera JSON: expected an object, got "
                             f"{type(data).__name__}")
        raw: Any = data if isinstance(data, dict) else jsonkeys.loads(
            Path(data).read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise ValueError(f"malformed camera JSON: expected an object, got "
                             f"{type(raw).__name__}")
        for key in ("camera_matrix", "dist_coeffs", "image_size"):
            if key in raw and not _all_numbers(raw[key]):
                # (a text "1280x720" was read a character at a time, true as 1)
                raise ValueError(f"malformed camera JSON: {key} must be a list of numbers")
        try:
            K = np.asarray(raw["camera_matrix"], dtype=np.float64).reshape(3, 3)
            dist = np.asarray(raw.get("dist_coeffs", [0, 0, 0, 0, 0]), dtype=np.float64).ravel()
            size = raw.get("image_size")
            if size is not None and (len(size) != 2 or any(
                    not float(v).is_integer() or abs(v) > _MOST_PIXELS for v in size)):
                raise ValueError(f"image_size must be a width and a height in whole pixels "
                                 f"(at most {_MOST_PIXELS}), got {str(size)[:40]}")
            w, h = (int(size[0]), int(size[1])) if size else (int(2 * K[0, 2]), int(2 * K[1, 2]))
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            raise ValueError(f"malformed camera JSON: {exc}") from None
        # checked here, not where a frame first divides by them
        if not (np.all(np.isfinite(K)) and np.all(np.isfinite(dist))):
            raise ValueError("malformed camera JSON: camera_matrix and dist_coeffs must be "
                             "finite numbers")
        if K[0, 0] <= 0 or K[1, 1] <= 0 or not np.allclose(K[2], (0.0, 0.0, 1.0), atol=1e-6):
            raise ValueError("malformed camera JSON: camera_matrix must be [[fx, 0, cx], "
                             "[0, fy, cy], [0, 0, 1]] with fx and fy above 0")
        if w <= 0 or h <= 0:
            raise ValueError(f"malformed camera JSON: image_size must be a width and a "
                             f"height above 0, got {w}x{h}")
        if dist.size not in _DIST_COUNTS:
            raise ValueError(f"malformed camera JSON: dist_coeffs must hold 4, 5, 8, 12 or 14 "
                             f"numbers (OpenCV's), got {dist.size}")
        if dist.size < 5:
            dist = np.concatenate([dist, np.zeros(5 - dist.size)])
        return cls(K, dist, (w, h))

    def to_json(self) -> dict[str, Any]:
        return {"camera_matrix": self.K.tolist(), "dist_coeffs": self.dist.tolist(),
                "image_size": list(self.size)}

    def scaled_to(self, size: tuple[int, int]) -> Intrinsics:
        """The same lens at another resolution (a camera file made at 1920x1080 used at
        720p), or turned a quarter (a phone photo taken upright).

        Raises ValueError for a picture of another shape: a crop, or a camera mode
        that reads another part of the sensor, where no scaling gives the lens.
        """
        if tuple(size) == tuple(self.size):
            return self
        w, h = self.size
        shape = (size[0] / size[1]) / (w / h)
        K, dist = self.K.copy(), self.dist.copy()
        if abs(shape * (w / h) ** 2 - 1.0) <= _SHAPE_TOLERANCE < abs(shape - 1.0):
            # upright: the focal lengths swap; which way it turned the picture does not
            # tell, so the principal point goes to the centre and the tangential terms
            # (p1, p2: they change sign with the direction) are left out
            K = np.array([[K[1, 1], 0.0, h / 2.0], [0.0, K[0, 0], w / 2.0], [0.0, 0.0, 1.0]])
            dist[2:4] = 0.0
            w, h = h, w
        elif abs(shape - 1.0) > _SHAPE_TOLERANCE:
            raise ValueError(f"the camera file is for {w}x{h} pictures, not {size[0]}x{size[1]} "
                             "(another shape: a crop, or another camera mode; calibrate at "
                             "this size)")
        K[0] *= size[0] / w
        K[1] *= size[1] / h
        return Intrinsics(K, dist, (int(size[0]), int(size[1])), self.estimated)

    @property
    def has_distortion(self) -> bool:
        return bool(np.any(np.abs(self.dist) > 1e-9))


@dataclass(frozen=True)
class Pose:
    """Board-to-camera transform plus the intrinsics it was solved with."""

    rvec: FloatArray
    tvec: FloatArray
    intrinsics: Intrinsics
    markers: tuple[int, ...] = ()
    error_px: float = 0.0
    _R: FloatArray = field(default=None, repr=False, compare=False)  # type: ignore[assignment, arg-type]

    def __post_init__(self) -> None:
        object.__setattr__(self, "rvec", np.asarray(self.rvec, np.float64).reshape(3, 1))
        object.__setattr__(self, "tvec", np.asarray(self.tvec, np.float64).reshape(3, 1))
        object.__setattr__(self, "_R", cv2.Rodrigues(self.rvec)[0])

    @property
    def R(self) -> FloatArray:
        return self._R

    def project(self, points: FloatArray) -> FloatArray:
        """Board mm (N, 3) -> distorted image pixels (N, 2)."""
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        img, _ = cv2.projectPoints(pts, self.rvec, self.tvec, self.intrinsics.K,
                                   self.intrinsics.dist)
        return img.reshape(-1, 2)

    def to_camera(self, points: FloatArray) -> FloatArray:
        """Board mm (N, 3) -> camera-frame mm (N, 3)."""
        pts = np.asarray(points, np.float64).reshape(-1, 3)
        return pts @ self.R.T + self.tvec.reshape(1, 3)

    @property
    def cache_key(self) -> tuple[Any, ...]:
        """Equal for the same camera and placement: what is derived from the pose
        alone (site strips, seat maps) is kept under it, since a still camera
        keeps its pose."""
        return (self.rvec.tobytes(), self.tvec.tobytes(), self.intrinsics.K.tobytes(),
                self.intrinsics.dist.tobytes(), self.intrinsics.size)

    @property
    def camera_centre(self) -> FloatArray:
        """The camera's optical centre in board millimetres."""
        return (-self.R.T @ self.tvec).ravel()

    @property
    def elevation_deg(self) -> float:
        """How steeply the camera looks down at the board: its optical axis' angle
        with the board plane (90: straight down), as :func:`look_at_pose` places it.
        How well heights can be read depends on it (docs/vision-errors.md)."""
        axis = self.R[2]  # the optical axis in board coordinates
        return float(np.degrees(np.arcsin(min(1.0, abs(float(axis[2]))))))

    def plane_homography(self, z: float = 0.0) -> FloatArray:
        """Undistorted homography from board (x, y) at height z to pixels."""
        R, t = self.R, self.tvec.ravel()
        M = np.column_stack([R[:, 0], R[:, 1], R[:, 2] * z + t])
        H = self.intrinsics.K @ M
        return H / H[2, 2]

    def with_intrinsics(self, intr: Intrinsics) -> Pose:
        return Pose(self.rvec, self.tvec, intr, self.markers, self.error_px)


@dataclass(frozen=True)
class CardLayout:
    size: tuple[float, float]  # width, height (mm)
    cell: float
    top_offset: float
    grid_offsets: tuple[float, ...]
    edge_gap: float
    along_edge: float
    angle_deg: float
    #: width of the printed dark frame along the card's edges (0: none known)
    frame: float = 0.0


@dataclass(frozen=True)
class BoardGeometry:
    """All board-profile numbers the vision code needs, as arrays."""

    board_size: tuple[float, float]
    sites: tuple[Site, ...]
    site_xy: FloatArray  # (54, 2) site centres
    footprint: float
    storey: float
    jitter_mm: float
    jitter_deg: float
    marker_size: float
    marker_quiet: float
    marker_centres: dict[int, tuple[float, float]]
    marker_dictionary: str
    colours: dict[str, tuple[int, int, int]]
    colour_sets: dict[str, dict[str, str]]
    card: CardLayout
    #: blocks of each colour by storeys (a reading can hold no more than these)
    supply: dict[int, int] = field(default_factory=dict)

    @classmethod
    def from_profile(cls, profile: dict[str, Any]) -> BoardGeometry:
        cities = profile["cities"]
        srows, scols = int(profile["sites"]["rows"]), int(profile["sites"]["cols"])
        pitch = float(profile["sites"]["pitch_mm"])
        sites: list[Site] = []
        xy: list[tuple[float, float]] = []
        for city, (cx, cy) in enumerate(cities["centres_mm"]):
            for r in range(srows):
                for c in range(scols):
                    sites.append(Site(city, r, c))
                    xy.append((cx + (c - (scols - 1) / 2) * pitch,
                               cy + ((srows - 1) / 2 - r) * pitch))
        blocks = profile["blocks"]
        markers = profile["markers"]
        cards = profile["cards"]
        card = CardLayout(
            size=(float(cards["size_mm"][0]), float(cards["size_mm"][1])),
            cell=float(cards["grid_cell_mm"]),
            top_offset=float(cards["grid_top_offset_mm"]),
            grid_offsets=tuple(float(v) for v in cards["grid_centre_offsets_mm"]),
            edge_gap=float(cards["stack_edge_gap_mm"]),
            along_edge=float(cards["stack_along_edge_mm"]),
            angle_deg=float(cards["stack_angle_deg"]),
            frame=float(cards.get("frame_mm", 0.0)),
        )
        return cls(
            board_size=(float(profile["board"]["size_mm"][0]),
                        float(profile["board"]["size_mm"][1])),
            sites=tuple(sites),
            site_xy=np.asarray(xy, np.float64),
            footprint=float(blocks["footprint_mm"]),
            storey=float(blocks["storey_mm"]),
            jitter_mm=float(blocks.get("jitter_mm", 3)),
            jitter_deg=float(blocks.get("jitter_deg", 4)),
            marker_size=float(markers["size_mm"]),
            marker_quiet=float(markers.get("quiet_zone_mm", 8)),
            marker_centres={int(k): (float(v[0]), float(v[1]))
                            for k, v in markers["centres_mm"].items()},
            marker_dictionary=str(markers.get("dictionary", "DICT_4X4_50")),
            colours={k: (int(v[0]), int(v[1]), int(v[2])) for k, v in profile["colours"].items()},
            colour_sets={k: dict(v) for k, v in profile.get("colour_sets", {}).items()},
            card=card,
            supply={int(k): int(v) for k, v in profile.get("supply", {}).items()},
        )

    @cached_property
    def fingerprint(self) -> str:
        """Every number of the profile as one string: caches of what a pose projects
        (strips, board samples off the markers and card stacks) are keyed by it, so
        two profiles read in one process never share them."""
        fields = {k: v for k, v in vars(self).items() if k not in ("site_xy", "fingerprint")}
        return repr(sorted(fields.items())) + self.site_xy.tobytes().hex()

    # -- markers -------------------------------------------------------------

    def marker_corners(self, marker_id: int) -> FloatArray:
        """(4, 3) corners in OpenCV order (TL, TR, BR, BL) with the marker's top facing +y."""
        cx, cy = self.marker_centres[marker_id]
        s = self.marker_size / 2
        return np.array([[cx - s, cy + s, 0], [cx + s, cy + s, 0],
                         [cx + s, cy - s, 0], [cx - s, cy - s, 0]], np.float64)

    def marker_ring(self, marker_id: int, inner: float, outer: float, n: int = 12) -> FloatArray:
        """Sample points (N, 3) of the square ring between half-widths inner and outer."""
        cx, cy = self.marker_centres[marker_id]
        pts = []
        for f in np.linspace(0.2, 0.8, 4):
            r = inner + f * (outer - inner)
            for t in np.linspace(-r, r, n, endpoint=False):
                pts += [(cx + t, cy + r), (cx + r, cy - t), (cx - t, cy - r), (cx - r, cy + t)]
        out = np.zeros((len(pts), 3))
        out[:, :2] = pts
        return out

    # -- sites and towers ----------------------------------------------------

    def site_index(self, site: Site) -> int:
        return site.index

    def square(self, xy: FloatArray | tuple[float, float], z: float,
               half: float | None = None) -> FloatArray:
        """(4, 3) corners of an axis-aligned square (NW, NE, SE, SW) at height z."""
        h = self.footprint / 2 if half is None else half
        x, y = float(xy[0]), float(xy[1])
        return np.array([[x - h, y + h, z], [x + h, y + h, z],
                         [x + h, y - h, z], [x - h, y - h, z]], np.float64)

    def top_face(self, site: Site, height: int) -> FloatArray:
        """(4, 3) corners of the top face of a tower of ``height`` storeys."""
        return self.square(self.site_xy[site.index], self.storey * height)

    def tower_box(self, site: Site, height: int) -> FloatArray:
        """(8, 3): the footprint at z = 0 then the top face."""
        return np.vstack([self.top_face(site, 0), self.top_face(site, height)])

    # -- cards ---------------------------------------------------------------

    def board_edge_point(self, seat: Seat) -> FloatArray:
        """Middle of the board edge in front of ``seat``."""
        fx, fy = SEAT_FORWARD[seat]
        w, h = self.board_size
        return np.array([-fx * w / 2, -fy * h / 2])

    def card_centre(self, seat: Seat, along: float = 0.0, gap: float | None = None) -> FloatArray:
        """Nominal centre of the played-card stack of ``seat`` (board mm)."""
        fx, fy = SEAT_FORWARD[seat]
        rx, ry = seat_right(seat)
        g = self.card.edge_gap if gap is None else gap
        d = g + self.card.size[1] / 2
        e = self.board_edge_point(seat)
        return np.array([e[0] - fx * d + rx * along, e[1] - fy * d + ry * along])

    def card_to_board(self, seat: Seat, centre: FloatArray, angle_deg: float,
                      local: FloatArray) -> FloatArray:
        """Card-local mm (a = toward the holder's right, b = toward the top edge) -> board xy.

        The card's top edge points at the board, so ``b`` runs along the seat's forward.
        """
        fx, fy = SEAT_FORWARD[seat]
        rx, ry = seat_right(seat)
        t = np.deg2rad(angle_deg)
        c, s = np.cos(t), np.sin(t)
        # rotate the (right, forward) frame counter-clockwise by the stack angle
        r2 = np.array([c * rx + -s * ry, s * rx + c * ry])
        f2 = np.array([c * fx + -s * fy, s * fx + c * fy])
        loc = np.asarray(local, np.float64).reshape(-1, 2)
        return centre.reshape(1, 2) + loc[:, :1] * r2 + loc[:, 1:2] * f2

    def card_cell_local(self, grid: int, r: int, c: int) -> tuple[float, float]:
        """Card-local centre (a, b) of cell (r, c) in grid 0 (left) or 1 (right)."""
        cell = self.card.cell
        a = self.card.grid_offsets[grid] + (c - 1) * cell
        b = self.card.size[1] / 2 - self.card.top_offset - cell / 2 - r * cell
        return a, b

    def card_search_region(self, seat: Seat, margin: float = 14.0) -> FloatArray:
        """(4, 2) board-xy quad covering every allowed stack position of ``seat``."""
        w, h = self.card.size
        reach = self.card.along_edge + w / 2 + h * np.sin(np.deg2rad(self.card.angle_deg))
        near = self.card.edge_gap - margin / 2
        far = self.card.edge_gap + h + margin
        local = np.array([[-reach - margin, 0], [reach + margin, 0]])
        fx, fy = SEAT_FORWARD[seat]
        rx, ry = seat_right(seat)
        e = self.board_edge_point(seat)
        out = []
        for dist in (near, far):
            for a in (local[0, 0], local[1, 0]) if dist == near else (local[1, 0], local[0, 0]):
                out.append((e[0] - fx * dist + rx * a, e[1] - fy * dist + ry * a))
        return np.asarray(out, np.float64)


@lru_cache(maxsize=8)
def _geometry_for(name: str) -> BoardGeometry:
    return BoardGeometry.from_profile(load_profile(name))


def storey_shift_mm(g: BoardGeometry, camera_centre: FloatArray, site: Site,
                    height: int) -> float:
    """How far on the board one storey moves the top of the tower ``height`` storeys
    tall at ``site`` as the camera sees it: its horizontal distance from the camera
    over the camera's height above that top, times a storey (infinite for a top at
    or above the camera: no steep view of it). Seen from nearly above, a storey
    moves a top about as far as a block may stand off its site: under
    :func:`steep_storey_limit` a storey more or less is a guess."""
    c = np.asarray(camera_centre, np.float64).ravel()
    above = float(c[2]) - height * g.storey
    if above <= 0:
        return math.inf
    xy = g.site_xy[site.index]
    return g.storey * float(np.hypot(xy[0] - c[0], xy[1] - c[1])) / above


def steep_storey_limit(g: BoardGeometry, value: float | None, factor: float) -> float:
    """The storey shift (:func:`storey_shift_mm`) under which a height is a guess:
    ``value`` mm, or by default (None) ``factor`` times the profile's placement
    jitter (a top is found to within its own error too: pose, blur)."""
    return float(g.jitter_mm) * float(factor) if value is None else float(value)


def board_geometry(profile: dict[str, Any] | str | None = None) -> BoardGeometry:
    """The geometry of a profile (a loaded dict, a name or path; default: reference board)."""
    if profile is None:
        return _geometry_for("reference-board")
    if isinstance(profile, str):
        return _geometry_for(profile)
    return BoardGeometry.from_profile(profile)


def project_polygon(pose: Pose, points: FloatArray) -> FloatArray:
    """Project a 3D polygon; a thin wrapper kept for readability at call sites."""
    return pose.project(points)


def points_in_convex(poly: FloatArray, pts: FloatArray) -> np.ndarray:
    """Boolean mask: which 2D points lie inside a convex polygon (any winding)."""
    poly = np.asarray(poly, np.float64).reshape(-1, 2)
    pts = np.asarray(pts, np.float64).reshape(-1, 2)
    a = poly
    b = np.roll(poly, -1, axis=0)
    cross = ((b[:, 0] - a[:, 0])[None, :] * (pts[:, 1:2] - a[:, 1][None, :])
             - (b[:, 1] - a[:, 1])[None, :] * (pts[:, 0:1] - a[:, 0][None, :]))
    return np.all(cross >= 0, axis=1) | np.all(cross <= 0, axis=1)


def convex_hull(points: FloatArray) -> FloatArray:
    """Convex hull of 2D points as an (M, 2) array."""
    pts = np.asarray(points, np.float32).reshape(-1, 1, 2)
    return cv2.convexHull(pts).reshape(-1, 2).astype(np.float64)


#: How far past the picture a polygon's corners are kept, in picture sizes: out there
#: only their direction counts, and their pixels must fit an int32
POLYGON_REACH = 8


def within_reach(polygons: list[np.ndarray], shape: tuple[int, ...]) -> bool:
    """Every corner of ``polygons`` (pixels) finite and within ``POLYGON_REACH``
    picture sizes: they can be cast to int32 as they are (one check for a batch,
    where :func:`fill_convex` would check each polygon)."""
    if not polygons:
        return True
    corners = np.concatenate([np.asarray(p, np.float64).reshape(-1, 2) for p in polygons])
    return bool(np.all(np.abs(corners) <= POLYGON_REACH * max(shape[0], shape[1])))


def pixel_hull(points: FloatArray, shape: tuple[int, ...], is_hull: bool = False,
               truncate: bool = False) -> np.ndarray | None:
    """The convex hull of ``points`` (pixels) as int32 corners for ``cv2.fillConvexPoly``
    on a ``shape`` picture; None when fewer than three corners are finite.

    A box reaching above a low camera projects corners far outside the picture
    (1e26 pixels), or none at all: such corners are dropped when not finite and
    otherwise clamped to ``POLYGON_REACH`` picture sizes away, where they still
    point the right way and their pixels do not overflow (cast, they became
    -2**31: a warning, and a polygon made of noise). ``is_hull``: the points
    are a convex polygon already, in order (its hull is taken only when a
    corner was dropped or clamped). ``truncate``: pixels cut toward zero, not
    rounded (as the live table's change masks were made).
    """
    p = np.asarray(points, np.float64).reshape(-1, 2)
    finite = np.all(np.isfinite(p), axis=1)
    if not finite.all():
        p, is_hull = p[finite], False
    if len(p) < 3:
        return None
    reach = float(POLYGON_REACH * max(shape[0], shape[1]))
    if np.any(np.abs(p) > reach):
        p, is_hull = np.clip(p, -reach, reach), False
    corners: np.ndarray = p if is_hull else cv2.convexHull(
        p.astype(np.float32).reshape(-1, 1, 2)).reshape(-1, 2)
    out: np.ndarray = (corners if truncate else np.round(corners)).astype(np.int32)
    return out


def fill_convex(mask: np.ndarray, points: FloatArray, value: int, is_hull: bool = False,
                truncate: bool = False) -> bool:
    """Fill the convex hull of ``points`` (pixels) into ``mask`` with ``value``
    (:func:`pixel_hull`); False when there was nothing to fill."""
    hull = pixel_hull(points, mask.shape, is_hull, truncate)
    if hull is None:
        return False
    cv2.fillConvexPoly(mask, hull, value)
    return True


def look_at_pose(intrinsics: Intrinsics, distance_mm: float, elevation_deg: float,
                 azimuth_deg: float, target: tuple[float, float, float] = (0.0, 0.0, 0.0),
                 roll_deg: float = 0.0) -> Pose:
    """A camera ``distance_mm`` from ``target``, ``elevation_deg`` above the table.

    Azimuth 0 puts the camera over the South edge, 90 over East, 180 North,
    270 West. Used by tests and renderers to place cameras like the spec's.
    """
    e, a = np.deg2rad(elevation_deg), np.deg2rad(azimuth_deg)
    tgt = np.asarray(target, np.float64)
    horiz = np.array([np.sin(a), -np.cos(a), 0.0])
    C = tgt + distance_mm * (np.cos(e) * horiz + np.array([0, 0, np.sin(e)]))
    fwd = tgt - C
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, np.array([0.0, 0.0, 1.0]))
    if np.linalg.norm(right) < 1e-9:  # looking straight down
        right = np.array([np.cos(a), np.sin(a), 0.0])
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    R = np.vstack([right, down, fwd])
    if roll_deg:
        r = np.deg2rad(roll_deg)
        Rz = np.array([[np.cos(r), -np.sin(r), 0], [np.sin(r), np.cos(r), 0], [0, 0, 1]])
        R = Rz @ R
    tvec = -R @ C
    return Pose(cv2.Rodrigues(R)[0], tvec, intrinsics)


def intrinsics_for_fov(size: tuple[int, int], hfov_deg: float,
                       dist: tuple[float, ...] = (0, 0, 0, 0, 0)) -> Intrinsics:
    """Square-pixel pinhole with the principal point at the image centre."""
    w, h = size
    f = (w / 2) / np.tan(np.deg2rad(hfov_deg) / 2)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]], np.float64)
    d = np.zeros(5)
    d[:len(dist)] = dist
    return Intrinsics(K, d, (int(w), int(h)))


def good_elevation(profile: dict[str, Any] | None = None) -> tuple[tuple[float, float],
                                                                   tuple[float, float]]:
    """The camera elevations (degrees) heights are read well between, and best
    between: the board profile's ``camera_advice`` (measured by elevation on the
    raycast sets, docs/vision-errors.md; a profile without it gets no advice)."""
    if profile is None:
        return _default_elevation()  # asked of every photo and live reading
    advice = profile.get("camera_advice") or {}
    good = advice.get("good_elevation_deg") or (0.0, 90.0)
    best = advice.get("best_elevation_deg") or good
    return (float(good[0]), float(good[1])), (float(best[0]), float(best[1]))


@lru_cache(maxsize=1)
def _default_elevation() -> tuple[tuple[float, float], tuple[float, float]]:
    """The built-in profile's bands, its file read once."""
    return good_elevation(load_profile())


def view_advice(elevation_deg: float) -> str | None:
    """What to do with a camera that looks at the board from ``elevation_deg`` (None:
    within the good band of :func:`good_elevation`): `companion doctor`'s advice, and
    the live table's to its players."""
    (low, high), (best_low, best_high) = good_elevation()
    band = f"{low:.0f}-{high:.0f} degrees ({best_low:.0f}-{best_high:.0f} is best)"
    if elevation_deg > high:
        return (f"the camera looks down at {elevation_deg:.0f} degrees: from so steep a view "
                "a storey more or less barely moves a tower's top, and many heights go "
                f"unread; tilt it to {band}")
    if elevation_deg < low:
        return (f"the camera looks at the board from {elevation_deg:.0f} degrees: tall "
                f"towers hide the sites behind them; raise it to {band}")
    return None
