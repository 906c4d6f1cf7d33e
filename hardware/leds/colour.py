"""RGB values and frames as plain tuples, so patterns stay pure and JSON-friendly."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

RGB = tuple[int, int, int]
Frame = list[RGB]

BLACK: RGB = (0, 0, 0)
WHITE: RGB = (255, 255, 255)
RED: RGB = (255, 0, 0)


def as_rgb(value: Any) -> RGB:
    """Validate one colour; a clear error beats a strip silently showing garbage."""
    try:
        r, g, b = value
    except (TypeError, ValueError):
        raise ValueError(f"colour must be (r, g, b), got {value!r}") from None
    out = []
    for channel in (r, g, b):
        if isinstance(channel, bool) or not isinstance(channel, int) or not 0 <= channel <= 255:
            raise ValueError(f"colour channels must be ints 0..255, got {value!r}")
        out.append(channel)
    return (out[0], out[1], out[2])


def as_frame(frame: Iterable[Any], count: int | None = None) -> Frame:
    """Validate a whole frame (and its length when ``count`` is given)."""
    out = [as_rgb(px) for px in frame]
    if count is not None and len(out) != count:
        raise ValueError(f"frame has {len(out)} pixels, the strip has {count}")
    return out


def exact(value: float) -> Fraction:
    """A float as the decimal the caller meant (0.7 -> 7/10), so scaling is exact."""
    return Fraction(value).limit_denominator(1_000_000)


def scale(rgb: RGB, factor: float | Fraction) -> RGB:
    """Scale a colour, flooring each channel so scaling never adds light or current."""
    f = factor if isinstance(factor, Fraction) else exact(factor)
    if f < 0:
        raise ValueError("scale factor must be >= 0")
    return (
        min(255, int(rgb[0] * f)),
        min(255, int(rgb[1] * f)),
        min(255, int(rgb[2] * f)),
    )


def to_hex(rgb: RGB) -> str:
    """The colour as #rrggbb, for the web page."""
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def frame_to_json(frame: Sequence[RGB]) -> list[str]:
    """A frame as a JSON-able list of "#rrggbb" strings, LED index order."""
    return [to_hex(px) for px in frame]
