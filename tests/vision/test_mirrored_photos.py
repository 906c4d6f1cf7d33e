"""A mirrored photo (a phone's front camera, saved as previewed): its markers decode
only flipped back. A photo is read flipped back, with a warning; a live camera's
mirrored frames are refused in one line (its other stages compare frames unflipped)."""

from __future__ import annotations

import numpy as np
import pytest

from companion.pipeline import VisionReader
from companion.sim import sample_photo
from companion.vision.errors import BoardNotFoundError, ImageReadError, MirroredError
from companion.vision.geometry import Intrinsics
from companion.vision.reader import read_image, read_paths

MIRRORED = ("the photo is mirrored (a front camera's, saved as previewed): it was read "
            "flipped back")


@pytest.mark.parametrize("kind,seed,with_camera", [("phone", 12, False), ("mounted", 3, True)])
def test_a_mirrored_photo_reads_as_the_photo_itself(kind, seed, with_camera):
    photo = sample_photo(seed, kind)
    cam = (Intrinsics(photo.camera.K, photo.camera.dist, (photo.camera.width,
                                                          photo.camera.height))
           if with_camera else None)
    plain = read_image(photo.image, cam)
    flipped = read_image(np.ascontiguousarray(photo.image[:, ::-1]), cam)
    assert not plain.mirrored and flipped.mirrored
    assert plain.sites and flipped.sites == plain.sites
    assert flipped.unseen == plain.unseen and flipped.cards == plain.cards
    assert np.array_equal(flipped.pose.camera_centre, plain.pose.camera_centre)


def test_the_warning_and_the_live_refusal(tmp_path):
    import cv2

    image = np.ascontiguousarray(sample_photo(12, "phone").image[:, ::-1])
    path = tmp_path / "selfie.png"
    cv2.imwrite(str(path), image)
    [out] = read_paths([path])
    assert out["warnings"] == [{"reason": "mirrored", "message": MIRRORED}]
    with pytest.raises(MirroredError) as err:
        read_image(image, source="frame", mirrored=False)
    assert isinstance(err.value, ImageReadError)
    assert str(err.value) == ("frame: the picture is mirrored (the board's markers read only "
                              "flipped back): turn the camera's mirror off")
    with pytest.raises(MirroredError):
        VisionReader()(image)  # the live table's reader


def test_a_picture_without_a_board_is_still_no_board():
    rng = np.random.default_rng(4)
    noise = rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8)
    with pytest.raises(BoardNotFoundError) as err:
        read_image(noise, source="noise.png")
    assert str(err.value) == "no board markers found in noise.png"
