"""What every device shares: ``with device:`` closes it, as gpiozero devices do."""

from __future__ import annotations

from types import TracebackType
from typing import TypeVar

_D = TypeVar("_D", bound="Closeable")


class Closeable:
    """A device that releases its hardware in ``close()``; usable as a context manager."""

    def close(self) -> None:  # pragma: no cover - every device overrides it
        raise NotImplementedError

    def __enter__(self: _D) -> _D:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
