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
    assert spi.writes == [encode_ws2812_spi([(255, 0, 0), (0, 0, 0)])]
    assert spi.writes[0][:24] == bytes([0xC0] * 8 + [0xF8] * 8 + [0xC0] * 8)
    strip.close()
    assert spi.writes[-1] == encode_ws2812_spi([(0, 0, 0)] * 2)
    assert spi.closed


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
