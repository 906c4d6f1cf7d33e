"""Photo files as phones write them: data after a JPEG's end, and files cut short."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.sim import sample_photo
from companion.vision.errors import ImageReadError
from companion.vision.reader import jpeg_complete, load_image

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def jpeg() -> bytes:
    ok, buf = cv2.imencode(".jpg", sample_photo(12, "phone").image,
                           [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return buf.tobytes()


# what phones put after the end-of-image marker: Samsung's trailer of its own
# metadata ("SEFH" ... "SEFT"), a motion photo's video (an MP4 from its ftyp box on,
# which may hold FF D9 itself), and the zero padding of some card copies
TRAILERS = {
    "samsung": b"\x00\x00SEFH" + bytes(range(200)) + b"SEFT",
    "motion photo": b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 40,
    "padding": bytes(4096),
}


@pytest.mark.parametrize("kind", sorted(TRAILERS))
def test_data_after_the_jpeg_end_is_left_alone(tmp_path, jpeg, kind):
    whole = tmp_path / "whole.jpg"
    whole.write_bytes(jpeg)
    path = tmp_path / f"{kind}.jpg"
    path.write_bytes(jpeg + TRAILERS[kind])
    assert jpeg_complete(jpeg + TRAILERS[kind])
    assert np.array_equal(load_image(path), load_image(whole))


@pytest.mark.parametrize("cut", ["half", "before the end marker", "in the headers"])
def test_a_jpeg_cut_short_is_refused(tmp_path, jpeg, cut):
    data = {"half": jpeg[: len(jpeg) // 2], "before the end marker": jpeg[:-2],
            "in the headers": jpeg[:300]}[cut]
    assert not jpeg_complete(data)
    # a trailer does not mend a cut file whose own end marker is missing
    path = tmp_path / "cut.jpg"
    path.write_bytes(data)
    with pytest.raises(ImageReadError) as err:
        load_image(path)
    assert str(err.value) == f"{path}: truncated JPEG file"


def test_read_takes_a_photo_with_a_trailer_and_refuses_a_cut_one(tmp_path, jpeg):
    good = tmp_path / "20261128_101500.jpg"
    good.write_bytes(jpeg + TRAILERS["samsung"])
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(jpeg[: len(jpeg) // 2])
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(good), str(cut),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    [line] = proc.stdout.splitlines()
    assert line.startswith('{"format": "manhattan-board/1"')
    assert proc.stderr.strip() == f"companion read: {cut}: truncated JPEG file"
