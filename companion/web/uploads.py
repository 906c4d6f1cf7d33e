"""Uploaded photos: loose files or a zip, turned into named files for the replay service.

Every file, and every member of a zip, is written to a spool folder a chunk at a
time, within the upload's own size limit, so neither a large upload nor a hostile
archive can fill the Pi's memory; only images and a ``game.json`` are kept, by
base name.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from flask import current_app
from werkzeug.datastructures import FileStorage

from companion.imagefiles import error_text
from companion.photos import IMAGE_SUFFIXES as PHOTO_SUFFIXES
from companion.web.app import UploadedFile
from companion.web.auth import ApiError, fail

IMAGE_SUFFIXES = tuple(sorted(PHOTO_SUFFIXES))  # str.endswith takes a tuple
MAX_FILES = 2000
_CHUNK = 1 << 16


def _wanted(name: str) -> bool:
    low = name.lower()
    return low.endswith(IMAGE_SUFFIXES) or low == "game.json"


def collect_files(storages: Iterable[FileStorage], spool: Path) -> list[UploadedFile]:
    """Every photo (and game.json) from the upload, written into ``spool`` as it is
    read (a chunk at a time: nothing of it is held in memory); 400 if there is none."""
    limit = int(current_app.config.get("MAX_CONTENT_LENGTH") or 200 * 1024 * 1024)
    out: list[UploadedFile] = []
    budget = [limit]  # the photos, unpacked too, count against the upload's own limit
    for fs in storages:
        name = posixpath.basename((fs.filename or "").replace("\\", "/"))
        head = fs.stream.read(4)
        fs.stream.seek(0)
        if name.lower().endswith(".zip") or head == b"PK\x03\x04":
            out.extend(_unzip(name or "upload.zip", fs.stream, spool, len(out), budget))
        elif _wanted(name):
            path = spool / f"{len(out):05d}"
            _copy(fs.stream, path, budget, f"{name}: too large")
            out.append(UploadedFile(name, path=path))
        if len(out) > MAX_FILES:
            fail(413, f"too many files (at most {MAX_FILES} photos)")
    if not any(f.name.lower().endswith(IMAGE_SUFFIXES) for f in out):
        fail(400, "no photos in the upload: send JPEG, PNG or HEIC files, or a zip of them")
    return out


def _copy(src: IO[bytes], dest: Path, budget: list[int], too_large: str) -> None:
    """``src`` into ``dest`` a chunk at a time, within what is left of ``budget``."""
    with open(dest, "wb") as out:
        while chunk := src.read(_CHUNK):
            budget[0] -= len(chunk)
            if budget[0] < 0:
                fail(413, too_large)
            out.write(chunk)


def _unzip(name: str, stream: IO[bytes], spool: Path, first: int,
           budget: list[int]) -> list[UploadedFile]:
    """The wanted members of a zip, each written to the spool, each refused in one line
    if it cannot be read.

    Python's zipfile answers damage with many kinds of exception (a bad CRC,
    zlib's own error, EOFError, a negative seek from a lying offset, an
    unknown version): all of them are the upload's fault, a 400, not the
    companion's 500. ``ZipFile.read`` inflates a member in one call, whatever
    its header declares (a 300 KB upload whose member claims 100 bytes made 300
    MB); read a chunk at a time, zipfile stops at the declared size."""
    try:
        archive = zipfile.ZipFile(stream)
    except Exception:  # zipfile raises many kinds on bad input
        fail(400, f"{name}: not a readable zip file")
    out: list[UploadedFile] = []
    with archive:
        for info in archive.infolist():
            base = posixpath.basename(info.filename)
            if info.filename.endswith("/") or base.startswith(".") or not _wanted(base):
                continue
            if info.file_size > budget[0]:
                fail(413, f"{name}: the photos inside are too large")
            if info.flag_bits & 0x1:
                fail(400, f"{name}: {base} is encrypted (send a zip without a password)")
            path = spool / f"{first + len(out):05d}"
            try:
                with archive.open(info) as member:
                    _copy(member, path, budget, f"{name}: the photos inside are too large")
            except ApiError:
                raise
            except Exception as exc:  # as above: damage inside the archive
                fail(400, f"{name}: cannot read {base} ({error_text(exc)})")
            out.append(UploadedFile(base, path=path))
    return out
