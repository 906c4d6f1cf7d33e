"""The shipped thresholds and weights: ``config.json`` is the one place they live.

Every vision stage takes its section of the config as a mapping and falls
back on this file's values for what the mapping leaves out, so a stage called
on its own behaves as it does inside the reader.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

from companion.jsontext import json_object


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


def _is_path(text: str) -> bool:
    """Whether ``text`` names something on disk (a long inline JSON is no file name)."""
    from pathlib import Path

    try:
        return Path(text).exists()
    except OSError:
        return False


def load_overrides(text: str) -> dict[str, Any]:
    """Config overrides from a JSON file, or inline JSON (``{"sites": {"glare_log": 0.3}}``).

    Every section and key must be one the shipped config has: a misspelt key
    would otherwise change nothing and an A/B comparison would look like a
    wash. A value must be of the shipped one's type; null only where the
    section's ``_nullable`` lists the key; a grid the section's ``_grids`` lists
    must be [from, to, step] with 0 < from <= to and a step above 0. Raises
    ValueError with a one-line message.
    """
    from pathlib import Path

    inline = text.lstrip()[:1] in ("{", "[") and not _is_path(text)
    source = "inline config" if inline else text
    if not inline:
        if Path(text).exists() and not Path(text).is_file():
            raise ValueError(f"{source}: not a regular file")
        try:
            text = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{source}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ValueError(f"{source}: not UTF-8 text") from None
    data = json_object(text, source, "expected an object of config sections")
    shipped = default_config()
    for name, value in data.items():
        if name.startswith("_"):
            continue
        if name not in shipped or not isinstance(shipped[name], dict):
            raise ValueError(f"{source}: no config section {name!r}")
        if not isinstance(value, dict):
            raise ValueError(f"{source}: section {name!r} must be an object")
        unknown = sorted(k for k in value if k not in shipped[name])
        if unknown:
            raise ValueError(f"{source}: no key {name}.{unknown[0]} in the shipped config")
        nullable = shipped[name].get("_nullable", ())
        for key, v in value.items():
            kind = _kind(shipped[name][key])
            if v is None and key in nullable:
                continue  # the stage reads null as a rule of its own (README says which)
            if kind is not None and _kind(v) != kind:
                raise ValueError(f"{source}: {name}.{key} must be {kind}, got {v!r}")
            _check_items(source, f"{name}.{key}", shipped[name][key], v)
            _check_range(source, f"{name}.{key}", v, shipped[name].get("_ranges", {}).get(key))
            if key in shipped[name].get("_grids", ()) and v is not None:
                _check_grid(source, f"{name}.{key}", v)
    scorer = data.get("sites", {}).get("scorer")
    if isinstance(scorer, dict):
        # an override replaces the whole scorer: its own shape rules, checked now
        from companion.vision.sites import Scorer

        try:
            Scorer.from_config(scorer)
        except ValueError as exc:
            raise ValueError(f"{source}: {exc}") from None
    return data


def _check_range(source: str, where: str, value: Any, bounds: Any) -> None:
    """A number must be finite, and within the section's ``_ranges`` for its key: the
    sizes of arrays hang on some (sites.max_height 100000 took 20 GB)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if not math.isfinite(value):
        raise ValueError(f"{source}: {where} must be a finite number, got {value!r}")
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{source}: {where} must be from {bounds[0]} to {bounds[1]}, "
                         f"got {value!r}")


def _check_grid(source: str, path: str, value: list[float]) -> None:
    """A searched grid (a section's ``_grids``): from, to and a step, all above 0."""
    if len(value) != 3:
        raise ValueError(f"{source}: {path} must be [from, to, step], got {value!r}")
    lo, hi, step = value
    if not (0 < lo <= hi and step > 0):
        raise ValueError(f"{source}: {path} must be [from, to, step] with 0 < from <= to "
                         f"and a step above 0, got {value!r}")


def _check_items(source: str, path: str, shipped: Any, value: Any) -> None:
    """A list's items must be of the shipped items' kind (lists of lists, too)."""
    if not isinstance(shipped, list) or not isinstance(value, list) or not shipped:
        return
    kinds = {_kind(x) for x in shipped}
    if len(kinds) != 1 or None in kinds:
        return
    kind = kinds.pop()
    for i, v in enumerate(value):
        if _kind(v) != kind:
            raise ValueError(f"{source}: {path}[{i}] must be {kind}, got {v!r}")
        _check_items(source, f"{path}[{i}]", shipped[0], v)


def _kind(value: Any) -> str | None:
    """What an override of a shipped value must be (None: the shipped null takes any)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"
