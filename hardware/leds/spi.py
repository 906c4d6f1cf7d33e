"""WS2812 ("NeoPixel") data as SPI bytes, so the strip runs from /dev/spidev0.0 (GPIO10).

Why SPI: it needs no root and no /dev/mem, and works on the Raspberry Pi 5, where
rpi_ws281x's PWM/DMA driver does not.

Encoding: one SPI byte per WS2812 bit at 6.4 MHz (156.25 ns per SPI bit, so one
byte lasts 1.25 us = one WS2812 bit at 800 kHz):

* 0 bit -> ``0b11000000`` (0xC0): 312 ns high, 938 ns low;
* 1 bit -> ``0b11111000`` (0xF8): 781 ns high, 469 ns low;

both within the WS2812/WS2812B tolerances. We prefer this over the denser
3-bits-at-2.4-MHz code because every LED bit then starts high and ends low inside
one byte: any idle gap the SPI controller leaves between bytes only lengthens a
low phase, which the LEDs tolerate, instead of stretching a high pulse.

Bytes are sent MSB first, colours in the strip's order (GRB for WS2812B), and the
frame ends with :data:`RESET_BYTES` zero bytes (300 us low) so the LEDs latch even
for the newer WS2812B parts that need 280 us. The backend sends those as a transfer
of their own (:data:`RESET`): the latch is only the line held low, every LED bit's
byte ends low and MOSI stays low between transfers, so the pause before it only
makes the low time longer, and the LED data alone has to fit spidev's buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

from .colour import RGB

SPI_HZ = 6_400_000
ZERO = 0b11000000
ONE = 0b11111000
RESET_BYTES = 240  # 240 bytes x 1.25 us = 300 us of low line
BYTES_PER_LED = 24

#: the latch, sent after each frame's data: 300 us of low line
RESET = bytes(RESET_BYTES)

ORDERS = ("RGB", "RBG", "GRB", "GBR", "BRG", "BGR")


def check_order(order: str) -> str:
    """The colour order in capitals (GRB for a WS2812B), or ValueError naming the six."""
    upper = str(order).upper()
    if upper not in ORDERS:
        raise ValueError(f"colour order {order!r}: expected one of {', '.join(ORDERS)}")
    return upper


def _byte_pattern(value: int) -> bytes:
    return bytes(ONE if value & (0x80 >> bit) else ZERO for bit in range(8))


_TABLE: tuple[bytes, ...] = tuple(_byte_pattern(v) for v in range(256))


def encode_ws2812_spi(frame: Sequence[RGB], order: str = "GRB", reset: bool = True) -> bytes:
    """The SPI byte stream for one frame (24 bytes per LED, then the reset gap)."""
    order = check_order(order)
    picks = ["RGB".index(ch) for ch in order]
    out = bytearray()
    for px in frame:
        for pick in picks:
            value = px[pick]
            if not 0 <= value <= 255:
                raise ValueError(f"colour channel out of range in {px!r}")
            out += _TABLE[value]
    if reset:
        out += RESET
    return bytes(out)


def decode_ws2812_spi(data: bytes, order: str = "GRB") -> list[RGB]:
    """Inverse of :func:`encode_ws2812_spi` (trailing zero bytes ignored); for tests and tools."""
    order = order.upper()
    body = bytes(data).rstrip(b"\x00")
    if len(body) % BYTES_PER_LED:
        raise ValueError("SPI data length is not a whole number of LEDs")
    frame: list[RGB] = []
    for led in range(len(body) // BYTES_PER_LED):
        chunk = body[led * BYTES_PER_LED : (led + 1) * BYTES_PER_LED]
        values: dict[str, int] = {}
        for c, ch in enumerate(order):
            value = 0
            for b in chunk[c * 8 : (c + 1) * 8]:
                if b not in (ZERO, ONE):
                    raise ValueError(f"byte 0x{b:02x} is not a WS2812 bit code")
                value = (value << 1) | (b == ONE)
            values[ch] = value
        frame.append((values["R"], values["G"], values["B"]))
    return frame
