"""Camera intrinsics from photos of a printed ChArUco sheet.

A ChArUco sheet gives chessboard-corner precision with marker identities, so
partial views still count. Its dictionary differs from the board markers'
(DICT_4X4_50) so the two are never confused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


class CalibrationError(ValueError):
    """Not enough usable views, or a sheet that cannot be found."""


@dataclass(frozen=True)
class CharucoSpec:
    squares_x: int = 7
    squares_y: int = 5
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"

    def board(self) -> Any:
        import cv2

        d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, self.dictionary))
        return cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), self.square_mm,
                                      self.marker_mm, d)

    @property
    def size_mm(self) -> tuple[float, float]:
        return self.squares_x * self.square_mm, self.squares_y * self.square_mm


@dataclass(frozen=True)
class CameraCalibration:
    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    image_size: tuple[int, int]
    rms: float
    views: int
    #: the share of the picture the sheet's corners reached (:func:`frame_coverage`)
    coverage: float = 1.0

    def to_json(self) -> dict[str, Any]:
        """The camera JSON of formats.md (extra fields are allowed)."""
        return {"camera_matrix": self.camera_matrix.tolist(),
                "dist_coeffs": self.dist_coeffs.reshape(-1)[:5].tolist(),
                "image_size": list(self.image_size), "rms_px": self.rms, "views": self.views,
                "coverage": round(self.coverage, 3)}


#: the picture is cut into this many parts (across, down) to tell how much of it the
#: views reached: 160 x 120 pixels each at 1280 x 720
COVERAGE_GRID = (8, 6)
#: the least share of those parts the corners must reach. Beyond the corners the
#: distortion is extrapolated: eight synthetic views of a lens without distortion, all
#: near the picture's middle (21%), gave k3 = 3.33 at an rms of 0.32 px, and with k3
#: held at 0 still k2 = 0.34: image corners "undistorted" by 324 and 64 pixels
MIN_COVERAGE = 0.5


def sheet_image(spec: CharucoSpec = CharucoSpec(), dpi: int = 300,
                page_mm: tuple[float, float] = (297.0, 210.0)) -> np.ndarray:
    """The sheet at true size on a page (A4 landscape by default), greyscale."""
    import cv2

    px_per_mm = dpi / 25.4
    page = np.full((round(page_mm[1] * px_per_mm), round(page_mm[0] * px_per_mm)), 255,
                   np.uint8)
    w_mm, h_mm = spec.size_mm
    w, h = round(w_mm * px_per_mm), round(h_mm * px_per_mm)
    img = spec.board().generateImage((w, h), marginSize=0)
    y0, x0 = (page.shape[0] - h) // 2, (page.shape[1] - w) // 2
    page[y0:y0 + h, x0:x0 + w] = img
    label = (f"ChArUco {spec.squares_x}x{spec.squares_y} squares {spec.square_mm:g} mm,"
             f" markers {spec.marker_mm:g} mm, {spec.dictionary}: print at 100%")
    cv2.putText(page, label, (x0, y0 + h + round(8 * px_per_mm)), cv2.FONT_HERSHEY_SIMPLEX,
                dpi / 300 * 1.0, 0, max(1, dpi // 150), cv2.LINE_AA)
    return page


def detect(image: np.ndarray, spec: CharucoSpec = CharucoSpec()
           ) -> tuple[np.ndarray, np.ndarray] | None:
    """Object points (mm, z=0) and image points of the corners seen, or None."""
    import cv2

    board = spec.board()
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    corners, ids, _mc, _mi = cv2.aruco.CharucoDetector(board).detectBoard(grey)
    if ids is None or len(np.asarray(ids).reshape(-1)) < 6:
        return None
    obj, img = board.matchImagePoints(corners, ids)
    obj = np.asarray(obj, np.float32).reshape(-1, 3)
    img = np.asarray(img, np.float32).reshape(-1, 2)
    if len(obj) < 6:
        return None
    return obj, img


def frame_coverage(points: Iterable[np.ndarray], size: tuple[int, int],
                   grid: tuple[int, int] = COVERAGE_GRID) -> float:
    """The share of the picture's parts (a ``grid`` of them) holding a corner seen
    in some view: where no view reached, the lens's distortion is a guess."""
    cols, rows = grid
    hit = np.zeros((rows, cols), bool)
    w, h = size
    for pts in points:
        p = np.asarray(pts, np.float64).reshape(-1, 2)
        c = np.clip((p[:, 0] * cols / w).astype(int), 0, cols - 1)
        r = np.clip((p[:, 1] * rows / h).astype(int), 0, rows - 1)
        hit[r, c] = True
    return float(hit.mean())


def calibrate(images: Iterable[np.ndarray], spec: CharucoSpec = CharucoSpec(),
              min_views: int = 5, *, free_k3: bool = False,
              min_coverage: float = MIN_COVERAGE) -> CameraCalibration:
    """Intrinsics and distortion (OpenCV's pinhole model) from several views.

    The outer radial term k3 is held at 0 unless ``free_k3`` (a wide-angle lens):
    it fits the views' noise as well as the lens and runs away beyond them. Views
    whose corners reach less than ``min_coverage`` of the picture are refused, as
    the distortion toward its edges would be extrapolated.
    """
    import cv2

    objs, imgs = [], []
    size: tuple[int, int] | None = None
    for image in images:
        h, w = image.shape[:2]
        if size is None:
            size = (w, h)
        elif size != (w, h):
            raise CalibrationError(f"all views must have one size: {size} and {(w, h)}")
        found = detect(image, spec)
        if found is not None:
            objs.append(found[0])
            imgs.append(found[1])
    if size is None or len(objs) < min_views:
        raise CalibrationError(f"the ChArUco sheet was found in {len(objs)} view(s); "
                               f"at least {min_views} are needed")
    coverage = frame_coverage(imgs, size)
    if coverage < min_coverage:
        cols, rows = COVERAGE_GRID
        reached = round(coverage * cols * rows)
        raise CalibrationError(
            f"the ChArUco corners reach {coverage:.0%} of the picture ({reached} of its "
            f"{cols} x {rows} parts); at least {min_coverage:.0%} are needed, or the "
            "lens's distortion toward the edges is a guess: add photos with the sheet near "
            "the picture's corners and edges")
    flags = 0 if free_k3 else cv2.CALIB_FIX_K3
    rms, k, dist, _r, _t = cv2.calibrateCamera(objs, imgs, size, None, None, flags=flags)
    return CameraCalibration(np.asarray(k), np.asarray(dist).reshape(-1), size, float(rms),
                             len(objs), coverage)
