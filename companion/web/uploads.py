"""Uploaded photos: loose files or a zip, turned into (name, bytes) for the replay service.

A zip is unpacked in memory with limits, so a hostile archive cannot fill the
Pi's memory; only images and a ``game.json`` are kept, by base name.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from collections.abc import Iterable

from flask import current_app
from werkzeug.datastructures import FileStorage

from companion.imagefiles import error_text
from companion.photos import IMAGE_SUFFIXES as PHOTO_SUFFIXES
from companion.web.app import UploadedFile
from companion.web.auth import fail

IMAGE_SUFFIXES = tuple(sorted(PHOTO_SUFFIXES))  # str.endswith takes a tuple
MAX_FILES = 2000
_CHUNK = 1 << 16


def _wanted(name: str) -> bool:
    low = name.lower()
    return low.endswith(IMAGE_SUFFIXES) or low == "game.json"


def collect_files(storages: Iterable[FileStorage]) -> list[UploadedFile]:
    """Every photo (and game.json) from the upload; 400 if there is none."""
    # the photos unpacked count against the upload's own limit: twice it (400 MB held
    # at once) was more than a Pi has to spare
    limit = int(current_app.config.get("MAX_CONTENT_LENGTH") or 200 * 1024 * 1024)
    out: list[UploadedFile] = []
    total = 0
    for fs in storages:
        name = posixpath.basename((fs.filename or "").replace("\\", "/"))
        data = fs.read()
        if name.lower().endswith(".zip") or data[:4] == b"PK\x03\x04":
            found, size = _unzip(name or "upload.zip", data, limit - total)
            out.extend(found)
            total += size
        elif _wanted(name):
            out.append(UploadedFile(name, data))
            total += len(data)
        if len(out) > MAX_FILES:
            fail(413, f"too many files (at most {MAX_FILES} photos)")
    if not any(f.name.lower().endswith(IMAGE_SUFFIXES) for f in out):
        fail(400, "no photos in the upload: send JPEG, PNG or HEIC files, or a zip of them")
    return out


def _unzip(name: str, data: bytes, budget: int) -> tuple[list[UploadedFile], int]:
    """The wanted members of a zip, each refused in one line if it cannot be read.

    Python's zipfile answers damage with many kinds of exception (a bad CRC,
    zlib's own error, EOFError, a negative seek from a lying offset, an
    unknown version): all of them are the upload's fault, a 400, not the
    companion's 500."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except Exception:  # zipfile raises many kinds on bad input
        fail(400, f"{name}: not a readable zip file")
    out: list[UploadedFile] = []
    used = 0
    with archive:
        for info in archive.infolist():
            base = posixpath.basename(info.filename)
            if info.is_dir() or base.startswith(".") or not _wanted(base):
                continue
            used += info.file_size
            if used > budget:
                fail(413, f"{name}: the photos inside are too large")
            if info.flag_bits & 0x1:
                fail(400, f"{name}: {base} is encrypted (send a zip without a password)")
            try:
                out.append(UploadedFile(base, _read_member(archive, info)))
            except Exception as exc:  # as above: damage inside the archive
                fail(400, f"{name}: cannot read {base} ({error_text(exc)})")
    return out, used


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, decompressed a chunk at a time.

    ``ZipFile.read`` inflates a member in one call, whatever its header
    declares: a 300 KB upload whose member claims 100 bytes made 300 MB (and
    then failed its CRC). Read in chunks, zipfile stops at the declared size,
    which the budget has counted."""
    chunks = []
    with archive.open(info) as member:
        while chunk := member.read(_CHUNK):
            chunks.append(chunk)
    return b"".join(chunks)
