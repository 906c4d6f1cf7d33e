"""The page's photo upload: replay the photos and open the result in the viewer.

Files arrive as (name, bytes). Only a file's base name is ever used, and only
for ordering; the photos are written under a fresh temporary folder with
names of our own, so no path from the request reaches the file system.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from companion.photos import is_photo_name, name_key
from companion.rules import jsonkeys
from companion.session import GameSession

MAX_PHOTOS = 400


class ReplayUploadError(ValueError):
    """The upload cannot be replayed; the message says why in one line."""


def _safe_stem(name: str) -> str:
    base = re.split(r"[\\/]", name)[-1]
    return re.sub(r"[^A-Za-z0-9._-]", "_", base)[:80] or "photo"


def make_replay_service(session: GameSession, *, journal: Any = None, workers: int = 1,
                        ) -> Callable[[Sequence[Any]], Mapping[str, Any]]:
    """A ``replay`` service for :func:`companion.web.create_app`."""

    def replay_upload(files: Sequence[Any]) -> Mapping[str, Any]:
        try:
            return _replay_upload(files)
        finally:  # the pages that showed its progress put their own line back
            session.announce("replay-finished", {})

    def _replay_upload(files: Sequence[Any]) -> Mapping[str, Any]:
        from companion.commands import colour_mismatch, read_folder
        from companion.replay import grouped_warnings, replay
        from companion.rules import check_new_game
        from companion.rules.record import PHOTOS_SOURCE, config_from_json

        # (by the rule a folder's and a zip's are read by: macOS's "._X.jpg" is none)
        photos = [f for f in files if is_photo_name(_safe_stem(f.name))]
        if not photos:
            raise ReplayUploadError("no photos in the upload (JPEG, PNG or HEIC)")
        if len(photos) > MAX_PHOTOS:
            raise ReplayUploadError(f"too many photos: {len(photos)} (at most {MAX_PHOTOS})")
        config = None
        game = next((f for f in files if _safe_stem(f.name) == "game.json"), None)
        if game is not None:
            try:
                config = check_new_game(config_from_json(jsonkeys.loads(game.data.decode("utf-8"))))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                raise ReplayUploadError("game.json is not valid JSON") from None
            except jsonkeys.DuplicateKeyError as exc:
                raise ReplayUploadError(f"game.json is not valid JSON ({exc})") from None
        photos.sort(key=lambda f: name_key(_safe_stem(f.name)))
        # the photos keep their names in the folder, which orders them as a folder on
        # the command line is (two cameras' by their clocks, a counter that wrapped);
        # names that clash (two phones' IMG_0001) are numbered in upload order, and,
        # being more than one camera's, ordered by the times the photos were taken
        # when every one has its time
        stems = [_safe_stem(f.name) for f in photos]
        several = len({s.lower() for s in stems}) < len(stems)
        if several:
            written = [f"{n:04d}-{s}" for n, s in enumerate(stems)]
        else:
            written = stems
        shown = dict(zip(written, stems, strict=True))

        def own(name: str) -> str:
            return shown.get(name, name)

        with tempfile.TemporaryDirectory(prefix="companion-upload-") as tmp:
            folder = Path(tmp)
            for f, name in zip(photos, written, strict=True):
                f.save(folder / name)  # from the upload's spool: no photo held in memory

            def progress(done: int, total: int, name: str) -> None:
                session.announce("replay-progress", {"done": done, "total": total,
                                                     "photo": own(name)})

            colors = list(config.colors) if config else None
            observations, skipped, _how = read_folder(folder, None, colors, workers,
                                                      progress=progress,
                                                      several_cameras=several)
            mismatch = colour_mismatch(observations, colors)
        # the photos' own names (in the page's warnings too), without an order prefix
        skipped = [(own(n), w) for n, w in skipped]
        observations = [replace(o, name=own(o.name)) for o in observations]
        if not observations:
            raise ReplayUploadError("no photo showed the board: "
                                    + "; ".join(f"{n}: {w}" for n, w in skipped[:3]))
        result = replay(observations, config, skipped=skipped)
        if mismatch:
            result.warnings.insert(0, {"photo": None, "reason": "colours", "message": mismatch})
        out = result.to_json()
        # marked as replayed: the table's camera does not record into it, and a
        # restart resumes the table's game, not this one
        record = replace(result.record, meta={**result.record.meta, "source": PHOTOS_SOURCE})
        game_id = None
        if journal is not None and record.entries:
            game_id = journal.import_record(record.to_json())
        doubtful = [m for m in out["moves"] if m.get("doubtful")]
        listed = 0
        # what several photos share is said once, in the list and in the note alike
        grouped = grouped_warnings(out["warnings"])
        if record.entries:
            session.resume(record, game_id)
            # the replay's warnings go to the page's list, each said once for all the
            # photos it is about (a move no photo showed is marked "check" already)
            for w in grouped:
                if w["reason"] != "never-shown":
                    session.report(str(w["reason"]), str(w["message"]))
                    listed += 1
        return {"moves": len(out["moves"]), "rounds": out["rounds"],
                "warnings": out["warnings"], "players": out["players"],
                "opened": bool(result.record.entries), "listed": listed,
                "grouped": [str(w["message"]) for w in grouped],
                "doubtful": [m.get("notation") or m["site"] for m in doubtful]}

    return replay_upload
