"""A small marker blurred by more than a pixel: its black border bleeds into its outer
cells, and only the detector's look at each cell's middle decodes it (the last
``pose.retry`` entry). Raycast phone 9518 (40 degrees, a metre away) found one
marker of four without that look, and read 23 visible sites unseen; with it, three
markers and 5 unseen."""

from __future__ import annotations

import cv2
import numpy as np

from companion.vision.geometry import board_geometry
from companion.vision.pose import detect_markers
from companion.vision.settings import section
from tests.vision.retries import without_middle_look


def _blurred_marker(width_px: float, squash: float, sigma: float, turn_deg: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """A grey photo of marker 0 (with its white quiet zone) ``width_px`` across,
    foreshortened to ``squash`` of its height, turned ``turn_deg``, blurred by a
    Gaussian of ``sigma`` pixels and saved as JPEG 79; and its four outer corners
    where they truly lie (the detector's order: TL, TR, BR, BL)."""
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    tile = np.full((400, 400), 235, np.uint8)
    tile[80:320, 80:320] = cv2.aruco.generateImageMarker(dictionary, 0, 240)
    s = width_px / 240.0
    turn = np.vstack([cv2.getRotationMatrix2D((200, 200), turn_deg, 1.0), [0, 0, 1]])
    scale = np.diag([s, s * squash, 1.0])
    move = np.array([[1, 0, 400 - 200 * s], [0, 1, 300 - 200 * s * squash], [0, 0, 1]])
    M = (move @ scale @ turn)[:2]
    warped = cv2.warpAffine(tile, M, (800, 600), flags=cv2.INTER_AREA)
    inside = cv2.warpAffine(np.ones_like(tile), M, (800, 600), flags=cv2.INTER_NEAREST)
    image = np.where(inside > 0, warped, 90).astype(np.uint8)  # a dark board around it
    blurred = cv2.GaussianBlur(image, (0, 0), sigma)
    ok, buf = cv2.imencode(".jpg", blurred, [cv2.IMWRITE_JPEG_QUALITY, 79])
    photo = cv2.imdecode(buf, cv2.IMREAD_GRAYSCALE)
    assert ok and photo is not None
    # the marker covers pixels 80-319: its outer edges lie half a pixel outside them
    corners = np.array([[79.5, 79.5], [319.5, 79.5], [319.5, 319.5], [79.5, 319.5]])
    return photo, np.asarray(corners @ M[:, :2].T + M[:, 2])


def test_a_blurred_small_marker_decodes_from_its_cells_middles() -> None:
    geometry = board_geometry()
    pose_cfg = section("pose")
    assert pose_cfg["retry"][-1] == {"below": 4, "perspectiveRemovePixelPerCell": 3,
                                     "perspectiveRemoveIgnoredMarginPerCell": 0.35}
    without = {**pose_cfg, **without_middle_look()}
    for turn in (0.0, 12.0):
        image, truth = _blurred_marker(36, 0.65, 1.6, turn)
        assert detect_markers(image, geometry, without) == {}
        found = detect_markers(image, geometry, pose_cfg)
        assert sorted(found) == [0]
        # its corners near where they are: within 2 px on a marker 23 px tall, blurred
        # by 1.6 (its pose is refined further by the markers' edges and the board's)
        assert float(np.abs(found[0] - truth).max()) < 2.5


def test_a_sharp_marker_needs_no_such_look() -> None:
    """The look at the cells' middles runs only when a marker is missing: a marker
    found by the first look is found as before."""
    geometry = board_geometry()
    pose_cfg = section("pose")
    without = {**pose_cfg, **without_middle_look()}
    image, truth = _blurred_marker(48, 0.75, 1.0, 12.0)
    before = detect_markers(image, geometry, without)
    after = detect_markers(image, geometry, pose_cfg)
    assert sorted(before) == sorted(after) == [0]
    np.testing.assert_array_equal(before[0], after[0])
    assert float(np.abs(after[0] - truth).max()) < 1.0
