"""``companion games``, ``companion export`` and ``companion import``: the journal's history.

Heavy imports (SQLite, the rules engine) happen inside the handlers so other
commands start fast. Every failure is one line on stderr and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion.cli import CommandError

if TYPE_CHECKING:
    from companion.store.journal import GameInfo, Journal

_DATA_DIR_HELP = "data folder (default: $COMPANION_DATA_DIR or ~/.local/share/manhattan-companion)"


def _data_dir(args: argparse.Namespace) -> Path:
    from companion.store.journal import default_data_dir

    return Path(args.data_dir) if args.data_dir else default_data_dir()


def _open_existing(folder: Path, command: str) -> Journal | None:
    """The folder's journal, or None if it holds none yet; never creates anything."""
    from companion.store.journal import DATA_FILE, Journal

    if not folder.exists():
        raise CommandError(f"{folder}: no such data folder")
    if not folder.is_dir():
        raise CommandError(f"{folder}: not a folder")
    if not (folder / DATA_FILE).exists():
        return None
    journal = Journal(folder / DATA_FILE)
    _print_notices(journal, command)
    return journal


def _print_notices(journal: Journal, command: str) -> None:
    for notice in journal.notices:
        print(f"companion {command}: warning: {notice}", file=sys.stderr)


# -- games -------------------------------------------------------------------

def cmd_games(args: argparse.Namespace) -> int:
    folder = _data_dir(args)
    journal = _open_existing(folder, "games")
    games: list[GameInfo] = []
    if journal is not None:
        with journal:
            games = journal.list_games()
    if args.json:
        for g in games:
            print(json.dumps(g.to_json()))
        return 0
    if not games:
        print(f"no games in {folder}")
        return 0
    print(format_games(games), end="")
    return 0


def format_games(games: list[GameInfo]) -> str:
    """The ``companion games`` table: one game per line, oldest first."""
    rows = [("ID", "DATE", "PLAYERS", "ROUNDS", "MOVES", "STATUS", "WINNER")]
    for g in games:
        rounds = "?" if g.rounds_played is None else f"{g.rounds_played}/{g.rounds}"
        rows.append((g.id, g.date or "-", ", ".join(g.players) or "-", rounds,
                     "?" if g.error else str(g.moves), g.status,
                     ", ".join(g.winners) or "-"))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
                   + "\n" for r in rows)


# -- export --------------------------------------------------------------------

def cmd_export(args: argparse.Namespace) -> int:
    from companion.rules.errors import RulesError
    from companion.store.journal import UnknownGameError

    folder = _data_dir(args)
    journal = _open_existing(folder, "export")
    if journal is None:
        raise CommandError(f"no game {args.game_id!r} in {folder} (it holds no games)")
    with journal:
        try:
            data = journal.export(args.game_id, check=not args.raw)
        except UnknownGameError:
            raise CommandError(f"no game {args.game_id!r} in {folder} "
                               "(see: companion games)") from None
        except RulesError as exc:
            raise CommandError(f"{exc} (use --raw to export the stored entries)") from None
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.output and args.output != "-":
        out = Path(args.output)
        tmp = out.with_name(out.name + ".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise CommandError(f"{out}: cannot write ({exc.strerror})") from None
        print(f"exported game {args.game_id} to {out}")
    else:
        sys.stdout.write(text)
    return 0


# -- import --------------------------------------------------------------------

def cmd_import(args: argparse.Namespace) -> int:
    from companion.store.journal import DATA_FILE, Journal

    path = Path(args.file)
    if not path.exists():
        raise CommandError(f"{path}: no such file")
    if path.is_dir():
        raise CommandError(f"{path}: is a folder, not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not a text file") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path}: malformed JSON: {exc.msg} at line {exc.lineno} "
                           f"column {exc.colno}") from None
    except RecursionError:
        raise CommandError(f"{path}: malformed JSON: nested too deeply") from None
    folder = _data_dir(args)
    if folder.exists() and not folder.is_dir():
        raise CommandError(f"{folder}: not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    with Journal(folder / DATA_FILE) as journal:
        _print_notices(journal, "import")
        try:
            game_id = journal.import_record(data)
        except ValueError as exc:  # RecordError, JournalError
            raise CommandError(f"{path}: {exc}") from None
        info = next(g for g in journal.list_games() if g.id == game_id)
    print(f"imported {path} as game {game_id} ({info.moves} moves, {info.status})")
    return 0


# -- registration --------------------------------------------------------------

def register(sub: Any) -> None:
    p = sub.add_parser("games", help="list the games in the journal")
    p.add_argument("--data-dir", metavar="DIR", help=_DATA_DIR_HELP)
    p.add_argument("--json", action="store_true", help="one JSON object per game and line")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("export", help="write a journaled game as a manhattan-game/1 record")
    p.add_argument("game_id", metavar="GAME_ID")
    p.add_argument("--data-dir", metavar="DIR", help=_DATA_DIR_HELP)
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--raw", action="store_true",
                   help="the stored entries as they are, even if they no longer replay")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="add a manhattan-game/1 record to the journal")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--data-dir", metavar="DIR", help=_DATA_DIR_HELP)
    p.set_defaults(func=cmd_import)


REGISTER = [register]
