"""Board pose from the ArUco markers, and camera intrinsics when no camera file exists.

Any two visible markers give eight coplanar corners, enough for a full pose;
one marker is used with the previous pose (tracking) or on its own. Without
a camera file the focal length comes from the marker homography (the board
is a known plane) and is refined, with k1, by a one-view calibration. More
corners make a better focal length, and one bent corner spoils it: a marker
the first pass missed is looked for again where the pose puts it
(``find_missing``), and one marker of four that the pose misses grossly is
left out (``gross_outlier``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from companion.vision.errors import BoardNotFoundError
from companion.vision.geometry import BoardGeometry, FloatArray, Intrinsics, Pose
from companion.vision.settings import section

Markers = dict[int, FloatArray]


@lru_cache(maxsize=8)
def _detector(dictionary: str, refine_win: int,
              extra: tuple[tuple[str, float], ...] = ()) -> Any:
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    p = cv2.aruco.DetectorParameters()
    p.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    p.cornerRefinementWinSize = refine_win
    p.cornerRefinementMaxIterations = 50
    p.cornerRefinementMinAccuracy = 0.01
    # Markers are small (40 mm at up to a metre): allow small perimeters.
    p.minMarkerPerimeterRate = 0.01
    for name, value in extra:
        setattr(p, name, type(getattr(p, name))(value))
    return cv2.aruco.ArucoDetector(d, p)


def detect_markers(gray: np.ndarray, geometry: BoardGeometry,
                   config: dict[str, Any] | None = None, previous: Pose | None = None
                   ) -> Markers:
    """Board markers found in a grey image: id -> (4, 2) refined corners (TL, TR, BR, BL).

    The first look takes the detector parameters ``first`` (each cell sampled at
    8 pixels: a small or blurred marker whose cells are a few pixels wide has its
    bits misread at 4, or its inner contour, one cell in, decoded as the marker).
    When it finds fewer than ``retry_below`` (or an entry's own ``below``), the
    detector looks again with each ``retry`` entry's parameters: a hard shadow
    across a marker's corner joins its black border to the shadow under the
    default local threshold, and a lower or a wider one keeps them apart; a
    marker the first look misses may decode at 4 pixels a cell, a look made
    whenever a marker is missing (every marker more pins the focal length, which
    two or three markers on one plane leave loose); and a small marker blurred by
    more than a pixel, whose border bleeds into its outer cells, decodes when each
    cell is read from its middle only (the last entry).
    Each look adds only the markers not found yet; ``retry_below`` 0 turns
    every entry off. ``previous``: the pose of a camera being tracked; when the
    first look's markers all lie within ``bump_px`` of where it puts them, the
    camera has not moved and its pose is kept as it was (:func:`solve_pose`), so
    the further looks, each a pass over the whole frame, are skipped. A photo at
    least twice ``detect_max_side`` across is looked at halved
    (:func:`_detect_shrunk`).
    """
    cfg = config or {}
    if gray.ndim == 3:
        gray = cv2.cvtColor(gray, cv2.COLOR_BGR2GRAY)
    most = int(cfg.get("detect_max_side", 0) or 0)
    if previous is None and most > 0 and max(gray.shape[:2]) >= 2 * most:
        out = _detect_shrunk(gray, geometry, cfg, most)
    else:
        out = _detect_all(gray, geometry, cfg, previous)
    if cfg.get("edge_refine", False) and out:
        grey = gray.astype(np.float32)  # once for every marker
        out = {mid: refine_corners_by_edges(
            grey, c, _marker_cells(geometry.marker_dictionary, mid), cfg)
            for mid, c in out.items()}
    return out


def _detect_shrunk(gray: np.ndarray, geometry: BoardGeometry, cfg: dict[str, Any],
                   most: int) -> Markers:
    """The markers of a large photo, looked for on a copy halved while its longest
    side stays ``most`` pixels or more, their corners refined on the photo itself.

    Every look of the detector is a pass over the whole frame: on a 12-megapixel
    photo three looks took 150 ms, on a 48-megapixel one 290 ms, while its
    markers are hundreds of pixels wide. Halving (2 x 2 pixels averaged) takes
    3 ms where another factor took 40. Found at the smaller size, each corner is
    refined at full size in a window as much wider as the copy is smaller.
    """
    small, factor = gray, 1
    while max(small.shape[:2]) // 2 >= most:
        h2, w2 = small.shape[0] // 2, small.shape[1] // 2
        small = cv2.resize(small[:2 * h2, :2 * w2], (w2, h2), interpolation=cv2.INTER_AREA)
        factor *= 2
    found = _detect_all(small, geometry, cfg, None)
    if not found or factor == 1:
        return found
    half = int(cfg.get("refine_win", 4)) * factor
    ids = sorted(found)
    # a pixel of the copy covers factor x factor pixels: its centre (x + 0.5) * factor - 0.5
    pts = np.concatenate([(found[mid] + 0.5) * factor - 0.5 for mid in ids])
    refined = cv2.cornerSubPix(gray, pts.astype(np.float32).reshape(-1, 1, 2), (half, half),
                               (-1, -1), (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_COUNT,
                                          50, 0.01)).reshape(-1, 4, 2).astype(np.float64)
    return {mid: refined[k] for k, mid in enumerate(ids)}


def _detect_all(gray: np.ndarray, geometry: BoardGeometry, cfg: dict[str, Any],
                previous: Pose | None = None) -> Markers:
    refine = int(cfg.get("refine_win", 4))
    out = _detect(gray, geometry, _detector(geometry.marker_dictionary, refine,
                                            _params_key(cfg.get("first", {}))))
    below = int(cfg.get("retry_below", 0))
    if below <= 0:
        return out
    if out and previous is not None and camera_still(
            out, previous, (gray.shape[1], gray.shape[0]), geometry,
            float(cfg.get("bump_px", 2.5))):
        return out  # a still camera: its pose is kept whatever more a look would find
    first = len(out)  # each entry looks again by what the first look found
    for entry in cfg.get("retry", ()):
        params = dict(entry)
        if first >= int(params.pop("below", below)):
            continue
        more = _detect(gray, geometry, _detector(geometry.marker_dictionary, refine,
                                                 _params_key(params)))
        out.update({k: v for k, v in more.items() if k not in out})
    return out


def _params_key(params: dict[str, Any]) -> tuple[tuple[str, float], ...]:
    """Detector parameters as :func:`_detector`'s cache key."""
    return tuple(sorted((str(k), float(v)) for k, v in params.items()))


@lru_cache(maxsize=8)
@lru_cache(maxsize=64)
def _marker_cells(dictionary: str, marker_id: int) -> np.ndarray:
    """The marker's cells, border included (True: white), as the dictionary prints it
    (made once per marker, read-only: every photo's corners and edges ask for it)."""
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    n = d.markerSize + 2
    cells: np.ndarray = cv2.aruco.generateImageMarker(d, marker_id, n, borderBits=1) > 127
    cells.setflags(write=False)
    return cells


def refine_corners_by_edges(gray: np.ndarray, corners: FloatArray, cells: np.ndarray,
                            cfg: dict[str, Any] | None = None) -> FloatArray:
    """A marker's corners where its four outer edges, found along their length, meet.

    The detector's corners (a threshold's contour, then a corner search made
    for chessboard saddles) sit inside a blurred black square: 0.4-1 px on
    the renderers, which shrinks every marker and biases the pose and the
    focal length fitted to them. Across a blurred edge the level halfway
    between black and white is the edge only where the photo's tone is
    linear; blurred by the lens in linear light and then tone-mapped, the
    halfway level lies on the dark side. The black border is one cell wide:
    where a white cell adjoins it inside, its inner edge is found the same way
    and leans the other way, so half the difference between the border's
    width as found and one cell is the lean, taken off every edge. Each edge
    is sampled across at ``edge_samples`` places along its middle, the
    crossings fitted with a line and adjacent lines intersected. A marker
    whose edge shows too little contrast (``edge_min_contrast`` grey levels),
    bends (``edge_max_rms_px``) or moves its corners by more than
    ``edge_max_move_px`` keeps the detector's corners.
    """
    c = cfg or {}
    n_along = int(c.get("edge_samples", 9))
    min_contrast = float(c.get("edge_min_contrast", 30.0))
    max_rms = float(c.get("edge_max_rms_px", 0.5))
    pts = np.asarray(corners, np.float64).reshape(4, 2)
    n = cells.shape[0]
    unit = np.array([[0, 0], [n, 0], [n, n], [0, n]], np.float64)  # cell units, y down
    H = cv2.getPerspectiveTransform(unit.astype(np.float32), pts.astype(np.float32))
    img = gray if gray.dtype == np.float32 else gray.astype(np.float32)
    h, w = img.shape[:2]
    # every 0.05 cell: from outside the marker into the first data cell
    offs = np.arange(-0.6, 1.6 + 1e-9, 0.05)
    lines, leans = [], []
    for k in range(4):
        a, b = unit[k], unit[(k + 1) % 4]
        u = (b - a) / n
        inward = np.array([-u[1], u[0]])  # corners run clockwise in the image (y down)
        # the edge along its middle; the lean across the middle of each data cell
        ts = np.concatenate([np.linspace(0.2, 0.8, n_along) * n, np.arange(1, n - 1) + 0.5])
        base = a[None, :] + ts[:, None] * u[None, :]
        grid = base[:, None, :] + offs[None, :, None] * inward[None, None, :]
        pix = cv2.perspectiveTransform(grid.reshape(-1, 1, 2), H).reshape(grid.shape)
        if (pix[..., 0].min() < 0 or pix[..., 1].min() < 0 or pix[..., 0].max() > w - 1
                or pix[..., 1].max() > h - 1):
            return pts
        prof = cv2.remap(img, pix[..., 0].astype(np.float32), pix[..., 1].astype(np.float32),
                         cv2.INTER_LINEAR)
        outside = np.median(prof[:, offs < -0.3], axis=1)
        border = np.median(prof[:, (offs > 0.3) & (offs < 0.7)], axis=1)
        found = []
        for i in range(len(ts)):
            if outside[i] - border[i] < min_contrast:
                continue
            mid = (outside[i] + border[i]) / 2
            edge = _crossing(prof[i], offs, mid, 0.0, rising_out=True)
            if edge is None:
                continue
            if i < n_along:
                # the image point at that offset: perspective spaces the samples unevenly
                found.append(np.array([np.interp(edge, offs, pix[i, :, 0]),
                                       np.interp(edge, offs, pix[i, :, 1])]))
            elif _adjacent_white(cells, k, base[i]):
                inner = np.median(prof[i, offs > 1.3])
                if inner - border[i] >= min_contrast:
                    mid2 = (inner + border[i]) / 2
                    edge2 = _crossing(prof[i], offs, mid2, 1.0, rising_out=False)
                    if edge2 is not None:
                        leans.append((1.0 - (edge2 - edge)) / 2)  # cells the edges lean in
        if len(found) < max(3, n_along // 2):
            return pts
        f = np.array(found)
        m = f.mean(axis=0)
        _, _, vt = np.linalg.svd(f - m)
        d = vt[0]
        resid = (f - m) @ np.array([-d[1], d[0]])
        if float(np.sqrt(np.mean(resid ** 2))) > max_rms:
            return pts
        lines.append((m, d, base[n_along // 2], inward))
    lean = float(np.median(leans)) if len(leans) >= int(c.get("edge_min_leans", 4)) else 0.0
    moved = []
    for m, d, mid_unit, inward in lines:
        # the lean in cells, as pixels across this edge
        p0 = cv2.perspectiveTransform(mid_unit.reshape(1, 1, 2), H).reshape(2)
        p1 = cv2.perspectiveTransform((mid_unit - lean * inward).reshape(1, 1, 2), H).reshape(2)
        moved.append((m + (p1 - p0), d))
    out = np.empty((4, 2))
    for k in range(4):
        (p1, d1), (p2, d2) = moved[(k - 1) % 4], moved[k]
        A = np.column_stack([d1, -d2])
        if abs(np.linalg.det(A)) < 1e-6:
            return pts
        s_, _ = np.linalg.solve(A, p2 - p1)
        out[k] = p1 + s_ * d1
    if float(np.max(np.linalg.norm(out - pts, axis=1))) > float(c.get("edge_max_move_px", 3.0)):
        return pts
    return out


def _adjacent_white(cells: np.ndarray, edge: int, at: FloatArray) -> bool:
    """Whether the data cell just inside edge ``edge`` (0 top, 1 right, 2 bottom, 3 left)
    at cell position ``at`` is white."""
    n = cells.shape[0]
    x, y = int(np.clip(at[0], 0, n - 1e-6)), int(np.clip(at[1], 0, n - 1e-6))
    row, col = {0: (1, x), 1: (y, n - 2), 2: (n - 2, x), 3: (y, 1)}[edge]
    if not 1 <= row <= n - 2 or not 1 <= col <= n - 2:
        return False
    return bool(cells[row, col])


def _crossing(profile: FloatArray, offs: FloatArray, level: float, near: float,
              rising_out: bool) -> float | None:
    """Where ``profile`` crosses ``level`` nearest ``near`` (cell units): going
    outward (towards ``offs[0]``) from dark to light when ``rising_out``, else
    going inward from dark to light."""
    x = profile[::-1] if rising_out else profile
    o = offs[::-1] if rising_out else offs
    idx = np.flatnonzero((x[:-1] < level) & (x[1:] >= level))
    if len(idx) == 0:
        return None
    j = int(idx[np.argmin(np.abs(o[idx] - near))])
    t = (level - x[j]) / max(float(x[j + 1] - x[j]), 1e-6)
    return float(o[j] + t * (o[j + 1] - o[j]))


def _detect(gray: np.ndarray, geometry: BoardGeometry, det: Any) -> Markers:
    corners, ids, _ = det.detectMarkers(gray)
    out: Markers = {}
    if ids is None:
        return out
    ids_arr = np.asarray(ids).reshape(-1)
    for i, mid in enumerate(ids_arr):
        mid = int(mid)
        if mid not in geometry.marker_centres:
            continue
        c = np.asarray(corners[i], np.float64).reshape(4, 2)
        if mid in out:  # duplicate id: keep the larger (nearer, sharper) detection
            if cv2.contourArea(c.astype(np.float32)) <= cv2.contourArea(
                    out[mid].astype(np.float32)):
                continue
        out[mid] = c
    return out


def marker_correspondences(markers: Markers, geometry: BoardGeometry
                           ) -> tuple[FloatArray, FloatArray]:
    """The markers' corners in board mm (N, 3) and as found (N, 2), by marker id."""
    ids = sorted(markers)
    obj = np.vstack([geometry.marker_corners(i) for i in ids]) if ids else np.zeros((0, 3))
    img = np.vstack([markers[i] for i in ids]) if ids else np.zeros((0, 2))
    return obj.astype(np.float64), img.astype(np.float64)


def _camera_matrix(f: float, ppx: float, ppy: float) -> FloatArray:
    """K of a camera with square pixels and no skew: all the estimates fit is f (and
    where the lens's centre is)."""
    return np.array([[f, 0, ppx], [0, f, ppy], [0, 0, 1]], np.float64)


def default_intrinsics(size: tuple[int, int], hfov_deg: float = 65.0,
                       centre: tuple[float, float] | None = None) -> Intrinsics:
    """A plausible camera when nothing better is known: principal point at the centre
    (or at ``centre``)."""
    w, h = size
    f = prior_focal(size, hfov_deg)
    ppx, ppy = centre or (w / 2, h / 2)
    K = _camera_matrix(f, ppx, ppy)
    return Intrinsics(K, np.zeros(5), (int(w), int(h)), estimated=True)


def focal_from_homography(H: FloatArray, centre: tuple[float, float]) -> float | None:
    """Solve f from a plane homography's orthogonality constraints (square pixels, no skew).

    With K = [[f, 0, cx], [0, f, cy], [0, 0, 1]] the columns h1, h2 of
    K^-1 H are orthogonal and of equal length; both give a linear equation in
    w = 1 / f^2. Returns None when the view is too close to frontal to tell.
    """
    T = np.array([[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, 1]], np.float64)
    Hc = T @ H
    s = max(centre) * 2
    Hc[:2] /= s  # condition: pixel units of image size
    h1, h2 = Hc[:, 0], Hc[:, 1]
    a = np.array([h1[0] * h2[0] + h1[1] * h2[1],
                  h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    b = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
    # a * w + b = 0 in least squares, each row scaled to unit norm of its coefficients
    den = float(a @ a)
    if den < 1e-18:
        return None
    w = -float(a @ b) / den
    if w <= 0:
        return None
    return float(np.sqrt(1.0 / w) * s)


def estimate_intrinsics(markers: Markers, geometry: BoardGeometry, size: tuple[int, int],
                        config: dict[str, Any] | None = None,
                        centre: tuple[float, float] | None = None) -> Intrinsics:
    """Intrinsics from the markers of one photo: f (and k1 when enough points are seen).

    The principal point is assumed at the image centre (or at ``centre``: a crop's
    search, :func:`companion.vision.reader.read_image`) with square pixels.
    The closed-form f from the homography seeds a one-view calibration that
    refines f, k1 and the pose together; a frontal view (f undetermined) or
    a single marker falls back to a typical field of view.
    """
    obj, img = marker_correspondences(markers, geometry)
    return _intrinsics_from_points(obj, img, size, len(markers), config, centre)


def prior_focal(size: tuple[int, int], hfov_deg: float) -> float:
    """The focal length (px) of a typical camera: ``hfov_deg`` across the photo's long
    side (a phone held upright turns its picture, not its lens)."""
    return float(max(size) / 2 / np.tan(np.deg2rad(hfov_deg) / 2))


def focal_prior(size: tuple[int, int], n_markers: int, config: Mapping[str, Any]
                ) -> tuple[float, float, float] | None:
    """(typical f, weight, scale) of the focal length's prior for a fit to
    ``n_markers`` markers' corners (:func:`focal_prior_term`), or None where that
    many markers fit f alone. ``config``: the ``intrinsics`` section."""
    weight = float(config.get("focal_prior_px", 0.0))
    if weight <= 0 or n_markers > int(config.get("focal_prior_max_markers", 4)):
        return None
    return (prior_focal(size, float(config.get("prior_hfov_deg", 65.0))), weight,
            float(config.get("focal_prior_scale", 0.15)))


def _intrinsics_from_points(obj: FloatArray, img: FloatArray, size: tuple[int, int],
                            n_markers: int, config: dict[str, Any] | None = None,
                            centre: tuple[float, float] | None = None) -> Intrinsics:
    cfg = {**section("intrinsics"), **(config or {})}
    w, h = size
    centre = centre or (w / 2.0, h / 2.0)
    prior = default_intrinsics(size, float(cfg.get("prior_hfov_deg", 65.0)), centre)
    if n_markers < 2:
        return prior
    H, _ = cv2.findHomography(obj[:, :2], img, 0)
    f0 = focal_from_homography(H, centre) if H is not None else None
    fmin = (w / 2) / np.tan(np.deg2rad(float(cfg.get("max_hfov_deg", 130))) / 2)
    fmax = (w / 2) / np.tan(np.deg2rad(float(cfg.get("min_hfov_deg", 20))) / 2)
    candidates = [f0] if f0 is not None and fmin <= f0 <= fmax else []
    candidates.append(float(prior.K[0, 0]))
    best: tuple[float, Intrinsics] | None = None
    fit_k1 = n_markers >= int(cfg.get("k1_min_markers", 3))
    gain = float(cfg.get("k1_gain", 1.0))
    leaning = focal_prior(size, n_markers, cfg)
    for k1 in ((True, False) if fit_k1 else (False,)):
        if leaning is not None:
            # the focal length most probable beside a typical camera's: two markers
            # on one side of a steep view leave it loose (up to twice the truth)
            fitted = _map_fit(obj, img, size, candidates, k1, *leaning, centre=centre)
            found = [] if fitted is None else [fitted]
        else:
            found = [i for i in (_calibrate_one_view(obj, img, size, f, k1, centre)
                                 for f in candidates) if i is not None]
        for intr in found:
            fx = float(intr.K[0, 0])
            if not fmin <= fx <= fmax or abs(float(intr.dist[0])) > 1.0:
                continue
            # a lens term must earn its place: the markers lie at much the same
            # distance from the photo's centre, where k1 trades against f
            err = _reprojection_error(obj, img, intr) / (gain if k1 else 1.0)
            if best is None or err < best[0] - 1e-6:
                best = (err, intr)
    return best[1] if best is not None else prior


def focal_prior_term(u: float, weight: float, scale: float) -> tuple[float, float]:
    """The focal length's prior at ``u = ln(f / f_typical)``: its cost, and the weight
    a least-squares row ``w * u`` takes for it now (reweighted each step).

    ``(weight * u)**2`` near the typical camera, growing only as the log of it
    beyond ``scale``: corners that say little (two markers on one side) are pulled
    in, while a lens far from typical that the corners do tell (an ultra-wide
    phone lens) keeps its own focal length."""
    q = 1.0 + (u / scale) ** 2
    return weight ** 2 * scale ** 2 * float(np.log(q)), weight / float(np.sqrt(q))


def _map_fit(obj: FloatArray, img: FloatArray, size: tuple[int, int], starts: list[float],
             fit_k1: bool, f_prior: float, weight: float, scale: float,
             iterations: int = 20, centre: tuple[float, float] | None = None
             ) -> Intrinsics | None:
    """Pose, ln f (and k1) minimising the corners' squared distances plus the focal
    length's prior (:func:`focal_prior_term`): Gauss-Newton from each start, the
    prior reweighted each step, steps halved until the cost falls; the start that
    ends lowest."""
    w, h = size
    ppx, ppy = centre or (w / 2, h / 2)
    free = [0, 1, 2, 3, 4, 5, 6] + ([7] if fit_k1 else [])
    best: tuple[float, FloatArray] | None = None
    for f in starts:
        K = _camera_matrix(f, ppx, ppy)
        res0 = _pnp(obj, img, Intrinsics(K, np.zeros(5), size, estimated=True))
        if res0 is None:
            continue
        x = np.concatenate([res0[0].ravel(), res0[1].ravel(), [np.log(f), 0.0]])

        def residuals(v: FloatArray) -> tuple[FloatArray, FloatArray, float]:
            fv = float(np.exp(v[6]))
            Kv = _camera_matrix(fv, ppx, ppy)
            d = np.array([v[7], 0, 0, 0, 0], np.float64)
            proj, jac = cv2.projectPoints(obj, v[:3], v[3:6], Kv, d)
            u = float(v[6] - np.log(f_prior))
            prior_cost, wu = focal_prior_term(u, weight, scale)
            r = np.concatenate([(proj.reshape(-1, 2) - img).ravel(), [wu * u]])
            # projectPoints' columns: rvec 3, tvec 3, fx, fy, cx, cy, k1 ...
            J = np.zeros((len(r), 8))
            J[:-1, :6] = jac[:, :6]
            J[:-1, 6] = (jac[:, 6] + jac[:, 7]) * fv
            J[:-1, 7] = jac[:, 10]
            J[-1, 6] = wu
            return r, J[:, free], float(r[:-1] @ r[:-1]) + prior_cost

        r, J, cost = residuals(x)
        for _ in range(iterations):
            try:
                step = np.linalg.lstsq(J, -r, rcond=None)[0]
            except np.linalg.LinAlgError:
                break
            for _ in range(8):
                y = x.copy()
                y[free] += step
                ry, Jy, cy = residuals(y)
                if np.isfinite(cy) and cy < cost:
                    break
                step = step / 2
            else:
                break
            x, r, J, done = y, ry, Jy, cost - cy < 1e-10 * max(cost, 1e-12)
            cost = cy
            if done:
                break
        if _camera_above(x[:3].reshape(3, 1), x[3:6].reshape(3, 1)) and (
                best is None or cost < best[0]):
            best = (cost, x)
    if best is None:
        return None
    x = best[1]
    fv = float(np.exp(x[6]))
    K = _camera_matrix(fv, ppx, ppy)
    return Intrinsics(K, np.array([x[7], 0, 0, 0, 0], np.float64), (int(w), int(h)),
                      estimated=True)


def _calibrate_one_view(obj: FloatArray, img: FloatArray, size: tuple[int, int], f: float,
                        fit_k1: bool, centre: tuple[float, float] | None = None
                        ) -> Intrinsics | None:
    w, h = size
    ppx, ppy = centre or (w / 2, h / 2)
    K = _camera_matrix(f, ppx, ppy)
    flags = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_PRINCIPAL_POINT
             | cv2.CALIB_FIX_ASPECT_RATIO | cv2.CALIB_ZERO_TANGENT_DIST | cv2.CALIB_FIX_K2
             | cv2.CALIB_FIX_K3)
    if not fit_k1:
        flags |= cv2.CALIB_FIX_K1
    try:
        _, K2, d2, _, _ = cv2.calibrateCamera(
            [obj.astype(np.float32)], [img.astype(np.float32).reshape(-1, 1, 2)], (w, h),
            K, np.zeros(5), flags=flags,
            criteria=(cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 60, 1e-10))
    except cv2.error:
        return None
    dist = np.asarray(d2, np.float64).ravel()[:5]
    if dist.size < 5:
        dist = np.concatenate([dist, np.zeros(5 - dist.size)])
    return Intrinsics(np.asarray(K2, np.float64), dist, (int(w), int(h)), estimated=True)


def _reprojection_error(obj: FloatArray, img: FloatArray, intr: Intrinsics) -> float:
    pose = _pnp(obj, img, intr)
    if pose is None:
        return float("inf")
    return pose[2]


def _pnp(obj: FloatArray, img: FloatArray, intr: Intrinsics,
         guess: tuple[FloatArray, FloatArray] | None = None
         ) -> tuple[FloatArray, FloatArray, float] | None:
    """Planar PnP (IPPE) refined by Levenberg-Marquardt; returns rvec, tvec, rms px."""
    try:
        if guess is not None:
            ok, rvec, tvec = cv2.solvePnP(obj, img, intr.K, intr.dist, guess[0].copy(),
                                          guess[1].copy(), True, cv2.SOLVEPNP_ITERATIVE)
        else:
            ok, rvec, tvec = cv2.solvePnP(obj, img, intr.K, intr.dist, flags=cv2.SOLVEPNP_IPPE)
            if ok:
                rvec, tvec = cv2.solvePnPRefineLM(obj, img, intr.K, intr.dist, rvec, tvec)
    except cv2.error:
        return None
    if not ok:
        return None
    proj, _ = cv2.projectPoints(obj, rvec, tvec, intr.K, intr.dist)
    err = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - img) ** 2, axis=1))))
    return rvec.reshape(3, 1), tvec.reshape(3, 1), err


def _camera_above(rvec: FloatArray, tvec: FloatArray) -> bool:
    R = cv2.Rodrigues(rvec)[0]
    centre = -R.T @ tvec.reshape(3)
    return bool(centre[2] > 0)


def _rotation_distance(r1: FloatArray, r2: FloatArray) -> float:
    R = cv2.Rodrigues(r1)[0].T @ cv2.Rodrigues(r2)[0]
    return float(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)))


