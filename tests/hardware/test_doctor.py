"""doctor.probe on an injected System: advice strings and the fps measurement."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hardware.camera import FakeCamera, FakeClock, open_camera
from hardware.doctor import System, main, probe
from hardware.errors import CameraUnavailable
from hardware.leds.backends import PI5_WS281X_ADVICE


def model_file(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "model"
    path.write_bytes(text.encode() + b"\x00")
    return [str(path)]


def importer(missing: set[str]) -> Any:
    def import_module(name: str) -> object:
        if name in missing:
            raise ImportError(f"No module named {name!r}")
        return object()

    return import_module


def pi_system(tmp_path: Path, model: str, **kw: Any) -> System:
    dev = tmp_path / "dev"
    dev.mkdir(exist_ok=True)
    defaults: dict[str, Any] = {
        "model_paths": model_file(tmp_path, model),
        "dev_dir": str(dev),
        "environ": {},
        "import_module": importer(set()),
        "access": lambda path, mode: True,
        "euid": lambda: 1000,
        "groups": lambda: ["companion", "video", "gpio", "spi"],
        "clock": FakeClock(step=0.1),
        "open_camera": lambda spec: FakeCamera(size=(64, 48)),
    }
    defaults.update(kw)
    return System(**defaults)


def test_everything_fake_is_ok() -> None:
    system = System(
        environ={"COMPANION_BACKEND": "fake"},
        clock=FakeClock(step=0.1),
        open_camera=lambda spec: open_camera(spec, size=(32, 24)),
    )
    report = probe(None, None, None, sample_frames=10, system=system)
    assert report["ok"] is True
    assert report["advice"] == []
    assert report["camera"]["spec"] == "fake"
    assert report["camera"]["frames"] == 10
    assert report["camera"]["fps"] == 10.0
    assert report["camera"]["size"] == [32, 24]
    assert report["leds"]["backend"] == "fake" and report["buttons"]["backend"] == "fake"
    json.dumps(report)  # JSON-able


def test_fps_sample_stops_after_sample_seconds(tmp_path: Path) -> None:
    system = pi_system(tmp_path, "x", clock=FakeClock(step=0.5))
    report = probe("fake", "fake", "fake", sample_frames=100, sample_seconds=2.0, system=system)
    camera = report["camera"]
    assert (camera["frames"], camera["seconds"], camera["fps"]) == (4, 2.0, 2.0)


def test_finite_source_and_no_frames(tmp_path: Path) -> None:
    system = pi_system(
        tmp_path, "x", open_camera=lambda spec: FakeCamera([np.zeros((2, 2, 3), np.uint8)])
    )
    assert probe("fake", "fake", "fake", system=system)["camera"]["frames"] == 1
    system.open_camera = lambda spec: FakeCamera([])
    report = probe("fake", "fake", "fake", system=system)
    assert report["camera"]["ok"] is False
    assert report["advice"] == ["camera 'fake' opened but delivered no frame"]


def test_pi5_with_ws281x(tmp_path: Path) -> None:
    system = pi_system(
        tmp_path, "Raspberry Pi 5 Model B Rev 1.0", import_module=importer({"rpi_ws281x"})
    )
    report = probe("fake", "ws281x", "fake", system=system)
    assert report["platform"]["pi5"] is True and report["platform"]["backend"] == "pi"
    leds = report["leds"]
    assert leds["ok"] is False
    assert leds["advice"][0] == PI5_WS281X_ADVICE
    assert (
        PI5_WS281X_ADVICE == "rpi_ws281x does not support the Raspberry Pi 5: use the spi backend"
    )
    assert leds["advice"][1].startswith("rpi_ws281x not importable")
    assert leds["advice"][2].startswith("rpi_ws281x needs root")
    assert report["ok"] is False


def test_spi_missing_and_not_in_group(tmp_path: Path) -> None:
    system = pi_system(tmp_path, "Raspberry Pi 4 Model B Rev 1.4")
    report = probe("fake", "spi", "fake", system=system)
    assert report["leds"]["advice"] == [
        f"no {tmp_path}/dev/spidev0.0: enable SPI with dtparam=spi=on in "
        "/boot/firmware/config.txt (or sudo raspi-config nonint do_spi 0) and reboot"
    ]
    (tmp_path / "dev" / "spidev0.0").write_bytes(b"")
    system.access = lambda path, mode: False
    system.groups = lambda: ["companion"]
    report = probe("fake", "spi", "fake", system=system)
    assert report["leds"]["checks"] == {
        "spidev_importable": True,
        "device_present": True,
        "device_writable": False,
    }
    assert report["leds"]["advice"][0].startswith("user not in spi group")


def test_gpio_checks_on_a_pi5(tmp_path: Path) -> None:
    system = pi_system(
        tmp_path,
        "Raspberry Pi 5 Model B Rev 1.0",
        import_module=importer({"lgpio"}),
        environ={"GPIOZERO_PIN_FACTORY": "rpigpio"},
        access=lambda path, mode: False,
        groups=lambda: ["companion"],
    )
    (tmp_path / "dev" / "gpiochip0").write_bytes(b"")
    buttons = probe("fake", "fake", None, system=system)["buttons"]
    assert buttons["backend"] == "pi" and buttons["ok"] is False
    assert buttons["pin_factory"] == "rpigpio"
    assert any("only gpiozero's lgpio pin factory works" in a for a in buttons["advice"])
    assert any(a.startswith("GPIOZERO_PIN_FACTORY=rpigpio") for a in buttons["advice"])
    assert any(a.startswith("user not in gpio group") for a in buttons["advice"])


def test_no_gpiochip_off_a_pi(tmp_path: Path) -> None:
    report = probe("fake", "fake", "pi", system=pi_system(tmp_path, "Some laptop"))
    assert report["buttons"]["checks"]["gpiochip_present"] is False


def test_picamera2_not_importable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)
    system = pi_system(tmp_path, "Raspberry Pi 5 Model B Rev 1.0", open_camera=open_camera)
    camera = probe(None, "fake", "fake", system=system)["camera"]
    assert camera["spec"] == "picamera2" and camera["ok"] is False
    assert camera["advice"][0].startswith("picamera2 not importable: ")
    assert camera["advice"][0].endswith(
        "install python3-picamera2 with apt and create the venv with --system-site-packages"
    )


def test_without_picamera2_the_default_camera_is_opencvs_first(tmp_path: Path) -> None:
    """As `run` opens it: where picamera2 is not importable, OpenCV's first device."""
    def cameras(spec: str) -> FakeCamera:
        if spec == "picamera2":
            raise CameraUnavailable("picamera2 not importable: no module", "apt")
        assert spec == "opencv:0"
        return FakeCamera(size=(64, 48))

    system = pi_system(tmp_path, "Raspberry Pi 5 Model B Rev 1.0", open_camera=cameras)
    camera = probe(None, "fake", "fake", system=system)["camera"]
    assert (camera["spec"], camera["backend"], camera["error"]) == ("opencv:0", "fake", None)
    assert camera["fallback"] == ("CameraUnavailable: picamera2 not importable: no module "
                                  "(apt)")
    named = probe("picamera2", "fake", "fake", system=system)["camera"]
    assert named["spec"] == "picamera2" and named["ok"] is False  # named: no fallback


def test_camera_errors_become_advice(tmp_path: Path) -> None:
    def no_camera(spec: str) -> FakeCamera:
        raise IndexError("list index out of range")

    def busy(spec: str) -> FakeCamera:
        raise CameraUnavailable("OpenCV cannot open camera 0", "check the device")

    system = pi_system(tmp_path, "Raspberry Pi 4", open_camera=no_camera)
    assert (
        "rpicam-hello --list-cameras"
        in probe("picamera2", "fake", "fake", system=system)["advice"][0]
    )
    system.open_camera = busy
    assert probe("opencv:0", "fake", "fake", system=system)["advice"] == [
        "OpenCV cannot open camera 0: check the device"
    ]


def test_bad_environment_is_reported(tmp_path: Path) -> None:
    system = pi_system(tmp_path, "x", environ={"COMPANION_BACKEND": "real"})
    report = probe("fake", "fake", "fake", system=system)
    assert report["ok"] is False
    assert "expected 'pi' or 'fake'" in report["advice"][0]
    assert "unknown LED backend" in probe("fake", "dmx", "fake", system=system)["advice"][1]


def test_main_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--camera", "fake", "--leds", "fake", "--buttons", "fake", "--frames", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["camera"]["frames"] == 2
