"""JSON parsed with every object's keys unique.

Python's json keeps the last of two equal keys; in a board, a game set-up or a
camera file that silently drops what the writer meant, so a key given twice is
refused like any other malformed JSON.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKeyError(ValueError):
    """An object names one key twice."""

    def __init__(self, key: str) -> None:
        shown = json.dumps(key)
        if len(shown) > 40:
            shown = shown[:37] + '..."'
        super().__init__(f"key {shown} given twice")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def loads(text: str | bytes) -> Any:
    """``json.loads`` that raises DuplicateKeyError on a key given twice."""
    return json.loads(text, object_pairs_hook=_unique)