def marker_shift(markers: Markers, pose: Pose, geometry: BoardGeometry) -> float:
    """Largest distance (px) between detected corners and where ``pose`` puts them."""
    worst = 0.0
    for mid, corners in markers.items():
        pred = pose.project(geometry.marker_corners(mid))
        worst = max(worst, float(np.max(np.linalg.norm(pred - corners, axis=1))))
    return worst


def camera_still(markers: Markers, previous: Pose, size: tuple[int, int],
                 geometry: BoardGeometry, bump_px: float) -> bool:
    """Whether a tracked camera has not moved: the markers lie within ``bump_px`` of
    where its last pose puts them, in a frame of the size it was solved for."""
    return (previous.intrinsics.size == tuple(size)
            and marker_shift(markers, previous, geometry) <= bump_px)


@dataclass(frozen=True)
class PoseResult:
    pose: Pose
    bumped: bool  # the board (or camera) moved against the previous pose


def solve_pose(markers: Markers, intrinsics: Intrinsics, geometry: BoardGeometry,
               previous: Pose | None = None, config: dict[str, Any] | None = None,
               source: str = "image") -> PoseResult:
    """The board pose from whatever markers are visible.

    With a previous pose whose prediction still matches the markers (no bump),
    the previous pose is kept so tracking does not jitter; otherwise the pose
    is re-estimated. A lone marker is solved with IPPE_SQUARE and the
    ambiguity resolved by the previous pose or by requiring the camera above
    the board.
    """
    cfg = config or {}
    bump_px = float(cfg.get("bump_px", 2.5))
    if not markers:
        if previous is not None and cfg.get("keep_pose_without_markers", False):
            return PoseResult(previous, False)
        raise BoardNotFoundError(f"no board markers found in {source}")
    if previous is not None and previous.intrinsics.size == intrinsics.size:
        if camera_still(markers, previous, intrinsics.size, geometry, bump_px):
            return PoseResult(previous, False)
        bumped = True
    else:
        bumped = previous is not None
    obj, img = marker_correspondences(markers, geometry)
    ids = tuple(sorted(markers))
    if len(markers) >= 2:
        res = _pnp(obj, img, intrinsics)
        if res is None or not _camera_above(res[0], res[1]):
            raise BoardNotFoundError(f"board pose could not be solved in {source}")
        return PoseResult(Pose(res[0], res[1], intrinsics, ids, res[2]), bumped)
    # one marker: IPPE_SQUARE wants the corners in the marker's own frame
    mid = ids[0]
    centre = np.array([*geometry.marker_centres[mid], 0.0])
    try:
        n, rvecs, tvecs, errs = cv2.solvePnPGeneric(
            _ippe_square_points(geometry, mid), img, intrinsics.K, intrinsics.dist,
            flags=cv2.SOLVEPNP_IPPE_SQUARE)
    except cv2.error:
        n = 0
    if not n:
        # IPPE_SQUARE needs the canonical corner layout: fall back to plain IPPE
        res = _pnp(obj, img, intrinsics)
        if res is None:
            raise BoardNotFoundError(f"board pose could not be solved in {source}")
        return PoseResult(Pose(res[0], res[1], intrinsics, ids, res[2]), bumped)
    options = []
    for k in range(int(n)):
        rv = np.asarray(rvecs[k], np.float64).reshape(3, 1)
        tv = np.asarray(tvecs[k], np.float64).reshape(3, 1)
        tv = tv - cv2.Rodrigues(rv)[0] @ centre.reshape(3, 1)
        if not _camera_above(rv, tv):
            continue
        err = float(np.asarray(errs).ravel()[k]) if errs is not None else 0.0
        score = err
        if previous is not None:
            score = _rotation_distance(rv, previous.rvec) * 100 + err
        options.append((score, rv, tv, err))
    if not options:
        raise BoardNotFoundError(f"board pose could not be solved in {source}")
    options.sort(key=lambda o: o[0])
    _, rv, tv, err = options[0]
    return PoseResult(Pose(rv, tv, intrinsics, ids, err), bumped)


