"""The shipped thresholds and weights: ``config.json`` is the one place they live.

Every vision stage takes its section of the config as a mapping and falls
back on this file's values for what the mapping leaves out, so a stage called
on its own behaves as it does inside the reader.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any


@lru_cache(maxsize=1)
def default_config() -> dict[str, Any]:
    """The whole shipped config (companion/vision/config.json). Do not mutate it."""
    text = resources.files("companion.vision").joinpath("config.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def section(name: str) -> dict[str, Any]:
    """The shipped values of one section (shared: copy before changing it)."""
    value = default_config()[name]
    if not isinstance(value, dict):
        raise KeyError(f"config.json has no section {name!r}")
    return value


def merged_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The default config with ``config``'s sections laid over it (one level deep)."""
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in default_config().items()}
    for k, v in (config or {}).items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out
