"""A camera file checked when it is read, and fitted to the picture it is used on:
scaled to another resolution, turned for an upright photo, refused for another shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.errors import CameraFileError
from companion.vision.geometry import Intrinsics
from companion.vision.reader import read_image

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def photos():
    return {"phone": sample_photo(12, "phone")}


GOOD = {"camera_matrix": [[1000.0, 0.0, 650.0], [0.0, 1010.0, 350.0], [0.0, 0.0, 1.0]],
        "dist_coeffs": [-0.1, 0.02, 0.001, -0.002, 0.0], "image_size": [1280, 720]}


@pytest.mark.parametrize("change, message", [
    ({"image_size": [0, 0]}, "image_size must be a width and a height above 0, got 0x0"),
    ({"image_size": [1280]}, "malformed camera JSON: "),
    ({"camera_matrix": [[0, 0, 640], [0, 0, 360], [0, 0, 1]]}, "with fx and fy above 0"),
    ({"camera_matrix": [[1000, 0, 640], [0, 1000, 360], [0.5, 0, 1]]}, "[0, 0, 1]]"),
    ({"camera_matrix": [[1000, 0, 640], [0, 1000, 360]]}, "malformed camera JSON: "),
    ({"dist_coeffs": [0.1, float("nan")]}, "must be finite numbers"),
    # a huge size overflowed in the pose, a text one was read a character at a time
    # ("the camera file is for 1x2 pictures"), true stood for 1, six coefficients
    # failed the pose with "could not be solved"
    ({"image_size": [1e300, 720]}, "image_size must be a width and a height in whole "
                                   "pixels (at most 100000), got [1e+300, 720]"),
    ({"image_size": "1280x720"}, "image_size must be a list of numbers"),
    ({"image_size": [1280.5, 720]}, "in whole pixels"),
    ({"camera_matrix": [[True, 0, 640], [0, 1000, 360], [0, 0, 1]]},
     "camera_matrix must be a list of numbers"),
    ({"dist_coeffs": [0.1, 0, 0, 0, 0, 0]},
     "dist_coeffs must hold 4, 5, 8, 12 or 14 numbers (OpenCV's), got 6"),
])
def test_a_camera_file_that_cannot_describe_a_lens_is_refused_when_read(
        change: dict, message: str) -> None:
    with pytest.raises(ValueError, match="malformed camera JSON") as err:
        Intrinsics.from_json({**GOOD, **change})
    assert message in str(err.value)


def test_the_same_shape_is_scaled() -> None:
    intr = Intrinsics.from_json(GOOD).scaled_to((1920, 1080))
    assert intr.size == (1920, 1080)
    assert np.allclose(intr.K, [[1500, 0, 975], [0, 1515, 525], [0, 0, 1]])
    assert np.array_equal(intr.dist, GOOD["dist_coeffs"])


def test_an_upright_picture_turns_the_lens() -> None:
    intr = Intrinsics.from_json(GOOD).scaled_to((360, 640))
    # the focal lengths swap (and scale by a half); the principal point goes to the
    # centre and the tangential terms are left out: the turn's direction is unknown
    assert np.allclose(intr.K, [[505, 0, 180], [0, 500, 320], [0, 0, 1]])
    assert np.allclose(intr.dist, [-0.1, 0.02, 0.0, 0.0, 0.0])


def test_another_shape_is_refused() -> None:
    with pytest.raises(ValueError, match=r"for 1280x720 pictures, not 1600x1200 \(another "
                                         r"shape"):
        Intrinsics.from_json(GOOD).scaled_to((1600, 1200))


def test_the_reader_refuses_a_camera_of_another_shape_in_one_line(photos) -> None:
    image = photos["phone"].image  # 1600x1200
    with pytest.raises(CameraFileError, match="^the camera file is for 1280x720 pictures"):
        read_image(image, GOOD)


def test_an_upright_photo_reads_with_its_camera_file(photos) -> None:
    from companion.vision.evaluate import compare

    rendered = photos["phone"]
    camera = rendered.truth["camera"]  # 1600x1200, as the phone took it level
    colors = list(rendered.truth["expected"]["colors"])
    for turn in (cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_90_COUNTERCLOCKWISE):
        upright = read_image(cv2.rotate(rendered.image, turn), camera, colors)
        assert upright.pose.intrinsics.size == (1200, 1600)
        assert upright.pose.intrinsics.K[0, 0] == pytest.approx(1245.649)
        assert upright.pose.elevation_deg == pytest.approx(60.3, abs=0.1)
        # level with the file: 1 wrong, 4 unseen of 52 visible sites
        counts = compare(upright.to_json(), rendered.truth)
        assert (counts["visible_sites"], counts["wrong"], counts["unseen_visible"]) == (52, 0, 5)


def test_the_read_command_says_what_is_wrong_with_the_camera_file(tmp_path, photos) -> None:
    path = tmp_path / "photo.jpg"
    cv2.imwrite(str(path), photos["phone"].image)
    cam = tmp_path / "camera.json"
    cam.write_text(json.dumps({**GOOD, "image_size": [0, 0]}))
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(path), "--camera",
                           str(cam), "--json"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == (
        f"companion read: {path}: {cam}: not a camera file (malformed camera JSON: "
        "image_size must be a width and a height above 0, got 0x0)")
