"""What works on this machine, and what to do about what doesn't (`companion doctor --json`).

:func:`probe` is pure in the sense that matters for tests: everything it looks at
(files, imports, permissions, the clock, the camera opener) comes from a
:class:`System` that tests replace. It never lights an LED, never creates an
rpi_ws281x PixelStrip and never claims a GPIO pin; it opens the camera only to
time a short sample of frames.
"""

from __future__ import annotations

import argparse
import grp
import importlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .camera import NUMPY_ABI_ADVICE, PICAMERA2_ADVICE, FrameSource, open_camera
from .errors import EndOfStream, HardwareError
from .host import MODEL_PATHS, board_model, default_backend, is_pi5, is_raspberry_pi
from .leds.backends import (
    LED_BACKEND_ENV,
    LED_BACKENDS,
    PI5_WS281X_ADVICE,
    SPI_ENABLE_ADVICE,
    WS281X_ROOT_ADVICE,
)

PI5_LGPIO_ADVICE = (
    "on a Raspberry Pi 5 only gpiozero's lgpio pin factory works: "
    "pip install lgpio in the venv and set GPIOZERO_PIN_FACTORY=lgpio"
)


def current_groups() -> list[str]:
    """Names of this process's groups (for "user not in the gpio group" advice)."""
    names = []
    for gid in sorted({os.getegid(), *os.getgroups()}):
        try:
            names.append(grp.getgrgid(gid).gr_name)
        except KeyError:
            names.append(str(gid))
    return names


@dataclass
class System:
    """Everything probe() observes; the defaults look at the real machine."""

    model_paths: Sequence[str] = MODEL_PATHS
    dev_dir: str = "/dev"
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    import_module: Callable[[str], Any] = importlib.import_module
    access: Callable[[str, int], bool] = os.access
    exists: Callable[[str], bool] = os.path.exists
    listdir: Callable[[str], list[str]] = os.listdir
    euid: Callable[[], int] = os.geteuid
    groups: Callable[[], list[str]] = current_groups
    clock: Callable[[], float] = time.monotonic
    open_camera: Callable[..., FrameSource] = open_camera


def probe(
    camera_spec: str | None,
    led_backend: str | None,
    button_backend: str | None,
    *,
    sample_frames: int = 15,
    sample_seconds: float = 2.0,
    system: System | None = None,
) -> dict[str, Any]:
    """Check the camera, LED and button backends; a JSON-able report with advice.

    None for a backend means "what the companion would use by default here".
    ``button_backend`` is "pi", "fake" or "none" (no buttons: nothing to check). The
    camera is sampled for at most ``sample_frames`` frames or ``sample_seconds`` on
    ``system.clock``.
    """
    sysv = system or System()
    model = board_model(sysv.model_paths)
    platform: dict[str, Any] = {
        "model": model,
        "raspberry_pi": is_raspberry_pi(model),
        "pi5": is_pi5(model),
        "euid": sysv.euid(),
        "groups": sysv.groups(),
        "backend": None,
    }
    advice: list[str] = []
    try:
        backend = default_backend(sysv.environ, sysv.model_paths)
        platform["backend"] = backend
    except ValueError as exc:
        backend = "fake"
        advice.append(str(exc))

    default_camera = not camera_spec
    if not camera_spec:
        camera_spec = "picamera2" if backend == "pi" else "fake"
    if not led_backend:
        led_backend = sysv.environ.get(LED_BACKEND_ENV, "").strip().lower() or (
            "spi" if backend == "pi" else "fake"
        )
    if not button_backend:
        button_backend = backend

    camera = _check_camera(camera_spec, sysv, sample_frames, sample_seconds)
    if default_camera and camera_spec == "picamera2" and "not importable" in str(
            camera["error"]):
        # as `run` does (open_camera's default): the first OpenCV device, a USB camera
        usb = _check_camera("opencv:0", sysv, sample_frames, sample_seconds)
        if usb["error"] is None:
            usb["fallback"] = camera["error"]
            camera = usb
    leds = _check_leds(led_backend.lower(), sysv, platform)
    buttons = _check_buttons(button_backend.lower(), sysv, platform)
    for section in (camera, leds, buttons):
        advice.extend(section["advice"])
    return {
        "ok": camera["ok"] and leds["ok"] and buttons["ok"] and not advice,
        "platform": platform,
        "camera": camera,
        "leds": leds,
        "buttons": buttons,
        "advice": advice,
    }


