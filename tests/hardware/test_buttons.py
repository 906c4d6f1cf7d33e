"""Buttons and buzzer through gpiozero's MockFactory."""

from __future__ import annotations

import queue
import sys
from typing import Any

import pytest

from hardware.buttons import (
    CONFIRM,
    DEFAULT_PINS,
    NEXT_ROUND,
    UNDO,
    ButtonEvent,
    TableButtons,
)
from hardware.camera import FakeClock
from hardware.errors import ButtonsUnavailable


def test_presses_become_events_in_order(mock_factory: Any) -> None:
    with TableButtons(clock=FakeClock(start=100.0, step=1.0)) as buttons:
        assert buttons.mock
        for name in (CONFIRM, UNDO, NEXT_ROUND):
            pin = mock_factory.pin(DEFAULT_PINS[name])
            pin.drive_low()  # pressed (pull-up: low = pressed)
            pin.drive_high()  # released: no event
        assert buttons.drain() == [
            ButtonEvent("confirm", 100.0),
            ButtonEvent("undo", 101.0),
            ButtonEvent("next_round", 102.0),
        ]
        assert buttons.get() is None


def test_custom_pins_shared_queue_and_press_helper(mock_factory: Any) -> None:
    events: queue.Queue[ButtonEvent] = queue.Queue()
    buttons = TableButtons({CONFIRM: 5, UNDO: None}, events=events, clock=FakeClock(step=0.5))
    assert set(buttons.buttons) == {CONFIRM, NEXT_ROUND}
    mock_factory.pin(5).drive_low()
    assert buttons.is_pressed(CONFIRM)
    mock_factory.pin(5).drive_high()
    buttons.press(NEXT_ROUND)
    assert [events.get_nowait(), events.get_nowait()] == [
        ButtonEvent("confirm", 0.0),
        ButtonEvent("next_round", 0.5),
    ]
    with pytest.raises(ValueError, match="no 'undo' button"):
        buttons.press(UNDO)
    buttons.close()
    buttons.close()


def test_explicit_pin_factory_is_passed_through() -> None:
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    try:
        buttons = TableButtons(pin_factory=factory, backend="pi")
        assert buttons.mock and buttons.pin_factory is factory
        assert all(b.pin_factory is factory for b in buttons.buttons.values())
        assert all(b.pin.bounce is None for b in buttons.buttons.values())
        factory.pin(27).drive_low()
        factory.pin(27).drive_high()
        assert buttons.get(timeout=0.1) is not None
        buttons.close()
    finally:
        factory.reset()


def test_fake_backend_makes_its_own_mock_factory() -> None:
    buttons = TableButtons(backend="fake")
    try:
        buttons.press(UNDO)
        event = buttons.get()
        assert event is not None and event.name == "undo"
    finally:
        buttons.close()
        buttons.pin_factory.reset()


def test_buzzer_beeps(mock_factory: Any) -> None:
    buttons = TableButtons(buzzer_pin=23)
    assert buttons.beep(n=2, on_time=0.001, off_time=0.001, background=False)
    states = [s.state for s in mock_factory.pin(23).states]
    assert states == [False, True, False, True, False]
    buttons.close()
    assert not TableButtons({}, buzzer_pin=None).beep()


def test_configuration_errors(mock_factory: Any) -> None:
    with pytest.raises(ValueError, match="unknown button 'reset'"):
        TableButtons({"reset": 4})
    with pytest.raises(ValueError, match="share a GPIO pin"):
        TableButtons({CONFIRM: 23}, buzzer_pin=23)
    with pytest.raises(ValueError, match="backend"):
        TableButtons(backend="arduino")


def test_missing_gpiozero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gpiozero", None)
    with pytest.raises(ButtonsUnavailable, match="gpiozero not importable"):
        TableButtons()


def test_pins_that_cannot_be_opened_are_one_sentence_with_advice(mock_factory: Any) -> None:
    """gpiozero's own errors (no pin factory off a Pi, a pin another program holds)
    ended `companion run` with a traceback; they are ButtonsUnavailable now, and the
    buttons opened before the failing one are released."""
    first = TableButtons()
    try:
        with pytest.raises(ButtonsUnavailable) as err:
            TableButtons()  # the same pins again
        text = str(err.value)
        assert text.startswith("GPIO buttons cannot be opened: ") and "\n" not in text
        assert text.endswith("(on a Raspberry Pi: install lgpio (the [pi] extra; the only pin "
                             "factory on a Pi 5) and add the user to the gpio group; elsewhere "
                             "use --buttons fake or none)")
        assert err.value.advice and "--buttons fake or none" in err.value.advice
    finally:
        first.close()
    TableButtons().close()  # nothing of the failed one holds a pin


def _stub_lgpio(error: type[Exception] | None) -> Any:
    """A stand-in for the lgpio C module: importable, its gpiochip_open failing."""
    import types

    stub = types.ModuleType("lgpio")
    for name in ("SET_PULL_NONE", "SET_PULL_UP", "SET_PULL_DOWN", "BOTH_EDGES",
                 "RISING_EDGE", "FALLING_EDGE"):
        setattr(stub, name, 0)
    if error is not None:
        stub.error = error  # type: ignore[attr-defined]

        def gpiochip_open(chip: int) -> None:
            raise error("'can not open gpiochip'")

        stub.gpiochip_open = gpiochip_open  # type: ignore[attr-defined]
    return stub


@pytest.mark.parametrize("lgpio_here", [False, True])
def test_the_units_pin_factory_failing_is_one_sentence(monkeypatch: pytest.MonkeyPatch,
                                                      lgpio_here: bool) -> None:
    """companion.service sets GPIOZERO_PIN_FACTORY=lgpio; gpiozero then lets lgpio's
    own errors through (its import error, lgpio.error for a gpiochip the user may not
    open), which ended `companion run` with a traceback."""
    from gpiozero import Device

    error = type("error", (Exception,), {"__module__": "lgpio"})
    monkeypatch.setitem(sys.modules, "lgpio", _stub_lgpio(error) if lgpio_here else None)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "lgpio")
    monkeypatch.setattr(Device, "pin_factory", None)
    if lgpio_here:
        import gpiozero.pins.lgpio as gl

        monkeypatch.setattr(gl.LGPIOFactory, "_get_revision", lambda self: 0xD04170)
    with pytest.raises(ButtonsUnavailable) as err:
        TableButtons(backend="pi")
    cause = "'can not open gpiochip'" if lgpio_here else "import of lgpio halted"
    assert str(err.value).startswith(f"GPIO buttons cannot be opened: {cause}")
    assert "\n" not in str(err.value)
