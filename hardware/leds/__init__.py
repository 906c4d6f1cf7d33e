"""LED strip, backends (spi, ws281x, fake), LED maps and guidance patterns.

Typical use by the controller::

    from hardware.leds import LedStrip, LedMap, patterns
    ledmap = LedMap.load(path)            # or serpentine() / edges()
    strip = LedStrip(ledmap.count, budget_ma=1500, brightness=0.6)
    strip.show(patterns.card_guidance(ledmap, ok, dim, (190, 35, 40), "S"))
"""

from __future__ import annotations

from . import patterns
from .backends import (
    LED_BACKEND_ENV,
    LED_BACKENDS,
    FakeBackend,
    LedBackend,
    SpiBackend,
    Ws281xBackend,
    default_led_backend,
    open_led_backend,
    render_frame,
    render_png,
)
from .colour import RGB, frame_to_json, to_hex
from .ledmap import (
    FORMAT,
    SEATS,
    SITES,
    LedMap,
    builtin,
    edges,
    serpentine,
    site_coords,
    site_index,
)
from .spi import decode_ws2812_spi, encode_ws2812_spi
from .strip import LedStrip, estimate_ma

__all__ = [
    "FORMAT",
    "LED_BACKENDS",
    "LED_BACKEND_ENV",
    "RGB",
    "SEATS",
    "SITES",
    "FakeBackend",
    "LedBackend",
    "LedMap",
    "LedStrip",
    "SpiBackend",
    "Ws281xBackend",
    "builtin",
    "decode_ws2812_spi",
    "default_led_backend",
    "edges",
    "encode_ws2812_spi",
    "estimate_ma",
    "frame_to_json",
    "open_led_backend",
    "patterns",
    "render_frame",
    "render_png",
    "serpentine",
    "site_coords",
    "site_index",
    "to_hex",
]
