"""A small numpy rasterizer: planar convex faces with z-buffer, anti-aliasing and shading.

Why not painter's algorithm alone: tall towers occlude neighbours in ways a per-object
sort gets wrong, so every object is drawn with a per-pixel depth test. Objects are still
drawn far to near so the anti-aliased edges blend with what is really behind them.
Each face is rasterized only inside its bounding box, with coverage from the signed
distance to its edges, local (s, t) coordinates from the face's homography, and a
point light with a shadow map.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

Albedo = np.ndarray | Callable[[np.ndarray, np.ndarray], np.ndarray]

NEAR_MM = 20.0
FAR_DEPTH = 1.0e9
UP = np.array([0.0, 0.0, 1.0])


@dataclass(eq=False)
class Face:
    """A planar convex polygon with a local frame: P = origin + s * e1 + t * e2."""

    verts: np.ndarray  # (N, 3) world mm, in order around the polygon
    origin: np.ndarray
    e1: np.ndarray
    e2: np.ndarray
    normal: np.ndarray  # outward unit normal
    albedo: Albedo  # linear RGB (3,) or fn(s, t) -> (h, w, 3) float32 linear
    label: int = 0
    specular: float = 0.0
    shininess: float = 30.0
    bend: float = 0.0  # cylinder shading: normal turns by up to this (rad) across e2
    half_width: float = 1.0
    t_centre: float = 0.0
    two_sided: bool = False


@dataclass(eq=False)
class Object3D:
    """Faces drawn as one layer: 'solid' (faces of a convex body, edges sum) or 'layered'."""

    faces: list[Face]
    mode: str = "solid"
    casts_shadow: bool = True
    shadow_faces: list[Face] | None = None  # closed hull for the shadow map; default faces
    shadow_bias: float = 1.0
    anchor: np.ndarray = field(default_factory=lambda: np.zeros(3))
    # reused unchanged by later renders (the scene builders cache it): its faces' rasters
    # and shading terms are kept in FACE_MEMO, and never change once drawn
    persistent: bool = False


def array_key(*arrays: np.ndarray | np.generic) -> bytes:
    """Bytes that tell arrays apart exactly (dtype, shape and every bit)."""
    parts = []
    for x in arrays:
        a = np.ascontiguousarray(x)
        parts.append(f"{a.dtype.str}{a.shape}".encode())
        parts.append(a.tobytes())
    return b"|".join(parts)


class ByteLRU:
    """A least-recently-used cache bounded by the bytes of the arrays it holds and by its
    number of entries (safe to share between threads; what it holds is never changed)."""

    def __init__(self, max_bytes: int, max_items: int) -> None:
        self.max_bytes = max_bytes
        self.max_items = max_items
        self.nbytes = 0
        self._d: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            hit = self._d.get(key)
            if hit is None:
                return None
            self._d.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        with self._lock:
            old = self._d.pop(key, None)
            if old is not None:
                self.nbytes -= old[1]
            self._d[key] = (value, nbytes)
            self.nbytes += nbytes
            while len(self._d) > 1 and (self.nbytes > self.max_bytes
                                        or len(self._d) > self.max_items):
                _, (_, n) = self._d.popitem(last=False)
                self.nbytes -= n

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.nbytes = 0

    def __len__(self) -> int:
        return len(self._d)


# rasters and shading terms of persistent objects' faces, per view and light: a live
# table's frames redraw the same towers and cards through the same camera and lamp.
# Keys hold the faces themselves (identity), so a key can never match another face.
FACE_MEMO = ByteLRU(64 << 20, 20000)


def _frozen(*arrays: np.ndarray | None) -> int:
    """Make cached arrays read-only; their total bytes."""
    n = 0
    for a in arrays:
        if a is not None:
            a.flags.writeable = False
            n += a.nbytes
    return n


@dataclass(eq=False)
class View:
    """A pinhole view (no distortion) used both for the camera canvas and the light."""

    K: np.ndarray
    R: np.ndarray
    t: np.ndarray
    width: int
    height: int

    def __post_init__(self) -> None:
        self.centre = -self.R.T @ self.t
        # exact identity of the view, for caches of what is drawn through it
        self.key = array_key(self.K, self.R, self.t) + f"{self.width}x{self.height}".encode()

    def to_cam(self, pts: np.ndarray) -> np.ndarray:
        return np.asarray(pts, np.float64).reshape(-1, 3) @ self.R.T + self.t

    def project_cam(self, pc: np.ndarray) -> np.ndarray:
        q = pc @ self.K.T
        return q[:, :2] / q[:, 2:3]

    def project(self, pts: np.ndarray) -> np.ndarray:
        return self.project_cam(self.to_cam(pts))

    def plane_homography(self, z: float = 0.0) -> np.ndarray:
        """(x, y) on the plane at height z -> pixels."""
        M = np.column_stack([self.R[:, 0], self.R[:, 1], self.R[:, 2] * z + self.t])
        return self.K @ M


def look_at_view(eye: np.ndarray, target: np.ndarray, K: np.ndarray, width: int,
                 height: int) -> View:
    fwd = np.asarray(target, np.float64) - np.asarray(eye, np.float64)
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, UP)
    if np.linalg.norm(right) < 1e-6:
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    R = np.vstack([right, down, fwd])
    return View(K, R, -R @ np.asarray(eye, np.float64), width, height)


def clip_near(pc: np.ndarray, near: float = NEAR_MM) -> np.ndarray:
    """Sutherland-Hodgman clip of a camera-space polygon against z = near."""
    if np.all(pc[:, 2] >= near):
        return pc
    out = []
    n = len(pc)
    for i in range(n):
        a, b = pc[i], pc[(i + 1) % n]
        ina, inb = a[2] >= near, b[2] >= near
        if ina:
            out.append(a)
        if ina != inb:
            f = (near - a[2]) / (b[2] - a[2])
            out.append(a + f * (b - a))
    return np.asarray(out).reshape(-1, 3)


def face_homography(view: View, face: Face) -> np.ndarray:
    """(s, t, 1) -> homogeneous pixel."""
    R, t = view.R, view.t
    return view.K @ np.column_stack([R @ face.e1, R @ face.e2, R @ face.origin + t])


def polygon_area_px(view: View, verts: np.ndarray) -> float:
    """Projected area (pixels) of a polygon, clipped to the near plane."""
    pc = clip_near(view.to_cam(verts))
    if len(pc) < 3:
        return 0.0
    return abs(_area2(view.project_cam(pc))) / 2


def _area2(p: np.ndarray) -> float:
    """Twice the signed area of a 2D polygon (shoelace)."""
    q = np.concatenate([p[1:], p[:1]])
    return float(np.sum(p[:, 0] * q[:, 1] - p[:, 1] * q[:, 0]))


def hull_area_px(view: View, pts: np.ndarray) -> float:
    pc = view.to_cam(pts)
    pc = pc[pc[:, 2] > NEAR_MM]
    if len(pc) < 3:
        return 0.0
    p = view.project_cam(pc).astype(np.float32)
    return float(cv2.contourArea(cv2.convexHull(p.reshape(-1, 1, 2))))


@dataclass(eq=False)
class _Raster:
    """Per-pixel data of one face inside a box of the target image."""

    x0: int
    y0: int
    cov: np.ndarray
    s: np.ndarray
    t: np.ndarray
    z: np.ndarray
    covered: _Covered | None = None  # made when first shaded


@dataclass(eq=False)
class _Covered:
    """The pixels of a band that the face covers (cov > 0): the only ones whose colour
    is ever used (the others blend in with weight 0), so the only ones shaded."""

    idx: np.ndarray  # flat indices into the band
    r: _Raster  # s and t at those pixels, as (1, n) rows (cov and z left empty)


def _covered(r: _Raster) -> _Covered:
    if r.covered is None:
        idx = np.flatnonzero(r.cov)
        sub = _Raster(r.x0, r.y0, _EMPTY, r.s.ravel()[idx][None], r.t.ravel()[idx][None],
                      _EMPTY)
        r.covered = _Covered(idx, sub)
    return r.covered


def _spread(col: np.ndarray, cv: _Covered, shape: tuple[int, ...]) -> np.ndarray:
    """(1, n, 3) colours of the covered pixels -> (h, w, 3) band, zero elsewhere. A zero
    (finite) colour blended with weight 0 adds +-0, as the skipped pixel's own (finite)
    colour would: shading is finite at every pixel of a band box."""
    out = np.zeros((*shape, 3), np.float32)
    out.reshape(-1, 3)[cv.idx] = col[0]
    return out


def _clip_y_xrange(p: list[tuple[float, float]], lo: float, hi: float
                   ) -> tuple[float, float] | None:
    """x range of a 2D polygon clipped to lo <= y <= hi (None: nothing left). Plain
    floats: the same double arithmetic as on arrays, without their per-call cost."""
    for keep_ge, lim in ((True, lo), (False, hi)):
        out: list[tuple[float, float]] = []
        n = len(p)
        for i in range(n):
            a, b = p[i], p[(i + 1) % n]
            ina = a[1] >= lim if keep_ge else a[1] <= lim
            inb = b[1] >= lim if keep_ge else b[1] <= lim
            if ina:
                out.append(a)
            if ina != inb:
                f = (lim - a[1]) / (b[1] - a[1])
                out.append((a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])))
        if not out:
            return None
        p = out
    xs = [q[0] for q in p]
    return min(xs), max(xs)


BAND = 40
_EMPTY = np.zeros((0, 0), np.float32)
_EMPTY.flags.writeable = False


def rasterize(view: View, face: Face, box: tuple[int, int, int, int],
              antialias: bool = True, coords: bool = True) -> list[_Raster]:
    """Coverage, local coordinates and depth of ``face`` inside ``box``.

    Slanted or thin faces are cut into horizontal bands with tight x ranges so the work
    follows the polygon's area, not its bounding box. With ``coords=False`` the local
    coordinates ``s`` and ``t`` are left empty (a shadow map needs only the depth).
    """
    pc = clip_near(view.to_cam(face.verts))
    if len(pc) < 3:
        return []
    p = view.project_cam(pc)
    bx0, by0, bx1, by1 = box
    x0 = max(bx0, int(np.floor(p[:, 0].min())) - 1)
    x1 = min(bx1, int(np.ceil(p[:, 0].max())) + 2)
    y0 = max(by0, int(np.floor(p[:, 1].min())) - 1)
    y1 = min(by1, int(np.ceil(p[:, 1].max())) + 2)
    if x1 <= x0 or y1 <= y0:
        return []
    area2 = _area2(p)
    if abs(area2) < 1e-9:
        return []
    if area2 < 0:
        p = p[::-1]
    edges = []
    n = len(p)
    for i in range(n):
        a, b = p[i], p[(i + 1) % n]
        ex, ey = b[0] - a[0], b[1] - a[1]
        ln = float(np.hypot(ex, ey))
        if ln > 1e-9:
            edges.append((np.float32(ex / ln), np.float32(ey / ln), np.float32(a[0]),
                          np.float32(a[1])))
    Hi = np.linalg.inv(face_homography(view, face)).astype(np.float32)
    boxes: list[tuple[int, int, int, int]]
    if (x1 - x0) * (y1 - y0) > max(4096.0, 1.6 * abs(area2) / 2) and y1 - y0 > BAND:
        boxes = []
        pts = [(float(x), float(y)) for x, y in p]
        for ya in range(y0, y1, BAND):
            yb = min(y1, ya + BAND)
            xr = _clip_y_xrange(pts, ya - 1.0, yb + 1.0)
            if xr is None:
                continue
            xa = max(x0, math.floor(xr[0]) - 1)
            xb = min(x1, math.ceil(xr[1]) + 2)
            if xb > xa:
                boxes.append((xa, ya, xb, yb))
    else:
        boxes = [(x0, y0, x1, y1)]
    out = []
    for xa, ya, xb, yb in boxes:
        uu = np.arange(xa, xb, dtype=np.float32)[None, :]
        vv = np.arange(ya, yb, dtype=np.float32)[:, None]
        dmin = d = None
        for ex, ey, ax, ay in edges:
            # left of a->b (counter-clockwise in x-right/y-down pixels) is inside
            if dmin is None:
                dmin = ex * (vv - ay) - ey * (uu - ax)
            else:  # the same, into one reused array
                d = np.subtract(ex * (vv - ay), ey * (uu - ax), out=d)
                np.minimum(dmin, d, out=dmin)
        if dmin is None:
            continue
        if antialias:
            np.add(dmin, np.float32(0.5), out=dmin)
            cov = np.clip(dmin, 0.0, 1.0, out=dmin)
        else:
            cov = (dmin >= 0).astype(np.float32)
        if not cov.any():
            continue
        q2 = (Hi[2, 0] * uu + Hi[2, 2]) + Hi[2, 1] * vv
        # q2 = 1 / depth: pixels where the face's plane lies behind the camera get no coverage
        bad = q2 <= np.float32(1e-9)
        if bad.any():
            cov[bad] = 0
            q2[bad] = np.float32(1.0)
        inv = np.float32(1.0) / q2
        if coords:
            s = np.add(Hi[0, 0] * uu + Hi[0, 2], Hi[0, 1] * vv)
            s *= inv
            t = np.add(Hi[1, 0] * uu + Hi[1, 2], Hi[1, 1] * vv)
            t *= inv
        else:
            s = t = _EMPTY
        z = inv  # Hi @ (u, v, 1) = (s, t, 1) / depth
        out.append(_Raster(xa, ya, cov, s, t, z))
    return out


# ---------------------------------------------------------------------------------------------
# shadow map


def union_box(a: tuple[int, int, int, int] | None, b: tuple[int, int, int, int]
              ) -> tuple[int, int, int, int]:
    """The box holding boxes ``a`` (None: no box yet) and ``b`` (x0, y0, x1, y1)."""
    if a is None:
        return b
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def blur_window(shape: tuple[int, ...], box: tuple[int, int, int, int], sigma: float,
                margin: int | None = None) -> tuple[int, int, int, int]:
    """(y0, y1, x0, x1): where ``cv2.GaussianBlur(img, (0, 0), sigma)`` of a float32 image
    that is zero outside ``box`` (x0, y0, x1, y1) can be computed alone, to the bit.

    The window reaches two kernel radii past the box, so every pixel it leaves out is an
    exact zero and no pixel within a radius of the data sees the window's own border.
    OpenCV's row filter runs vector lanes from the row start and a scalar tail at the row
    end (rounded differently: fused multiply-add), so the window either spans a multiple
    of 64 columns (no tail) or ends at the image edge and starts on a multiple of 64 (the
    full image's own tail).
    """
    H, W = int(shape[0]), int(shape[1])
    m = 2 * (int(math.ceil(sigma * 4)) + 1) + 16 if margin is None else margin
    y0, y1 = max(0, box[1] - m), min(H, box[3] + m)
    x0 = max(0, box[0] - m)
    x1 = x0 + -(-(min(W, box[2] + m) - x0) // 64) * 64
    if x1 >= W:
        x0 -= x0 % 64
        x1 = W
    return y0, y1, x0, x1


SPARSE_BAND = 192


def _reset(a: np.ndarray, dirty: tuple[int, int, int, int] | None, value: float) -> None:
    """Fill ``a`` with ``value``; where ``dirty`` (x0, y0, x1, y1) is given, ``a`` holds it
    already outside that box."""
    if dirty is None:
        a.fill(value)
    else:
        x0, y0, x1, y1 = dirty
        if x1 > x0 and y1 > y0:
            a[y0:y1, x0:x1] = value


def blur_reach(box: tuple[int, int, int, int], shape: tuple[int, int], sigma: float
               ) -> tuple[int, int, int, int]:
    """Where :func:`blur_sparse` of data inside ``box`` can write nonzero values."""
    r = int(math.ceil(sigma * 4)) + 1
    return (max(0, box[0] - r), max(0, box[1] - r), min(shape[1], box[2] + r),
            min(shape[0], box[3] + r))


def blur_sparse(mask: np.ndarray, box: tuple[int, int, int, int], shape: tuple[int, int],
                sigma: float, out: np.ndarray | None = None,
                dirty: tuple[int, int, int, int] | None = None) -> np.ndarray:
    """``cv2.GaussianBlur(full.astype(np.float32), (0, 0), sigma)`` to the bit, where
    ``full`` (``shape``) holds ``mask`` at ``box`` (x0, y0, x1, y1) and is False elsewhere,
    and is mostly False (shadows of a few towers and an arm): bands of rows are blurred
    only around the columns with data. ``out``, if given, is overwritten; if ``dirty`` is
    given too, ``out`` is known to be zero outside that box (x0, y0, x1, y1).

    Each piece is a window reaching past its output by more than the kernel radius, laid
    out as :func:`blur_window` explains, so every output pixel sums exactly the inputs and
    the lanes the whole image would; everything left out is an exact zero.
    """
    H, W = shape
    if out is None:
        out = np.zeros((H, W), np.float32)
    else:
        _reset(out, dirty, 0.0)
    bx0, by0, bx1, by1 = box
    r = int(math.ceil(sigma * 4)) + 1  # at least OpenCV's kernel radius for float images
    m = r + 1
    for ya in range(max(0, by0 - r), min(H, by1 + r), SPARSE_BAND):
        yb = min(H, ya + SPARSE_BAND, by1 + r)
        rows = mask[max(by0, ya - r) - by0:min(by1, yb + r) - by0]
        if not rows.size:
            continue
        cols = np.flatnonzero(rows.any(axis=0))
        if not len(cols):
            continue
        cols += bx0
        # runs of data columns; runs whose windows would overlap are blurred together
        gaps = np.flatnonzero(np.diff(cols) > 2 * (r + m) + 64)
        starts = np.r_[cols[0], cols[gaps + 1]]
        ends = np.r_[cols[gaps], cols[-1]] + 1
        for ca, cb in zip(starts.tolist(), ends.tolist(), strict=True):
            oa, ob = max(0, ca - r), min(W, cb + r)  # where the output can be nonzero
            y0, y1, x0, x1 = blur_window((H, W), (oa, ya, ob, yb), sigma, margin=m)
            win = np.zeros((y1 - y0, x1 - x0), np.float32)
            iy0, iy1, ix0, ix1 = max(y0, by0), min(y1, by1), max(x0, bx0), min(x1, bx1)
            if iy1 > iy0 and ix1 > ix0:
                win[iy0 - y0:iy1 - y0, ix0 - x0:ix1 - x0] = mask[iy0 - by0:iy1 - by0,
                                                                 ix0 - bx0:ix1 - bx0]
            blurred = cv2.GaussianBlur(win, (0, 0), sigma)
            out[ya:yb, oa:ob] = blurred[ya - y0:yb - y0, oa - x0:ob - x0]
    return out


# the kept objects' part of recent shadow maps (two tables' worth), each with a number
_SHADOW_MEMO = ByteLRU(24 << 20, 4)
_STATIC_IDS = itertools.count()

REMAP_COLS = 16384

POISSON = np.array([[0, 0], [0.53, 0.22], [-0.41, 0.61], [-0.65, -0.31], [0.18, -0.72],
                    [0.95, -0.12], [-0.05, 0.98], [-0.97, 0.18], [0.62, 0.74], [-0.52, -0.86],
                    [0.71, -0.69], [-0.86, 0.52]], np.float32)


class ShadowMap:
    """Depth from the lamp (second-depth: a closed body stores its far side, so no acne)."""

    def __init__(self, light_pos: np.ndarray, objects: Sequence[Object3D], softness_mm: float,
                 size: int = 1536, fit_points: np.ndarray | None = None,
                 depth: np.ndarray | None = None,
                 dirty: tuple[int, int, int, int] | None = None) -> None:
        """``depth``: a float32 (size, size) array to draw the map into (overwritten);
        ``dirty``: with ``depth``, a box (x0, y0, x1, y1) outside which it holds
        FAR_DEPTH already (the box of the map last drawn into it)."""
        self.light = np.asarray(light_pos, np.float64)
        casters = [o for o in objects if o.casts_shadow]
        faces: list[tuple[Face, bool]] = []
        kept: list[Face] = []  # faces of persistent objects: their depth can be kept
        pts = []
        for o in casters:
            for f in (o.shadow_faces if o.shadow_faces is not None else o.faces):
                pts.append(f.verts)
                if o.persistent:
                    kept.append(f)
                else:
                    faces.append((f, f.two_sided))
        if fit_points is not None:
            pts = [np.asarray(fit_points, np.float64).reshape(-1, 3)]
        allp = np.vstack(pts) if pts else np.zeros((1, 3))
        centre = allp.mean(axis=0) * np.array([1, 1, 0])
        view = look_at_view(self.light, centre, np.eye(3), size, size)
        pc = view.to_cam(allp)
        pc = pc[pc[:, 2] > 1]
        nx, ny = pc[:, 0] / pc[:, 2], pc[:, 1] / pc[:, 2]
        span = max(float(np.ptp(nx)), float(np.ptp(ny)), 1e-3) * 1.06
        focal = (size - 2) / span
        K = np.array([[focal, 0, size / 2 - focal * (nx.max() + nx.min()) / 2],
                      [0, focal, size / 2 - focal * (ny.max() + ny.min()) / 2], [0, 0, 1]])
        self.view = View(K, view.R, view.t, size, size)
        if depth is None:
            depth = np.empty((size, size), np.float32)
            dirty = None
        _reset(depth, dirty, FAR_DEPTH)
        self.depth = depth
        # the union of the drawn boxes: outside it the map is empty (occupancy blurs less)
        self.box: tuple[int, int, int, int] | None = None
        # the depth is the minimum over the faces, exact in any order: the kept faces'
        # part (the same towers and cards under the same lamp) is drawn once and reused
        # ``static``: names the kept part (a new number for every new part); the other
        # faces (hands) change the map only inside ``dynamic_boxes``
        self.static: int | None = None
        self.dynamic_boxes: list[tuple[int, int, int, int]] = []
        self._face_h: dict[Face, np.ndarray] = {}  # lives as long as this map
        if kept:
            key = (self.view.key, array_key(self.light), tuple(kept))
            hit = _SHADOW_MEMO.get(key)
            if hit is None:
                self._draw_faces([(f, f.two_sided) for f in kept])
                part = None
                if self.box is not None:
                    bx0, by0, bx1, by1 = self.box
                    part = self.depth[by0:by1, bx0:bx1].copy()
                hit = (self.box, part, next(_STATIC_IDS))
                _SHADOW_MEMO.put(key, hit, _frozen(part))
            else:
                self.box, part, _ = hit
                if self.box is not None and part is not None:
                    bx0, by0, bx1, by1 = self.box
                    self.depth[by0:by1, bx0:bx1] = part
            self.static = hit[2]
        self._draw_faces(faces, self.dynamic_boxes)
        dist = float(np.linalg.norm(self.light - centre))
        self.mm_per_px = dist / focal
        # at least a pixel of filtering: nearest-texel shadows show the map's staircase
        self.radius_px = max(1.0, softness_mm / 2 / self.mm_per_px)

    def _draw_faces(self, faces: Sequence[tuple[Face, bool]],
                    boxes: list[tuple[int, int, int, int]] | None = None) -> None:
        size = self.depth.shape[0]
        box = (0, 0, size, size)
        for face, two_sided in faces:
            facing = float(np.dot(self.light - face.origin, face.normal)) > 0
            if facing and not two_sided:
                continue  # second-depth: keep the far side of closed bodies
            for r in rasterize(self.view, face, box, antialias=False, coords=False):
                h, w = r.cov.shape
                roi = self.depth[r.y0:r.y0 + h, r.x0:r.x0 + w]
                np.copyto(roi, np.minimum(roi, r.z), where=r.cov > 0)
                self.box = union_box(self.box, (r.x0, r.y0, r.x0 + w, r.y0 + h))
                if boxes is not None:
                    boxes.append((r.x0, r.y0, r.x0 + w, r.y0 + h))

    def touches_dynamic(self, box: tuple[int, int, int, int]) -> bool:
        """Whether the non-kept faces drew anything inside ``box`` (x0, y0, x1, y1)."""
        x0, y0, x1, y1 = box
        return any(a < x1 and x0 < b and c < y1 and y0 < d
                   for a, c, b, d in self.dynamic_boxes)

    def occupancy(self, out: np.ndarray | None = None,
                  dirty: tuple[int, int, int, int] | None = None) -> np.ndarray:
        """1 where something stands between the lamp and the table (soft-edged).
        ``out``, if given (float32, the map's size), is overwritten and returned; with
        ``dirty``, it is known to be zero outside that box. :meth:`occupancy_reach`
        tells where it can be nonzero afterwards."""
        if self.box is None:
            # the blur of an empty map is exactly zero
            if out is None:
                return np.zeros(self.depth.shape, np.float32)
            _reset(out, dirty, 0.0)
            return out
        x0, y0, x1, y1 = self.box
        mask = self.depth[y0:y1, x0:x1] < FAR_DEPTH / 2  # nothing is drawn outside the box
        H, W = self.depth.shape
        return blur_sparse(mask, self.box, (H, W), self.radius_px * 0.6, out, dirty)

    def occupancy_reach(self) -> tuple[int, int, int, int]:
        """A box (x0, y0, x1, y1) outside which :meth:`occupancy` is zero."""
        if self.box is None:
            return (0, 0, 0, 0)
        H, W = self.depth.shape
        return blur_reach(self.box, (H, W), self.radius_px * 0.6)

    def lit_reach(self, face: Face, s: np.ndarray, t: np.ndarray, bias: float
                  ) -> tuple[np.ndarray, tuple[int, int, int, int]]:
        """Fraction of the lamp seen from the face's points (s, t) (percentage-closer
        filtering; the face -> light-image map is a homography whose w is the depth),
        and a box (x0, y0, x1, y1) of the map holding every texel read."""
        Hl = self._face_h.get(face)
        if Hl is None:  # the same for every band of the face
            Hl = self._face_h[face] = face_homography(self.view, face).astype(np.float32)
        z = np.maximum(Hl[2, 0] * s + Hl[2, 1] * t + Hl[2, 2], np.float32(1.0))
        iz = np.float32(1.0) / z
        u = (Hl[0, 0] * s + Hl[0, 1] * t + Hl[0, 2]) * iz
        v = (Hl[1, 0] * s + Hl[1, 1] * t + Hl[1, 2]) * iz
        taps = POISSON[:7]
        # all taps in one remap: the maps stacked tap by tap (nearest sampling is per
        # pixel, so each tap reads exactly what its own remap would)
        rad = np.float32(self.radius_px)
        h, w = z.shape
        mu = (u[None] + (taps[:, 0] * rad)[:, None, None]).reshape(-1, w)
        mv = (v[None] + (taps[:, 1] * rad)[:, None, None]).reshape(-1, w)
        if w <= REMAP_COLS:
            d = cv2.remap(self.depth, mu, mv, cv2.INTER_NEAREST,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=FAR_DEPTH)
        else:  # remap takes fewer than 32767 columns
            d = np.empty(mu.shape, np.float32)
            for c0 in range(0, w, REMAP_COLS):
                c1 = min(w, c0 + REMAP_COLS)
                d[:, c0:c1] = cv2.remap(self.depth, np.ascontiguousarray(mu[:, c0:c1]),
                                        np.ascontiguousarray(mv[:, c0:c1]), cv2.INTER_NEAREST,
                                        borderMode=cv2.BORDER_CONSTANT, borderValue=FAR_DEPTH)
        d = d.reshape(len(taps), h, w)
        size = self.depth.shape[0]
        reach = (0, 0, size, size)
        if u.size:
            lo_u, hi_u, lo_v, hi_v = (float(x) for x in (u.min(), u.max(), v.min(), v.max()))
            if all(math.isfinite(x) for x in (lo_u, hi_u, lo_v, hi_v)):
                # the taps lie within the radius; nearest sampling rounds; float32 sums
                # round by far less than the two texels of slack on each side
                m = float(rad) + 2.0
                reach = (math.floor(lo_u - m) - 1, math.floor(lo_v - m) - 1,
                         math.ceil(hi_u + m) + 2, math.ceil(hi_v + m) + 2)
        np.add(d, np.float32(bias), out=d)
        # counts of the taps that see the lamp: small integers, exact in any order
        hits = (z[None] <= d).view(np.uint8)
        acc = np.add.reduce(hits, axis=0, dtype=np.uint8).astype(np.float32)
        return acc / np.float32(len(taps)), reach

    def ground_homography(self) -> np.ndarray:
        return self.view.plane_homography(0.0)


# ---------------------------------------------------------------------------------------------
# shading


@dataclass(eq=False)
class Light:
    """What the shader needs, already in linear RGB."""

    pos: np.ndarray
    ref_dist2: float
    lamp: np.ndarray  # (3,) direct light colour * intensity
    ambient: np.ndarray  # (3,) ambient colour * level
    shadow: ShadowMap | None

    def key(self) -> bytes:
        """Exact identity of everything but the shadow map."""
        return array_key(np.asarray(self.pos), np.float64(self.ref_dist2),
                          np.asarray(self.lamp), np.asarray(self.ambient))


@dataclass(eq=False)
class _FaceConst:
    """Per-face shading constants, computed once for all of the face's bands."""

    normal: np.ndarray
    sheen: np.ndarray | None
    highlight: bool


def face_constants(view: View, face: Face, light: Light) -> _FaceConst:
    cam = view.centre
    n0 = face.normal
    if face.two_sided and float(np.dot(cam - face.origin, n0)) < 0:
        n0 = -n0
    sheen = None
    highlight = False
    if face.specular > 0:
        cc = face.verts.mean(axis=0)
        vc = cam - cc
        ndv = abs(float(np.dot(n0, vc))) / float(np.linalg.norm(vc))
        fres = 0.04 + 0.96 * (1 - ndv) ** 5
        sheen = (light.ambient * (fres * face.specular * 0.5)).astype(np.float32)
        highlight = _highlight_possible(face, n0, cam, light.pos)
    return _FaceConst(n0, sheen, highlight)


@dataclass(eq=False)
class _ShadeTerms:
    """A face band's shading before its shadow: what the lamp, the room and the view give
    at each pixel. Only the shadow map changes from frame to frame of a still scene."""

    direct: np.ndarray  # unshadowed direct light (Lambert * distance falloff)
    any_direct: bool
    albedo: np.ndarray  # (h, w, 3) or (3,)
    spec: np.ndarray | None  # Blinn-Phong lobe * specular (times direct: the highlight)

    def nbytes(self) -> int:
        # a constant albedo is the face's own array: counted, left as it is
        own = self.albedo if self.albedo.ndim > 1 else None
        return _frozen(self.direct, own, self.spec) + (self.albedo.nbytes if own is None else 0)


def shade_terms(view: View, face: Face, r: _Raster, light: Light, fc: _FaceConst,
                cv: _Covered | None = None) -> _ShadeTerms:
    """The terms at ``r``'s pixels, or with ``cv`` (of ``r``) at its covered pixels."""
    full = r
    if cv is not None:
        r = cv.r
    s, t = r.s, r.t
    o, e1, e2 = face.origin, face.e1, face.e2
    f32 = np.float32
    P = tuple(f32(o[i]) + f32(e1[i]) * s + f32(e2[i]) * t for i in range(3))
    cam = view.centre
    n0 = fc.normal
    N: list[np.ndarray] | list[np.float32]
    if face.bend:
        ang = f32(face.bend) * np.clip((t - f32(face.t_centre)) / f32(face.half_width), -1, 1)
        ca, sa = np.cos(ang), np.sin(ang)
        N = [f32(n0[i]) * ca + f32(e2[i]) * sa for i in range(3)]
    else:
        N = [f32(n0[i]) for i in range(3)]
    L = [f32(light.pos[i]) - P[i] for i in range(3)]
    d2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2]
    inv = 1.0 / np.sqrt(d2)
    ndl = np.maximum((N[0] * L[0] + N[1] * L[1] + N[2] * L[2]) * inv, 0)
    atten = f32(light.ref_dist2) / d2
    direct = ndl * atten
    if not callable(face.albedo):
        alb = np.asarray(face.albedo, np.float32)
    elif cv is None:
        alb = face.albedo(s, t)
    else:
        # a texture lookup is made on the whole band (as without ``cv``), then picked
        alb = face.albedo(full.s, full.t).reshape(-1, 3)[cv.idx][None]
    spec = None
    if fc.sheen is not None and fc.highlight:
        # the lamp's highlight is computed only where it can reach visible strength
        V = [f32(cam[i]) - P[i] for i in range(3)]
        vinv = 1.0 / np.sqrt(V[0] * V[0] + V[1] * V[1] + V[2] * V[2])
        Hv = [L[i] * inv + V[i] * vinv for i in range(3)]
        hinv = 1.0 / np.sqrt(Hv[0] * Hv[0] + Hv[1] * Hv[1] + Hv[2] * Hv[2] + f32(1e-12))
        ndh = np.maximum((N[0] * Hv[0] + N[1] * Hv[1] + N[2] * Hv[2]) * hinv, 0)
        spec = f32(face.specular) * ndh ** f32(face.shininess)
    return _ShadeTerms(direct, bool(np.any(direct > 0)), alb, spec)


