"""Input safety for uploads: zips of phone photos and the images themselves.

Anything a phone (or an attacker on the table's Wi-Fi) uploads goes through
here first. Every refusal is a :class:`UnsafeInputError` (a ``ValueError``)
with a one-line message the page can show; nothing is written outside the
destination folder, and a refused archive leaves nothing behind.
"""

from __future__ import annotations

import io
import os
import re
import stat
import zipfile
from collections.abc import Collection
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from companion.heif import HeifError, decode_heif, heif_size, is_heif
from companion.photos import IMAGE_SUFFIXES as PHOTO_SUFFIXES

if TYPE_CHECKING:
    import numpy as np

IMAGE_SUFFIXES = frozenset(PHOTO_SUFFIXES)
DEFAULT_MAX_PIXELS = 64_000_000  # a 48 MP phone photo fits; a decompression bomb does not
_CHUNK = 1 << 16


class UnsafeInputError(ValueError):
    """An upload was refused; the message is one line for the user."""


class ArchiveError(UnsafeInputError):
    """A zip that is malformed, too big, or tries to write outside its folder."""


class BadImageError(UnsafeInputError):
    """Bytes that are not a whole, decodable image of acceptable size."""


class Extracted(list[Path]):
    """The extracted files (a list of paths) plus ``skipped``: archive names left out."""

    def __init__(self, paths: list[Path], skipped: list[str]) -> None:
        super().__init__(paths)
        self.skipped = skipped


# -- zips ----------------------------------------------------------------------

def safe_extract_zip(source: bytes | bytearray | memoryview | str | os.PathLike[str] | IO[bytes],
                     dest_dir: str | os.PathLike[str], max_files: int = 1000,
                     max_total_bytes: int = 2 * 1024 ** 3, *,
                     keep_names: Collection[str] = ("game.json",),
                     flatten: bool = False) -> Extracted:
    """Extract the images (and ``keep_names``, e.g. ``game.json``) of a zip into ``dest_dir``.

    Refused as a whole (:class:`ArchiveError`, nothing left behind): names that
    climb out (``..``, absolute, drive letters), symlinks, encrypted members,
    more than ``max_files`` files, more than ``max_total_bytes`` declared or
    actually decompressed, a file that already exists. Other files are skipped
    and named in ``result.skipped``; so are "images" whose bytes are not one.
    """
    if max_files < 0 or max_total_bytes < 0:
        raise ValueError("limits cannot be negative")
    with _open_zip(source) as zf:
        try:
            infos = zf.infolist()
        except Exception as exc:  # zipfile raises many kinds on bad input
            raise ArchiveError(f"not a readable zip archive ({_why(exc)})") from None
        plan, skipped = _plan(infos, max_files, max_total_bytes, keep_names, flatten)
        return _extract(zf, plan, skipped, Path(dest_dir), max_total_bytes)


def _open_zip(source: Any) -> zipfile.ZipFile:
    try:
        if isinstance(source, (bytes, bytearray, memoryview)):
            return zipfile.ZipFile(io.BytesIO(bytes(source)))
        if isinstance(source, (str, os.PathLike)):
            path = Path(source)
            if not path.is_file():
                raise ArchiveError(f"{path}: no such file")
            return zipfile.ZipFile(path)
        return zipfile.ZipFile(source)
    except ArchiveError:
        raise
    except Exception as exc:
        raise ArchiveError(f"not a readable zip archive ({_why(exc)})") from None


