"""Camera reading of the board: pose from markers, towers per site, played cards.

Pure functions over numpy images (BGR), thresholds in ``config.json``, and
results as rules-engine values. Entry points: :func:`read_image` and
:func:`read_paths` (``companion read``).

Names are imported lazily: the CLI imports ``companion.vision.commands`` on every
run, and ``companion score`` should not pay for NumPy, OpenCV and the reader
(about 0.4 s on a desktop, seconds on a Pi).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from companion.vision.errors import (
        BoardNotFoundError,
        CameraFileError,
        ImageReadError,
        MirroredError,
        TooSmallError,
        VisionError,
    )
    from companion.vision.reader import Reading, read_image, read_paths

#: where each public name lives
_HOMES = {"BoardNotFoundError": "errors", "CameraFileError": "errors",
          "ImageReadError": "errors", "MirroredError": "errors", "TooSmallError": "errors",
          "VisionError": "errors", "Reading": "reader", "read_image": "reader",
          "read_paths": "reader"}

__all__ = ["BoardNotFoundError", "CameraFileError", "ImageReadError", "MirroredError", "Reading",
           "TooSmallError", "VisionError", "read_image", "read_paths"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'companion.vision' has no attribute {name!r}")
    return getattr(importlib.import_module(f"companion.vision.{home}"), name)
