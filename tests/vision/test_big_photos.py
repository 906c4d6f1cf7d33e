"""A large photo's markers are looked for on a halved copy and refined at full size."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.geometry import Intrinsics, Pose, board_geometry
from companion.vision.pose import detect_markers, marker_correspondences
from companion.vision.settings import section


def test_markers_of_a_12_megapixel_photo_lie_where_the_camera_puts_them() -> None:
    photo = sample_photo(12, "phone")  # 1600x1200, enlarged as a phone's 12 MP
    big = cv2.resize(photo.image, (4000, 3000), interpolation=cv2.INTER_CUBIC)
    gray = cv2.cvtColor(big, cv2.COLOR_BGR2GRAY)
    g = board_geometry()
    cfg = section("pose")
    assert cfg["detect_max_side"] == 2000  # 4000 px halves once, to 2000
    truth = Pose(photo.truth["pose"]["rvec"], photo.truth["pose"]["tvec"],
                 Intrinsics.from_json(photo.truth["camera"]).scaled_to((4000, 3000)))

    def error(markers: dict) -> float:
        obj, img = marker_correspondences(markers, g)
        return float(np.median(np.linalg.norm(truth.project(obj) - img, axis=1)))

    halved = detect_markers(gray, g, cfg)
    whole = detect_markers(gray, g, {**cfg, "detect_max_side": 0})
    assert sorted(halved) == sorted(whole) == [0, 1, 2, 3]
    # in pixels of the 4000 px photo (the enlargement itself moves corners ~1 px)
    assert error(halved) == pytest.approx(1.057, abs=0.01)
    assert error(whole) == pytest.approx(1.074, abs=0.01)


def test_a_photo_under_twice_the_size_is_looked_at_whole() -> None:
    photo = sample_photo(12, "phone")
    gray = cv2.cvtColor(photo.image, cv2.COLOR_BGR2GRAY)
    g = board_geometry()
    cfg = section("pose")
    assert detect_markers(gray, g, cfg).keys() == detect_markers(
        gray, g, {**cfg, "detect_max_side": 0}).keys()
    for k, c in detect_markers(gray, g, cfg).items():
        assert np.array_equal(c, detect_markers(gray, g, {**cfg, "detect_max_side": 0})[k])


def test_area_shrinking_by_halves_is_the_one_step_average_within_a_grey_level() -> None:
    from companion.vision.reader import area_shrink

    rng = np.random.default_rng(7)
    base = cv2.resize(rng.integers(0, 256, (60, 80, 3), np.uint8), (4000, 3000),
                      interpolation=cv2.INTER_CUBIC)
    one_step = cv2.resize(base, (1600, 1200), interpolation=cv2.INTER_AREA)
    halved = area_shrink(base, (1600, 1200))
    assert halved.shape == (1200, 1600, 3)
    diff = np.abs(halved.astype(int) - one_step.astype(int))
    assert diff.mean() < 0.35 and diff.max() <= 2  # measured: 0.31 and 2
    # a side of odd length is not halved: one step, exactly
    odd = base[:2999]
    assert np.array_equal(area_shrink(odd, (1600, 1200)),
                          cv2.resize(odd, (1600, 1200), interpolation=cv2.INTER_AREA))
