"""Image files checked before they are decoded: the format from the first bytes, the
pixel count from the header, completeness, and a guarded decode.

Anything a phone (or an attacker on the table's Wi-Fi) uploads is checked here
first, and so is every photo file the reader opens: a few kilobytes can declare
a 30000 x 30000 image, and decoding that would take gigabytes of the Pi's
memory. Every refusal is a :class:`BadImageError` (an :class:`UnsafeInputError`,
a ``ValueError``) with a one-line message.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from companion.heif import HeifError, decode_heif, heif_size, is_heif

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MAX_PIXELS = 64_000_000  # a 48 MP phone photo fits; a decompression bomb does not


class UnsafeInputError(ValueError):
    """An upload was refused; the message is one line for the user."""


class BadImageError(UnsafeInputError):
    """Bytes that are not a whole, decodable image of acceptable size."""


class TruncatedImageError(BadImageError):
    """An image file cut short (a copy interrupted): its data ends before the image's."""


@contextmanager
def opencv_silent() -> Iterator[None]:
    """OpenCV's own log off while a file is decoded: it prints "[ERROR] imdecode_ ..."
    lines on stderr before the caller's one-line refusal. (hardware.camera keeps a
    copy: it imports nothing of companion.)"""
    import cv2

    logging = getattr(getattr(cv2, "utils", None), "logging", None)
    if logging is None:
        yield
        return
    level = logging.getLogLevel()
    logging.setLogLevel(logging.LOG_LEVEL_SILENT)
    try:
        yield
    finally:
        logging.setLogLevel(level)


@contextmanager
def decoder_messages() -> Iterator[list[str]]:
    """What an image decoder prints on stderr while it runs, as lines: libjpeg writes
    "Corrupt JPEG data: ..." there for a damaged file and decodes it anyway, with
    no file name and nothing the caller can see. Captured at the file descriptor
    (the decoder is C), so only in a process with one thread: in a server the
    other threads' output would be caught too (then the list stays empty and the
    decoder prints as before)."""
    import os
    import sys
    import tempfile
    import threading

    lines: list[str] = []
    if threading.active_count() > 1:
        yield lines
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield lines
        return
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            lines.extend(line.strip() for line in caught.read().decode(
                "utf-8", "replace").splitlines() if line.strip())


#: what libjpeg says of a damaged file it decodes anyway (the rest: grey, or shifted)
_DAMAGE = ("Corrupt JPEG data", "Premature end of JPEG file")
#: ... and what it says of bytes between two segments, which leave the picture whole
_HARMLESS = ("extraneous bytes before marker",)


def damage_of(messages: list[str]) -> tuple[str | None, list[str]]:
    """The decoder's words for a damaged picture (None: none), and its other lines
    (not the harmless ones: said without a file's name, they only puzzle)."""
    harmless = [m for m in messages if any(h in m for h in _HARMLESS)]
    bad = [m for m in messages if m.startswith(_DAMAGE) and m not in harmless]
    rest = [m for m in messages if m not in bad and m not in harmless]
    return ("; ".join(dict.fromkeys(bad))[:200] if bad else None), rest


def damage_warning(words: str) -> str:
    """The warning for a photo decoded from damaged data (the decoder's ``words``)."""
    return (f"the photo's data is damaged ({words}): the sites and cards it shows past "
            "the damage may be read wrong or unseen")


