"""Per-site image strips along the projected tower axis.

For a site, every point of the vertical plane through the camera centre and
the site's axis projects onto one image line. The tower's near-bottom edge,
near-top edge and far-top edge all lie in that plane, so the height question
becomes a 1-D one along the line: board in front, near side faces (12 mm
per storey), the top face, then whatever lies beyond. Rows are parametrised
by the ray's depression angle in that plane, roughly uniform in pixels; each
row is the point where the ray meets the "reference surface" (the board in
front of the axis, then the axis itself), and lateral samples either side
give width.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeVar

import cv2
import numpy as np

from companion.vision.geometry import BoardGeometry, FloatArray, Pose

T = TypeVar("T")


@dataclass
class Strips:
    """Sampling of every site's strip: geometry plus sample positions."""

    rho_c: FloatArray  # (S,) camera horizontal offset from the site (negative)
    z_c: float  # camera height (mm)
    v: FloatArray  # (S, 2) horizontal unit vector camera -> site
    lat: FloatArray  # (S, 2) horizontal unit vector across (v turned left)
    dep0: FloatArray  # (S,) depression angle of row 0
    ddep: FloatArray  # (S,) angle step per row
    rows: int
    offsets: FloatArray  # (L,) lateral offsets (mm)
    pix: FloatArray  # (S, N, L, 2) image positions
    inside: np.ndarray  # (S, N, L) sample inside the image
    px_row: FloatArray  # (S,) median image distance between consecutive rows
    #: what readers derive from the strips alone (kept with them, see SiteReader)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def keep(self, key: Any, value: T) -> T:
        """Keep ``value`` under ``key`` with the strips (what the pose alone gives:
        a still camera makes it once), its arrays made read-only, since every later
        read of the pose shares them."""
        for arr in value if isinstance(value, tuple) else (value,):
            if isinstance(arr, np.ndarray):
                arr.setflags(write=False)
        self.cache[key] = value
        return value

    def row_of(self, site: np.ndarray | int, rho: FloatArray, z: FloatArray | float
               ) -> FloatArray:
        """Fractional row index where the ray to (rho, z) in a site's plane lands."""
        dep = np.arctan2(self.z_c - np.asarray(z, np.float64),
                         np.asarray(rho, np.float64) - self.rho_c[site])
        return (dep - self.dep0[site]) / self.ddep[site]


def reference_point(rho_c: FloatArray, z_c: float, dep: FloatArray) -> tuple[FloatArray,
                                                                              FloatArray]:
    """Where a ray of depression ``dep`` from the camera meets board-then-axis: (rho, z)."""
    t = np.tan(dep)
    z_axis = z_c - (-rho_c) * t
    on_axis = z_axis >= 0
    rho_board = rho_c + z_c / np.maximum(t, 1e-9)
    rho = np.where(on_axis, 0.0, rho_board)
    z = np.where(on_axis, z_axis, 0.0)
    return rho, z


def project_fast(pose: Pose, pts: FloatArray) -> FloatArray:
    """cv2.projectPoints for many points, in numpy (k1, k2, p1, p2, k3 model)."""
    # R @ P.T rather than P @ R.T: the same products and sums, but numpy hands the
    # (3, n) product to BLAS while an (n, 3) @ (3, 3) runs ~3x slower
    X = (pose.R @ pts.reshape(-1, 3).T).T + pose.tvec.reshape(1, 3)
    z = np.maximum(X[:, 2], 1e-6)
    x = X[:, 0] / z
    y = X[:, 1] / z
    d = pose.intrinsics.dist
    if np.any(d != 0):
        k1, k2, p1, p2, k3 = (float(v) for v in d[:5])
        r2 = x * x + y * y
        radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3))
        xd = x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x)
        yd = y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y
        x, y = xd, yd
    K = pose.intrinsics.K
    u = K[0, 0] * x + K[0, 1] * y + K[0, 2]
    v = K[1, 1] * y + K[1, 2]
    return np.stack([u, v], axis=-1).reshape(pts.shape[:-1] + (2,))


