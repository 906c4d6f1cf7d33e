"""The table's three buttons (Confirm, Undo, Next round) and an optional buzzer, via gpiozero.

Presses become :class:`ButtonEvent` values on a ``queue.Queue``: gpiozero calls
back from its own thread, and the controller's loop should see presses in order
without sharing state with that thread.

Wiring: each button between its GPIO and ground (internal pull-up, so pressed =
low); the buzzer (active, 3.3 V) between its GPIO and ground. Defaults: Confirm
GPIO17, Undo GPIO27, Next round GPIO22, buzzer GPIO23; all configurable.

Backends: ``pin_factory`` is passed straight to gpiozero. With ``backend="fake"``
(the default off a Pi) and no factory, gpiozero's MockFactory is used (the one
already in ``Device.pin_factory`` if that is a MockFactory, so tests can drive the
same pins), and :meth:`TableButtons.press` simulates a press.

Raspberry Pi 5: only gpiozero's lgpio pin factory works there (RPi.GPIO and
pigpio do not support the RP1 chip). Install ``lgpio`` in the venv (the [pi]
extra) and, under systemd, set ``GPIOZERO_PIN_FACTORY=lgpio`` and a writable
working directory or ``LG_WD``: lgpio creates its notification pipe there.
"""

from __future__ import annotations

import logging
import queue
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .device import Closeable
from .errors import ButtonsUnavailable
from .host import default_backend

log = logging.getLogger(__name__)

CONFIRM = "confirm"
UNDO = "undo"
NEXT_ROUND = "next_round"
BUTTON_NAMES: tuple[str, ...] = (CONFIRM, UNDO, NEXT_ROUND)
DEFAULT_PINS: Mapping[str, int] = {CONFIRM: 17, UNDO: 27, NEXT_ROUND: 22}
DEFAULT_BUZZER_PIN = 23
DEFAULT_BOUNCE_S = 0.05

GPIOZERO_ADVICE = "pip install gpiozero lgpio (the [pi] extra)"
#: the pin libraries gpiozero drives, whose own errors mean "no usable GPIO here"
PIN_LIBRARIES = frozenset({"lgpio", "RPi", "pigpio", "rpi_lgpio"})
GPIO_PINS_ADVICE = ("on a Raspberry Pi: install lgpio (the [pi] extra; the only pin "
                    "factory on a Pi 5) and add the user to the gpio group; elsewhere use "
                    "--buttons fake or none")

_AUTO: Any = object()


@dataclass(frozen=True)
class ButtonEvent:
    """A press: which button, and when on the buttons' clock (seconds)."""

    name: str
    timestamp: float


def _import_gpiozero() -> Any:
    try:
        import gpiozero  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ButtonsUnavailable(f"gpiozero not importable: {exc}", GPIOZERO_ADVICE) from exc
    return gpiozero


def _mock_factory_class() -> Any:
    from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped]

    return MockFactory