def shade_face(face: Face, r: _Raster, light: Light, bias: float, fc: _FaceConst,
               terms: _ShadeTerms) -> tuple[np.ndarray, tuple[int, int, int, int] | None]:
    """Linear RGB (h, w, 3) of ``face`` at the rasterized pixels (Lambert + Blinn-Phong:
    ``terms`` before the shadow, ``fc`` the face's constants), and the box of the shadow
    map it read (None: none read)."""
    direct = terms.direct
    reach = None
    if light.shadow is not None and terms.any_direct:
        lit, reach = light.shadow.lit_reach(face, r.s, r.t, bias)
        direct = direct * lit
    alb = terms.albedo
    amb = light.ambient.astype(np.float32)
    lamp = light.lamp.astype(np.float32)
    # alb * (amb + direct * lamp) [+ spec * direct * lamp] [+ sheen], left to right,
    # in place (each step the same float32 operation as written out)
    col = direct[..., None] * lamp
    np.add(amb, col, out=col)
    np.multiply(alb, col, out=col)
    if fc.sheen is not None:
        # Fresnel sheen of the room light is constant over the face
        if terms.spec is not None:
            col += (terms.spec * direct)[..., None] * lamp
        col += fc.sheen
    return col, reach


def _highlight_possible(face: Face, n: np.ndarray, cam: np.ndarray, lpos: np.ndarray) -> bool:
    """Cheap test on the corners: can the Blinn-Phong lobe exceed ~0.3% anywhere?"""
    pts = np.vstack([face.verts, face.verts.mean(axis=0)])
    lv = lpos - pts
    vv = cam - pts
    hv = lv / np.linalg.norm(lv, axis=1, keepdims=True) + vv / np.linalg.norm(
        vv, axis=1, keepdims=True)
    ndh = (hv @ n) / np.linalg.norm(hv, axis=1)
    best = float(np.clip(ndh.max(), 0, 1))
    # corners bound a flat face poorly only when the lobe peaks inside: widen the test
    best = min(1.0, best + 0.02)
    return face.specular * best ** face.shininess > 0.003


