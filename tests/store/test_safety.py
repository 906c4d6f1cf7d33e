"""Uploads: zips cannot write outside their folder or fill the card; images are checked."""

from __future__ import annotations

import io
import re
import stat
import struct
import zipfile
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.store.safety import (
    ArchiveError,
    BadImageError,
    decode_image_safely,
    image_size,
    safe_extract_zip,
)


def _jpeg(w: int = 64, h: int = 48) -> bytes:
    img = np.zeros((h, w, 3), np.uint8)
    img[:, : w // 2] = (0, 0, 255)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


def _png(w: int = 40, h: int = 30) -> bytes:
    ok, buf = cv2.imencode(".png", np.full((h, w, 3), 200, np.uint8))
    assert ok
    return buf.tobytes()


def _zip(members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """dest lives in sandbox/; anything written next to it is an escape."""
    box = tmp_path / "box"
    box.mkdir()
    return box


def test_extracts_images_and_game_json(sandbox: Path) -> None:
    data = _zip([("photos/IMG_0001.jpg", _jpeg()), ("photos/IMG_0002.PNG", _png()),
                 ("game.json", b'{"players": []}'), ("notes.txt", b"hello"),
                 ("__MACOSX/photos/._IMG_0001.jpg", b"\x00\x05\x16\x07junk"),
                 ("fake.jpg", b"this is text, not a JPEG"), ("photos/", b"")])
    out = safe_extract_zip(data, sandbox / "dest", max_files=10, max_total_bytes=10 ** 6)
    dest = sandbox / "dest"
    assert [p.relative_to(dest).as_posix() for p in out] == [
        "photos/IMG_0001.jpg", "photos/IMG_0002.PNG", "game.json"]
    assert out.skipped == ["notes.txt", "__MACOSX/photos/._IMG_0001.jpg", "fake.jpg"]
    assert _tree(sandbox) == {"dest", "dest/photos", "dest/photos/IMG_0001.jpg",
                              "dest/photos/IMG_0002.PNG", "dest/game.json"}
    flat = safe_extract_zip(data, sandbox / "flat", 10, 10 ** 6, flatten=True)
    assert sorted(p.name for p in flat) == ["IMG_0001.jpg", "IMG_0002.PNG", "game.json"]
    assert all(p.parent == sandbox / "flat" for p in flat)
    assert not out.renamed and not flat.renamed


def test_flattened_images_of_one_name_keep_their_folders(sandbox: Path) -> None:
    # two phones' albums, each with its IMG_0001.jpg
    data = _zip([("game/phone 1/IMG_0001.jpg", _jpeg()), ("game/phone 2/img_0001.JPG", _jpeg()),
                 ("game/phone 1/IMG_0002.jpg", _jpeg()), ("game.json", b"{}")])
    flat = safe_extract_zip(data, sandbox / "flat", 10, 10 ** 6, flatten=True)
    assert [p.name for p in flat] == ["game-phone 1-IMG_0001.jpg",
                                      "game-phone 2-img_0001.JPG", "IMG_0002.jpg", "game.json"]
    assert flat.renamed and all(p.parent == sandbox / "flat" for p in flat)
    # unflattened, each keeps its folder as it is
    kept = safe_extract_zip(data, sandbox / "kept", 10, 10 ** 6)
    assert not kept.renamed and [p.relative_to(sandbox / "kept").as_posix() for p in kept][:2] == [
        "game/phone 1/IMG_0001.jpg", "game/phone 2/img_0001.JPG"]


def _symlink_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize("members, message", [
    ([("../evil.jpg", b"x")], "climbs out"),
    ([("photos/../../evil.jpg", b"x")], "climbs out"),
    ([("..\\..\\evil.jpg", b"x")], "climbs out"),
    ([("/etc/evil.jpg", b"x")], "absolute path"),
    ([("C:\\Windows\\evil.jpg", b"x")], "absolute path"),
    ([("C:evil.jpg", b"x")], "absolute path"),
    ([(_symlink_info("link.jpg"), b"/etc/passwd")], "symbolic link"),
    ([(_symlink_info("notes.txt"), b"/etc/passwd")], "symbolic link"),
    ([("a.jpg", _jpeg()), ("A.JPG", _jpeg())], "two files would be named"),
    ([(f"p{k}.jpg", b"") for k in range(6)], "6 files in the archive (at most 5)"),
    ([("big.jpg", b"\xff\xd8\xff" + b"\x00" * 5000)], "unpacks to more than 4000 bytes"),
])
def test_refused_archives_leave_nothing(sandbox: Path, members, message: str) -> None:
    with pytest.raises(ArchiveError, match=re.escape(message)):
        safe_extract_zip(_zip(members), sandbox / "dest", max_files=5, max_total_bytes=4000)
    assert _tree(sandbox) == set()


def test_bomb_refused_from_its_declared_size(sandbox: Path) -> None:
    data = _zip([("bomb.jpg", b"\xff\xd8\xff" + b"\x00" * 50_000_000)])
    assert len(data) < 100_000
    with pytest.raises(ArchiveError, match="unpacks to more than 10000000 bytes"):
        safe_extract_zip(data, sandbox / "dest", 10, 10_000_000)
    assert _tree(sandbox) == set()


def _lie_about_size(data: bytes, size: int) -> bytes:
    """Patch the uncompressed size in every header: a bomb that understates itself."""
    out = bytearray(data)
    pos = out.find(b"PK\x03\x04")
    struct.pack_into("<I", out, pos + 22, size)
    pos = out.find(b"PK\x01\x02")
    struct.pack_into("<I", out, pos + 24, size)
    return bytes(out)


def test_understated_size_is_caught_while_reading(sandbox: Path) -> None:
    data = _lie_about_size(_zip([("a.jpg", b"\xff\xd8\xff" + b"\x00" * 200_000)]), 100)
    with pytest.raises(ArchiveError, match="damaged"):
        safe_extract_zip(data, sandbox / "dest", 10, 1000)
    assert _tree(sandbox) == set()


def test_actual_bytes_counted_across_files(sandbox: Path) -> None:
    members = [(f"p{k}.jpg", _jpeg()) for k in range(3)]
    size = len(_jpeg())
    out = safe_extract_zip(_zip(members), sandbox / "ok", 3, 3 * size)
    assert len(out) == 3
    with pytest.raises(ArchiveError, match="more than"):
        safe_extract_zip(_zip(members), sandbox / "no", 3, 3 * size - 1)
    assert not (sandbox / "no").exists()


def test_encrypted_member_refused(sandbox: Path) -> None:
    data = bytearray(_zip([("a.jpg", _jpeg())]))
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        pos = data.find(sig)
        data[pos + off] |= 0x1  # the "encrypted" flag bit
    with pytest.raises(ArchiveError, match="encrypted"):
        safe_extract_zip(bytes(data), sandbox / "dest", 10, 10 ** 6)


def test_existing_files_and_paths(sandbox: Path, tmp_path: Path) -> None:
    dest = sandbox / "dest"
    dest.mkdir()
    (dest / "a.jpg").write_bytes(b"mine")
    with pytest.raises(ArchiveError, match="already exists"):
        safe_extract_zip(_zip([("b.jpg", _jpeg()), ("a.jpg", _jpeg())]), dest, 10, 10 ** 6)
    assert _tree(dest) == {"a.jpg"} and (dest / "a.jpg").read_bytes() == b"mine"
    # a symlinked folder inside the destination is not followed out
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "sub").symlink_to(outside)
    with pytest.raises(ArchiveError, match="outside the folder"):
        safe_extract_zip(_zip([("sub/x.jpg", _jpeg())]), dest, 10, 10 ** 6)
    assert list(outside.iterdir()) == []
    # a path to a zip works like bytes
    src = tmp_path / "up.zip"
    src.write_bytes(_zip([("c.jpg", _jpeg())]))
    assert [p.name for p in safe_extract_zip(src, dest, 10, 10 ** 6)] == ["c.jpg"]


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04 truncated", b"hello world" * 10,
                                  _jpeg()])
