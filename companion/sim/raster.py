"""A small numpy rasterizer: planar convex faces with z-buffer, anti-aliasing and shading.

Why not painter's algorithm alone: tall towers occlude neighbours in ways a per-object
sort gets wrong, so every object is drawn with a per-pixel depth test. Objects are still
drawn far to near so the anti-aliased edges blend with what is really behind them.
Each face is rasterized only inside its bounding box, with coverage from the signed
distance to its edges, local (s, t) coordinates from the face's homography, and a
point light with a shadow map.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

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


def _clip_y(p: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Clip a 2D polygon to lo <= y <= hi."""
    for keep_ge, lim in ((True, lo), (False, hi)):
        out = []
        n = len(p)
        for i in range(n):
            a, b = p[i], p[(i + 1) % n]
            ina = a[1] >= lim if keep_ge else a[1] <= lim
            inb = b[1] >= lim if keep_ge else b[1] <= lim
            if ina:
                out.append(a)
            if ina != inb:
                f = (lim - a[1]) / (b[1] - a[1])
                out.append(a + f * (b - a))
        if not out:
            return np.zeros((0, 2))
        p = np.asarray(out)
    return p


BAND = 40


def rasterize(view: View, face: Face, box: tuple[int, int, int, int],
              antialias: bool = True) -> list[_Raster]:
    """Coverage, local coordinates and depth of ``face`` inside ``box``.

    Slanted or thin faces are cut into horizontal bands with tight x ranges so the work
    follows the polygon's area, not its bounding box.
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
        for ya in range(y0, y1, BAND):
            yb = min(y1, ya + BAND)
            q = _clip_y(p, ya - 1.0, yb + 1.0)
            if len(q) == 0:
                continue
            xa = max(x0, int(np.floor(q[:, 0].min())) - 1)
            xb = min(x1, int(np.ceil(q[:, 0].max())) + 2)
            if xb > xa:
                boxes.append((xa, ya, xb, yb))
    else:
        boxes = [(x0, y0, x1, y1)]
    out = []
    for xa, ya, xb, yb in boxes:
        uu = np.arange(xa, xb, dtype=np.float32)[None, :]
        vv = np.arange(ya, yb, dtype=np.float32)[:, None]
        dmin = None
        for ex, ey, ax, ay in edges:
            # left of a->b (counter-clockwise in x-right/y-down pixels) is inside
            d = ex * (vv - ay) - ey * (uu - ax)
            dmin = d if dmin is None else np.minimum(dmin, d)
        if dmin is None:
            continue
        if antialias:
            cov = np.clip(dmin + np.float32(0.5), 0.0, 1.0)
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
        s = ((Hi[0, 0] * uu + Hi[0, 2]) + Hi[0, 1] * vv) * inv
        t = ((Hi[1, 0] * uu + Hi[1, 2]) + Hi[1, 1] * vv) * inv
        z = inv  # Hi @ (u, v, 1) = (s, t, 1) / depth
        out.append(_Raster(xa, ya, cov, s, t, z))
    return out


# ---------------------------------------------------------------------------------------------
# shadow map


POISSON = np.array([[0, 0], [0.53, 0.22], [-0.41, 0.61], [-0.65, -0.31], [0.18, -0.72],
                    [0.95, -0.12], [-0.05, 0.98], [-0.97, 0.18], [0.62, 0.74], [-0.52, -0.86],
                    [0.71, -0.69], [-0.86, 0.52]], np.float32)


class ShadowMap:
    """Depth from the lamp (second-depth: a closed body stores its far side, so no acne)."""

    def __init__(self, light_pos: np.ndarray, objects: Sequence[Object3D], softness_mm: float,
                 size: int = 1536, fit_points: np.ndarray | None = None) -> None:
        self.light = np.asarray(light_pos, np.float64)
        casters = [o for o in objects if o.casts_shadow]
        faces: list[tuple[Face, bool]] = []
        for o in casters:
            for f in (o.shadow_faces if o.shadow_faces is not None else o.faces):
                faces.append((f, f.two_sided))
        pts = [f.verts for f, _ in faces]
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
        self.depth = np.full((size, size), FAR_DEPTH, np.float32)
        box = (0, 0, size, size)
        for face, two_sided in faces:
            facing = float(np.dot(self.light - face.origin, face.normal)) > 0
            if facing and not two_sided:
                continue  # second-depth: keep the far side of closed bodies
            for r in rasterize(self.view, face, box, antialias=False):
                h, w = r.cov.shape
                roi = self.depth[r.y0:r.y0 + h, r.x0:r.x0 + w]
                np.copyto(roi, np.minimum(roi, r.z), where=r.cov > 0)
        dist = float(np.linalg.norm(self.light - centre))
        self.mm_per_px = dist / focal
        # at least a pixel of filtering: nearest-texel shadows show the map's staircase
        self.radius_px = max(1.0, softness_mm / 2 / self.mm_per_px)

    def occupancy(self) -> np.ndarray:
        """1 where something stands between the lamp and the table (soft-edged)."""
        occ = (self.depth < FAR_DEPTH / 2).astype(np.float32)
        return np.asarray(cv2.GaussianBlur(occ, (0, 0), self.radius_px * 0.6))

    def lit(self, face: Face, s: np.ndarray, t: np.ndarray, bias: float) -> np.ndarray:
        """Fraction of the lamp seen from the face's points (s, t) (percentage-closer
        filtering). The face -> light-image map is a homography whose w is the depth."""
        Hl = face_homography(self.view, face).astype(np.float32)
        z = np.maximum(Hl[2, 0] * s + Hl[2, 1] * t + Hl[2, 2], np.float32(1.0))
        iz = np.float32(1.0) / z
        u = (Hl[0, 0] * s + Hl[0, 1] * t + Hl[0, 2]) * iz
        v = (Hl[1, 0] * s + Hl[1, 1] * t + Hl[1, 2]) * iz
        taps = POISSON[:7]
        acc = np.zeros_like(z)
        for du, dv in taps:
            d = cv2.remap(self.depth, u + du * self.radius_px, v + dv * self.radius_px,
                          cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT,
                          borderValue=FAR_DEPTH)
            acc += (z <= d + np.float32(bias)).astype(np.float32)
        return acc / np.float32(len(taps))

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


def shade_face(view: View, face: Face, r: _Raster, light: Light, bias: float,
               fc: _FaceConst | None = None) -> np.ndarray:
    """Linear RGB (h, w, 3) of ``face`` at the rasterized pixels (Lambert + Blinn-Phong)."""
    if fc is None:
        fc = face_constants(view, face, light)
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
    if light.shadow is not None and np.any(direct > 0):
        direct *= light.shadow.lit(face, s, t, bias)
    alb = face.albedo(s, t) if callable(face.albedo) else np.asarray(face.albedo, np.float32)
    amb = light.ambient.astype(np.float32)
    lamp = light.lamp.astype(np.float32)
    if fc.sheen is not None:
        # Fresnel sheen of the room light is constant over the face; the lamp's
        # highlight is computed only where it can reach visible strength
        amb_term = amb
        sheen = fc.sheen
        if fc.highlight:
            V = [f32(cam[i]) - P[i] for i in range(3)]
            vinv = 1.0 / np.sqrt(V[0] * V[0] + V[1] * V[1] + V[2] * V[2])
            Hv = [L[i] * inv + V[i] * vinv for i in range(3)]
            hinv = 1.0 / np.sqrt(Hv[0] * Hv[0] + Hv[1] * Hv[1] + Hv[2] * Hv[2] + f32(1e-12))
            ndh = np.maximum((N[0] * Hv[0] + N[1] * Hv[1] + N[2] * Hv[2]) * hinv, 0)
            spec = f32(face.specular) * ndh ** f32(face.shininess) * direct
            col = alb * (amb_term + direct[..., None] * lamp) + spec[..., None] * lamp + sheen
        else:
            col = alb * (amb_term + direct[..., None] * lamp) + sheen
    else:
        col = alb * (amb + direct[..., None] * lamp)
    return col.astype(np.float32, copy=False)


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

    def __init__(self, view: View, color: np.ndarray, labels: np.ndarray) -> None:
        self.view = view
        self.color = color
        self.zbuf = np.full(labels.shape, FAR_DEPTH, np.float32)
        self.labels = labels

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
        rasters = [(f, r) for f in faces for r in rasterize(view, f, (0, 0, W, H))]
        consts: dict[int, _FaceConst] = {}
        if not rasters:
            return
        x0 = min(r.x0 for _, r in rasters)
        y0 = min(r.y0 for _, r in rasters)
        x1 = max(r.x0 + r.cov.shape[1] for _, r in rasters)
        y1 = max(r.y0 + r.cov.shape[0] for _, r in rasters)
        bg = self.color[y0:y1, x0:x1].copy()
        zsnap = self.zbuf[y0:y1, x0:x1].copy()
        solid = obj.mode == "solid"
        for f, r in rasters:
            rh, rw = r.cov.shape
            ys, xs = slice(r.y0, r.y0 + rh), slice(r.x0, r.x0 + rw)
            ls = (slice(r.y0 - y0, r.y0 - y0 + rh), slice(r.x0 - x0, r.x0 - x0 + rw))
            ok = r.z < zsnap[ls]
            a = np.where(ok, r.cov, np.float32(0))
            if not a.any():
                continue
            fc = consts.get(id(f))
            if fc is None:
                fc = consts[id(f)] = face_constants(view, f, light)
            c = shade_face(view, f, r, light, obj.shadow_bias, fc)
            dst = self.color[ys, xs]
            if solid:
                dst += a[..., None] * (c - bg[ls])
            else:
                dst += a[..., None] * (c - dst)
            m = a >= 0.5
            np.copyto(self.zbuf[ys, xs], r.z, where=m)
            np.copyto(self.labels[ys, xs], np.int16(f.label), where=m)
