"""Camera reading of the board: pose from markers, towers per site, played cards.

Pure functions over numpy images (BGR), thresholds in ``config.json``, and
results as rules-engine values. Entry points: :func:`read_image` and
:func:`read_paths` (``companion read``).
"""

from companion.vision.errors import (
    BoardNotFoundError,
    CameraFileError,
    ImageReadError,
    MirroredError,
    TooSmallError,
    VisionError,
)
from companion.vision.reader import Reading, read_image, read_paths

__all__ = ["BoardNotFoundError", "CameraFileError", "ImageReadError", "MirroredError", "Reading",
           "TooSmallError", "VisionError", "read_image", "read_paths"]
