"""Exact SPI byte patterns for WS2812 at 6.4 MHz (one SPI byte per LED bit)."""

from __future__ import annotations

import pytest

from hardware.leds.spi import (
    BYTES_PER_LED,
    ONE,
    RESET_BYTES,
    ZERO,
    decode_ws2812_spi,
    encode_ws2812_spi,
)

ZB, OB = 0xC0, 0xF8


def test_bit_codes_are_the_documented_bytes() -> None:
    assert (ZERO, ONE) == (0b11000000, 0b11111000) == (ZB, OB)
    assert RESET_BYTES == 240  # 300 us at 1.25 us per byte


def test_red_is_sent_green_red_blue() -> None:
    data = encode_ws2812_spi([(255, 0, 0)])
    assert data == bytes([ZB] * 8 + [OB] * 8 + [ZB] * 8) + bytes(240)


def test_green_and_blue_and_rgb_order() -> None:
    assert encode_ws2812_spi([(0, 255, 0)], reset=False) == bytes([OB] * 8 + [ZB] * 16)
    assert encode_ws2812_spi([(0, 0, 255)], reset=False) == bytes([ZB] * 16 + [OB] * 8)
    assert encode_ws2812_spi([(255, 0, 0)], order="RGB", reset=False) == bytes([OB] * 8 + [ZB] * 16)


def test_bits_are_msb_first() -> None:
    # 0xA5 = 1010 0101 in the green byte; 0x01 in red; 0x80 in blue.
    data = encode_ws2812_spi([(0x01, 0xA5, 0x80)], reset=False)
    assert data == bytes(
        [OB, ZB, OB, ZB, ZB, OB, ZB, OB]
        + [ZB, ZB, ZB, ZB, ZB, ZB, ZB, OB]
        + [OB, ZB, ZB, ZB, ZB, ZB, ZB, ZB]
    )


def test_two_leds_then_reset() -> None:
    data = encode_ws2812_spi([(0, 0, 0), (255, 255, 255)])
    assert len(data) == 2 * BYTES_PER_LED + RESET_BYTES
    assert data[:24] == bytes([ZB] * 24)
    assert data[24:48] == bytes([OB] * 24)
    assert data[48:] == bytes(240)


def test_round_trip_and_bad_input() -> None:
    frame = [(1, 2, 3), (200, 100, 50), (255, 0, 128)]
    assert decode_ws2812_spi(encode_ws2812_spi(frame)) == frame
    with pytest.raises(ValueError, match="colour order"):
        encode_ws2812_spi(frame, order="XYZ")
    with pytest.raises(ValueError, match="out of range"):
        encode_ws2812_spi([(256, 0, 0)])
