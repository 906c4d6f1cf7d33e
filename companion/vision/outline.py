"""The board's outer edge as evidence for the pose.

Markers are small: two on one side of the board fix where that side lies but
hardly how the board tilts away from it, and a few pixels of error there move
every tower top the reader projects. The board's outline is four long
straight edges whose places the profile knows; found in the photo they pin
the plane the markers only hint at. Each edge is looked for along its
normal, near where the pose puts it, as a straight line (an offset and a
slope along the edge) through the strongest colour step. The pose (with an
estimated focal length and lens term) is then fitted to the markers' corners
and to the edge points, each of those by its distance across its edge only:
a point was matched to where the pose put it along the edge, and that part
is the pose's error, not evidence. Kept only when the markers still fit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from companion.vision.geometry import BoardGeometry, FloatArray, Intrinsics, Pose
from companion.vision.pose import (
    _marker_cells,
    focal_prior_term,
    marker_correspondences,
    marker_residuals,
)


@dataclass
class EdgeFit:
    """One board edge found: its samples' board points and image points."""

    obj: FloatArray  # (K, 3) board mm
    img: FloatArray  # (K, 2) image pixels
    support: float  # share of the edge's samples on the line
    strength: float  # median colour step on the line (grey levels per pixel)
    edge: int = 0  # 0 south, 1 east, 2 north, 3 west (from the board's south-west corner)


@dataclass(frozen=True)
class _LineSearch:
    """How an edge's straight line is looked for (:func:`_line_across`): ``search``
    px either side of where the pose puts it, profiles every ``step`` px, slopes in
    ``slope_step`` px steps; an edge counts with ``min_support`` of its samples on
    the line, ``min_samples`` of them, and a step of ``min_strength`` grey levels a
    pixel."""

    search: float
    step: float
    slope_step: float
    min_support: float
    min_strength: float
    min_samples: int

    @classmethod
    def of(cls, cfg: Mapping[str, Any], search: float, min_support: float,
           min_strength: float, min_samples: int) -> _LineSearch:
        """The section ``cfg``'s values, these defaults for what it leaves out."""
        return cls(float(cfg.get("search_px", search)), float(cfg.get("sample_px", 0.5)),
                   float(cfg.get("slope_step_px", 1.0)),
                   float(cfg.get("min_support", min_support)),
                   float(cfg.get("min_strength", min_strength)),
                   int(cfg.get("min_samples", min_samples)))


def _edges(g: BoardGeometry, inset_mm: float, step_mm: float
           ) -> list[tuple[FloatArray, FloatArray]]:
    """Sample points along each board edge (ends left out) and the outward normal."""
    return _edges_of(tuple(float(v) for v in g.board_size), inset_mm, step_mm)


@lru_cache(maxsize=8)
def _edges_of(board_size: tuple[float, ...], inset_mm: float, step_mm: float
              ) -> list[tuple[FloatArray, FloatArray]]:
    """:func:`_edges` by the board's size: the same for every photo, made once (read-only)."""
    w, h = board_size
    corners = [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]
    out = []
    for k in range(4):
        a = np.array(corners[k])
        b = np.array(corners[(k + 1) % 4])
        length = float(np.linalg.norm(b - a))
        t = np.arange(inset_mm, length - inset_mm + 1e-9, step_mm) / length
        pts = a[None] + t[:, None] * (b - a)[None]
        d = (b - a) / length
        normal = np.array([d[1], -d[0]])  # outward for a counter-clockwise outline
        obj = np.column_stack([pts, np.zeros(len(pts))])
        obj.setflags(write=False)
        normal.setflags(write=False)
        out.append((obj, normal))
    return out


def _smooth(image: np.ndarray, cfg: Mapping[str, Any]) -> np.ndarray:
    # smoothed in 8 bits (a third of the time of floats; a level is far below the
    # steps looked for)
    out: np.ndarray = cv2.GaussianBlur(image, (0, 0), float(cfg.get("smooth_px", 1.0)))
    return out.astype(np.float32)


