"""Board profiles: every physical number of a board lives in one of these JSON files."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from companion.jsontext import json_object

DEFAULT_PROFILE = "reference-board"


def load_profile(name_or_path: str | Path = DEFAULT_PROFILE) -> dict[str, Any]:
    """Load a board profile by built-in name or by file path.

    Raises ValueError with a one-line message for a profile that is not there or
    not a JSON object, so a command given a bad ``--profile`` says which and why.
    """
    path = Path(name_or_path)
    if path.suffix == ".json":
        where = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ValueError(f"{path}: no such board profile") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: cannot read the board profile ({exc})") from None
    else:
        where = f"board profile {name_or_path!r}"
        entry = resources.files(__package__).joinpath(f"{name_or_path}.json")
        if not entry.is_file():
            known = sorted(p.name[:-5] for p in resources.files(__package__).iterdir()
                           if p.name.endswith(".json"))
            raise ValueError(f"no board profile {str(name_or_path)!r} (built in: "
                             f"{', '.join(known)}; or a .json file)")
        text = entry.read_text("utf-8")
    return json_object(text, where, "a board profile is a JSON object")