def error_text(exc: BaseException) -> str:
    """An exception's first line, short enough for a one-line refusal."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def image_kind(head: bytes) -> str | None:
    """The image format from its first bytes (magic numbers), or None."""
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"BM"):
        return "bmp"
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return "tiff"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if is_heif(head):
        return "heic"
    return None


def image_size(data: bytes) -> tuple[int, int]:
    """(width, height) read from the header alone, before any pixel is decoded."""
    kind = image_kind(data[:16])
    try:
        if kind == "jpeg":
            return _jpeg_size(data)
        if kind == "png":
            if data[12:16] != b"IHDR":
                raise BadImageError("damaged PNG: no IHDR header")
            return _u32be(data, 16), _u32be(data, 20)
        if kind == "bmp":
            if _u32le(data, 14) == 12:  # OS/2 BITMAPCOREHEADER
                return _u16le(data, 18), _u16le(data, 20)
            if len(data) < 26:
                raise BadImageError("truncated BMP header")
            w = int.from_bytes(data[18:22], "little", signed=True)
            h = int.from_bytes(data[22:26], "little", signed=True)
            return abs(w), abs(h)
        if kind == "webp":
            return _webp_size(data)
        if kind == "tiff":
            return _tiff_size(data)
        if kind == "heic":  # libheif reads the size from the boxes, decoding nothing
            return heif_size(data)
    except HeifError as exc:
        raise BadImageError(str(exc)) from None
    except (IndexError, ValueError) as exc:
        if isinstance(exc, BadImageError):
            raise
        raise BadImageError(f"damaged {kind} header") from None
    raise BadImageError("not an image (expected JPEG, PNG, BMP, TIFF, WebP or HEIC)")


def _u16le(b: bytes, i: int) -> int:
    return _int(b, i, 2, "little")


def _u32le(b: bytes, i: int) -> int:
    return _int(b, i, 4, "little")


def _u32be(b: bytes, i: int) -> int:
    return _int(b, i, 4, "big")


def _int(b: bytes, i: int, n: int, order: str) -> int:
    if i + n > len(b):
        raise BadImageError("truncated image header")
    return int.from_bytes(b[i:i + n], order)  # type: ignore[arg-type]


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg_segments(data: bytes) -> tuple[tuple[int, int], int]:
    """((width, height), offset of the first scan) by walking the marker segments."""
    i, n = 2, len(data)
    size: tuple[int, int] | None = None
    while i < n:
        if data[i] != 0xFF:
            raise BadImageError("damaged JPEG: bad marker")
        while i < n and data[i] == 0xFF:
            i += 1
        if i >= n:
            break
        marker = data[i]
        i += 1
        if marker in (0x01, 0xD8) or 0xD0 <= marker <= 0xD7:
            continue
        if marker == 0xD9:
            break
        if i + 2 > n:
            break
        length = int.from_bytes(data[i:i + 2], "big")
        if length < 2:
            raise BadImageError("damaged JPEG: bad segment length")
        if marker in _SOF:
            if length < 8 or i + 7 > n:
                break
            h = int.from_bytes(data[i + 3:i + 5], "big")
            w = int.from_bytes(data[i + 5:i + 7], "big")
            size = (w, h)
        if marker == 0xDA:  # start of scan: entropy-coded data follows
            if size is None:
                raise BadImageError("damaged JPEG: scan before frame header")
            return size, i + length
        i += length
    raise TruncatedImageError("truncated JPEG (no image data)")


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's frame header, nothing decoded (None: not a JPEG
    whose headers run whole to its first scan)."""
    try:
        size, _ = _jpeg_segments(data)
    except BadImageError:
        return None
    return size


def jpeg_complete(data: bytes) -> bool:
    """Whether a JPEG's image data comes to its end-of-image marker.

    Not whether the file ends with one: phones append data after it (Samsung's
    trailer of its own metadata, a motion photo's video), while a cut file (a
    copy interrupted) has none after its scan starts, and the decoder would fill
    the missing rows with grey without a word. Inside the coded data a 0xFF byte
    is always stuffed or a restart marker, so the first FF D9 after the scan
    starts is the end of the image. Headers damaged otherwise than cut short are
    left to the decoder (True).
    """
    try:
        check_complete("jpeg", data)
    except TruncatedImageError:
        return False
    except BadImageError:
        return True
    return True


def _jpeg_size(data: bytes) -> tuple[int, int]:
    size, _ = _jpeg_segments(data)
    return size


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        if data[23:26] != b"\x9d\x01\x2a":
            raise BadImageError("damaged WebP header")
        return _u16le(data, 26) & 0x3FFF, _u16le(data, 28) & 0x3FFF
    if chunk == b"VP8L":
        bits = _u32le(data, 21)
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return _int(data, 24, 3, "little") + 1, _int(data, 27, 3, "little") + 1
    raise BadImageError("damaged WebP header")


