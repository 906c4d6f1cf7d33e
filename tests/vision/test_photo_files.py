"""Photo files as phones write them: data after a JPEG's end, and files cut short."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.imagefiles import jpeg_complete
from companion.sim import sample_photo
from companion.vision.errors import ImageReadError
from companion.vision.reader import load_image

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


def _png_declaring(width: int, height: int) -> bytes:
    """A whole PNG file of a few hundred bytes whose header declares width x height."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = zlib.compress(bytes(1 + 3 * width) * height if width * height <= 4096
                         else bytes(1 + 3 * 64) * 4)  # whole when small, else a start
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", rows)
            + chunk(b"IEND", b""))


def test_a_file_declaring_a_huge_image_is_refused_before_decoding(tmp_path):
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(_png_declaring(30000, 30000))  # 2.7 GB once decoded
    assert bomb.stat().st_size < 500
    with pytest.raises(ImageReadError) as err:
        load_image(bomb)
    assert str(err.value) == (f"{bomb}: too large to read (30000 x 30000 pixels; at most "
                              "64000000 once decoded)")
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(bomb), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == f"companion read: {err.value}"


def test_the_limit_counts_the_pixels_a_jpeg_is_decoded_at(tmp_path, jpeg):
    path = tmp_path / "photo.jpg"
    path.write_bytes(jpeg)
    # 1600 x 1200 = 1.92 MP, decoded whole under decode_min_side 4000
    with pytest.raises(ImageReadError, match=r"too large to read \(1600 x 1200 pixels; at "
                                             r"most 1900000 once decoded\)$"):
        load_image(path, {"image": {"max_decoded_pixels": 1_900_000}})
    assert load_image(path, {"image": {"max_decoded_pixels": 1_920_000}}).shape == (1200, 1600, 3)
    # decoded at a half (800 x 600 = 0.48 MP) where decode_min_side lets the decoder shrink it
    small = load_image(path, {"image": {"max_decoded_pixels": 500_000, "decode_min_side": 700}})
    assert small.shape == (600, 800, 3)


def test_a_png_whose_chunk_runs_past_the_end_is_refused_at_once(tmp_path):
    import struct

    data = bytearray(_png_declaring(4000, 3000))
    data[33:37] = struct.pack(">I", 2_000_000_000)  # the IDAT chunk claims 2 GB
    path = tmp_path / "liar.png"
    path.write_bytes(bytes(data))
    with pytest.raises(ImageReadError) as err:  # the decoder spent 4.7 s on it
        load_image(path)
    assert str(err.value) == f"{path}: truncated PNG file"
    path.write_bytes(_png_declaring(40, 30)[:-12])  # no IEND chunk
    with pytest.raises(ImageReadError, match=r"truncated PNG file$"):
        load_image(path)
    path.write_bytes(_png_declaring(40, 30))
    assert load_image(path).shape == (30, 40, 3)


def _damaged(jpeg: bytes, at: float = 0.8) -> bytes:
    """The JPEG with an end-of-image marker written over its image data at ``at``: the
    decoder stops there, says so on stderr and fills the rest grey."""
    k = int(len(jpeg) * at)
    return jpeg[:k] + b"\xff\xd9" + jpeg[k + 2:]


DAMAGED = ("the photo's data is damaged (Corrupt JPEG data: premature end of data "
           "segment): the sites and cards it shows past the damage may be read wrong or unseen")


def test_a_damaged_jpeg_is_read_and_said(tmp_path, jpeg):
    # libjpeg decodes a damaged file anyway and said so on stderr, with no file's name
    good, bad = tmp_path / "good.jpg", tmp_path / "bad.jpg"
    good.write_bytes(jpeg)
    bad.write_bytes(_damaged(jpeg))
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(good), str(bad),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    first, second = (json.loads(line) for line in proc.stdout.splitlines())
    assert first["warnings"] == []
    assert second["warnings"] == [{"reason": "damaged", "message": DAMAGED}]
    proc = subprocess.run([sys.executable, "-m", "companion", "read", str(bad)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout.splitlines()[1] == f"{bad}: warning: {DAMAGED}"


def test_the_decoders_words_are_sorted():
    from companion.imagefiles import damage_of

    # bytes between two segments leave the picture whole: not said at all
    assert damage_of(["Corrupt JPEG data: 3 extraneous bytes before marker 0xdb"]) == (None, [])
    assert damage_of(["Premature end of JPEG file",
                      "Corrupt JPEG data: premature end of data segment",
                      "Premature end of JPEG file"]) == (
        "Premature end of JPEG file; Corrupt JPEG data: premature end of data segment", [])
    # what is not the decoder's word for damage is passed on as it was said
    assert damage_of(["libpng warning: iCCP: known incorrect sRGB profile"]) == (
        None, ["libpng warning: iCCP: known incorrect sRGB profile"])


def test_the_decoders_words_are_caught_only_in_a_process_of_one_thread(jpeg):
    import threading

    from companion.vision.reader import decode_photo

    bad = _damaged(jpeg)
    if threading.active_count() == 1:  # a test before may have left a thread running
        damage: list[str] = []
        assert decode_photo(bad, None, damage) is not None
        assert damage == ["Corrupt JPEG data: premature end of data segment"]
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        damage = []
        # another thread's output would be caught with the decoder's: nothing is, and
        # the damage is told by the grey the decoder filled the rest with
        assert decode_photo(bad, None, damage) is not None
        assert damage == ["its last 319 lines decoded grey: the data stops early"]
        damage = []
        assert decode_photo(jpeg, None, damage) is not None and damage == []
    finally:
        stop.set()
        other.join()


def test_grey_lines_at_an_edge_are_the_damage():
    from companion.vision.reader import _grey_end

    rng = np.random.default_rng(8)
    photo = rng.integers(0, 256, (60, 80, 3), dtype=np.uint8)
    assert _grey_end(photo) is None
    for edge, at in (("bottom", np.s_[-12:]), ("top", np.s_[:12]),
                     ("right", np.s_[:, -12:]), ("left", np.s_[:, :12])):
        grey = photo.copy()
        grey[at] = 128
        assert _grey_end(grey) == "its last 12 lines decoded grey: the data stops early", edge
    few = photo.copy()
    few[-7:] = 128  # fewer lines than a block row: not the decoder's fill
    assert _grey_end(few) is None
    almost = photo.copy()
    almost[-12:] = 128
    almost[-1, 40] = (128, 128, 129)  # one value off: a picture, not the fill
    assert _grey_end(almost) is None
