"""The SPI and rpi_ws281x backends on stand-in modules (never a real PixelStrip or device)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from hardware.errors import LedBackendUnavailable
from hardware.leds import (
    FakeBackend,
    LedStrip,
    SpiBackend,
    Ws281xBackend,
    decode_ws2812_spi,
    default_led_backend,
    encode_ws2812_spi,
    open_led_backend,
)


class FakeSpiDev:
    instances: list[FakeSpiDev] = []

    def __init__(self) -> None:
        self.opened: tuple[int, int] | None = None
        self.mode: int | None = None
        self.max_speed_hz: int | None = None
        self.writes: list[bytes] = []
        self.closed = False
        FakeSpiDev.instances.append(self)

    def open(self, bus: int, device: int) -> None:
        self.opened = (bus, device)

    def writebytes2(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True


class FakeSpidevModule:
    SpiDev = FakeSpiDev


@pytest.fixture
def spi_dev(tmp_path: Path) -> Path:
    (tmp_path / "spidev0.0").write_bytes(b"")
    (tmp_path / "bufsiz").write_text("4096\n")
    return tmp_path


def test_spi_backend_writes_exact_bytes(spi_dev: Path) -> None:
    FakeSpiDev.instances.clear()
    backend = SpiBackend(
        2, dev_dir=str(spi_dev), bufsiz_path=str(spi_dev / "bufsiz"), module=FakeSpidevModule
    )
    spi = FakeSpiDev.instances[0]
    assert spi.opened == (0, 0) and spi.mode == 0 and spi.max_speed_hz == 6_400_000
    strip = LedStrip(2, backend=backend)
    strip.show([(255, 0, 0), (0, 0, 0)])
    # the LED data, then the latch (300 us of low line) as a transfer of its own
    assert spi.writes == [encode_ws2812_spi([(255, 0, 0), (0, 0, 0)], reset=False), bytes(240)]
    assert spi.writes[0][:24] == bytes([0xC0] * 8 + [0xF8] * 8 + [0xC0] * 8)
    strip.close()
    assert spi.writes[-2:] == [encode_ws2812_spi([(0, 0, 0)] * 2, reset=False), bytes(240)]
    assert spi.closed


def test_spi_backend_drives_170_leds_in_spidevs_default_buffer(spi_dev: Path) -> None:
    """The 240 latch bytes were counted into the 4096-byte transfer: 160 LEDs at most.
    Every LED bit's byte ends low (MOSI idles low after it), so the latch as a transfer
    of its own is the same low line, and the data alone fits 170 LEDs."""
    FakeSpiDev.instances.clear()
    backend = SpiBackend(
        170, dev_dir=str(spi_dev), bufsiz_path=str(spi_dev / "bufsiz"), module=FakeSpidevModule
    )
    frame = [(i, 255 - i, i // 2) for i in range(170)]
    backend.show(frame)
    data, latch = FakeSpiDev.instances[0].writes
    assert len(data) == 4080 and data[-1] & 1 == 0  # its last bit is low
    assert decode_ws2812_spi(data) == frame
    assert latch == bytes(240)
    with pytest.raises(LedBackendUnavailable) as info:
        SpiBackend(
            171, dev_dir=str(spi_dev), bufsiz_path=str(spi_dev / "bufsiz"), module=FakeSpidevModule
        )
    assert info.value.message == "171 LEDs need 4104 SPI bytes per frame, spidev bufsiz is 4096"


def test_spi_backend_checks_its_colour_order_when_made(tmp_path: Path) -> None:
    """A wrong order was found at the first frame's encoding, or behind the machine's
    own faults (no spidev, no SPI device); it is the builder's typo, said first."""
    with pytest.raises(ValueError, match=r"^colour order 'RGBW': expected one of RGB, RBG, GRB, "
                                         r"GBR, BRG, BGR$"):
        SpiBackend(3, order="RGBW", dev_dir=str(tmp_path / "nodev"), module=FakeSpidevModule)
    (tmp_path / "spidev0.0").write_bytes(b"")
    FakeSpiDev.instances.clear()
    backend = SpiBackend(1, order="rgb", dev_dir=str(tmp_path), module=FakeSpidevModule)
    assert backend.order == "RGB"
    backend.show([(255, 0, 0)])
    assert FakeSpiDev.instances[0].writes[0] == bytes([0xF8] * 8 + [0xC0] * 16)


