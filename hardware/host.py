"""What machine we run on, read lazily so importing the package never probes anything.

The backend for every device defaults to ``COMPANION_BACKEND`` (``pi`` or ``fake``);
when it is unset we look at the device-tree model once, at construction time, and
pick ``pi`` only on a Raspberry Pi.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Literal

BackendKind = Literal["pi", "fake"]

BACKEND_ENV = "COMPANION_BACKEND"
BACKENDS: tuple[BackendKind, ...] = ("pi", "fake")

# /proc/device-tree is a symlink into /sys/firmware; a hardened service may hide one of them.
MODEL_PATHS: tuple[str, ...] = (
    "/proc/device-tree/model",
    "/sys/firmware/devicetree/base/model",
)

# The Pi 5 family (Pi 5, Pi 500, Compute Module 5) has the RP1 I/O chip: no rpi_ws281x,
# and gpiozero works there only through lgpio.
_PI5_RE = re.compile(r"Raspberry Pi (?:5|500|Compute Module 5)\b")


def board_model(paths: Sequence[str] = MODEL_PATHS) -> str | None:
    """The device-tree model string (e.g. "Raspberry Pi 5 Model B Rev 1.0"), or None."""
    for path in paths:
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        text = raw.replace(b"\x00", b"").decode("utf-8", "replace").strip()
        if text:
            return text
    return None


def is_raspberry_pi(model: str | None) -> bool:
    """True for any Raspberry Pi model string."""
    return bool(model) and "Raspberry Pi" in str(model)


def is_pi5(model: str | None) -> bool:
    """True for the RP1-based boards (Pi 5, Pi 500, CM5)."""
    return bool(model) and _PI5_RE.search(str(model)) is not None


def default_backend(
    environ: Mapping[str, str] | None = None,
    model_paths: Sequence[str] = MODEL_PATHS,
) -> BackendKind:
    """``COMPANION_BACKEND`` if set, else "pi" on a Raspberry Pi and "fake" elsewhere."""
    env = os.environ if environ is None else environ
    value = env.get(BACKEND_ENV, "").strip().lower()
    if value == "pi":
        return "pi"
    if value == "fake":
        return "fake"
    if value:
        raise ValueError(f"{BACKEND_ENV}={env.get(BACKEND_ENV)!r}: expected 'pi' or 'fake'")
    return "pi" if is_raspberry_pi(board_model(model_paths)) else "fake"
