"""Table hardware for the Manhattan companion: camera sources, LED strips, buttons.

Modelled on gpiozero: every device takes its backend as a keyword argument and a
fake backend ships alongside the real ones, so the controller, the web page and the
tests run the same code on a laptop as on the Raspberry Pi.

Rules this package keeps so it is safe to import anywhere:

* it never imports ``companion`` (the application depends on it, not the reverse);
* importing it touches no hardware, imports no Pi-only module and configures no
  logging: Pi detection (``/proc/device-tree/model``) and the imports of picamera2,
  spidev, rpi_ws281x and gpiozero happen inside constructors;
* the default backend comes from ``COMPANION_BACKEND=pi|fake``; unset means "pi" on
  a Raspberry Pi and "fake" elsewhere (see :mod:`hardware.host`).

Modules: :mod:`hardware.camera`, :mod:`hardware.leds`, :mod:`hardware.buttons`,
:mod:`hardware.doctor`, :mod:`hardware.sdnotify`, :mod:`hardware.host`,
:mod:`hardware.errors`, :mod:`hardware.device`.
"""

from __future__ import annotations

__all__: list[str] = []