@lru_cache(maxsize=16)
def _line_grid(m: int, search: float, step: float, slope_step: float, ncols: int
               ) -> tuple[FloatArray, FloatArray, FloatArray, np.ndarray, np.ndarray]:
    """Every line (slope b, offset a) an edge of ``m`` samples is tried along: the
    position along the edge, the offsets, the slopes, which lines stay within the
    search, and each such line's samples as indices into the (m, ncols) gradient
    profiles, flattened. The same for every photo (read-only)."""
    t = np.linspace(-1.0, 1.0, m)
    idx0 = (search + 2) / step  # index of offset 0
    avals = np.arange(-search, search + 1e-9, step)
    bvals = np.arange(-search / 2, search / 2 + 1e-9, slope_step)
    o = avals[None, :, None] + bvals[:, None, None] * t[None, None, :]
    ok = np.abs(o).max(axis=2) <= search
    j = np.clip(np.round(idx0 + o[ok] / step).astype(np.intp), 0, ncols - 1)
    flat = np.arange(m)[None, :] * ncols + j
    for arr in (t, avals, bvals, ok, flat):
        arr.setflags(write=False)
    return t, avals, bvals, ok, flat


def _row_medians(x: np.ndarray) -> np.ndarray:
    """``np.median(x, axis=1)`` of a finite array, which it overwrites.

    The same two middle values, meaned the same way; numpy also partitions out
    each row's largest value (to pass a NaN on), which costs it several times
    the median itself on these rows.
    """
    n = x.shape[1]
    half = n // 2
    if n % 2:
        x.partition(half, axis=1)
        return np.mean(x[:, half:half + 1], axis=1)
    x.partition([half - 1, half], axis=1)
    return np.mean(x[:, half - 1:half + 1], axis=1)


def find_edges(image: np.ndarray, pose: Pose, g: BoardGeometry,
               cfg: Mapping[str, Any], smoothed: np.ndarray | None = None) -> list[EdgeFit]:
    """The board edges found near where ``pose`` puts them (``smoothed``: the photo
    already smoothed by ``smooth_px``, as float32)."""
    how = _LineSearch.of(cfg, 16.0, 0.6, 4.0, 12)
    search, step, min_samples = how.search, how.step, how.min_samples
    img = smoothed if smoothed is not None else _smooth(image, cfg)
    H, W = img.shape[:2]
    offs = np.arange(-search - 2, search + 2 + 1e-9, step)
    fits = []
    edges = _edges(g, float(cfg.get("inset_mm", 15.0)), float(cfg.get("step_mm", 6.0)))
    # every edge's samples and the points a millimetre outward, projected at once (a
    # point's projection does not depend on the others')
    ends = np.cumsum([len(obj) for obj, _ in edges for _ in (0, 1)])
    projected = np.split(pose.project(np.vstack([
        a for obj, normal in edges
        for a in (obj, obj + np.array([normal[0], normal[1], 0.0]))])), ends[:-1])
    for edge, (obj, _) in enumerate(edges):
        p, q = projected[2 * edge], projected[2 * edge + 1]
        n = q - p
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-9)
        xs = p[:, None, 0] + offs[None, :] * n[:, None, 0]
        ys = p[:, None, 1] + offs[None, :] * n[:, None, 1]
        inside = ((xs.min(1) >= 1) & (xs.max(1) <= W - 2) & (ys.min(1) >= 1)
                  & (ys.max(1) <= H - 2))
        if inside.sum() < min_samples:
            continue
        obj, xs, ys, p, n = obj[inside], xs[inside], ys[inside], p[inside], n[inside]
        prof = cv2.remap(img, xs.astype(np.float32), ys.astype(np.float32), cv2.INTER_LINEAR)
        # colour step per pixel across the edge, all channels (board and table may
        # differ in hue more than in brightness)
        k = max(1, int(round(1.0 / step)))
        grad = np.zeros(prof.shape[:2], np.float32)
        grad[:, k:-k] = np.abs(prof[:, 2 * k:] - prof[:, :-2 * k]).sum(axis=2) / (2 * k * step)
        # the median: a card's white edge a centimetre outside, along a fifth of the
        # board's, is far stronger there but no line along the whole edge. The
        # board's own border art runs parallel to its edge, just inside it: of the
        # lines nearly as strong as the strongest, the outline is the outermost
        fit = _line_across(grad, obj, p, n, how, float(cfg.get("outer_ratio", 0.5)), edge)
        if fit is not None:
            fits.append(fit)
    return fits


