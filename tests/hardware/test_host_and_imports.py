"""Backend selection, and what importing the package must never do."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from hardware.host import board_model, default_backend, is_pi5, is_raspberry_pi

ROOT = Path(__file__).resolve().parents[2]


def test_board_model_reads_the_first_readable_file(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert board_model([str(tmp_path / "missing"), str(model)]) == "Raspberry Pi 5 Model B Rev 1.0"
    assert board_model([str(tmp_path / "missing")]) is None


@pytest.mark.parametrize(
    ("model", "pi", "pi5"),
    [
        ("Raspberry Pi 5 Model B Rev 1.0", True, True),
        ("Raspberry Pi 500 Rev 1.0", True, True),
        ("Raspberry Pi Compute Module 5 Rev 1.0", True, True),
        ("Raspberry Pi 4 Model B Rev 1.4", True, False),
        ("Raspberry Pi Zero 2 W Rev 1.0", True, False),
        ("Raspberry Pi 3 Model B Plus Rev 1.3", True, False),
        ("Some x86 laptop", False, False),
        (None, False, False),
    ],
)
def test_model_classification(model: str | None, pi: bool, pi5: bool) -> None:
    assert (is_raspberry_pi(model), is_pi5(model)) == (pi, pi5)


def test_default_backend(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 4 Model B\x00")
    assert default_backend({}, [str(model)]) == "pi"
    assert default_backend({}, [str(tmp_path / "none")]) == "fake"
    assert default_backend({"COMPANION_BACKEND": "fake"}, [str(model)]) == "fake"
    assert default_backend({"COMPANION_BACKEND": "PI"}, [str(tmp_path / "none")]) == "pi"
    with pytest.raises(ValueError, match="COMPANION_BACKEND='gpu'"):
        default_backend({"COMPANION_BACKEND": "gpu"})


IMPORT_PROBE = """
import builtins, io, logging, os, sys
opened = []
real_open = builtins.open
def spy(file, *a, **k):
    opened.append(str(file))
    return real_open(file, *a, **k)
builtins.open = io.open = spy
real_os_open = os.open
def os_spy(path, *a, **k):
    opened.append(str(path))
    return real_os_open(path, *a, **k)
os.open = os_spy
import hardware, hardware.camera, hardware.leds, hardware.buttons, hardware.doctor
import hardware.sdnotify, hardware.host, hardware.errors
touched = [p for p in opened if p.startswith(("/proc/device-tree", "/sys/", "/dev/"))]
assert not touched, touched
pi_modules = ("picamera2", "spidev", "rpi_ws281x", "gpiozero", "lgpio")
pi_only = [m for m in pi_modules if m in sys.modules]
assert not pi_only, pi_only
assert "companion" not in sys.modules
assert logging.getLogger().handlers == [], logging.getLogger().handlers
print("clean")
"""


def test_importing_touches_no_hardware_and_configures_no_logging() -> None:
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "clean"


def test_hardware_never_imports_companion() -> None:
    for path in (ROOT / "hardware").rglob("*.py"):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] != "companion", f"{path} imports {name}"
