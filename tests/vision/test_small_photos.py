"""A photo that shows the board small: refused below a few pixels a site, read with a
warning a little above (thumbnails, a far shot, a low camera mode)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.errors import ImageReadError, TooSmallError
from companion.vision.geometry import board_geometry, intrinsics_for_fov, look_at_pose
from companion.vision.reader import read_image, read_paths, site_pixels, small_warning

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def phone() -> np.ndarray:
    return sample_photo(12, "phone").image


def _shrunk(image: np.ndarray, f: float) -> np.ndarray:
    return cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)


def test_a_site_seen_square_on_is_its_footprint_over_the_distance():
    # looking straight down, the board is parallel to the picture: every site's
    # 26 mm footprint is f * 26 / d pixels across
    g = board_geometry()
    intr = intrinsics_for_fov((1600, 1200), 60.0)
    for d in (650.0, 1000.0, 4000.0):
        pose = look_at_pose(intr, d, 90.0, 0.0)
        assert site_pixels(pose, g) == pytest.approx(intr.K[0, 0] * 26.0 / d, rel=1e-9)
    # seen at 40 degrees the footprints are foreshortened: smaller than square on
    low = look_at_pose(intr, 1000.0, 40.0, 0.0)
    assert site_pixels(low, g) < intr.K[0, 0] * 26.0 / 1000.0


def test_a_thumbnail_is_refused_in_one_line(phone):
    small = _shrunk(phone, 0.17)  # 272 x 204: the markers are still found
    with pytest.raises(TooSmallError) as err:
        read_image(small, source="thumb.jpg")
    assert isinstance(err.value, ImageReadError)
    assert str(err.value) == (
        "thumb.jpg: the board shows too small to be read (a site is 5.8 pixels across, 6 or "
        "more are needed): take it closer or at a higher resolution")
    # the threshold is the config's. (5.5 pixels, the focal length 215 px, from two
    # markers before the detector's look at the cells' middles found a third: 194 px;
    # the true camera's 212 px makes a site 5.77 pixels across)
    reading = read_image(small, config={"image": {"min_site_px": 5.0}})
    assert reading.site_px == pytest.approx(5.82, abs=0.05)
    assert reading.pose.markers == (0, 1, 2)


def test_a_small_board_is_read_with_a_warning(tmp_path, phone):
    paths = []
    for f in (1.0, 0.25):
        path = tmp_path / f"photo_{f}.png"
        cv2.imwrite(str(path), _shrunk(phone, f))
        paths.append(path)
    whole, small = read_paths(paths)
    assert whole["warnings"] == []
    # (8.5 pixels from markers 0, 1 and 3 before the detector's look at the cells'
    # middles found marker 2 too: the focal length 360 -> 305 px, the true one 311 px,
    # whose site is 8.48 pixels across)
    assert small["warnings"] == [{"reason": "small", "message": (
        "the board is small in this photo (a site is 8.4 pixels across, under 10): more "
        "sites may be read wrong or unseen than in a larger one")}]
    assert small_warning(33.7) is None and small_warning(None) is None
    assert small_warning(9.99) is not None
    assert small_warning(9.0, {"image": {"small_site_px": 8.0}}) is None


def test_the_command_says_it_and_exits_non_zero(tmp_path, phone):
    thumb, small = tmp_path / "thumb.png", tmp_path / "small.png"
    cv2.imwrite(str(thumb), _shrunk(phone, 0.17))
    cv2.imwrite(str(small), _shrunk(phone, 0.25))
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(thumb), str(small),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"companion read: {thumb}: the board shows too small to be read (a site is 5.8 pixels "
        "across, 6 or more are needed): take it closer or at a higher resolution"]
    [line] = proc.stdout.splitlines()  # the other photo is read all the same
    assert [w["reason"] for w in json.loads(line)["warnings"]] == ["small"]
