"""Fuzz the upload guards: random bytes and crafted or damaged zips and images give a
result or an UnsafeInputError (a ValueError), and nothing is ever written outside the
destination folder."""

from __future__ import annotations

import io
import os
import tempfile
import time
import warnings
import zipfile
from pathlib import Path

import cv2
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.store.safety import UnsafeInputError, decode_image_safely, safe_extract_zip
from tests.test_heif import heic_bytes

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=300,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _jpeg() -> bytes:
    rng = np.random.default_rng(0)
    ok, buf = cv2.imencode(".jpg", rng.integers(0, 255, (24, 32, 3), dtype=np.uint8))
    assert ok
    return buf.tobytes()


def _png() -> bytes:
    ok, buf = cv2.imencode(".png", np.full((12, 16, 3), 77, np.uint8))
    assert ok
    return buf.tobytes()


def _encoded(ext: str) -> bytes:
    ok, buf = cv2.imencode(ext, np.full((10, 14, 3), 99, np.uint8))
    assert ok
    return buf.tobytes()


JPEG, PNG, BMP, WEBP, TIFF = _jpeg(), _png(), _encoded(".bmp"), _encoded(".webp"), _encoded(
    ".tiff")
HEIC = heic_bytes(np.full((10, 14, 3), 99, np.uint8), 50)  # libheif's, not OpenCV's


def _zip(members: list[tuple[str, bytes, int, int]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data, attr, method in members:
            info = zipfile.ZipInfo(name)
            info.external_attr = attr
            info.compress_type = method
            zf.writestr(info, data)
    return buf.getvalue()


BASE_ZIP = _zip([("photos/a.jpg", JPEG, 0, zipfile.ZIP_DEFLATED),
                 ("photos/b.png", PNG, 0, zipfile.ZIP_STORED),
                 ("game.json", b'{"players": []}', 0, zipfile.ZIP_DEFLATED)])

NAME = st.lists(st.sampled_from(["..", ".", "", "a", "b.jpg", "c.png", "x.JPG", "game.json",
                                 "/", "\\", "C:", "__MACOSX", ".hidden.jpg", "é.jpg",
                                 "d.txt"]), min_size=1, max_size=5).map("/".join) | st.text(
    max_size=12)
MEMBER = st.tuples(NAME, st.sampled_from([JPEG, PNG, b"", b"not an image", JPEG[:50]]),
                   st.sampled_from([0, 0o644 << 16, (0o120777 << 16), (0o040755 << 16) | 0x10,
                                    0xFFFFFFFF]),
                   st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "set", "cut", "insert"]))
        if not out:
            break
        pos = draw(st.integers(0, len(out) - 1))
        if op == "flip":
            out[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "set":
            out[pos] = draw(st.sampled_from([0, 0xFF, 0x7F, 0x80]))
        elif op == "cut":
            del out[pos:]
        else:
            out[pos:pos] = draw(st.binary(min_size=1, max_size=8))
    return bytes(out)


def _extract_checked(data: bytes, max_files: int = 5, max_bytes: int = 20_000) -> None:
    """Extraction succeeds inside the folder or fails cleanly, leaving nothing behind."""
    with tempfile.TemporaryDirectory() as tmp:
        box = Path(tmp)
        dest = box / "dest"
        try:
            out = safe_extract_zip(data, dest, max_files, max_bytes)
        except UnsafeInputError as exc:
            assert "\n" not in str(exc)
            assert [p for p in box.rglob("*")] == []  # a refusal leaves nothing behind
            return
        root = dest.resolve()
        for p in out:
            assert p.resolve().is_relative_to(root) and p.is_file() and not p.is_symlink()
        written = [p for p in box.rglob("*") if p.is_file()]
        assert all(p.resolve().is_relative_to(root) for p in written)
        assert sorted(written) == sorted(out)
        assert sum(p.stat().st_size for p in out) <= max_bytes
        assert len(out) <= max_files


@FUZZ
@given(st.binary(max_size=600))
def test_random_bytes_as_zip(data: bytes) -> None:
    _extract_checked(data)


@FUZZ
@given(damaged(BASE_ZIP))
def test_damaged_zips(data: bytes) -> None:
    _extract_checked(data)


@FUZZ
@given(st.lists(MEMBER, max_size=7), st.integers(0, 6), st.integers(0, 4000))
def test_crafted_zips(members, max_files: int, max_bytes: int) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # duplicate names are part of the point
            data = _zip(members)
    except (ValueError, OSError, IndexError):  # zipfile itself refuses some names ('')
        return
    _extract_checked(data, max_files, max_bytes)


def _decode_checked(data: bytes) -> None:
    start = time.perf_counter()
    try:
        img = decode_image_safely(data, max_pixels=100_000)
    except UnsafeInputError as exc:
        assert "\n" not in str(exc)
        return
    finally:
        # a few hundred bytes must never keep the Pi busy (a damaged length field can)
        assert time.perf_counter() - start < 1.0, f"slow to refuse: {data[:64]!r}"
    assert img.ndim == 3 and img.shape[2] == 3 and img.dtype == np.uint8
    assert img.shape[0] * img.shape[1] <= 100_000


@FUZZ
@given(st.binary(max_size=400) | st.sampled_from([b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n",
                                                   b"BM", b"II*\x00", b"RIFF\x00\x00\x00\x00WEBP",
                                                   HEIC[:40]]).flatmap(
    lambda head: st.binary(max_size=200).map(lambda tail: head + tail)))
def test_random_bytes_as_image(data: bytes) -> None:
    _decode_checked(data)


@FUZZ
@given(damaged(JPEG) | damaged(PNG))
def test_damaged_images(data: bytes) -> None:
    _decode_checked(data)


@settings(FUZZ, max_examples=150)
@given(damaged(BMP) | damaged(WEBP) | damaged(TIFF) | damaged(HEIC))
def test_damaged_other_formats(data: bytes) -> None:
    _decode_checked(data)


def test_no_stray_files_in_cwd() -> None:
    """Belt and braces: the fuzzing above never wrote into the working directory."""
    assert not any(name.endswith((".jpg", ".png")) for name in os.listdir("."))
