"""Input safety for uploads: zips of phone photos and the images themselves (the
images' checks live in :mod:`companion.imagefiles`, where the reader uses them too).

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
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from companion.imagefiles import (
    DEFAULT_MAX_PIXELS,
    BadImageError,
    UnsafeInputError,
    decode_image_safely,
    error_text,
    image_kind,
    image_size,
)
from companion.photos import IMAGE_SUFFIXES, is_photo_name

_CHUNK = 1 << 16


class ArchiveError(UnsafeInputError):
    """A zip that is malformed, too big, or tries to write outside its folder."""


class Extracted(list[Path]):
    """The extracted files (a list of paths) plus ``skipped``: archive names left out."""

    def __init__(self, paths: list[Path], skipped: list[str], renamed: bool = False) -> None:
        super().__init__(paths)
        self.skipped = skipped
        #: images of one name in several folders were named with their folders
        #: (``flatten``): photos of more than one camera
        self.renamed = renamed


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
    ``flatten``: every file lands in ``dest_dir`` itself; images whose names
    clash there (two phones' folders, each with its IMG_0001.jpg) are named
    with their folders (``phone2-IMG_0001.jpg``).
    """
    if max_files < 0 or max_total_bytes < 0:
        raise ValueError("limits cannot be negative")
    with _open_zip(source) as zf:
        try:
            infos = zf.infolist()
        except Exception as exc:  # zipfile raises many kinds on bad input
            raise ArchiveError(f"not a readable zip archive ({error_text(exc)})") from None
        plan, skipped, clashing = _plan(infos, max_files, max_total_bytes, keep_names, flatten)
        out = _extract(zf, plan, skipped, Path(dest_dir), max_total_bytes)
        out.renamed = bool(clashing)
        return out


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
        raise ArchiveError(f"not a readable zip archive ({error_text(exc)})") from None


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


def is_image_name(parts: Sequence[str]) -> bool:
    if any(p.startswith(".") or p == "__MACOSX" for p in parts[:-1]):
        return False  # macOS resource forks and hidden folders
    return is_photo_name(parts[-1])


def _is_dir(info: zipfile.ZipInfo) -> bool:
    """ZipInfo.is_dir, without its IndexError on an empty (crafted) name."""
    return info.filename.endswith("/")


def _plan(infos: list[zipfile.ZipInfo], max_files: int, max_total_bytes: int,
          keep_names: Collection[str], flatten: bool,
          ) -> tuple[list[tuple[zipfile.ZipInfo, str, bool]], list[str], set[str]]:
    """What to extract and where, the names skipped, and (``flatten``) the image
    names that clash (:func:`_clashing_images`: those images named with their
    folders)."""
    files = [i for i in infos if not _is_dir(i)]
    if len(files) > max_files:
        raise ArchiveError(f"refused: {len(files)} files in the archive (at most {max_files})")
    if len(infos) - len(files) > max_files:
        raise ArchiveError(f"refused: {len(infos) - len(files)} folders in the archive")
    plan: list[tuple[zipfile.ZipInfo, str, bool]] = []
    skipped: list[str] = []
    targets: set[str] = set()
    declared = 0
    clashing = _clashing_images(infos) if flatten else set()
    for info in infos:
        parts = _member_parts(info.filename)
        mode = (info.external_attr >> 16) & 0xFFFF
        if stat.S_ISLNK(mode):
            raise ArchiveError(f"refused: {info.filename!r} is a symbolic link")
        if _is_dir(info) or not parts:
            continue
        if info.flag_bits & 0x1:
            raise ArchiveError(f"refused: {info.filename!r} is encrypted")
        is_image = is_image_name(parts)
        if not is_image and parts[-1] not in keep_names:
            skipped.append(info.filename)
            continue
        if not flatten:
            rel = "/".join(parts)
        else:
            rel = flat_name(parts, clashing) if is_image else parts[-1]
        if rel.casefold() in targets:
            raise ArchiveError(f"refused: two files would be named {rel!r}")
        targets.add(rel.casefold())
        declared += max(0, info.file_size)
        if declared > max_total_bytes:
            raise ArchiveError(f"refused: the archive unpacks to more than {max_total_bytes} "
                               "bytes")
        plan.append((info, rel, is_image))
    return plan, skipped, clashing


def _clashing_images(infos: list[zipfile.ZipInfo]) -> set[str]:
    """The (casefolded) names that more than one image of the archive has, in any
    of its folders."""
    members = (_member_parts(info.filename) for info in infos if not _is_dir(info))
    return clashing_names(parts for parts in members if parts and is_image_name(parts))


def clashing_names(photos: Iterable[Sequence[str]]) -> set[str]:
    """Of photos given by their path parts, the (casefolded) names more than one has:
    two phones' albums, each with its IMG_0001.jpg."""
    seen: set[str] = set()
    twice: set[str] = set()
    for parts in photos:
        name = parts[-1].casefold()
        (twice if name in seen else seen).add(name)
    return twice


def flat_name(parts: Sequence[str], clashing: Collection[str]) -> str:
    """A photo's name in one folder of all (a zip's, or a folder's albums, flattened):
    its own, or with its folders joined by "-" (``phone 2-IMG_0001.jpg``) where
    another photo has the same name (:func:`clashing_names`)."""
    return "-".join(parts) if parts[-1].casefold() in clashing else parts[-1]


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
                                       f"({error_text(exc)})") from None
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


__all__ = [
    "DEFAULT_MAX_PIXELS", "IMAGE_SUFFIXES", "ArchiveError", "BadImageError", "Extracted",
    "UnsafeInputError", "decode_image_safely", "image_kind", "image_size", "safe_extract_zip",
]
