"""The one versioned calibration file of a table."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from companion.rules import jsonkeys

FORMAT = "companion-calibration/1"
SECTIONS = ("camera", "board", "colors", "leds", "exposure")


class CalibrationFileError(ValueError):
    """A calibration file that cannot be used; the message says why in one line."""


def empty() -> dict[str, Any]:
    return {"format": FORMAT, "profile": "reference-board"}


def load(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if not p.exists():
        return empty()
    if not p.is_file():  # a folder, or a pipe that would wait for a writer
        raise CalibrationFileError(f"{p}: not a calibration file (not a regular file)")
    try:
        data = jsonkeys.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationFileError(f"{p}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise CalibrationFileError(f"{p}: malformed JSON at line {exc.lineno}") from None
    except jsonkeys.DuplicateKeyError as exc:
        raise CalibrationFileError(f"{p}: malformed JSON: {exc}") from None
    except RecursionError:
        raise CalibrationFileError(f"{p}: malformed JSON: nested too deeply") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CalibrationFileError(f"{p}: not a calibration file (expected format {FORMAT})")
    unknown = set(data) - set(SECTIONS) - {"format", "profile", "updated"}
    if unknown:
        raise CalibrationFileError(f"{p}: unknown sections {sorted(unknown)}")
    return data


def camera_intrinsics(data: dict[str, Any], path: str | Path) -> Any:
    """The calibrated camera of a loaded file (``load(path)``) as intrinsics, None
    when it has none; checked once, so a malformed section stops the caller with
    one line instead of failing every frame it is read with."""
    camera = data.get("camera")
    if camera is None:
        return None
    from companion.vision.geometry import Intrinsics

    try:
        return Intrinsics.from_json(camera)
    except ValueError as exc:
        raise CalibrationFileError(f"{path}: camera: {exc}") from None


def save(path: str | Path, data: dict[str, Any]) -> None:
    """Write atomically: a power cut leaves the old file or the new one, never half."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, p)


def update(path: str | Path, section: str, value: Any) -> dict[str, Any]:
    if section not in SECTIONS:
        raise CalibrationFileError(f"unknown calibration section {section!r}")
    data = load(path)
    data[section] = value
    save(path, data)
    return data
