"""The LED strip: pixels, brightness and a current budget in front of any backend."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from ..device import Closeable
from .backends import LedBackend, open_led_backend
from .colour import RGB, Frame, as_frame, as_rgb, exact, frame_to_json, scale


def estimate_ma(frame: Sequence[RGB], milliamps_per_channel: float = 20.0) -> float:
    """Estimated draw: each channel draws linearly up to ``milliamps_per_channel`` at 255.

    A full-white WS2812 therefore draws 3 x 20 = 60 mA. The ~1 mA quiescent draw
    per LED is ignored: it does not change with what we show.
    """
    total = sum(r + g + b for r, g, b in frame)
    return float(Fraction(total, 255) * exact(milliamps_per_channel))


class LedStrip(Closeable):
    """``count`` RGB LEDs with brightness and a current budget, shown through a backend.

    ``show()`` first scales every channel by ``brightness``, then, if the frame's
    estimated draw exceeds ``budget_ma``, scales the whole frame by
    ``budget / estimate``, so colours keep their hue and the power supply (or the
    Pi's 5 V pin) is never asked for more than the budget. Channels are floored,
    with exact rational arithmetic, so the estimate of what is sent never exceeds
    the budget.
    """

    def __init__(
        self,
        count: int,
        backend: LedBackend | str | None = None,
        brightness: float = 1.0,
        milliamps_per_channel: float = 20.0,
        budget_ma: float | None = None,
        **backend_kw: Any,
    ) -> None:
        if not isinstance(count, int) or count <= 0:
            raise ValueError(f"count must be a positive int, got {count!r}")
        if milliamps_per_channel <= 0:
            raise ValueError("milliamps_per_channel must be positive")
        if budget_ma is not None and budget_ma < 0:
            raise ValueError("budget_ma must be >= 0")
        self.count = count
        self.milliamps_per_channel = float(milliamps_per_channel)
        self.budget_ma = None if budget_ma is None else float(budget_ma)
        self.brightness = brightness  # validated by the setter
        if backend is None or isinstance(backend, str):
            backend = open_led_backend(backend, count, **backend_kw)
        elif backend_kw:
            raise TypeError("backend keyword arguments need a backend name, not an instance")
        self.backend: LedBackend = backend
        self._pixels: Frame = [(0, 0, 0)] * count
        self.last_output: Frame | None = None
        self.last_scale: float = 1.0
        self.last_estimate_ma: float = 0.0
        self.closed = False

    # -- brightness ---------------------------------------------------------------
    @property
    def brightness(self) -> float:
        return self._brightness

    @brightness.setter
    def brightness(self, value: float) -> None:
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"brightness must be within 0..1, got {value!r}")
        self._brightness = float(value)

    # -- pixels -------------------------------------------------------------------
    def __len__(self) -> int:
        return self.count

    def __getitem__(self, index: int) -> RGB:
        return self._pixels[index]

    def __setitem__(self, index: int, rgb: RGB) -> None:
        if not -self.count <= index < self.count:
            raise IndexError(f"LED {index} out of range 0..{self.count - 1}")
        self._pixels[index] = as_rgb(rgb)

    @property
    def pixels(self) -> Frame:
        """A copy of the requested colours (before brightness and budget)."""
        return list(self._pixels)

    def set_frame(self, frame: Iterable[RGB]) -> None:
        """Replace every pixel; the frame must have exactly ``count`` colours."""
        self._pixels = as_frame(frame, self.count)

    def fill(self, rgb: RGB) -> None:
        self._pixels = [as_rgb(rgb)] * self.count

    def clear(self) -> None:
        self._pixels = [(0, 0, 0)] * self.count

    # -- output -------------------------------------------------------------------
    def output_frame(self, frame: Sequence[RGB] | None = None) -> Frame:
        """What show() would send for ``frame`` (the current pixels by default)."""
        return self._scaled(self._pixels if frame is None else as_frame(frame, self.count))[0]

    def show(self, frame: Iterable[RGB] | None = None) -> Frame:
        """Send the pixels (optionally replacing them first); returns the frame sent."""
        if self.closed:
            raise RuntimeError("LED strip is closed")
        if frame is not None:
            self.set_frame(frame)
        out, factor = self._scaled(self._pixels)
        self.backend.show(out)
        self.last_output = out
        self.last_scale = float(factor)
        self.last_estimate_ma = estimate_ma(out, self.milliamps_per_channel)
        return out

    def _scaled(self, pixels: Sequence[RGB]) -> tuple[Frame, Fraction]:
        bright = exact(self._brightness)
        out = [scale(px, bright) for px in pixels] if bright != 1 else list(pixels)
        factor = Fraction(1)
        if self.budget_ma is not None:
            total = sum(r + g + b for r, g, b in out)  # in channel units (255 = full)
            budget_units = exact(self.budget_ma) * 255 / exact(self.milliamps_per_channel)
            if total > budget_units:
                factor = budget_units / total
                out = [scale(px, factor) for px in out]
        return out, bright * factor

    def to_json(self) -> dict[str, Any]:
        """What the strip shows now, JSON-able, for the web page (any backend)."""
        shown = self.last_output if self.last_output is not None else [(0, 0, 0)] * self.count
        return {
            "backend": getattr(self.backend, "name", type(self.backend).__name__),
            "count": self.count,
            "brightness": self.brightness,
            "budget_ma": self.budget_ma,
            "estimate_ma": round(self.last_estimate_ma, 3),
            "pixels": frame_to_json(shown),
        }

    # -- lifetime -----------------------------------------------------------------
    def close(self, blank: bool = True) -> None:
        """Turn the LEDs off (unless ``blank=False``) and release the backend."""
        if self.closed:
            return
        try:
            if blank:
                self.show([(0, 0, 0)] * self.count)
        finally:
            self.closed = True
            self.backend.close()