def find_missing(gray: np.ndarray, markers: Markers, pose: Pose, geometry: BoardGeometry,
                 config: dict[str, Any] | None = None, zoom: float = 3.0) -> Markers:
    """Markers the first pass missed, looked for again where the pose puts them.

    A small, steeply seen marker can fail to decode at the photo's resolution;
    an enlarged crop around its predicted place often decodes. Only markers
    predicted wholly inside the photo are tried; a find must lie where predicted.
    """
    if gray.ndim == 3:
        gray = cv2.cvtColor(gray, cv2.COLOR_BGR2GRAY)
    h, w = gray.shape[:2]
    out: Markers = {}
    for mid in geometry.marker_centres:
        if mid in markers:
            continue
        pred = pose.project(geometry.marker_corners(mid))
        size = float(np.ptp(pred, axis=0).max())
        if not np.all((pred >= 2) & (pred <= np.array([w - 3, h - 3]))) or size < 8:
            continue
        lo = np.maximum(np.floor(pred.min(axis=0) - 0.5 * size), 0).astype(int)
        hi = np.minimum(np.ceil(pred.max(axis=0) + 0.5 * size), [w, h]).astype(int)
        crop = cv2.resize(gray[lo[1]:hi[1], lo[0]:hi[0]], None, fx=zoom, fy=zoom,
                          interpolation=cv2.INTER_CUBIC)
        found = detect_markers(crop, geometry, {**(config or {}), "retry_below": 0})
        if mid not in found:
            continue
        corners = (found[mid] + 0.5) / zoom - 0.5 + lo
        if np.linalg.norm(corners - pred, axis=1).max() <= 0.25 * size:
            out[mid] = corners
    return out


