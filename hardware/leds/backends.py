"""Where LED frames go: the SPI bus (default on a Pi), rpi_ws281x (root, not Pi 5), or a fake.

A backend only pushes finished frames; brightness and the current budget are the
strip's job (:class:`hardware.leds.LedStrip`), so every backend shows the same bytes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import cv2
import numpy as np

from ..errors import LedBackendUnavailable
from ..host import MODEL_PATHS, board_model, default_backend, is_pi5
from .colour import RGB, as_frame, as_rgb, frame_to_json
from .spi import BYTES_PER_LED, RESET, SPI_HZ, check_order, encode_ws2812_spi

LED_BACKEND_ENV = "COMPANION_LED_BACKEND"
LED_BACKENDS = ("spi", "ws281x", "fake")

PI5_WS281X_ADVICE = "rpi_ws281x does not support the Raspberry Pi 5: use the spi backend"
SPI_ENABLE_ADVICE = (
    "enable SPI with dtparam=spi=on in /boot/firmware/config.txt "
    "(or sudo raspi-config nonint do_spi 0) and reboot"
)
SPI_GROUP_ADVICE = "user not in spi group: sudo usermod -aG spi USER, then log in again"
WS281X_ROOT_ADVICE = (
    "rpi_ws281x needs root for /dev/mem: use the spi backend, or install "
    "systemd/companion-ws281x.conf as a drop-in for the service"
)


@runtime_checkable
class LedBackend(Protocol):
    """What LedStrip needs from a backend."""

    name: str

    def show(self, frame: Sequence[RGB]) -> None:
        """Push one finished frame (already scaled) to the LEDs."""

    def close(self) -> None:
        """Release the device."""


# --------------------------------------------------------------------------------------
# Fake
# --------------------------------------------------------------------------------------
class FakeBackend:
    """Records every frame shown, for tests, the demo page and `make demo` without a strip."""

    name = "fake"

    def __init__(self, count: int | None = None) -> None:
        self.count = count
        self.frames: list[tuple[RGB, ...]] = []
        self.closed = False
        #: raised by show() while set: a strip that fails (its SPI device gone, say)
        self.failure: BaseException | None = None

    def show(self, frame: Sequence[RGB]) -> None:
        if self.closed:
            raise RuntimeError("fake LED backend is closed")
        if self.failure is not None:
            raise self.failure
        self.frames.append(tuple(as_frame(frame, self.count)))

    def close(self) -> None:
        self.closed = True

    @property
    def last_frame(self) -> tuple[RGB, ...] | None:
        """The frame on the strip now, or None if nothing was shown yet."""
        return self.frames[-1] if self.frames else None

    def lit(self, frame: Sequence[RGB] | None = None) -> dict[int, RGB]:
        """{led index: colour} of the non-black LEDs (of the last frame by default)."""
        pixels = self._pick(frame)
        return {i: px for i, px in enumerate(pixels) if px != (0, 0, 0)}

    def assert_frame(self, expected: Sequence[RGB] | Mapping[int, RGB], index: int = -1) -> None:
        """Assert frame ``index`` (the last by default) equals ``expected``.

        ``expected`` is a full frame, or a {led: colour} mapping meaning "these LEDs
        in these colours and every other LED black".
        """
        if not self.frames:
            raise AssertionError("no frame was shown")
        actual = self.frames[index]
        if isinstance(expected, Mapping):
            want: list[RGB] = [(0, 0, 0)] * len(actual)
            for led, rgb in expected.items():
                want[led] = as_rgb(rgb)
        else:
            want = [as_rgb(px) for px in expected]
        if len(want) != len(actual):
            raise AssertionError(f"frame has {len(actual)} LEDs, expected {len(want)}")
        diffs = [(i, a, w) for i, (a, w) in enumerate(zip(actual, want, strict=True)) if a != w]
        if diffs:
            shown = "; ".join(f"LED {i}: got {a}, expected {w}" for i, a, w in diffs[:8])
            more = f" (and {len(diffs) - 8} more)" if len(diffs) > 8 else ""
            raise AssertionError(f"{len(diffs)} LEDs differ: {shown}{more}")

    def to_json(self, frame: Sequence[RGB] | None = None) -> dict[str, Any]:
        """JSON-able view of the strip for the web page."""
        pixels = self._pick(frame)
        return {
            "backend": self.name,
            "count": len(pixels),
            "frames_shown": len(self.frames),
            "pixels": frame_to_json(pixels),
        }

    def render(self, frame: Sequence[RGB] | None = None, **kw: Any) -> np.ndarray:
        """The strip as a BGR image (see :func:`render_frame`)."""
        return render_frame(self._pick(frame), **kw)

    def render_png(self, frame: Sequence[RGB] | None = None, **kw: Any) -> bytes:
        """The strip as PNG bytes, for the page or a debug dump."""
        return render_png(self._pick(frame), **kw)

    def _pick(self, frame: Sequence[RGB] | None) -> list[RGB]:
        if frame is not None:
            return as_frame(frame)
        if self.frames:
            return list(self.frames[-1])
        return [(0, 0, 0)] * (self.count or 0)


def render_frame(
    frame: Sequence[RGB], *, led_px: int = 16, gap: int = 4, columns: int | None = None
) -> np.ndarray:
    """Draw LEDs as dots on dark grey, ``columns`` per row (all in one row by default)."""
    pixels = as_frame(frame)
    n = max(1, len(pixels))
    cols = max(1, min(columns or n, n))
    rows = (n + cols - 1) // cols
    cell = led_px + gap
    image = np.full((rows * cell + gap, cols * cell + gap, 3), 32, dtype=np.uint8)
    radius = max(1, led_px // 2)
    for i, (r, g, b) in enumerate(pixels):
        row, col = divmod(i, cols)
        centre = (gap + col * cell + radius, gap + row * cell + radius)
        cv2.circle(image, centre, radius, (b, g, r), -1, cv2.LINE_8)
    return image


def render_png(frame: Sequence[RGB], **kw: Any) -> bytes:
    """PNG bytes of :func:`render_frame`."""
    ok, buf = cv2.imencode(".png", render_frame(frame, **kw))
    if not ok:
        raise RuntimeError("PNG encoding failed")
    return bytes(buf.tobytes())


# --------------------------------------------------------------------------------------
# SPI
# --------------------------------------------------------------------------------------
class SpiBackend:
    """WS2812 over SPI MOSI (GPIO10) via spidev; unprivileged (spi group) and Pi 5 friendly.

    A frame's LED data must fit one SPI transfer, because splitting it leaves a gap
    inside it the LEDs may take as a reset: 24 bytes per LED against spidev's
    ``bufsiz`` (4096 by default, so 170 LEDs). The latch (the line low for at least
    280 us) follows as a transfer of its own, 240 zero bytes: each LED bit's byte
    ends low and MOSI idles low between transfers, so the gap before it only adds
    to the low time. For longer strips add ``spidev.bufsiz=65536`` to
    /boot/firmware/cmdline.txt.

    On a Pi 3/4 the SPI clock follows the core clock: set ``core_freq=250`` (Pi 3)
    or ``core_freq_min=500`` (Pi 4) in config.txt so the bit timing does not drift.
    The Pi 5's RP1 SPI clock is independent of the CPU clock.

    ``module`` lets tests pass a stand-in for the spidev module.
    """

    name = "spi"

    def __init__(
        self,
        count: int,
        *,
        bus: int = 0,
        device: int = 0,
        speed_hz: int = SPI_HZ,
        order: str = "GRB",
        dev_dir: str = "/dev",
        bufsiz_path: str = "/sys/module/spidev/parameters/bufsiz",
        module: Any = None,
    ) -> None:
        self.count = count
        # checked first: a wrong order is the builder's typo, whatever the machine
        self.order = check_order(order)
        self.path = os.path.join(dev_dir, f"spidev{bus}.{device}")
        if module is None:
            try:
                import spidev  # type: ignore[import-not-found]
            except ImportError as exc:
                raise LedBackendUnavailable(
                    f"spidev not importable: {exc}", "pip install spidev (the [pi] extra)"
                ) from exc
            module = spidev
        if not os.path.exists(self.path):
            raise LedBackendUnavailable(f"no {self.path}", SPI_ENABLE_ADVICE)
        if not os.access(self.path, os.R_OK | os.W_OK):
            raise LedBackendUnavailable(f"cannot open {self.path}", SPI_GROUP_ADVICE)
        self.bufsiz = _read_int(bufsiz_path, 4096)
        needed = count * BYTES_PER_LED  # the data's one transfer (the latch is its own)
        if needed > self.bufsiz:
            raise LedBackendUnavailable(
                f"{count} LEDs need {needed} SPI bytes per frame, spidev bufsiz is {self.bufsiz}",
                "add spidev.bufsiz=65536 to /boot/firmware/cmdline.txt and reboot",
            )
        self._spi: Any = module.SpiDev()
        self._spi.open(bus, device)
        try:
            self._spi.mode = 0
            self._spi.max_speed_hz = int(speed_hz)
        except Exception:
            self._spi.close()
            raise
        self.closed = False

    def show(self, frame: Sequence[RGB]) -> None:
        self._spi.writebytes2(encode_ws2812_spi(as_frame(frame, self.count), self.order,
                                                reset=False))
        self._spi.writebytes2(RESET)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._spi.close()


def _read_int(path: str, default: int) -> int:
    try:
        with open(path) as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return default


# --------------------------------------------------------------------------------------
# rpi_ws281x (PWM/PCM through /dev/mem: root, and not on the Pi 5)
# --------------------------------------------------------------------------------------
class Ws281xBackend:
    """The rpi_ws281x driver, for builds wired to GPIO18 (PWM) or GPIO21 (PCM) before SPI.

    Needs root (the service then runs with systemd/companion-ws281x.conf). Refuses
    to start on a Pi 5, which rpi_ws281x does not support. The PixelStrip is created
    here and nowhere else: rpi_ws281x crashes at interpreter exit off a Pi, so tests
    only ever pass a stand-in ``module``.
    """

    name = "ws281x"

    def __init__(
        self,
        count: int,
        *,
        pin: int = 18,
        freq_hz: int = 800_000,
        dma: int = 10,
        invert: bool = False,
        channel: int | None = None,
        model_paths: Sequence[str] = MODEL_PATHS,
        require_root: bool = True,
        module: Any = None,
    ) -> None:
        self.count = count
        if is_pi5(board_model(model_paths)):
            raise LedBackendUnavailable(PI5_WS281X_ADVICE)
        if module is None:
            try:
                import rpi_ws281x  # type: ignore[import-not-found]
            except ImportError as exc:
                raise LedBackendUnavailable(
                    f"rpi_ws281x not importable: {exc}",
                    "pip install rpi-ws281x (the [pi] extra), or use the spi backend",
                ) from exc
            module = rpi_ws281x
        if require_root and os.geteuid() != 0:
            raise LedBackendUnavailable("rpi_ws281x needs root", WS281X_ROOT_ADVICE)
        self._module = module
        if channel is None:
            channel = 1 if pin in (13, 19, 41, 45, 53) else 0  # PWM1 pins use channel 1
        self._strip: Any = module.PixelStrip(count, pin, freq_hz, dma, invert, 255, channel)
        self._strip.begin()
        self.closed = False

    def show(self, frame: Sequence[RGB]) -> None:
        for i, (r, g, b) in enumerate(as_frame(frame, self.count)):
            self._strip.setPixelColor(i, self._module.Color(r, g, b))
        self._strip.show()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            cleanup = getattr(self._strip, "_cleanup", None)
            if callable(cleanup):
                cleanup()


# --------------------------------------------------------------------------------------
# Choosing a backend
# --------------------------------------------------------------------------------------
def default_led_backend(environ: Mapping[str, str] | None = None) -> str:
    """``COMPANION_LED_BACKEND`` if set; else "spi" on the Pi backend, "fake" otherwise."""
    env = os.environ if environ is None else environ
    name = env.get(LED_BACKEND_ENV, "").strip().lower()
    if name:
        if name not in LED_BACKENDS:
            raise ValueError(
                f"{LED_BACKEND_ENV}={name!r}: expected one of {', '.join(LED_BACKENDS)}"
            )
        return name
    return "spi" if default_backend(env) == "pi" else "fake"


def open_led_backend(name: str | None, count: int, **kw: Any) -> LedBackend:
    """A backend by name ("spi", "ws281x", "fake"); None picks :func:`default_led_backend`."""
    name = (name or default_led_backend()).lower()
    if name == "fake":
        return FakeBackend(count)
    if name == "spi":
        return SpiBackend(count, **kw)
    if name == "ws281x":
        return Ws281xBackend(count, **kw)
    raise ValueError(f"unknown LED backend {name!r}: expected one of {', '.join(LED_BACKENDS)}")
