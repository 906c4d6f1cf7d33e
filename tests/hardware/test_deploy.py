"""The systemd unit, its ws281x drop-in and scripts/install-pi.sh."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "companion.service"
DROPIN = ROOT / "systemd" / "companion-ws281x.conf"
INSTALL = ROOT / "scripts" / "install-pi.sh"
EXEC = "/opt/companion/.venv/bin/companion"


def entries(path: Path) -> list[tuple[str, str, str]]:
    """(section, key, value) for every assignment; units repeat keys, so no configparser."""
    out = []
    section = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.append((section, key.strip(), value.strip()))
    return out


def values(path: Path, key: str) -> list[str]:
    return [v for _, k, v in entries(path) if k == key]


def test_unit_settings() -> None:
    get = {k: v for _, k, v in entries(UNIT)}
    assert get["Type"] == "notify"
    assert get["NotifyAccess"] == "main"
    assert int(get["WatchdogSec"]) > 0
    assert get["Restart"] == "on-failure"
    assert get["User"] == "companion"
    assert set(get["SupplementaryGroups"].split()) == {"video", "gpio", "spi"}
    assert get["ExecStart"] == f"{EXEC} run --data-dir /var/lib/companion"
    for key, value in {
        "ProtectSystem": "strict",
        "ProtectHome": "true",
        "PrivateTmp": "true",
        "NoNewPrivileges": "true",
        "ReadWritePaths": "/var/lib/companion",
        "StateDirectory": "companion",
        "DevicePolicy": "closed",
        "CapabilityBoundingSet": "",
    }.items():
        assert get[key] == value, key
    assert set(values(UNIT, "DeviceAllow")) == {
        "char-video4linux rw",
        "char-media rw",
        "char-dma_heap rw",
        "char-spi rw",
        "char-gpiochip rw",
    }
    env = values(UNIT, "Environment")
    assert "COMPANION_LED_BACKEND=spi" in env and "GPIOZERO_PIN_FACTORY=lgpio" in env
    assert "PrivateDevices" not in get  # it would hide the camera, SPI and GPIO


def test_ws281x_dropin_is_the_only_root_path() -> None:
    get = {k: v for _, k, v in entries(DROPIN)}
    assert get["User"] == "root"
    assert "COMPANION_LED_BACKEND=ws281x" in values(DROPIN, "Environment")
    assert "/dev/mem rw" in values(DROPIN, "DeviceAllow")


SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("with_dropin", [False, True])
def test_systemd_analyze_verify_is_clean(tmp_path: Path, with_dropin: bool) -> None:
    # ExecStart must name an existing executable for verify to pass, so point it at one.
    true = shutil.which("true")
    assert true is not None
    unit = tmp_path / "companion.service"
    unit.write_text(UNIT.read_text().replace(EXEC, true))
    if with_dropin:
        (tmp_path / "companion.service.d").mkdir()
        shutil.copy(DROPIN, tmp_path / "companion.service.d" / "ws281x.conf")
    assert SYSTEMD_ANALYZE is not None
    result = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "SYSTEMD_LOG_COLOR": "0"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""
    assert result.stdout.strip() == ""


def test_install_script_parses() -> None:
    subprocess.run(["bash", "-n", str(INSTALL)], check=True, timeout=30)
    assert os.access(INSTALL, os.X_OK)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
def test_install_script_shellcheck() -> None:
    result = subprocess.run(
        ["shellcheck", str(INSTALL)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout


def test_install_script_dry_run() -> None:
    result = subprocess.run(
        ["bash", str(INSTALL), "--dry-run", "--no-start", "--source", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "+ python3 -m venv --system-site-packages /opt/companion/.venv" in out
    assert "python3-picamera2" in out
    assert "pip install --constraint" in out
    assert "[pi]" in out.replace("\\", "")
    assert "/etc/systemd/system/companion.service" in out
    assert "+ systemctl enable companion.service" in out
    assert "ws281x.conf" not in out or "rm -f" in out


@pytest.mark.parametrize(("numpy", "arch", "pins"), [
    # Bookworm: apt's numpy 1 stays, and with it the last OpenCV built for numpy 1
    ("1.24.2", "aarch64", "numpy<2; opencv-python-headless==4.11.0.86"),
    # numpy 2 on the system: the versions the tests' readings were measured with
    ("2.2.4", "aarch64", "numpy==2.4.6; opencv-python-headless==5.0.0.93"),
    # 32-bit Raspberry Pi OS: piwheels' builds, whatever versions it has
    ("1.24.2", "armv7l", "numpy<2"),
    ("2.2.4", "armv7l", ""),
])
def test_install_script_pins_what_the_pi_can_install(numpy: str, arch: str, pins: str) -> None:
    result = subprocess.run(
        ["bash", str(INSTALL), "--dry-run", "--no-start", "--source", str(ROOT)],
        capture_output=True, text=True, timeout=60,
        env={**os.environ, "SYSTEM_NUMPY": numpy, "ARCH": arch},
    )
    assert result.returncode == 0, result.stderr
    assert f"+ {pins} > /opt/companion/constraints.txt" in result.stdout.splitlines()
    pinned = {line for line in (ROOT / "constraints.txt").read_text().splitlines()
              if line and not line.startswith("#")}
    if numpy.startswith("2") and arch == "aarch64":
        assert set(pins.split("; ")) == pinned  # constraints.txt, whatever it pins


def test_install_script_rejects_unknown_options() -> None:
    result = subprocess.run(
        ["bash", str(INSTALL), "--frobnicate"], capture_output=True, text=True, timeout=30
    )
    assert result.returncode != 0
    assert "unknown option: --frobnicate" in result.stderr