# -- camera ------------------------------------------------------------------------------
def _check_camera(spec: str, sysv: System, max_frames: int, max_seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {
        "spec": spec,
        "ok": False,
        "backend": None,
        "size": None,
        "frames": 0,
        "seconds": 0.0,
        "fps": None,
        "error": None,
        "advice": [],
    }
    try:
        source = sysv.open_camera(spec)
    except Exception as exc:  # every failure becomes a line of advice, never a crash
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["advice"].append(_camera_advice(spec, exc))
        return out
    try:
        out["backend"] = source.kind
        frames = 0
        start = end = sysv.clock()
        while frames < max_frames:
            try:
                source.read()
            except EndOfStream:
                break
            frames += 1
            end = sysv.clock()
            if end - start >= max_seconds:
                break
        out["frames"] = frames
        out["seconds"] = round(end - start, 6)
        if frames:
            out["size"] = list(source.size)
        if frames and end > start:
            out["fps"] = round(frames / (end - start), 3)
        if frames == 0:
            out["advice"].append(f"camera {spec!r} opened but delivered no frame")
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["advice"].append(_camera_advice(spec, exc))
    finally:
        try:
            source.close()
        except Exception as exc:
            out["advice"].append(f"camera {spec!r} did not close cleanly: {exc}")
    out["ok"] = out["error"] is None and out["frames"] > 0
    return out


def _camera_advice(spec: str, exc: BaseException) -> str:
    if isinstance(exc, HardwareError) and exc.advice:
        return f"{exc.message}: {exc.advice}"
    text = str(exc)
    if spec.startswith("picamera2"):
        if isinstance(exc, ImportError):
            return f"picamera2 not importable: {text}: {PICAMERA2_ADVICE}"
        if "dtype size changed" in text:
            return f"picamera2 not importable: {text}: {NUMPY_ABI_ADVICE}"
        if isinstance(exc, IndexError):
            return (
                "no camera detected by libcamera: check the ribbon cable and "
                "run rpicam-hello --list-cameras"
            )
        if "busy" in text.lower():
            return "the camera is busy: stop other programs using it (rpicam-*, another companion)"
    return f"camera {spec!r} failed: {text}"


# -- LEDs --------------------------------------------------------------------------------
def _check_leds(name: str, sysv: System, platform: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"backend": name, "ok": False, "checks": {}, "advice": []}
    checks: dict[str, bool] = out["checks"]
    advice: list[str] = out["advice"]
    if name == "fake":
        out["ok"] = True
        return out
    if name == "spi":
        checks["spidev_importable"] = _importable(sysv, "spidev", advice, "pip install spidev")
        path = os.path.join(sysv.dev_dir, "spidev0.0")
        checks["device_present"] = sysv.exists(path)
        if not checks["device_present"]:
            advice.append(f"no {path}: {SPI_ENABLE_ADVICE}")
        else:
            checks["device_writable"] = sysv.access(path, os.R_OK | os.W_OK)
            if not checks["device_writable"]:
                advice.append(_group_advice("spi", path, sysv))
    elif name == "ws281x":
        checks["not_pi5"] = not platform["pi5"]
        if platform["pi5"]:
            advice.append(PI5_WS281X_ADVICE)
        checks["rpi_ws281x_importable"] = _importable(
            sysv, "rpi_ws281x", advice, "pip install rpi-ws281x, or use the spi backend"
        )
        checks["root"] = platform["euid"] == 0
        if not checks["root"]:
            advice.append(WS281X_ROOT_ADVICE)
    else:
        advice.append(f"unknown LED backend {name!r}: expected one of {', '.join(LED_BACKENDS)}")
        return out
    out["ok"] = all(checks.values())
    return out


# -- buttons -----------------------------------------------------------------------------
def _check_buttons(name: str, sysv: System, platform: Mapping[str, Any]) -> dict[str, Any]:
    factory = sysv.environ.get("GPIOZERO_PIN_FACTORY") or None
    out: dict[str, Any] = {
        "backend": name,
        "ok": False,
        "pin_factory": factory,
        "checks": {},
        "advice": [],
    }
    checks: dict[str, bool] = out["checks"]
    advice: list[str] = out["advice"]
    checks["gpiozero_importable"] = _importable(
        sysv, "gpiozero", advice, "pip install gpiozero (the [pi] or [test] extra)"
    )
    if name == "none":  # `companion run --buttons none`: a table without buttons
        out["checks"] = {}
        out["ok"] = True
        return out
    if name == "fake":
        out["ok"] = all(checks.values())
        return out
    if name != "pi":
        advice.append(f"unknown button backend {name!r}: expected 'pi', 'fake' or 'none'")
        return out
    if platform["pi5"]:
        checks["lgpio_importable"] = _importable(sysv, "lgpio", advice, PI5_LGPIO_ADVICE)
        checks["pin_factory_ok"] = factory in (None, "lgpio")
        if not checks["pin_factory_ok"]:
            advice.append(f"GPIOZERO_PIN_FACTORY={factory}: {PI5_LGPIO_ADVICE}")
    try:
        chips = sorted(n for n in sysv.listdir(sysv.dev_dir) if n.startswith("gpiochip"))
    except OSError:
        chips = []
    checks["gpiochip_present"] = bool(chips)
    if not chips:
        advice.append(f"no {sysv.dev_dir}/gpiochip*: GPIO is only available on the Raspberry Pi")
    else:
        path = os.path.join(sysv.dev_dir, chips[0])
        checks["gpiochip_accessible"] = sysv.access(path, os.R_OK | os.W_OK)
        if not checks["gpiochip_accessible"]:
            advice.append(_group_advice("gpio", path, sysv))
    out["ok"] = all(checks.values())
    return out


# -- helpers -----------------------------------------------------------------------------
def _importable(sysv: System, module: str, advice: list[str], hint: str) -> bool:
    try:
        sysv.import_module(module)
    except Exception as exc:  # ImportError, or a broken binary module (ValueError, OSError)
        advice.append(f"{module} not importable: {exc}: {hint}")
        return False
    return True


def _group_advice(group: str, path: str, sysv: System) -> str:
    if group not in sysv.groups():
        return (
            f"user not in {group} group (cannot open {path}): "
            f"sudo usermod -aG {group} USER, then log in again"
        )
    return f"cannot open {path} although the user is in the {group} group: check its udev rule"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m hardware.doctor`: the report as JSON, exit status 1 when anything failed."""
    parser = argparse.ArgumentParser(prog="python -m hardware.doctor", description=__doc__)
    parser.add_argument("--camera", default=None, help="camera spec, e.g. picamera2, opencv:0")
    parser.add_argument("--leds", default=None, choices=LED_BACKENDS)
    parser.add_argument("--buttons", default=None, choices=("pi", "fake"))
    parser.add_argument("--frames", type=int, default=15)
    args = parser.parse_args(argv)
    report = probe(args.camera, args.leds, args.buttons, sample_frames=args.frames)
    print(json.dumps(report, indent=1))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