def test_not_a_zip(sandbox: Path, data: bytes) -> None:
    with pytest.raises(ArchiveError, match="not a readable zip archive"):
        safe_extract_zip(data, sandbox / "dest", 10, 10 ** 6)
    assert _tree(sandbox) == set()


# -- images --------------------------------------------------------------------

def test_decodes_jpeg_and_png() -> None:
    img = decode_image_safely(_jpeg(64, 48), max_pixels=64 * 48)
    assert img.shape == (48, 64, 3) and img.dtype == np.uint8
    assert tuple(img[10, 5]) == pytest.approx((0, 0, 255), abs=8)  # BGR, red
    assert decode_image_safely(_png(40, 30)).shape == (30, 40, 3)
    assert image_size(_jpeg(33, 17)) == (33, 17)
    assert image_size(_png(5, 7)) == (5, 7)
    for ext in (".bmp", ".webp", ".tiff"):
        ok, buf = cv2.imencode(ext, np.zeros((21, 13, 3), np.uint8))
        assert ok
        assert image_size(buf.tobytes()) == (13, 21), ext
        assert decode_image_safely(buf.tobytes()).shape == (21, 13, 3), ext


def test_pixel_limit_checked_from_the_header() -> None:
    with pytest.raises(BadImageError, match="image too large: 64 x 48 pixels"):
        decode_image_safely(_jpeg(64, 48), max_pixels=64 * 48 - 1)
    # a PNG header claiming 100000 x 100000: refused before any decoding
    png = bytearray(_png(4, 4))
    struct.pack_into(">II", png, 16, 100_000, 100_000)
    with pytest.raises(BadImageError, match="image too large: 100000 x 100000"):
        decode_image_safely(bytes(png))


@pytest.mark.parametrize("data, message", [
    (b"", "empty file"),
    (b"GIF89a....", "not an image"),
    (b"hello", "not an image"),
    (_jpeg()[:-2], "truncated JPEG"),
    (_jpeg()[: len(_jpeg()) // 2], "truncated JPEG"),
    (_jpeg()[:30], "truncated JPEG"),
    (_png()[: len(_png()) // 2], "truncated PNG|cannot decode"),
    (b"\xff\xd8\xff\xe0" + b"\x00" * 100, "JPEG"),
])
def test_broken_images_refused(data: bytes, message: str) -> None:
    with pytest.raises(BadImageError, match=message) as info:
        decode_image_safely(data)
    assert isinstance(info.value, ValueError) and "\n" not in str(info.value)
