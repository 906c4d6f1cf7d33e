"""Vision errors: ValueError subclasses so the CLI prints them as one line."""

from __future__ import annotations


class VisionError(ValueError):
    """Any input the reader cannot use."""


class BoardNotFoundError(VisionError):
    """No (or too few) board markers in the photo."""


class ImageReadError(VisionError):
    """Missing, unreadable, truncated or non-image file."""


class CameraFileError(VisionError):
    """A camera intrinsics file that cannot be used."""
