"""The journal: every game on disk, move by move, so no crash costs the table its game.

``Journal`` is an SQLite file (WAL, fsync on every move) that implements the
session's ``JournalSink``; ``resume_or_start`` picks a game back up after a
restart; ``companion.store.safety`` guards uploads (zips, images).

Names are imported lazily: the CLI loads ``companion.store.commands`` on every
run, and ``companion score`` should not pay for SQLite and the rules engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from companion.store.journal import (
        DATA_FILE,
        GameInfo,
        Journal,
        JournalError,
        UnknownGameError,
        default_data_dir,
        open_data_dir,
        resume_or_start,
        table_game_service,
    )

__all__ = [
    "DATA_FILE", "GameInfo", "Journal", "JournalError", "UnknownGameError", "default_data_dir",
    "open_data_dir", "resume_or_start", "table_game_service",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("companion.store.journal"), name)
    raise AttributeError(f"module 'companion.store' has no attribute {name!r}")