def test_spi_backend_advice(spi_dev: Path, tmp_path: Path) -> None:
    nowhere = tmp_path / "nodev"
    nowhere.mkdir()
    with pytest.raises(LedBackendUnavailable, match="dtparam=spi=on") as info:
        SpiBackend(1, dev_dir=str(nowhere), module=FakeSpidevModule)
    assert "no " in info.value.message and "spidev0.0" in info.value.message
    with pytest.raises(LedBackendUnavailable, match="spidev.bufsiz=65536"):
        SpiBackend(
            200, dev_dir=str(spi_dev), bufsiz_path=str(spi_dev / "bufsiz"), module=FakeSpidevModule
        )


def test_spi_backend_without_spidev(monkeypatch: pytest.MonkeyPatch, spi_dev: Path) -> None:
    monkeypatch.setitem(sys.modules, "spidev", None)
    with pytest.raises(LedBackendUnavailable, match="spidev not importable"):
        SpiBackend(1, dev_dir=str(spi_dev))


def pi_model(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "model"
    path.write_bytes(text.encode() + b"\x00")
    return [str(path)]


def test_ws281x_refuses_pi5_before_importing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "rpi_ws281x", None)
    with pytest.raises(LedBackendUnavailable) as info:
        Ws281xBackend(10, model_paths=pi_model(tmp_path, "Raspberry Pi 5 Model B Rev 1.0"))
    assert str(info.value) == "rpi_ws281x does not support the Raspberry Pi 5: use the spi backend"
    with pytest.raises(LedBackendUnavailable, match="does not support the Raspberry Pi 5"):
        Ws281xBackend(10, model_paths=pi_model(tmp_path, "Raspberry Pi Compute Module 5 Rev 1.0"))


def test_ws281x_missing_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "rpi_ws281x", None)
    with pytest.raises(LedBackendUnavailable, match="rpi_ws281x not importable"):
        Ws281xBackend(10, model_paths=pi_model(tmp_path, "Raspberry Pi 4 Model B Rev 1.4"))


class StandInStrip:
    """Records what Ws281xBackend asks of rpi_ws281x.PixelStrip (never the real class)."""

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.pixels: dict[int, int] = {}
        self.shows = 0
        self.began = False
        self.cleaned = False

    def begin(self) -> None:
        self.began = True

    def setPixelColor(self, i: int, colour: int) -> None:  # noqa: N802 - rpi_ws281x API
        self.pixels[i] = colour

    def show(self) -> None:
        self.shows += 1

    def _cleanup(self) -> None:
        self.cleaned = True


class StandInWs281x:
    PixelStrip = StandInStrip

    @staticmethod
    def Color(r: int, g: int, b: int) -> int:  # noqa: N802 - rpi_ws281x API
        return (r << 16) | (g << 8) | b


def test_ws281x_backend_on_a_stand_in(tmp_path: Path) -> None:
    backend = Ws281xBackend(
        2,
        pin=18,
        model_paths=pi_model(tmp_path, "Raspberry Pi 4 Model B Rev 1.4"),
        require_root=False,
        module=StandInWs281x,
    )
    strip: StandInStrip = backend._strip
    assert strip.args == (2, 18, 800_000, 10, False, 255, 0) and strip.began
    backend.show([(1, 2, 3), (255, 0, 0)])
    assert strip.pixels == {0: 0x010203, 1: 0xFF0000} and strip.shows == 1
    backend.close()
    assert strip.cleaned


def test_ws281x_needs_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    with pytest.raises(LedBackendUnavailable, match="needs root"):
        Ws281xBackend(2, model_paths=pi_model(tmp_path, "Raspberry Pi 3"), module=StandInWs281x)


def test_backend_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_led_backend() == "fake"
    assert default_led_backend({"COMPANION_BACKEND": "pi"}) == "spi"
    assert default_led_backend({"COMPANION_LED_BACKEND": "ws281x"}) == "ws281x"
    with pytest.raises(ValueError, match="COMPANION_LED_BACKEND"):
        default_led_backend({"COMPANION_LED_BACKEND": "neopixel"})
    assert isinstance(open_led_backend(None, 3), FakeBackend)
    with pytest.raises(ValueError, match="unknown LED backend"):
        open_led_backend("dmx", 3)
    monkeypatch.setenv("COMPANION_LED_BACKEND", "fake")
    assert isinstance(LedStrip(3).backend, FakeBackend)
