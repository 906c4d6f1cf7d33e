"""HEIC/HEIF photos: what an iPhone saves by default (and many Android phones can).

OpenCV cannot decode HEVC-coded images, so a folder of iPhone photos would
replay as "no photos". libheif, through the pillow-heif wheel, decodes them;
it is imported only when a HEIF file turns up, so the rest of the companion
(and a Pi without the wheel) never pays for it. Every failure is a
:class:`HeifError` (a ``ValueError``) with a one-line message.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

#: major (or compatible) brands of the ISO base media file that carry still images
#: libheif decodes: HEVC-coded (heic, heix, ...) and the generic image brands
HEIF_BRANDS = frozenset({b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"hevm",
                         b"hevs", b"mif1", b"msf1", b"heif"})
#: brands of files in the same container libheif (as pillow-heif ships it) does not decode
_OTHER_BRANDS = frozenset({b"avif", b"avis", b"jpeg", b"jpgs"})

INSTALL_HINT = "pip install pillow-heif"


class HeifError(ValueError):
    """A HEIF file that cannot be read here; the message is one line."""


def is_heif(head: bytes) -> bool:
    """Whether the first bytes are an ISO-BMFF ``ftyp`` box of a HEIF still image.

    The box names a major brand and a list of compatible ones; phones write
    ``heic`` with ``mif1`` among the compatible brands. An AVIF file (the same
    container, AV1 inside) is not taken for one.
    """
    if len(head) < 16 or head[4:8] != b"ftyp":
        return False
    size = int.from_bytes(head[:4], "big")
    brands = [head[8:12]] + [head[i:i + 4] for i in range(16, min(size, len(head)) - 3, 4)]
    if brands[0] in _OTHER_BRANDS:
        return False
    return any(b in HEIF_BRANDS for b in brands)


def _library() -> Any:
    try:
        import pillow_heif
    except ImportError:
        raise HeifError(f"a HEIC photo, and the HEIC decoder is not installed "
                        f"({INSTALL_HINT})") from None
    return pillow_heif


def decoder_version() -> str | None:
    """The HEIC decoder's version (pillow-heif's, libheif's), or None where it is missing."""
    try:
        lib = _library()
        libheif = lib.libheif_version()
    except (HeifError, AttributeError):
        return None
    return f"pillow-heif {lib.__version__}, libheif {libheif}"


def _open(data: bytes, bgr: bool = False) -> Any:
    lib = _library()
    try:
        return lib.open_heif(io.BytesIO(data), convert_hdr_to_8bit=True, bgr_mode=bgr)
    except (ValueError, EOFError, SyntaxError, RuntimeError, OSError) as exc:
        raise HeifError(f"damaged or unsupported HEIC file ({_why(exc)})") from None


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text.removeprefix("Invalid input: ")[:120]


def heif_size(data: bytes) -> tuple[int, int]:
    """(width, height) of the primary image, from the file's boxes (nothing decoded)."""
    size: tuple[int, int] = tuple(_open(data).size)  # type: ignore[assignment]
    return size


def decode_heif(data: bytes) -> np.ndarray:
    """The primary image as 8-bit BGR, as ``cv2.imdecode`` would give a JPEG.

    10-bit photos are brought to 8 bits; an alpha plane is dropped and a grey
    image made three-channel, so the reader sees what it sees of any photo.
    """
    import cv2
    import numpy as np

    heif = _open(data, bgr=True)
    try:
        img = np.asarray(heif)
    except (ValueError, EOFError, SyntaxError, RuntimeError, OSError) as exc:
        raise HeifError(f"damaged HEIC file ({_why(exc)})") from None
    if img.dtype != np.uint8:  # a 16-bit plane, should the 8-bit conversion not apply
        img = (img >> 8).astype(np.uint8)
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    elif img.shape[2] == 4:
        img = img[:, :, :3]
    return np.ascontiguousarray(img)


def heif_exif(data: bytes) -> bytes | None:
    """The EXIF block (its TIFF part, after the ``Exif\\0\\0`` header), or None."""
    try:
        raw = _open(data).info.get("exif")
    except HeifError:
        return None
    if not raw:
        return None
    raw = bytes(raw)
    return raw[6:] if raw.startswith(b"Exif\x00\x00") else raw
