"""``companion games``, ``companion export`` and ``companion import``: the journal's history.

Heavy imports (SQLite, the rules engine) happen inside the handlers so other
commands start fast. Every failure is one line on stderr and exit status 1.
``games`` and ``export`` only look: they open the journal read-only and never
change the data folder, not even to set a damaged journal aside (``import``
and the table do that).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion.cli import CommandError

if TYPE_CHECKING:
    from companion.store.journal import GameInfo, Journal

_DATA_DIR_HELP = "data folder (default: $COMPANION_DATA_DIR or ~/.local/share/manhattan-companion)"


def _data_dir(args: argparse.Namespace) -> Path:
    from companion.store.journal import default_data_dir

    if args.data_dir == "":  # not the default folder: an empty name, said so
        raise CommandError("--data-dir needs a folder")
    return Path(args.data_dir) if args.data_dir else default_data_dir()


def _open_existing(folder: Path) -> Journal | None:
    """The folder's journal opened read-only, or None if it holds none yet.

    Never creates, moves or writes anything: a damaged journal is a one-line error
    (JournalError) and stays as it was found.
    """
    from companion.store.journal import DATA_FILE, Journal

    if not folder.exists():
        raise CommandError(f"{folder}: no such data folder")
    if not folder.is_dir():
        raise CommandError(f"{folder}: not a folder")
    path = folder / DATA_FILE
    if not path.exists() and not Path(f"{path}-wal").exists():
        return None
    return Journal(path, read_only=True)


@contextmanager
def _reading(journal: Journal) -> Iterator[Journal]:
    """The journal, closed afterwards; damage SQLite finds only now is one line."""
    import sqlite3

    with journal:
        try:
            yield journal
        except sqlite3.Error as exc:
            raise CommandError(f"journal {journal.path} cannot be read ({exc}); "
                               "left as it is") from None


def _print_notices(journal: Journal, command: str) -> None:
    for notice in journal.notices:
        print(f"companion {command}: warning: {notice}", file=sys.stderr)


# -- games -------------------------------------------------------------------

def cmd_games(args: argparse.Namespace) -> int:
    folder = _data_dir(args)
    journal = _open_existing(folder)
    games: list[GameInfo] = []
    if journal is not None:
        with _reading(journal):
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
    """The ``companion games`` table: one game per line, oldest first.

    A row that does not read says why in its status; a cell with a line break or a
    control character is escaped, so one game stays one line.
    """
    rows: list[tuple[str, ...]] = [
        ("ID", "DATE", "PLAYERS", "ROUNDS", "MOVES", "STATUS", "WINNER")]
    for g in games:
        rounds = "?" if g.rounds_played is None else f"{g.rounds_played}/{g.rounds}"
        status = f"{g.status} ({g.damage})" if g.damage else g.status
        rows.append(tuple(_cell(c) for c in (
            g.id, g.date or "-", ", ".join(g.players) or "-", rounds,
            "?" if g.error else str(g.moves), status, ", ".join(g.winners) or "-")))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip()
                   + "\n" for r in rows)


def _cell(text: str) -> str:
    """``text`` with what a terminal would not show as one line escaped (\\n, \\x1b)."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)


# -- export --------------------------------------------------------------------

def cmd_export(args: argparse.Namespace) -> int:
    from companion.rules.errors import RulesError
    from companion.store.journal import DATA_FILE, UnknownGameError, journal_part

    folder = _data_dir(args)
    if args.output == "":  # was ignored: the record went to stdout instead
        raise CommandError("-o needs a file name (or - for stdout)")
    out = Path(args.output) if args.output and args.output != "-" else None
    if out is not None:  # before anything is read: nothing is written over the journal
        part = journal_part(out, folder / DATA_FILE)
        if part is not None:
            raise CommandError(f"{out} is {part}; not writing the export there "
                               "(choose another -o file)")
    journal = _open_existing(folder)
    if journal is None:
        raise CommandError(f"no game {args.game_id!r} in {folder} (it holds no games)")
    with _reading(journal):
        try:
            data = journal.export(args.game_id, check=not args.raw)
        except UnknownGameError:
            raise CommandError(f"no game {args.game_id!r} in {folder} "
                               "(see: companion games)") from None
        except RulesError as exc:
            raise CommandError(f"{exc} (use --raw to export the stored entries)") from None
    try:
        text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    except RecursionError:  # read back, but deeper than the writer goes
        raise CommandError(f"game {args.game_id} cannot be written as JSON "
                           "(nested too deeply)") from None
    if out is None:
        sys.stdout.write(text)
        return 0
    _write_file(out, text)
    print(f"exported game {args.game_id} to {out}")
    return 0


def _write_file(out: Path, text: str) -> None:
    """Write ``out`` whole or not at all: a file that is there already keeps its old
    contents until the new ones are on disk (a temporary file beside it, then a rename).

    A device or a pipe (``/dev/stdout``) is written to directly, never replaced.
    """
    try:
        st: os.stat_result | None = os.stat(out)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise CommandError(f"{out}: cannot write ({exc.strerror or exc})") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise CommandError(f"{out}: is a folder, not a file")
    data = text.encode("utf-8")
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            with open(out, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            raise CommandError(f"{out}: cannot write ({exc.strerror or exc})") from None
        return
    real = Path(os.path.realpath(out))  # through a symbolic link: the link stays
    tmp = real.with_name(f".{real.name}.{secrets.token_hex(4)}.tmp")
    made = False  # only a temporary file this call made is ever removed
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
        made = True
        try:
            if st is not None:
                os.chmod(tmp, stat.S_IMODE(st.st_mode))  # replacing: keep its permissions
            with open(fd, "wb", closefd=False) as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        finally:
            os.close(fd)
        os.replace(tmp, real)
    except BaseException as exc:  # Ctrl-C half-way too: no stray temporary file
        if made:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise CommandError(f"{out}: cannot write ({exc.strerror or exc})") from None
        raise


# -- import --------------------------------------------------------------------

def cmd_import(args: argparse.Namespace) -> int:
    import sqlite3

    from companion.cli import read_json_file
    from companion.store.journal import DATA_FILE, Journal

    path = Path(args.file)
    data = read_json_file(path, "a game record")
    folder = _data_dir(args)
    if folder.exists() and not folder.is_dir():
        raise CommandError(f"{folder}: not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    journal = Journal(folder / DATA_FILE)
    try:
        _print_notices(journal, "import")
        game_id = journal.import_record(data)
    except BaseException as exc:
        journal.close()
        if isinstance(exc, ValueError):  # RecordError, JournalError
            raise CommandError(f"{path}: {exc}") from None
        if isinstance(exc, sqlite3.Error):  # rolled back: e.g. a full card
            raise CommandError(f"{path}: not imported ({exc})") from None
        raise
    # The game is in: from here on nothing may say otherwise (a user who retries
    # imports it twice), so describing it and closing are best effort.
    detail = ""
    try:
        info = journal.game_info(game_id)
        detail = f" ({info.moves} moves, {info.status})"
    except Exception as exc:
        _warn_after_import(game_id, "reading it back", exc)
    finally:
        try:
            journal.close()
        except Exception as exc:
            _warn_after_import(game_id, "closing the journal", exc)
    print(f"imported {path} as game {game_id}{detail}")
    return 0


def _warn_after_import(game_id: str, step: str, exc: Exception) -> None:
    """One line on stderr: the game is imported, so this is no failure of the command."""
    why = " ".join(str(exc).split()) or type(exc).__name__
    print(f"companion import: warning: game {game_id} is imported, but {step} failed ({why})",
          file=sys.stderr)


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
