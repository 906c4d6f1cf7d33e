"""A photo of no camera's shape read without a camera file: most likely a crop, which
moves the lens's centre off the photo's middle, where the reader takes it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.evaluate import compare
from companion.vision.geometry import intrinsics_for_fov
from companion.vision.reader import cropped_warning, read_image, read_paths


def _reading(size: tuple[int, int], estimated: bool = True) -> SimpleNamespace:
    intr = intrinsics_for_fov(size, 65.0)
    intr = type(intr)(intr.K, intr.dist, intr.size, estimated=estimated)
    return SimpleNamespace(pose=SimpleNamespace(intrinsics=intr))


@pytest.mark.parametrize("size", [(1600, 1200), (1200, 1600), (1280, 720), (4032, 3024),
                                  (6000, 4000), (3000, 3000), (2400, 1080), (4000, 2000),
                                  (1281, 720)])
def test_a_cameras_shape_is_not_said(size):
    assert cropped_warning(_reading(size)) is None  # type: ignore[arg-type]


def test_another_shape_is_said_unless_a_camera_file_is_given():
    assert cropped_warning(_reading((1202, 845))) == (  # type: ignore[arg-type]
        "the photo's shape (1202 x 845) is no camera's: if it was cropped, its lens's centre "
        "was looked for, but the sites may be read less surely than in the whole photo")
    assert cropped_warning(_reading((1202, 845), estimated=False)) is None  # type: ignore[arg-type]
    assert cropped_warning(_reading((1202, 845)),  # type: ignore[arg-type]
                           {"image": {"camera_aspects": [1202 / 845]}}) is None


def test_a_cropped_photo_is_read_with_the_warning(tmp_path):
    import cv2

    image = sample_photo(12, "phone").image
    whole = read_image(image)
    path = tmp_path / "crop.png"
    cv2.imwrite(str(path), np.ascontiguousarray(image[100:1100, 150:1450]))
    [out] = read_paths([path])
    assert cropped_warning(whole) is None
    assert [w["reason"] for w in out["warnings"]] == ["cropped"]
    assert "(1300 x 1000)" in out["warnings"][0]["message"]


def test_a_cropped_photos_lens_centre_is_looked_for():
    # a third cut off the right: the lens's centre (x 788 in the photo) is no longer
    # at its middle (560), and the towers' tops are drawn where they are not
    photo = sample_photo(12, "phone")
    cut = np.ascontiguousarray(photo.image[:, :1120])
    colors = photo.truth["expected"]["colors"]
    assert round(photo.truth["camera"]["camera_matrix"][0][2]) == 788
    kept = read_image(cut, None, colors, {"image": {"centre_price": None}})
    found = read_image(cut, None, colors)
    assert kept.pose.intrinsics.K[0, 2] == 560 and "centre_search" not in kept.timings
    assert (found.pose.intrinsics.K[0, 2], found.pose.intrinsics.K[1, 2]) == (784, 600)
    assert found.timings["centre_search"] > 0 and found.pose.intrinsics.estimated
    assert [compare(r.to_json(), photo.truth)["wrong"] for r in (kept, found)] == [2, 1]
    # [8, 2] before a narrow tower whose side is nearly as bright as its top went to
    # unseen (sites.bright_side_margin: the uncentred read's 0NE, a right 1-storey black)
    assert [compare(r.to_json(), photo.truth)["unseen_visible"] for r in (kept, found)] == [9, 2]
    # a photo of a camera's shape is read as it is
    whole = read_image(photo.image, None, colors)
    assert "centre_search" not in whole.timings and whole.pose.intrinsics.K[0, 2] == 800


def test_the_live_table_does_not_look_for_a_centre():
    # a camera's frame is never cut on one side: the first still scene of an
    # uncalibrated camera of an odd shape is read once, not some 25 times
    from companion.pipeline import VisionReader

    photo = sample_photo(12, "phone")
    cut = np.ascontiguousarray(photo.image[:, :1120])
    colors = photo.truth["expected"]["colors"]
    live = VisionReader(colors=colors)(cut)
    alone = read_image(cut, None, colors)
    assert "centre_search" not in live.timings and "centre_search" in alone.timings
    assert live.pose.intrinsics.K[0, 2] == 560 and alone.pose.intrinsics.K[0, 2] == 784
