"""Shared fixtures: a fake-backend environment and gpiozero's MockFactory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def fake_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hardware test runs as if off a Pi and outside systemd, whatever the CI sets."""
    monkeypatch.setenv("COMPANION_BACKEND", "fake")
    for name in (
        "COMPANION_LED_BACKEND",
        "NOTIFY_SOCKET",
        "WATCHDOG_USEC",
        "WATCHDOG_PID",
        "GPIOZERO_PIN_FACTORY",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def mock_factory() -> Iterator[object]:
    """gpiozero's MockFactory as the default pin factory, reset afterwards."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory

    previous = Device.pin_factory
    factory = MockFactory()
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        Device.pin_factory = previous