class TableButtons(Closeable):
    """Confirm / Undo / Next-round buttons and an optional buzzer.

    ``pins`` maps button names to BCM GPIO numbers (missing names use the
    defaults; a name mapped to None has no button). ``events`` is the queue presses
    go to (a new one if omitted). ``bounce_time`` defaults to 50 ms on real pins
    and None on mock pins, where gpiozero would otherwise delay the events.
    """

    def __init__(
        self,
        pins: Mapping[str, int | None] | None = None,
        *,
        buzzer_pin: int | None = None,
        events: queue.Queue[ButtonEvent] | None = None,
        pin_factory: Any = None,
        backend: str | None = None,
        bounce_time: float | None = _AUTO,
        pull_up: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        wanted = dict(DEFAULT_PINS)
        for name, pin in (pins or {}).items():
            if name not in BUTTON_NAMES:
                raise ValueError(f"unknown button {name!r}: buttons are {', '.join(BUTTON_NAMES)}")
            wanted[name] = pin  # type: ignore[assignment]
        used = [p for p in [*wanted.values(), buzzer_pin] if p is not None]
        if len(set(used)) != len(used):
            raise ValueError(f"two devices share a GPIO pin: {used}")

        self.backend = (backend or default_backend()).lower()
        if self.backend not in ("pi", "fake"):
            raise ValueError(f"backend must be 'pi' or 'fake', got {backend!r}")
        gpiozero = _import_gpiozero()
        MockFactory = _mock_factory_class()
        # Reading Device.pin_factory is safe: gpiozero only builds its default factory
        # (and so touches hardware) when the first device is created.
        current = gpiozero.Device.pin_factory
        if pin_factory is None and self.backend == "fake":
            pin_factory = current if isinstance(current, MockFactory) else MockFactory()
        self.pin_factory = pin_factory
        self.mock = isinstance(pin_factory if pin_factory is not None else current, MockFactory)
        if bounce_time is _AUTO:
            bounce_time = None if self.mock else DEFAULT_BOUNCE_S

        self.events: queue.Queue[ButtonEvent] = events if events is not None else queue.Queue()
        self._clock = clock
        self.pull_up = pull_up
        self.buttons: dict[str, Any] = {}
        self.buzzer: Any = None
        # gpiozero warns of each pin factory it falls back from: said in our one line
        # when none works, logged when one does
        with warnings.catch_warnings(record=True) as fallbacks:
            warnings.simplefilter("always", gpiozero.PinFactoryFallback)
            self._open(gpiozero, wanted, buzzer_pin, pin_factory, bounce_time, pull_up,
                       fallbacks)
        for w in fallbacks:
            log.info("%s", w.message)
        self.closed = False

    def _open(self, gpiozero: Any, wanted: Mapping[str, int | None], buzzer_pin: int | None,
              pin_factory: Any, bounce_time: float | None, pull_up: bool,
              fallbacks: list[warnings.WarningMessage]) -> None:
        try:
            for name in BUTTON_NAMES:
                pin = wanted.get(name)
                if pin is None:
                    continue
                button = gpiozero.Button(
                    pin, pull_up=pull_up, bounce_time=bounce_time, pin_factory=pin_factory
                )
                button.when_pressed = self._callback(name)
                self.buttons[name] = button
            if buzzer_pin is not None:
                self.buzzer = gpiozero.Buzzer(buzzer_pin, pin_factory=pin_factory)
        except Exception as exc:
            self.close()
            if isinstance(exc, (gpiozero.GPIOZeroError, OSError, ImportError)) or (
                    type(exc).__module__.split(".")[0] in PIN_LIBRARIES):
                # no pin factory here (not a Pi, lgpio missing on a Pi 5), a pin in use,
                # no permission for /dev/gpiochip*: a person's fix, not a traceback. With
                # GPIOZERO_PIN_FACTORY set (the unit sets lgpio) gpiozero does not wrap
                # the library's own errors: its import error, lgpio.error
                why = next((f" ({w.message})" for w in fallbacks
                            if issubclass(w.category, gpiozero.PinFactoryFallback)), "")
                raise ButtonsUnavailable(f"GPIO buttons cannot be opened: {exc}{why}",
                                         GPIO_PINS_ADVICE) from exc
            raise

    def _callback(self, name: str) -> Callable[[], None]:
        def pressed() -> None:
            self.events.put(ButtonEvent(name, float(self._clock())))

        return pressed

    # -- reading --------------------------------------------------------------------
    def get(self, timeout: float | None = None) -> ButtonEvent | None:
        """The next press, waiting up to ``timeout`` seconds (None: don't wait)."""
        try:
            if timeout is None:
                return self.events.get_nowait()
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def drain(self) -> list[ButtonEvent]:
        """Every press waiting now, oldest first."""
        out: list[ButtonEvent] = []
        while (event := self.get()) is not None:
            out.append(event)
        return out

    def is_pressed(self, name: str) -> bool:
        return bool(self.buttons[name].is_pressed)

    # -- simulation -----------------------------------------------------------------
    def press(self, name: str) -> None:
        """Simulate a press and release on mock pins (tests, the demo page)."""
        if name not in self.buttons:
            raise ValueError(f"no {name!r} button (have: {', '.join(self.buttons)})")
        pin = self.buttons[name].pin
        if not hasattr(pin, "drive_low"):
            raise RuntimeError("press() needs mock pins (backend='fake' or a MockFactory)")
        if self.pull_up:
            pin.drive_low()
            pin.drive_high()
        else:
            pin.drive_high()
            pin.drive_low()

    # -- buzzer ---------------------------------------------------------------------
    def beep(
        self, n: int = 1, on_time: float = 0.08, off_time: float = 0.08, background: bool = True
    ) -> bool:
        """Beep ``n`` times (in gpiozero's background thread by default); False if no buzzer."""
        if self.buzzer is None:
            return False
        self.buzzer.beep(on_time=on_time, off_time=off_time, n=n, background=background)
        return True

    # -- lifetime -------------------------------------------------------------------
    def close(self) -> None:
        """Release the pins; idempotent."""
        for button in self.buttons.values():
            button.close()
        self.buttons = {}
        if self.buzzer is not None:
            self.buzzer.close()
            self.buzzer = None
        self.closed = True