def _line_across(grad: np.ndarray, obj: FloatArray, p: FloatArray, n: FloatArray,
                 how: _LineSearch, outer_ratio: float, edge: int) -> EdgeFit | None:
    """The straight line (an offset and a slope along the edge) through the steps of
    ``grad`` (one profile a row, sampled every ``how.step`` px from ``-how.search -
    2`` along the image normals ``n`` at the points ``p``, board points ``obj``): of
    the lines at least ``outer_ratio`` as strong as the strongest, the outermost
    that its samples bear out; None where none does."""
    search, step = how.search, how.step
    min_support, min_strength, min_samples = how.min_support, how.min_strength, how.min_samples
    slope_step = how.slope_step
    m = len(obj)
    t, avals, bvals, ok, flat = _line_grid(m, search, step, slope_step, grad.shape[1])
    idx0 = (search + 2) / step  # index of offset 0
    rows = np.arange(m)
    # every line (slope b, offset a) at once, each line's samples a row of ``flat``
    score = np.full(ok.shape, -1.0)
    score[ok] = _row_medians(grad.ravel()[flat])
    # (a sloped line grazing the strongest is a shoulder of that peak, not another line)
    sa = score.max(axis=0)
    pad = np.pad(sa, 1, constant_values=-1.0)
    peaks = np.flatnonzero((sa >= pad[:-2]) & (sa >= pad[2:])
                           & (sa >= outer_ratio * float(sa.max())))
    r = max(1, int(round(1.5 / step)))
    ncols = grad.shape[1]
    around = np.arange(-r, r + 1)
    for ia in sorted(peaks, reverse=True):
        strength = float(sa[ia])
        a = float(avals[ia])
        b = float(bvals[int(score[:, ia].argmax())])
        j = np.round(idx0 + (a + b * t) / step).astype(int)
        # each sample's own peak within a pixel and a half of the line
        win = grad[rows[:, None], np.clip(j[:, None] + around[None, :], 0, ncols - 1)]
        peak = win.argmax(axis=1) - r
        pv = win.max(axis=1)
        # a peak at the window's end is a stronger edge beside the line, not on it
        on = (np.abs(peak) < r) & (pv >= 0.5 * np.median(pv))
        support = float(on.mean())
        if support >= min_support and strength >= min_strength and on.sum() >= min_samples:
            break
    else:
        return None
    # sub-pixel: a parabola through the peak and its neighbours
    jj = j[on] + peak[on]
    g0 = grad[rows[on], jj - 1]
    g1 = grad[rows[on], jj]
    g2 = grad[rows[on], jj + 1]
    den = g0 - 2 * g1 + g2
    frac = np.where(np.abs(den) > 1e-6, 0.5 * (g0 - g2) / np.where(den == 0, 1, den), 0.0)
    off = (jj - idx0 + np.clip(frac, -0.5, 0.5)) * step
    return EdgeFit(obj[on], p[on] + off[:, None] * n[on], support, strength, edge)


def find_marker_edges(image: np.ndarray, pose: Pose, g: BoardGeometry, ids: Sequence[int],
                      cfg: Mapping[str, Any]) -> list[EdgeFit]:
    """The outer edges of the markers ``ids`` (ones the detector did not decode) found
    near where ``pose`` puts them: where their white quiet zone meets their black
    border.

    A tower standing on a marker's corner hides a piece of its border and the
    detector, which needs the whole square, loses it; its edges still show
    along most of their length. Only a step from light outside to dark inside
    counts (the quiet zone's own outer edge, and the border's inner one, step
    the other way), along the straight line its samples bear out, as
    :func:`find_edges` finds the board's. Each edge is ``4 + 4 * id + side``."""
    how = _LineSearch.of(cfg, 12.0, 0.5, 8.0, 6)
    search, step, min_samples = how.search, how.step, how.min_samples
    spacing = float(cfg.get("spacing_px", 3.0))
    inset = float(cfg.get("inset", 0.12))
    min_px = float(cfg.get("min_side_px", 24.0))
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    H, W = gray.shape[:2]
    reach = search + 4.0
    offs = np.arange(-search - 2, search + 2 + 1e-9, step)
    fits: list[EdgeFit] = []
    for mid in ids:
        corners = g.marker_corners(mid)
        pred = pose.project(corners)
        if (not np.all(np.isfinite(pred)) or pred[:, 0].min() < reach
                or pred[:, 1].min() < reach or pred[:, 0].max() > W - 1 - reach
                or pred[:, 1].max() > H - 1 - reach):
            continue
        lo = np.maximum(np.floor(pred.min(axis=0) - reach - 4), 0).astype(int)
        hi = np.minimum(np.ceil(pred.max(axis=0) + reach + 4), [W - 1, H - 1]).astype(int)
        crop = cv2.GaussianBlur(gray[lo[1]:hi[1] + 1, lo[0]:hi[0] + 1], (0, 0),
                                float(cfg.get("smooth_px", 1.0))).astype(np.float32)
        for side in range(4):
            a, b = corners[side], corners[(side + 1) % 4]
            length = float(np.linalg.norm(pred[(side + 1) % 4] - pred[side]))
            if length < min_px:
                continue
            t = np.linspace(inset, 1.0 - inset, max(min_samples, int(length / spacing)))
            obj = a[None] + t[:, None] * (b - a)[None]
            pq = pose.project(np.vstack([obj, obj + _outward_mm(g, mid, obj)]))
            p, q = pq[:len(obj)], pq[len(obj):]
            n = q - p
            n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-9)
            xs = p[:, None, 0] + offs[None, :] * n[:, None, 0] - lo[0]
            ys = p[:, None, 1] + offs[None, :] * n[:, None, 1] - lo[1]
            prof = cv2.remap(crop, xs.astype(np.float32), ys.astype(np.float32),
                             cv2.INTER_LINEAR)
            # light outward, dark inward: the step outward, and nothing the other way
            k = max(1, int(round(1.0 / step)))
            grad = np.zeros(prof.shape, np.float32)
            grad[:, k:-k] = np.maximum(prof[:, 2 * k:] - prof[:, :-2 * k], 0) / (2 * k * step)
            fit = _line_across(grad, obj, p, n, how, 1.0, 4 + 4 * int(mid) + side)
            if fit is not None:
                fits.append(fit)
    return fits


