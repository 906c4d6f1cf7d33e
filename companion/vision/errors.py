"""Vision errors: ValueError subclasses so the CLI prints them as one line."""

from __future__ import annotations


class VisionError(ValueError):
    """Any input the reader cannot use."""


class BoardNotFoundError(VisionError):
    """No (or too few) board markers in the photo."""


class ImageReadError(VisionError):
    """Missing, unreadable, truncated or non-image file."""


class TooSmallError(ImageReadError):
    """A board shown too small for its sites to be read (a thumbnail, a far shot)."""


class MirroredError(ImageReadError):
    """A camera's pictures mirrored (its markers decode only when flipped back)."""


class CameraFileError(VisionError):
    """A camera intrinsics file that cannot be used."""
