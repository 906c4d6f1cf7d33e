"""The companion page: a Flask app the players open on their phones and a big screen.

Modelled on the Flask tutorial: :func:`create_app` builds the app from a
config and the services the table provides (the live ``GameSession``, the
camera view, the replay handler, the LED strip, photo crops), so tests and the
demo inject fakes and the Pi injects the real ones. Changing actions need the
table PIN; every error is a JSON ``{"error": "one line"}``.

Names are imported lazily: the CLI imports ``companion.web.commands`` on every
run, and ``companion score`` should not pay for Flask.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from companion.web.app import (
        DEFAULTS,
        Services,
        Table,
        UploadedFile,
        create_app,
        generate_pin,
        table,
    )

__all__ = ["DEFAULTS", "Services", "Table", "UploadedFile", "create_app", "generate_pin",
           "table"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("companion.web.app"), name)
    raise AttributeError(f"module 'companion.web' has no attribute {name!r}")