_LN_F_ASTRAY = float(np.log(8.0))  # no refit moves a focal length this far


def _point_to_line(pose: Pose, obj_m: FloatArray, img_m: FloatArray, weight: float,
                   fits: list[EdgeFit], fit_focal: bool, fit_k1: bool,
                   iterations: int = 6,
                   focal_prior: tuple[float, float, float] | None = None) -> Pose:
    """Pose (and focal length, k1) minimising the markers' corner distances and each
    edge point's distance across its edge (along the edge it is free); ``focal_prior``
    (f, weight, scale) adds the focal length's prior (``pose.focal_prior_term``), as
    the markers' own fit does."""
    obj_e = np.vstack([f.obj for f in fits])
    img_e = np.vstack([f.img for f in fits])
    tang = np.vstack([np.repeat(((f.obj[-1] - f.obj[0])
                                 / np.linalg.norm(f.obj[-1] - f.obj[0]))[None], len(f.obj), 0)
                      for f in fits])
    K0 = pose.intrinsics.K
    # the focal length as ln f (the markers' own fit's way, ``pose._map_fit``): a step
    # cannot send it below zero, and the prior is a function of ln f
    x = np.concatenate([pose.rvec.ravel(), pose.tvec.ravel(),
                        [np.log(K0[0, 0]), pose.intrinsics.dist[0]]])

    def unpack(v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        K = K0.copy()
        K[0, 0] = K[1, 1] = np.exp(v[6])
        d = pose.intrinsics.dist.copy()
        d[0] = v[7]
        return v[:3], v[3:6], K, d

    allobj = np.vstack([obj_m, obj_e, obj_e + tang])
    nm, ne = len(obj_m), len(obj_e)

    def residuals(v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Residuals and their derivatives in ``free`` (projectPoints' own Jacobian:
        one projection a step instead of one a parameter)."""
        r, t, K, d = unpack(v)
        proj, jac = cv2.projectPoints(allobj, r, t, K, d)
        proj = proj.reshape(-1, 2)
        # columns: rvec 3, tvec 3, fx, fy, cx, cy, the distortion terms; f is fx = fy
        jac = jac.reshape(-1, 2, jac.shape[1])
        dp = np.concatenate([jac[:, :, :6], ((jac[:, :, 6] + jac[:, :, 7]) * K[0, 0])[:, :, None],
                             jac[:, :, 10:11]], axis=2)[:, :, free]
        pm, pe, pt = proj[:nm], proj[nm:nm + ne], proj[nm + ne:]
        dm, de, dt = dp[:nm], dp[nm:nm + ne], dp[nm + ne:]
        across, u, length, nrm = _across(pe, pt, img_e)
        gap = img_e - pe
        # d(across) = -nrm . d(pe) + gap . d(nrm); nrm is u turned a quarter, and
        # d(u) = (I - u u^T) d(w) / |w|
        dw = dt - de
        du = (dw - u[:, :, None] * np.einsum("nk,nkp->np", u, dw)[:, None, :]) / length[:, :, None]
        dn = np.stack([-du[:, 1], du[:, 0]], axis=1)
        jacross = -np.einsum("nk,nkp->np", nrm, de) + np.einsum("nk,nkp->np", gap, dn)
        sw = np.sqrt(weight)
        res = np.concatenate([sw * (pm - img_m).ravel(), across])
        jall = np.vstack([sw * dm.reshape(-1, len(free)), jacross])
        if focal_prior is not None and fit_focal:
            # the markers' corners count ``weight`` times here: so does the prior
            off = float(v[6] - np.log(focal_prior[0]))  # ln f from the prior's
            wp = sw * focal_prior_term(off, focal_prior[1], focal_prior[2])[1]
            row = np.zeros((1, len(free)))
            row[0, free.index(6)] = wp
            res = np.concatenate([res, [wp * off]])
            jall = np.vstack([jall, row])
        return res, jall

    free = [0, 1, 2, 3, 4, 5] + ([6] if fit_focal else []) + ([7] if fit_k1 else [])
    ln_f0 = float(x[6])
    for _ in range(iterations):
        if not np.all(np.isfinite(x)):
            break  # a step went astray (the caller refuses the fit)
        r0, J = residuals(x)
        if not (np.all(np.isfinite(r0)) and np.all(np.isfinite(J))):
            # LAPACK would print its complaint on stdout, into a JSON line
            x[:] = np.nan
            break
        try:
            delta = np.linalg.lstsq(J, -r0, rcond=None)[0]
        except np.linalg.LinAlgError:
            break
        x[free] += delta
        if abs(x[6] - ln_f0) > _LN_F_ASTRAY:
            # the focal length scaled eightfold in a few steps: an edge taken from the
            # table, say (the caller refuses the fit; exp would overflow on)
            x[:] = np.nan
            break
        if np.abs(delta[:3]).max() < 1e-7:
            break
    r, t, K, d = unpack(x)
    intr = Intrinsics(K, d, pose.intrinsics.size, pose.intrinsics.estimated)
    return Pose(np.asarray(r, np.float64).reshape(3, 1), np.asarray(t, np.float64).reshape(3, 1),
                intr, pose.markers, pose.error_px)



def _outward_mm(g: BoardGeometry, mid: int, obj: FloatArray) -> FloatArray:
    """The board direction (unit, z 0) away from marker ``mid``'s middle across its
    edge through the points ``obj``."""
    out: FloatArray = obj.mean(axis=0) - g.marker_corners(mid).mean(axis=0)
    out[2] = 0.0
    return out / np.linalg.norm(out)


def _grey_at(gray: np.ndarray, pose: Pose, pts: FloatArray) -> FloatArray:
    """The grey levels where ``pose`` puts board points ``pts`` (nan outside the photo)."""
    uv = pose.project(pts).astype(np.float32)
    h, w = gray.shape[:2]
    ok = (uv[:, 0] >= 1) & (uv[:, 1] >= 1) & (uv[:, 0] <= w - 2) & (uv[:, 1] <= h - 2)
    img = gray if gray.dtype == np.float32 else gray.astype(np.float32)
    v = cv2.remap(img, uv[:, None, 0], uv[:, None, 1], cv2.INTER_LINEAR).ravel()
    return np.where(ok, v, np.nan)


def _cells_at(g: BoardGeometry, mid: int, pts: FloatArray) -> np.ndarray:
    """Whether the marker ``mid`` is printed white at board points ``pts`` on it."""
    cells = _marker_cells(g.marker_dictionary, mid)
    n = cells.shape[0]
    cx, cy = g.marker_centres[mid]
    s = g.marker_size / 2
    # cell row 0 is the marker's top (+y), as marker_corners puts it
    col = np.clip(((pts[:, 0] - (cx - s)) / g.marker_size * n).astype(int), 0, n - 1)
    row = np.clip((((cy + s) - pts[:, 1]) / g.marker_size * n).astype(int), 0, n - 1)
    out: np.ndarray = cells[row, col]
    return out


def _paper_levels(gray: np.ndarray, pose: Pose, g: BoardGeometry,
                  found: Mapping[int, np.ndarray]) -> tuple[float, float]:
    """The found markers' white and black (median grey levels of their data cells)."""
    whites, blacks = [], []
    for k in found:
        n = _marker_cells(g.marker_dictionary, k).shape[0]
        cells = (np.arange(1, n - 1) + 0.5) / n - 0.5
        cx, cy = g.marker_centres[k]
        xs, ys = np.meshgrid(cx + cells * g.marker_size, cy + cells * g.marker_size)
        pts = np.column_stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)])
        v, white = _grey_at(gray, pose, pts), _cells_at(g, k, pts)
        whites.append(v[white])
        blacks.append(v[~white])
    return (float(np.nanmedian(np.concatenate(whites))),
            float(np.nanmedian(np.concatenate(blacks))))


