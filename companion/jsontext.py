"""JSON text that must hold an object (a profile, a config): one-line errors naming it."""

from __future__ import annotations

import json
from typing import Any

from companion.rules.jsonkeys import DuplicateKeyError, loads


def json_object(text: str, source: str, expected: str) -> dict[str, Any]:
    """``text`` parsed, or a ValueError naming ``source``: where the text is not JSON,
    and (``expected``, e.g. "a board profile is a JSON object") where it is no object."""
    try:
        data = loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{source}: not JSON ({exc.msg}, line {exc.lineno})") from None
    except DuplicateKeyError as exc:
        raise ValueError(f"{source}: not JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{source}: not JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ValueError(f"{source}: {expected}")
    return data