def _why(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def _member_parts(name: str) -> list[str]:
    """The safe relative path of a member, or ArchiveError if it would climb out."""
    if "\x00" in name:
        raise ArchiveError(f"refused: a file name holds a NUL byte ({name!r})")
    norm = name.replace("\\", "/")
    if norm.startswith("/") or re.match(r"^[A-Za-z]:", norm):
        raise ArchiveError(f"refused: absolute path {name!r} in the archive")
    parts = [p for p in norm.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"refused: path {name!r} climbs out of the folder")
    return parts


def _is_image_name(parts: list[str]) -> bool:
    if any(p.startswith(".") or p == "__MACOSX" for p in parts):
        return False  # macOS resource forks and hidden files
    return PurePosixPath(parts[-1]).suffix.lower() in IMAGE_SUFFIXES


def _is_dir(info: zipfile.ZipInfo) -> bool:
    """ZipInfo.is_dir, without its IndexError on an empty (crafted) name."""
    return info.filename.endswith("/")


def _plan(infos: list[zipfile.ZipInfo], max_files: int, max_total_bytes: int,
          keep_names: Collection[str], flatten: bool,
          ) -> tuple[list[tuple[zipfile.ZipInfo, str, bool]], list[str]]:
    files = [i for i in infos if not _is_dir(i)]
    if len(files) > max_files:
        raise ArchiveError(f"refused: {len(files)} files in the archive (at most {max_files})")
    if len(infos) - len(files) > max_files:
        raise ArchiveError(f"refused: {len(infos) - len(files)} folders in the archive")
    plan: list[tuple[zipfile.ZipInfo, str, bool]] = []
    skipped: list[str] = []
    targets: set[str] = set()
    declared = 0
    for info in infos:
        parts = _member_parts(info.filename)
        mode = (info.external_attr >> 16) & 0xFFFF
        if stat.S_ISLNK(mode):
            raise ArchiveError(f"refused: {info.filename!r} is a symbolic link")
        if _is_dir(info) or not parts:
            continue
        if info.flag_bits & 0x1:
            raise ArchiveError(f"refused: {info.filename!r} is encrypted")
        is_image = _is_image_name(parts)
        if not is_image and parts[-1] not in keep_names:
            skipped.append(info.filename)
            continue
        rel = parts[-1] if flatten else "/".join(parts)
        if rel.casefold() in targets:
            raise ArchiveError(f"refused: two files would be named {rel!r}")
        targets.add(rel.casefold())
        declared += max(0, info.file_size)
        if declared > max_total_bytes:
            raise ArchiveError(f"refused: the archive unpacks to more than {max_total_bytes} "
                               "bytes")
        plan.append((info, rel, is_image))
    return plan, skipped


def _extract(zf: zipfile.ZipFile, plan: list[tuple[zipfile.ZipInfo, str, bool]],
             skipped: list[str], dest: Path, max_total_bytes: int) -> Extracted:
    created_dirs: list[Path] = []
    written: list[Path] = []
    if not dest.exists():
        dest.mkdir(parents=True)
        created_dirs.append(dest)
    elif not dest.is_dir():
        raise ArchiveError(f"{dest}: not a folder")
    root = dest.resolve()
    out: list[Path] = []
    total = 0
    try:
        for info, rel, is_image in plan:
            target = root.joinpath(*rel.split("/"))
            if os.path.commonpath([root, target.resolve()]) != str(root):
                raise ArchiveError(f"refused: {info.filename!r} would land outside the folder")
            for parent in reversed(target.relative_to(root).parents[:-1]):
                d = root / parent
                if not d.exists():
                    d.mkdir()
                    created_dirs.append(d)
            if target.parent.resolve() != target.parent:  # a symlinked folder in dest
                raise ArchiveError(f"refused: {info.filename!r} would land outside the folder")
            try:
                fh = open(target, "xb")
            except FileExistsError:
                raise ArchiveError(f"refused: {rel!r} already exists in the folder") from None
            written.append(target)
            head = b""
            with fh:
                try:
                    with zf.open(info) as src:
                        while chunk := src.read(_CHUNK):
                            total += len(chunk)
                            if total > max_total_bytes:
                                raise ArchiveError("refused: the archive unpacks to more than "
                                                   f"{max_total_bytes} bytes")
                            if len(head) < 16:
                                head += chunk[:16]
                            fh.write(chunk)
                except ArchiveError:
                    raise
                except Exception as exc:
                    raise ArchiveError(f"{info.filename}: damaged in the archive "
                                       f"({_why(exc)})") from None
            if is_image and image_kind(head) is None:
                target.unlink()
                written.remove(target)
                skipped.append(info.filename)
                continue
            out.append(target)
    except BaseException:
        for f in written:
            f.unlink(missing_ok=True)
        for d in reversed(created_dirs):  # deepest first; each is empty by now
            _rmdir_quiet(d)
        raise
    return Extracted(out, skipped)


def _rmdir_quiet(d: Path) -> None:
    try:
        d.rmdir()
    except OSError:
        pass


# -- images --------------------------------------------------------------------

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
    raise BadImageError("truncated JPEG (no image data)")


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


def _check_complete(kind: str, data: bytes) -> None:
    """Refuse truncated files, and lengths that point past the end (a 100-byte PNG
    whose chunk claims 2 GB keeps OpenCV busy for seconds)."""
    if kind == "jpeg":
        _, scan = _jpeg_segments(data)
        if data.find(b"\xff\xd9", scan) < 0:
            raise BadImageError("truncated JPEG (no end-of-image marker)")
    elif kind == "png":
        pos = 8
        while pos + 12 <= len(data):
            length = _u32be(data, pos)
            if pos + 12 + length > len(data):
                raise BadImageError("truncated PNG (a chunk runs past the end)")
            if data[pos + 4:pos + 8] == b"IEND":
                return
            pos += 12 + length
        raise BadImageError("truncated PNG (no IEND chunk)")
    elif kind == "webp":
        if _u32le(data, 4) + 8 > len(data):
            raise BadImageError("truncated WebP")


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
    _check_complete(kind, raw)
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
        img = cv2.imdecode(np.frombuffer(raw, dtype=np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as exc:
        raise BadImageError(f"cannot decode {kind.upper()} ({_why(exc)})") from None
    if img is None or img.ndim != 3 or img.shape[2] != 3:
        raise BadImageError(f"cannot decode this {kind.upper()} (damaged or unsupported)")
    if img.shape[0] * img.shape[1] > max_pixels:  # the header lied
        raise BadImageError(f"image too large: {img.shape[1]} x {img.shape[0]} pixels")
    return img


__all__ = [
    "DEFAULT_MAX_PIXELS", "IMAGE_SUFFIXES", "ArchiveError", "BadImageError", "Extracted",
    "UnsafeInputError", "decode_image_safely", "image_kind", "image_size", "safe_extract_zip",
]