def _tiff_size(data: bytes) -> tuple[int, int]:
    order = "little" if data[:2] == b"II" else "big"
    ifd = _int(data, 4, 4, order)
    count = _int(data, ifd, 2, order)
    found: dict[int, int] = {}
    for k in range(min(count, 512)):
        at = ifd + 2 + 12 * k
        tag, typ = _int(data, at, 2, order), _int(data, at + 2, 2, order)
        if tag in (256, 257):
            found[tag] = (_int(data, at + 8, 2, order) if typ == 3
                          else _int(data, at + 8, 4, order))
    if 256 not in found or 257 not in found:
        raise BadImageError("damaged TIFF: no image size")
    return found[256], found[257]


def check_complete(kind: str, data: bytes) -> None:
    """Refuse truncated files (:class:`TruncatedImageError`), and lengths that point
    past the end (a 100-byte PNG whose chunk claims 2 GB keeps OpenCV busy for
    seconds). A JPEG is complete when its end-of-image marker follows its scan,
    whatever a phone appended after it (:func:`jpeg_complete`)."""
    if kind == "jpeg":
        _, scan = _jpeg_segments(data)
        if data.find(b"\xff\xd9", scan) < 0:
            raise TruncatedImageError("truncated JPEG (no end-of-image marker)")
    elif kind == "png":
        pos = 8
        while pos + 12 <= len(data):
            length = _u32be(data, pos)
            if pos + 12 + length > len(data):
                raise TruncatedImageError("truncated PNG (a chunk runs past the end)")
            if data[pos + 4:pos + 8] == b"IEND":
                return
            pos += 12 + length
        raise TruncatedImageError("truncated PNG (no IEND chunk)")
    elif kind == "webp":
        if _u32le(data, 4) + 8 > len(data):
            raise TruncatedImageError("truncated WebP")


def decode_image_safely(data: bytes | bytearray | memoryview,
                        max_pixels: int = DEFAULT_MAX_PIXELS) -> np.ndarray:
    """Decode an uploaded image to a BGR array, refusing oversized or broken ones.

    The pixel count comes from the header before OpenCV allocates anything, so
    a 100 000 x 100 000 "photo" of a few kilobytes is refused cheaply.
    """
    raw = bytes(data)
    if not raw:
        raise BadImageError("empty file, not an image")
    kind = image_kind(raw[:16])
    if kind is None:
        raise BadImageError("not an image (expected JPEG, PNG, BMP, TIFF, WebP or HEIC)")
    w, h = image_size(raw)
    if w <= 0 or h <= 0:
        raise BadImageError(f"damaged {kind.upper()}: image size {w} x {h}")
    if w * h > max_pixels:
        raise BadImageError(f"image too large: {w} x {h} pixels (at most {max_pixels})")
    check_complete(kind, raw)
    if kind == "heic":  # OpenCV has no HEVC decoder
        try:
            heif = decode_heif(raw)
        except HeifError as exc:
            raise BadImageError(str(exc)) from None
        if heif.shape[0] * heif.shape[1] > max_pixels:  # the header lied
            raise BadImageError(f"image too large: {heif.shape[1]} x {heif.shape[0]} pixels")
        return heif
    import cv2
    import numpy as np

    try:
        with opencv_silent():
            img = cv2.imdecode(np.frombuffer(raw, dtype=np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as exc:
        raise BadImageError(f"cannot decode {kind.upper()} ({error_text(exc)})") from None
    if img is None or img.ndim != 3 or img.shape[2] != 3:
        raise BadImageError(f"cannot decode this {kind.upper()} (damaged or unsupported)")
    if img.shape[0] * img.shape[1] > max_pixels:  # the header lied
        raise BadImageError(f"image too large: {img.shape[1]} x {img.shape[0]} pixels")
    return img
