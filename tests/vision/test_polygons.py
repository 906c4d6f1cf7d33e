"""Polygons filled from projected boxes: corners far outside the picture (a box
reaching above a low camera) are clamped, not cast to -2**31."""

from __future__ import annotations

import warnings

import cv2
import numpy as np

from companion.vision.geometry import POLYGON_REACH, fill_convex, pixel_hull


def test_an_ordinary_polygon_fills_as_opencv_fills_its_rounded_hull() -> None:
    rng = np.random.default_rng(5)
    pts = rng.uniform(-40, 240, (8, 2)).astype(np.float32)
    mine = np.zeros((200, 200), np.uint8)
    assert fill_convex(mine, pts, 3)
    theirs = np.zeros((200, 200), np.uint8)
    hull = cv2.convexHull(pts.reshape(-1, 1, 2))
    cv2.fillConvexPoly(theirs, np.round(hull.reshape(-1, 2)).astype(np.int32), 3)
    assert np.array_equal(mine, theirs)
    assert 0 < int((mine == 3).sum()) < 200 * 200


def test_far_and_non_finite_corners_are_clamped_or_dropped() -> None:
    pts = np.array([[10.0, 10.0], [90.0, 10.0], [1e26, 50.0], [np.nan, 3.0], [10.0, 90.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hull = pixel_hull(pts, (100, 100))
    assert hull is not None and hull.dtype == np.int32
    assert int(hull[:, 0].max()) == POLYGON_REACH * 100  # clamped, still to the right
    mask = np.zeros((100, 100), np.uint8)
    assert fill_convex(mask, pts, 1)
    # the corner far to the right still pulls the polygon's edges that way: at the
    # picture's right edge they run from y 10.5 to 85.5
    assert mask[12:85, 99].all() and not mask[:9, 99].any() and not mask[88:, 99].any()
    assert pixel_hull(np.array([[0.0, 0.0], [np.inf, 1.0], [np.nan, 2.0]]), (10, 10)) is None


def test_truncated_corners_as_the_change_masks_make_them() -> None:
    pts = np.array([[1.7, 1.7], [8.6, 1.2], [5.5, 8.9]])
    hull = pixel_hull(pts, (10, 10), truncate=True)
    assert hull is not None
    assert sorted(map(tuple, hull.tolist())) == [(1, 1), (5, 8), (8, 1)]


def test_a_cropped_photo_whose_towers_would_reach_above_the_camera_reads_quietly() -> None:
    # the photo's top cut off: its centre is no longer the lens's, the estimated
    # camera sits low and the tallest boxes the board model masks reach above it
    # (sim phone 8: a RuntimeWarning, "invalid value encountered in cast", before)
    from companion.sim import sample_photo
    from companion.vision.reader import read_image

    photo = sample_photo(8, "phone")
    h = photo.image.shape[0]
    image = np.ascontiguousarray(photo.image[int(h * 0.3):])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        reading = read_image(image, None, list(photo.truth["expected"]["colors"]))
    assert len(reading.pose.markers) >= 2