# ---------------------------------------------------------------------------------------------
# canvas


class Canvas:
    """Linear-RGB image with depth and label buffers."""

    def __init__(self, view: View, color: np.ndarray, labels: np.ndarray,
                 zbuf: np.ndarray | None = None) -> None:
        """``zbuf``: a float32 array of the labels' shape to use as the depth buffer."""
        self.view = view
        self.color = color
        if zbuf is None:
            zbuf = np.empty(labels.shape, np.float32)
        zbuf.fill(FAR_DEPTH)
        self.zbuf = zbuf
        self.labels = labels

    def _kept_colour(self, f: Face, i: int, r: _Raster, light: Light, lkey: bytes,
                     bias: float, fc: _FaceConst) -> np.ndarray:
        """Band ``i`` of a persistent face, shaded: from FACE_MEMO when the same camera and
        lamp saw it over the same kept shadow map part, and no other caster (a hand) has
        drawn where its shadow lookups read; the same arrays, bit for bit, either way."""
        view = self.view
        shadow = light.shadow
        static = None if shadow is None else shadow.static
        ckey = None
        if shadow is None or static is not None:
            radius = np.float64(shadow.radius_px if shadow is not None else 0.0)
            ckey = ("colour", f, view.key, lkey, i, static, array_key(radius, np.float64(bias)))
            hit = FACE_MEMO.get(ckey)
            if hit is not None:
                col, reach = hit
                if reach is None or shadow is None or not shadow.touches_dynamic(reach):
                    return col  # type: ignore[no-any-return]
        cv = _covered(r)
        tkey = ("terms", f, view.key, lkey, i)
        terms = FACE_MEMO.get(tkey)
        if terms is None:
            terms = shade_terms(view, f, r, light, fc, cv)
            FACE_MEMO.put(tkey, terms, terms.nbytes() + cv.idx.nbytes)
        col, reach = shade_face(f, cv.r, light, bias, fc, terms)
        col = _spread(col, cv, r.cov.shape)
        if ckey is not None and (reach is None or shadow is None
                                 or not shadow.touches_dynamic(reach)):
            # kept only when it depends on the kept part of the map alone
            FACE_MEMO.put(ckey, (col, reach), _frozen(col))
        return col

    def draw(self, obj: Object3D, light: Light) -> None:
        """Rasterize, shade and depth-test one object, blending it over what is behind.

        A 'solid' object's faces tile its silhouette, so each face adds
        coverage * (colour - background) against a snapshot of the background: shared
        edges then sum to full coverage with no seam. 'layered' pieces are composited
        over one another in order. Depth is tested against the snapshot too.
        """
        view = self.view
        cam = view.centre
        H, W = self.labels.shape
        faces = [f for f in obj.faces
                 if f.two_sided or float(np.dot(cam - f.origin, f.normal)) > 1e-9]
        memo = obj.persistent
        lkey = light.key() if memo else b""
        rasters: list[tuple[Face, int, _Raster]] = []
        for f in faces:
            rs: list[_Raster] | None = None
            if memo:
                rkey = ("raster", f, view.key)
                rs = FACE_MEMO.get(rkey)
                if rs is None:
                    rs = rasterize(view, f, (0, 0, W, H))
                    FACE_MEMO.put(rkey, rs, sum(_frozen(r.cov, r.s, r.t, r.z) for r in rs))
            else:
                rs = rasterize(view, f, (0, 0, W, H))
            rasters.extend((f, i, r) for i, r in enumerate(rs))
        consts: dict[int, _FaceConst] = {}
        if not rasters:
            return
        x0 = min(r.x0 for _, _, r in rasters)
        y0 = min(r.y0 for _, _, r in rasters)
        x1 = max(r.x0 + r.cov.shape[1] for _, _, r in rasters)
        y1 = max(r.y0 + r.cov.shape[0] for _, _, r in rasters)
        bg = self.color[y0:y1, x0:x1].copy()
        zsnap = self.zbuf[y0:y1, x0:x1].copy()
        solid = obj.mode == "solid"
        for f, i, r in rasters:
            rh, rw = r.cov.shape
            ys, xs = slice(r.y0, r.y0 + rh), slice(r.x0, r.x0 + rw)
            ls = (slice(r.y0 - y0, r.y0 - y0 + rh), slice(r.x0 - x0, r.x0 - x0 + rw))
            ok = r.z < zsnap[ls]
            a = np.where(ok, r.cov, np.float32(0))
            if not a.any():
                continue
            fc = consts.get(id(f))
            if fc is None:
                if memo:
                    ckey = ("const", f, view.key, lkey)
                    fc = FACE_MEMO.get(ckey)
                    if fc is None:
                        fc = face_constants(view, f, light)
                        FACE_MEMO.put(ckey, fc, 64)
                else:
                    fc = face_constants(view, f, light)
                consts[id(f)] = fc
            if memo:
                c = self._kept_colour(f, i, r, light, lkey, obj.shadow_bias, fc)
            else:
                cv = _covered(r)
                terms = shade_terms(view, f, r, light, fc, cv)
                c = _spread(shade_face(f, cv.r, light, obj.shadow_bias, fc, terms)[0], cv,
                            r.cov.shape)
            dst = self.color[ys, xs]
            if solid:
                dst += a[..., None] * (c - bg[ls])
            else:
                dst += a[..., None] * (c - dst)
            m = a >= 0.5
            np.copyto(self.zbuf[ys, xs], r.z, where=m)
            np.copyto(self.labels[ys, xs], np.int16(f.label), where=m)
