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


def _jpeg(image: np.ndarray, **params: int) -> bytes:
    flags = [v for k, val in params.items() for v in (getattr(cv2, k), val)]
    ok, buf = cv2.imencode(".jpg", image, flags)
    assert ok
    return buf.tobytes()


def _with_orientation(jpeg: bytes, orientation: int) -> bytes:
    """The JPEG with an EXIF segment holding only its orientation tag (as a phone writes)."""
    import struct

    ifd = struct.pack(">H", 1) + struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0)
    tiff = b"MM\x00\x2a" + struct.pack(">I", 8) + ifd + struct.pack(">I", 0)
    body = b"Exif\x00\x00" + tiff
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + jpeg[2:]


@pytest.mark.parametrize("progressive", [0, 1])
def test_a_jpegs_size_is_read_from_its_frame_header(progressive: int) -> None:
    from companion.vision.reader import jpeg_size

    image = np.zeros((30, 70, 3), np.uint8)
    data = _with_orientation(_jpeg(image, IMWRITE_JPEG_PROGRESSIVE=progressive), 6)
    assert jpeg_size(data) == (70, 30)  # stored size: the EXIF turn is the decoder's
    assert jpeg_size(cv2.imencode(".png", image)[1].tobytes()) is None
    assert jpeg_size(data[:20]) is None  # cut before its frame header


def test_the_decoder_shrinks_only_what_stays_at_the_least_side() -> None:
    from companion.vision.reader import decode_reduction

    assert section("image")["decode_min_side"] == 4000
    assert decode_reduction((8064, 6048), 4000) == 2  # a 48 MP phone photo
    assert decode_reduction((4032, 3024), 4000) == 1  # 12 MP: whole, as before
    assert decode_reduction((7999, 6000), 4000) == 1
    assert decode_reduction((16000, 12000), 4000) == 4
    assert decode_reduction((64000, 100), 4000) == 8
    assert decode_reduction((8064, 6048), None) == 1
    assert decode_reduction(None, 4000) == 1
    assert decode_reduction((8064, 6048), 0) == decode_reduction((8064, 6048), -5) == 1


def test_a_large_jpeg_is_decoded_smaller_and_upright(tmp_path) -> None:
    from companion.vision.reader import load_image

    rng = np.random.default_rng(3)
    image = cv2.resize(rng.integers(0, 256, (12, 16, 3), np.uint8), (800, 600),
                       interpolation=cv2.INTER_CUBIC)
    path = tmp_path / "big.jpg"
    path.write_bytes(_with_orientation(_jpeg(image, IMWRITE_JPEG_QUALITY=95), 6))
    whole = load_image(path, {"image": {"decode_min_side": None}})
    assert whole.shape == (800, 600, 3)  # turned upright by its EXIF orientation
    small = load_image(path, {"image": {"decode_min_side": 200}})
    assert small.shape == (200, 150, 3)  # a quarter: 800 // 4 is still 200
    # the decoder's own scaling: close to averaging the whole decode
    averaged = cv2.resize(whole, (150, 200), interpolation=cv2.INTER_AREA)
    assert np.abs(small.astype(int) - averaged.astype(int)).mean() < 2.0
    # a PNG is decoded whole whatever its size
    png = tmp_path / "big.png"
    cv2.imwrite(str(png), image)
    assert load_image(png, {"image": {"decode_min_side": 200}}).shape == (600, 800, 3)