def marker_residuals(markers: Markers, pose: Pose, geometry: BoardGeometry
                     ) -> dict[int, float]:
    """Per marker, the largest distance (px) between a detected corner and the pose's."""
    return {k: float(np.linalg.norm(pose.project(geometry.marker_corners(k)) - c,
                                    axis=1).max()) for k, c in markers.items()}


def gross_outlier(markers: Markers, pose: Pose, geometry: BoardGeometry,
                  min_px: float = 3.0, ratio: float = 2.5) -> int | None:
    """The one marker whose corners the pose misses far worse than all others', if any.

    A tower or its shadow touching a marker can bend one detected corner by
    10-20 px; solved with the rest, that marker is then off by several pixels
    while the others fit within a pixel or two. Needs four markers: three stay
    (with two, the focal length is barely observable and one bent corner costs
    less than the lost marker).
    """
    if len(markers) < 4:
        return None
    errs = sorted(((e, k) for k, e in marker_residuals(markers, pose, geometry).items()),
                  reverse=True)
    (worst, k), (second, _) = errs[0], errs[1]
    return k if worst > min_px and worst > ratio * second else None


def repair_bent_corner(markers: Markers, pose: Pose, geometry: BoardGeometry,
                       estimate: bool, intrinsics_config: dict[str, Any] | None = None,
                       config: dict[str, Any] | None = None, px: float = 1.0) -> Markers:
    """The markers with one bent corner put where the other corners say it is.

    A tower or its shadow touching a marker can pull one refined corner 2-5 px
    off. With three markers the whole-marker rule (:func:`gross_outlier`) does
    not apply, and fitted together with f (and k1) the bent corner bends the
    camera by up to 30 cm at steep views. The worst corner is solved without
    (f re-estimated when ``estimate``); it is replaced by the prediction when it
    lies over ``corner_px`` from it and ``corner_ratio`` times farther than any
    other corner does. ``px``: photo pixels per working-size pixel.
    """
    cfg = config or {}
    if len(markers) < 2:
        return markers
    obj, img = marker_correspondences(markers, geometry)
    resid = np.linalg.norm(pose.project(obj) - img, axis=1)
    j = int(np.argmax(resid))
    if resid[j] < float(cfg.get("corner_gate_px", 1.2)) * px:
        return markers
    keep = np.arange(len(obj)) != j
    intr = (_intrinsics_from_points(obj[keep], img[keep], pose.intrinsics.size, len(markers),
                                    intrinsics_config) if estimate else pose.intrinsics)
    res = _pnp(obj[keep], img[keep], intr)
    if res is None:
        return markers
    proj = Pose(res[0], res[1], intr).project(obj)
    loo = np.linalg.norm(proj - img, axis=1)
    others = float(loo[keep].max())
    if loo[j] < float(cfg.get("corner_px", 2.5)) * px or loo[j] < float(
            cfg.get("corner_ratio", 3.0)) * others:
        return markers
    ids = sorted(markers)
    mid, k = ids[j // 4], j % 4
    fixed = np.array(markers[mid], np.float64, copy=True)
    fixed[k] = proj[j]
    return {**markers, mid: fixed}


def _ippe_square_points(geometry: BoardGeometry, mid: int) -> FloatArray:
    """Marker corners in the marker's own frame (IPPE_SQUARE's required layout)."""
    s = geometry.marker_size / 2
    return np.array([[-s, s, 0], [s, s, 0], [s, -s, 0], [-s, -s, 0]], np.float64)
