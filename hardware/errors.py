"""Exceptions that carry advice, so `companion doctor` and the page can tell a person what to do."""

from __future__ import annotations


class HardwareError(RuntimeError):
    """A device failed; ``advice`` is one sentence a person at the table can act on."""

    def __init__(self, message: str, advice: str | None = None) -> None:
        self.message = message
        self.advice = advice
        super().__init__(f"{message} ({advice})" if advice else message)


class BackendUnavailable(HardwareError):
    """A backend cannot be used on this machine (missing module, device or permission)."""


class CameraUnavailable(BackendUnavailable):
    """A camera backend cannot be opened."""


class LedBackendUnavailable(BackendUnavailable):
    """An LED backend cannot be opened."""


class ButtonsUnavailable(BackendUnavailable):
    """The button backend (gpiozero) cannot be used."""


class SourceError(HardwareError):
    """A recorded source (folder, video file) has nothing usable in it."""


class EndOfStream(EOFError):
    """A finite source (folder, video, iterable) has served its last frame.

    Subclasses EOFError rather than HardwareError because running out of photos
    while replaying a game is the normal end, not a failure.
    """