def _unprinted_edges(gray: np.ndarray, pose: Pose, g: BoardGeometry, fits: list[EdgeFit],
                     levels: tuple[float, float], least: float) -> set[int]:
    """The edges whose marker does not show as printed just inside them, under
    ``pose``: and those of a marker with no edge that does.

    A dark top standing on most of a marker steps from its quiet zone to dark along
    the marker's own axes (towers stand square to the board), as its border does.
    Past a border, one cell wide, lie the data cells: at each point of an edge, a
    cell and a half inward, the photo must show the cell as printed (on its side of
    the level halfway between the found markers' white and black) at ``least`` of
    the points, and show a white cell there at least once. An edge along black
    cells only tells nothing, and counts with its marker's other edges."""
    white_level, black_level = levels
    if not white_level > black_level:
        return {f.edge for f in fits}
    mid_level = (white_level + black_level) / 2
    verdict: dict[int, bool | None] = {}
    for f in fits:
        mid = (f.edge - 4) // 4
        cell = g.marker_size / _marker_cells(g.marker_dictionary, mid).shape[0]
        pts = f.obj - 1.5 * cell * _outward_mm(g, mid, f.obj)
        white = _cells_at(g, mid, pts)
        v = _grey_at(gray, pose, pts)
        seen = np.isfinite(v)
        agree = (v[seen] > mid_level) == white[seen]
        shown_white = bool(np.any(agree & white[seen]))
        if not seen.any() or not white[seen].any():
            verdict[f.edge] = None
        else:
            verdict[f.edge] = bool(agree.mean() >= least and shown_white)
    markers = {(e - 4) // 4 for e in verdict}
    vouched = {k for k in markers if any(v for e, v in verdict.items() if (e - 4) // 4 == k)}
    return {e for e, v in verdict.items() if v is False or (e - 4) // 4 not in vouched}


def _outward_normals(pose: Pose, g: BoardGeometry, fit: EdgeFit) -> FloatArray:
    """The image directions away from a marker's middle across its edge ``fit``."""
    pq = pose.project(np.vstack([fit.obj, fit.obj + _outward_mm(g, (fit.edge - 4) // 4,
                                                                fit.obj)]))
    n = pq[len(fit.obj):] - pq[:len(fit.obj)]
    normals: FloatArray = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-9)
    return normals


def _outward(pose: Pose, g: BoardGeometry, fit: EdgeFit) -> FloatArray:
    """How far (px) each point of a marker's edge ``fit`` lies outward of where ``pose``
    puts that edge."""
    return np.sum((fit.img - pose.project(fit.obj)) * _outward_normals(pose, g, fit), axis=1)


def _moved_out(pose: Pose, g: BoardGeometry, fit: EdgeFit, px: float) -> EdgeFit:
    """The marker's edge ``fit`` with its points moved ``px`` outward."""
    return replace(fit, img=fit.img + px * _outward_normals(pose, g, fit))


def _fit_cost(pose: Pose, obj_m: FloatArray, img_m: FloatArray, weight: float,
              fits: list[EdgeFit]) -> float:
    """What :func:`_point_to_line` minimises, at ``pose`` (squared pixels): the
    markers' corner distances, ``weight`` times, and the edge points' distances
    across their edges."""
    return weight * float(np.sum((pose.project(obj_m) - img_m) ** 2)) + _across2(pose, fits)


def _across(p: FloatArray, q: FloatArray, img: FloatArray
            ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """How far (px) each point of ``img`` lies across the line from ``p`` to ``q``
    (the projections of an edge point and of a point a millimetre along the edge);
    with the line's direction, its length and its normal, for the derivatives."""
    length = np.maximum(np.linalg.norm(q - p, axis=1, keepdims=True), 1e-9)
    u = (q - p) / length
    nrm = np.column_stack([-u[:, 1], u[:, 0]])
    return np.sum((img - p) * nrm, axis=1), u, length, nrm


def _across2(pose: Pose, fits: Sequence[EdgeFit]) -> float:
    """The sum of the squared distances (px) of the edges' points across where
    ``pose`` puts their edges."""
    total = 0.0
    for f in fits:
        along = (f.obj[-1] - f.obj[0]) / np.linalg.norm(f.obj[-1] - f.obj[0])
        pq = pose.project(np.vstack([f.obj, f.obj + along]))
        total += float(np.sum(_across(pq[:len(f.obj)], pq[len(f.obj):], f.img)[0] ** 2))
    return total


def edge_rms(pose: Pose, fits: Sequence[EdgeFit]) -> float:
    """How far (px, root mean square) the edges' points lie across where ``pose``
    puts their edges."""
    n = sum(len(f.obj) for f in fits)
    return float(np.sqrt(_across2(pose, fits) / n)) if n else 0.0


def refine_by_marker_edges(image: np.ndarray, pose: Pose, markers: Mapping[int, np.ndarray],
                           g: BoardGeometry, cfg: Mapping[str, Any], fit_focal: bool,
                           focal_prior: tuple[float, float, float] | None = None
                           ) -> tuple[Pose, list[EdgeFit]]:
    """The pose solved again with the edges of the markers the detector missed beside
    the corners of those it found, when it fits; and those edges (none when it
    was not solved again).

    Two or three markers on one side of the board fix that side but barely how the
    board tilts away from it, and a tower top 300 mm up moves with the tilt: on
    ray-traced phone photos whose far markers a tower stood on, the tallest tops
    lay 8-13 px off. The missed markers' edges (:func:`find_marker_edges`) are
    points the pose must put on a line, as the board outline's are
    (:func:`refine_pose`). An edge counts only if the pose fitted with it puts the
    marker's data cells just inside it where the photo shows them
    (:func:`_unprinted_edges`): a tower standing on most of a marker has edges
    along the same axes. Kept when the markers found still fit within
    ``marker_px`` (or twice their first fit). ``image``: grey. ``fit_focal``: the
    focal length (and lens term) is estimated, and may be fitted again with them."""
    found = dict(markers)
    missing = [k for k in g.marker_centres if k not in found]
    if not cfg.get("enabled", False) or not found or not missing:
        return pose, []
    narrow = {**cfg, "search_px": min(float(cfg.get("search_px", 12.0)),
                                      float(cfg.get("narrow_search_px", 4.0)))}
    # the found markers' own edges, where the pose already puts them, say how
    # strongly this photo steps from quiet zone to border: a weaker "edge" is a
    # shadow's or a tower's
    own = find_marker_edges(image, pose, g, sorted(found), narrow)
    if not own:
        return pose, []
    least = float(cfg.get("min_strength_share", 0.7)) * float(np.median([f.strength
                                                                         for f in own]))
    # and where this photo's steps peak against the edges the found markers' corners
    # put: tone-mapped blur moves the peak towards the dark side (half a pixel on
    # the ray-traced photos), which the corners were mended for
    lean = float(np.median([np.median(_outward(pose, g, f)) for f in own]))
    share = float(cfg.get("min_cell_share", 0.8))
    levels = _paper_levels(image, pose, g, found)
    before = max(marker_residuals(found, pose, g).values())
    skip: set[int] = set()
    while True:
        cur, fits = _fit_marker_edges(image, pose, found, g, cfg, narrow, missing, least,
                                      lean, fit_focal, focal_prior, skip)
        if cur is pose:
            return pose, []
        wrong = _unprinted_edges(image, cur, g, fits, levels, share)
        if not wrong:
            after = max(marker_residuals(found, cur, g).values())
            if after <= max(float(cfg.get("marker_px", 1.5)), 2 * before):
                return cur, fits
            return pose, []
        skip |= wrong


def _fit_marker_edges(image: np.ndarray, pose: Pose, markers: dict[int, np.ndarray],
                      g: BoardGeometry, cfg: Mapping[str, Any], narrow: Mapping[str, Any],
                      missing: list[int], least: float, lean: float, fit_focal: bool,
                      focal_prior: tuple[float, float, float] | None, skip: set[int]
                      ) -> tuple[Pose, list[EdgeFit]]:
    """:func:`refine_by_marker_edges`' fit, rounds of finding the edges of the markers
    ``missing`` (of ``least`` strength or more, taken ``lean`` px inward of where
    the steps peak; none of the edges ``skip``) and fitting the pose to them: the
    pose (``pose`` itself when none was fitted) and the edges it rests on."""
    obj_m, img_m = marker_correspondences(markers, g)
    weight = float(cfg.get("marker_weight", 4))
    cur: Pose = pose
    used: list[EdgeFit] = []
    for k in range(int(cfg.get("rounds", 3))):
        fits = [_moved_out(cur, g, f, -lean)
                for f in find_marker_edges(image, cur, g, missing, narrow if k else cfg)
                if f.strength >= least and f.edge not in skip]
        if len(fits) < int(cfg.get("min_edges", 2)):
            break
        nxt = _point_to_line(cur, obj_m, img_m, weight, fits, False, False)
        if fit_focal:
            # seen from nearly above, the focal length and the distance trade off: a
            # pixel's error in one edge can move f by a tenth. It is fitted again
            # only where freeing it explains the points better by ``focal_gain_px2``
            freed = _point_to_line(cur, obj_m, img_m, weight, fits, True,
                                   bool(cur.intrinsics.dist[0] != 0), focal_prior=focal_prior)
            if (np.all(np.isfinite(freed.rvec)) and np.all(np.isfinite(freed.tvec))
                    and _fit_cost(nxt, obj_m, img_m, weight, fits)
                    - _fit_cost(freed, obj_m, img_m, weight, fits)
                    > float(cfg.get("focal_gain_px2", 4.0))):
                nxt = freed
        f = float(nxt.intrinsics.K[0, 0])
        if (not np.all(np.isfinite(nxt.tvec)) or not np.all(np.isfinite(nxt.rvec))
                or not np.isfinite(f) or f <= 0 or nxt.camera_centre[2] <= 0):
            break
        cur, used = nxt, fits
    return cur, used


def refine_pose(image: np.ndarray, pose: Pose, markers: Mapping[int, np.ndarray],
                g: BoardGeometry, cfg: Mapping[str, Any],
                focal_prior: tuple[float, float, float] | None = None) -> Pose:
    """The pose solved again with the board outline beside the markers, when it fits.

    ``focal_prior``: (f, weight, scale) of a typical camera for an estimated focal length
    (``pose.estimate_intrinsics``' own prior, at this picture's size)."""
    if not cfg.get("enabled", False) or not markers:
        return pose
    found = dict(markers)
    rounds = int(cfg.get("rounds", 4))
    min_edges = int(cfg.get("min_edges", 2))
    weight = int(cfg.get("marker_weight", 4))
    marker_px = float(cfg.get("marker_px", 3.0))
    before = max(marker_residuals(found, pose, g).values())
    obj_m, img_m = marker_correspondences(found, g)
    cur = pose
    est = pose.intrinsics.estimated and bool(cfg.get("refit_focal", True))
    smoothed = _smooth(image, cfg)
    w, h = g.board_size
    outline = np.array([[-w / 2, -h / 2, 0.0], [w / 2, -h / 2, 0.0], [w / 2, h / 2, 0.0],
                        [-w / 2, h / 2, 0.0]])
    narrow = {**cfg, "search_px": min(float(cfg.get("search_px", 16.0)),
                                      float(cfg.get("narrow_search_px", 6.0)))}
    for k in range(rounds):
        # after the first fit the edges lie within a few pixels of the pose's
        fits = find_edges(image, cur, g, narrow if k else cfg, smoothed)
        if len(fits) < min_edges:
            break
        nxt = _point_to_line(cur, obj_m, img_m, float(weight), fits, est,
                             est and bool(cur.intrinsics.dist[0] != 0),
                             focal_prior=focal_prior)
        f = float(nxt.intrinsics.K[0, 0])
        if (not np.all(np.isfinite(nxt.tvec)) or not np.all(np.isfinite(nxt.rvec))
                or not np.isfinite(f) or f <= 0 or nxt.camera_centre[2] <= 0):
            break  # a fit gone astray (an edge taken from the table, say)
        moved = float(np.abs(nxt.project(outline) - cur.project(outline)).max())
        cur = nxt
        if moved < float(cfg.get("settled_px", 0.0)):
            break  # the edges would be found where they were
    if cur is pose:
        return pose
    change = abs(float(cur.intrinsics.K[0, 0]) / float(pose.intrinsics.K[0, 0]) - 1)
    if focal_prior is not None and change > float(cfg.get("max_focal_change", np.inf)):
        # the markers' focal length leaned on a typical camera's and is seldom this
        # far off: an edge taken from the board's border art is likelier (more
        # markers fit f alone, and a bent corner can throw it far: there the
        # edges are the rescue)
        return pose
    after = max(marker_residuals(found, cur, g).values())
    return cur if after <= max(marker_px, 2 * before) else pose
