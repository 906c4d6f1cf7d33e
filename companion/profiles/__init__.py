"""Board profiles: every physical number of a board lives in one of these JSON files."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

DEFAULT_PROFILE = "reference-board"


def load_profile(name_or_path: str | Path = DEFAULT_PROFILE) -> dict[str, Any]:
    """Load a board profile by built-in name or by file path."""
    path = Path(name_or_path)
    if path.suffix == ".json" and path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        text = resources.files(__package__).joinpath(f"{name_or_path}.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
