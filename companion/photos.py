"""A folder of phone photos: which files, in which order.

Photos are taken in file-name order (natural: IMG_2 before IMG_10). When the
names carry no order (no digits, or digits that do not differ), or come from
more than one camera (names of different patterns, each photo with its EXIF
time), the EXIF DateTimeOriginal orders them instead; a photo without EXIF
time keeps its name's place after the dated ones.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from companion.heif import heif_exif, is_heif

#: the photo files the companion reads, wherever it lists or accepts them (a folder,
#: an upload, a zip): OpenCV's formats, and HEIC/HEIF through :mod:`companion.heif`
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp",
                            ".heic", ".heif", ".hif"})


def natural_key(name: str) -> tuple[object, ...]:
    return tuple(int(t) if t.isdigit() else t.lower() for t in re.split(r"(\d+)", name))


def name_key(name: str) -> tuple[object, ...]:
    """A photo's place by its name: the name without its extension first, so that a
    copy's "X (1).jpeg" (WhatsApp desktop, a browser's second download) comes after
    "X.jpeg" (by the whole name " (" sorts before ".")."""
    stem, dot, suffix = name.rpartition(".")
    if not dot:
        stem, suffix = name, ""
    return natural_key(stem), suffix.lower()


def is_photo_name(name: str) -> bool:
    """A file name read as a photo's: an image suffix, and not hidden (macOS's
    AppleDouble "._IMG_0001.jpg" beside each photo copied to a foreign disk holds the
    photo's metadata, not the photo)."""
    return not name.startswith(".") and Path(name).suffix.lower() in IMAGE_SUFFIXES


def is_photo_file(path: Path) -> bool:
    """A file of a folder read as a photo (:func:`is_photo_name`, as a zip's are)."""
    return is_photo_name(path.name) and path.is_file()


def exif_datetime(path: Path) -> str | None:
    """DateTimeOriginal (or DateTime) of a JPEG or HEIC photo as 'YYYY:MM:DD HH:MM:SS',
    else None."""
    try:
        with open(path, "rb") as f:
            head = f.read(128 * 1024)
            if is_heif(head):  # its EXIF lies where the file's boxes say: read it whole
                tiff = heif_exif(head + f.read())
                return None if tiff is None else _tiff_datetime(tiff)
    except OSError:
        return None
    if head[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        size = struct.unpack(">H", head[i + 2:i + 4])[0]
        if marker == 0xE1 and head[i + 4:i + 10] == b"Exif\x00\x00":
            return _tiff_datetime(head[i + 10:i + 2 + size])
        if marker in (0xDA, 0xD9):
            return None
        i += 2 + size
    return None


def _tiff_datetime(tiff: bytes) -> str | None:
    if len(tiff) < 8:
        return None
    endian = {b"II": "<", b"MM": ">"}.get(tiff[:2])
    if endian is None:
        return None

    def ifd(offset: int) -> dict[int, tuple[int, int, int]]:
        out: dict[int, tuple[int, int, int]] = {}
        if offset + 2 > len(tiff):
            return out
        (n,) = struct.unpack(endian + "H", tiff[offset:offset + 2])
        for k in range(n):
            e = offset + 2 + 12 * k
            if e + 12 > len(tiff):
                break
            tag, typ, count = struct.unpack(endian + "HHI", tiff[e:e + 8])
            (value,) = struct.unpack(endian + "I", tiff[e + 8:e + 12])
            out[tag] = (typ, count, value)
        return out

    def ascii_at(entry: tuple[int, int, int]) -> str | None:
        typ, count, off = entry
        if typ != 2 or count < 19 or off + count > len(tiff):
            return None
        return tiff[off:off + 19].decode("ascii", "replace")

    (first,) = struct.unpack(endian + "I", tiff[4:8])
    ifd0 = ifd(first)
    if 0x8769 in ifd0:
        sub = ifd(ifd0[0x8769][2])
        if 0x9003 in sub:
            return ascii_at(sub[0x9003])
    if 0x0132 in ifd0:
        return ascii_at(ifd0[0x0132])
    return None


def ordered_photos(folder: Path, several_cameras: bool = False) -> tuple[list[Path], str]:
    """The photos of a folder in game order, and how the order was decided.

    ``several_cameras``: the photos are known to come from more than one camera
    (a zip of two phones' folders, their names given the folders'), whose names
    do not interleave however alike they look: ordered by the times they were
    taken when every photo has one."""
    photos = sorted((p for p in folder.iterdir() if is_photo_file(p)),
                    key=lambda p: name_key(p.name))
    if len(photos) < 2:
        return photos, "file names"
    numbers = [tuple(int(x) for x in re.findall(r"\d+", p.stem)) for p in photos]
    names_order = len(set(numbers)) == len(photos) and all(numbers)
    # names of one pattern (IMG_0007, IMG_0012) count in one camera's order; names of
    # several (two phones' IMG_0007 and PXL_20261128_2015, an edited IMG_E0009) do not
    # interleave by name, so the photos' own times order them when every one has one
    one_camera = not several_cameras and len(
        {re.sub(r"\d+", "#", p.stem.lower()) for p in photos}) == 1
    if names_order and one_camera:
        wrapped = _rolled_over(photos)
        if wrapped is None:
            return photos, "file names"
        stamps = [t for t in (exif_datetime(p) for p in photos) if t is not None]
        if len(stamps) == len(photos) and stamps == sorted(stamps):
            return photos, "file names"  # the clock says the names run straight on
        rolled, width = wrapped
        return rolled, f"file names (the camera's counter went past {'9' * width})"
    times = {p: exif_datetime(p) for p in photos}
    if names_order and not all(times.values()):
        return photos, "file names"
    if not any(times.values()):
        return photos, "file names (no EXIF times)"
    dated = sorted((p for p in photos if times[p]), key=lambda p: (times[p], name_key(p.name)))
    undated = [p for p in photos if not times[p]]
    return dated + undated, "EXIF time"


#: how far apart the last photo before a camera's counter wraps and the first after
#: it may be numbered (the photos taken between, of anything): more, and a photo far
#: from the others is a stray one, not the counter's wrap
_WRAP_GAP = 100


def _counters(photos: list[Path]) -> tuple[list[int], int] | None:
    """Each name's one zero-padded counter (IMG_0042, DSCF9998) and the counter's width,
    or None for names of another kind (several numbers, or unpadded ones)."""
    runs = [re.findall(r"\d+", p.stem) for p in photos]
    if not all(len(r) == 1 for r in runs):
        return None
    widths = {len(r[0]) for r in runs}
    if len(widths) != 1 or (width := widths.pop()) < 3:
        return None
    return [int(r[0]) for r in runs], width


def _rolled_over(photos: list[Path]) -> tuple[list[Path], int] | None:
    """One camera's photos in taking order when its counter wrapped during the game
    (IMG_9998, IMG_9999, IMG_0001: by name the last photos would come first), and the
    counter's width; else None.

    The photos of a game are a short run of the counter: when the widest gap between
    neighbouring numbers is past half the counter's range and the wrap (from the
    highest number round to the lowest) is a short step, the run crossed the wrap."""
    found = _counters(photos)
    if found is None:
        return None
    numbers, width = found
    top = 10 ** width
    gaps = [b - a for a, b in zip(numbers, numbers[1:], strict=False)]
    widest = max(range(len(gaps)), key=gaps.__getitem__)
    wrap = numbers[0] + top - numbers[-1]
    if gaps[widest] <= top // 2 or wrap > _WRAP_GAP:
        return None
    return photos[widest + 1:] + photos[:widest + 1], width