def build_strips(pose: Pose, geometry: BoardGeometry, max_height: int,
                 offsets: tuple[float, ...] = (-4.5, 0.0, 4.5), front_mm: float = 30.0,
                 px_per_row: float = 1.0, max_rows: int = 480) -> Strips:
    """Sample positions of all site strips for one pose (cheap; cache per pose)."""
    C = pose.camera_centre
    xy = geometry.site_xy
    d = xy - C[None, :2]
    dist = np.linalg.norm(d, axis=1)
    # camera (almost) straight above a site: any direction works
    safe = dist > 1.0
    v = np.where(safe[:, None], d / np.maximum(dist, 1e-9)[:, None], np.array([[0.0, 1.0]]))
    lat = np.column_stack([-v[:, 1], v[:, 0]])
    rho_c = -np.maximum(dist, 1.0)
    z_c = float(C[2])
    reach = geometry.footprint * 0.71 + geometry.jitter_mm + 2.0  # half-diagonal + jitter
    z_top = max_height * geometry.storey
    dep_start = np.arctan2(z_c, -front_mm - rho_c)
    # the far edge of the highest top face, plus room for the window beyond it
    dep_far = np.arctan2(z_c - z_top, reach - rho_c)
    z_end = z_c - (-rho_c) * np.tan(dep_far) + 15.0
    dep_end = np.arctan2(z_c - np.minimum(z_end, z_c - 1.0), -rho_c)
    p0 = project_fast(pose, np.column_stack([xy - front_mm * v, np.zeros(len(xy))]))
    p1 = project_fast(pose, np.column_stack([xy, np.zeros(len(xy))]))
    p2 = project_fast(pose, np.column_stack([xy, np.minimum(z_end, z_c * 0.9)]))
    length = np.linalg.norm(p1 - p0, axis=1) + np.linalg.norm(p2 - p1, axis=1)
    rows = int(np.clip(np.max(length) / px_per_row, 32, max_rows))
    ddep = (dep_end - dep_start) / (rows - 1)
    deps = dep_start[:, None] + ddep[:, None] * np.arange(rows)[None, :]
    rho, z = reference_point(rho_c[:, None], z_c, deps)
    base = xy[:, None, :] + rho[..., None] * v[:, None, :]  # (S, N, 2)
    offs = np.asarray(offsets, np.float64)
    pts = np.empty((len(xy), rows, len(offs), 3))
    pts[..., :2] = base[:, :, None, :] + offs[None, None, :, None] * lat[:, None, None, :]
    pts[..., 2] = z[:, :, None]
    pix = project_fast(pose, pts)
    w, h = pose.intrinsics.size
    inside = ((pix[..., 0] >= 0) & (pix[..., 0] <= w - 1) & (pix[..., 1] >= 0)
              & (pix[..., 1] <= h - 1))
    centre = pix[:, :, len(offs) // 2]
    seg = np.linalg.norm(np.diff(centre, axis=1), axis=2)
    px_row = np.maximum(np.median(seg, axis=1), 1e-3)
    # samples far outside the photo (a distorted lens sends points near the camera
    # plane to ~1e50 px) are kept at 1e6 px, once per pose: float32 sampling maps
    # would overflow on them; they are outside and read as the border either way
    far = np.isfinite(pix) & (np.abs(pix) > 1e6)
    if far.any():
        pix = np.where(far, np.sign(pix) * 1e6, pix)
    return Strips(rho_c, z_c, v, lat, dep_start, ddep, rows, offs, pix, inside, px_row)


def sample_strips(image: np.ndarray, strips: Strips, rows: int | None = None) -> FloatArray:
    """(S, N, L, C) image values at every strip sample (bilinear); at the first
    ``rows`` rows of each strip only when given."""
    S, N, L, _ = strips.pix[:, :rows].shape
    mx, my = _remap_maps(strips, rows)
    out = cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(out).reshape(N, S, L, -1).transpose(1, 0, 2, 3)


def _remap_maps(strips: Strips, rows: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The float32 remap maps of :func:`sample_strips` (the pose's alone: kept with the
    strips, so a still camera lays them out once)."""
    key = ("remap_maps", rows)
    hit: tuple[np.ndarray, np.ndarray] | None = strips.cache.get(key)
    if hit is not None:
        return hit
    pix = strips.pix[:, :rows]  # far samples already kept within float32 (build_strips)
    S, N, L, _ = pix.shape
    # remap limits each map side to 32767: lay the samples out as (N, S * L)
    mx = np.ascontiguousarray(pix[..., 0].transpose(1, 0, 2).reshape(N, S * L), np.float32)
    my = np.ascontiguousarray(pix[..., 1].transpose(1, 0, 2).reshape(N, S * L), np.float32)
    return strips.keep(key, (mx, my))
