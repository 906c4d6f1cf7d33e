"""An SQLite journal of every game: a power cut, a kicked cable or a crash loses nothing.

Each entry the session hands over is its own committed, fsynced transaction
(WAL mode, ``synchronous=FULL``) before ``append`` returns, so whatever the
table saw acknowledged is on the card. Replaying a game's header and entries
through :meth:`GameRecord.from_json` rebuilds exactly the live state.

A file that is not ours or is damaged is never overwritten or deleted: it is
moved aside to ``<name>.corrupt-<timestamp>`` and a fresh journal starts, with
a one-line notice in :attr:`Journal.notices` for the caller to show. The games
a damaged journal of ours still yields (each with the longest run of its
entries that reads and replays) are copied into the fresh one, with a notice.
Opened with ``read_only=True`` (``companion games``, ``export``) nothing is set
aside or written: a file that is not a healthy journal is a :class:`JournalError`.

A row edited by hand or damaged on the card (a header that is not JSON, an id
that is not text) is listed as damaged and refused by name on export; it never
stops the other games from being listed.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import math
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from companion.rules.errors import RecordError, RulesError
from companion.rules.record import RECORD_FORMAT, GameRecord, final_result, is_from_photos
from companion.store.safety import image_kind

if TYPE_CHECKING:
    from companion.rules.state import GameConfig

log = logging.getLogger(__name__)

#: ``PRAGMA application_id`` of our files: "MNHT" (Manhattan) in ASCII.
APPLICATION_ID = 0x4D4E4854
#: ``PRAGMA user_version``: bump with a migration when the tables change.
SCHEMA_VERSION = 1
#: The journal's file name inside a data folder.
DATA_FILE = "companion.sqlite3"
#: Default evidence budget: photo crops never take more than this of the SD card.
DEFAULT_EVIDENCE_BUDGET = 256 * 1024 * 1024

_SQLITE_MAGIC = b"SQLite format 3\x00"
_SIDE_FILES = ("-wal", "-shm", "-journal")
#: beside the journal: held (flock) by the one process that writes it
LOCK_SUFFIX = ".lock"

#: SQLite's primary result codes that speak of the machine, not of the file: the file
#: is in use (busy, locked), may not be written or opened (read-only, permission, cannot
#: open), the disk is full or out of memory. Such a journal is healthy: setting it aside
#: (as damage) hid every game and, on a full disk, left a zero-byte journal behind.
_MACHINE_CODES = {3: "no permission", 5: "busy", 6: "locked", 7: "out of memory",
                  8: "read-only", 10: "the disk failed to read or write",
                  13: "the disk is full", 14: "cannot be opened", 23: "no permission"}


def machine_error(exc: BaseException) -> str | None:
    """What an SQLite error says of the machine (None: of the file, or not SQLite's)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.Error) or not isinstance(code, int):
        return None
    return _MACHINE_CODES.get(code & 0xFF)


def _machine_failure(path: Path, exc: sqlite3.Error, why: str) -> JournalError:
    detail = " ".join(str(exc).split())[:200]
    if why in ("busy", "locked"):
        return JournalError(f"journal {path} is busy ({detail}); is another companion "
                            "writing it?")
    advice = {"the disk is full": "free some space",
              "the disk failed to read or write": "free some space or check the card",
              "out of memory": "close other programs"}.get(
        why, "check the file's and its folder's owner and permissions")
    return JournalError(f"journal {path}: {why} ({detail}); nothing was moved or changed: "
                        f"{advice}, then start again")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id       TEXT PRIMARY KEY,
    created  REAL NOT NULL,
    header   TEXT NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0 CHECK (finished IN (0, 1)),
    result   TEXT,
    summary  TEXT
);
CREATE TABLE IF NOT EXISTS entries (
    game_id TEXT NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    entry   TEXT NOT NULL,
    time    REAL NOT NULL,
    PRIMARY KEY (game_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS evidence (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    ply     INTEGER,
    kind    TEXT NOT NULL,
    path    TEXT,
    blob    BLOB,
    bytes   INTEGER NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS evidence_game ON evidence(game_id);
CREATE INDEX IF NOT EXISTS games_created ON games(created);
"""

_REQUIRED = {
    "games": {"id", "created", "header", "finished", "result", "summary"},
    "entries": {"game_id", "seq", "entry", "time"},
    "evidence": {"id", "game_id", "ply", "kind", "path", "blob", "bytes", "created"},
}


class JournalError(ValueError):
    """The journal cannot do what was asked (a ValueError, so the CLI prints one line)."""


class UnknownGameError(JournalError):
    """No game with that id in this journal."""


class _Unusable(Exception):
    """Internal: the file on disk cannot be used as our journal; the message says why."""


class _Damaged(Exception):
    """Internal: a stored value does not read (e.g. "header is not JSON")."""


@dataclass(frozen=True)
class GameInfo:
    """One line of ``companion games``: enough to pick a game without replaying it."""

    id: str
    created: float | None  # None: the stored time is not a number
    date: str
    players: tuple[str, ...]
    moves: int
    rounds_played: int | None
    rounds: int | None
    finished: bool
    over: bool
    winners: tuple[str, ...]
    error: str | None = None
    abandoned: bool = False
    #: why the journal row itself does not read (``error`` then says the same): the
    #: game cannot be exported, unlike one that merely no longer replays
    damage: str | None = None

    @property
    def status(self) -> str:
        """"in play", "over" (not yet marked finished), "finished", "abandoned" or "damaged"."""
        if self.error:
            return "damaged"
        if self.abandoned:
            return "abandoned"
        if self.finished:
            return "finished"
        return "over" if self.over else "in play"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready whatever the row held (``created`` is None if it is no time)."""
        created: str | None = None
        if self.created is not None:
            try:  # 1e300 passes as a float, not as a date
                created = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.created))
            except (ValueError, OverflowError, OSError):
                pass
        return {
            "id": self.id, "created": created,
            "date": self.date, "players": list(self.players), "moves": self.moves,
            "rounds_played": self.rounds_played, "rounds": self.rounds,
            "finished": self.finished, "over": self.over, "status": self.status,
            "winners": list(self.winners), "error": self.error,
        }


def default_data_dir() -> Path:
    """``$COMPANION_DATA_DIR``, else ``~/.local/share/manhattan-companion``."""
    env = os.environ.get("COMPANION_DATA_DIR")
    if env:
        return Path(env)
    return Path.home() / ".local" / "share" / "manhattan-companion"


def _default_game_id(now: float) -> str:
    """Readable and unique across journals (a moved-aside file keeps its ids)."""
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(now)) + "-" + secrets.token_hex(2)


class Journal:
    """The SQLite journal: a ``JournalSink`` for :class:`GameSession`, plus history and evidence.

    Thread-safe: one connection shared under a lock (the web server calls in
    from many threads). Use as a context manager or call :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike[str], *,
                 evidence_dir: str | os.PathLike[str] | None = None,
                 evidence_budget: int = DEFAULT_EVIDENCE_BUDGET,
                 clock: Callable[[], float] = time.time,
                 new_id: Callable[[float], str] = _default_game_id,
                 read_only: bool = False, lock_wait: float = 15.0) -> None:
        self.path = Path(path)
        #: seconds to wait for another connection's write lock before "busy" (a web
        #: request and the table may write at once; 15 s covers an SD card's stall)
        self.lock_wait = lock_wait
        #: for commands that only look: nothing on disk is created, set aside, swept or
        #: written, and a file that is not a healthy journal raises JournalError
        self.read_only = read_only
        self.evidence_dir = (Path(evidence_dir) if evidence_dir is not None
                             else self.path.parent / "evidence")
        if evidence_budget < 0:
            raise ValueError("the evidence budget cannot be negative")
        self.evidence_budget = evidence_budget
        self.notices: list[str] = []
        self._clock = clock
        self._new_id = new_id
        self._lock = threading.RLock()
        self._lock_fd: int | None = None
        if read_only:
            self._conn = self._open_read_only()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        try:
            self._conn = self._open()
        except BaseException:
            self._release_lock()
            raise
        try:
            self._sweep_evidence()
        except (OSError, sqlite3.Error) as exc:  # a tidy-up: never a reason not to open
            log.warning("journal %s: could not sweep evidence: %s", self.path, exc)

    # -- opening -------------------------------------------------------------
    def _take_lock(self) -> None:
        """One writer per journal. SQLite keeps each transaction whole, not a game: two
        tables writing one game interleaved their moves (then it no longer replayed),
        and a second command could set aside the file the first was still writing."""
        import fcntl

        lock = Path(f"{self.path}{LOCK_SUFFIX}")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise JournalError(f"journal {self.path}: cannot make its lock file {lock.name} "
                               f"({exc.strerror or exc}); nothing was moved or changed") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            except OSError:
                holder = ""
            os.close(fd)
            who = f" (process {holder})" if holder.isdigit() else ""
            raise JournalError(f"journal {self.path} is in use by another companion{who}; "
                               "stop it first, or use its page") from None
        self._lock_fd = fd
        try:  # who holds it, for the next one's message (a full disk may refuse even that)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            pass

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # the lock goes with it; the file stays (no race)
            self._lock_fd = None

    def _open(self) -> sqlite3.Connection:
        try:
            return self._open_or_set_aside()
        except sqlite3.Error as exc:
            why = machine_error(exc)
            if why is None:
                raise
            raise _machine_failure(self.path, exc, why) from None

    def _open_or_set_aside(self) -> sqlite3.Connection:
        aside: Path | None = None
        try:
            self._inspect()
        except _Unusable as why:
            aside = self._set_aside(str(why))
        conn = self._connect()
        try:
            self._init_schema(conn)
        except sqlite3.DatabaseError as exc:  # damage the first look did not catch
            conn.close()
            if machine_error(exc) is not None:
                raise
            aside = self._set_aside(f"unusable ({exc})")
            conn = self._connect()
            self._init_schema(conn)
        if aside is not None:
            self._salvage(conn, aside)
        return conn

    def _open_read_only(self) -> sqlite3.Connection:
        """A connection that changes nothing: no set-aside, no schema, no WAL switch.

        A journal not yet written (no file, zero bytes, an empty SQLite file) reads
        as an empty in-memory journal, so the folder is left exactly as it was.
        """
        try:
            fresh = self._inspect()
        except _Unusable as why:
            reason = " ".join(str(why).split())[:300]
            raise JournalError(f"journal {self.path} is {reason}; left as it is") from None
        if fresh:
            conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            self._init_schema(conn)
            return conn
        # Not SQLite's mode=ro: on a WAL file that leaves -wal and -shm behind, while
        # a connection that only reads removes them again when it closes.
        conn = self._sqlite(self.path)
        conn.execute("PRAGMA query_only = ON")
        return conn

    def _salvage(self, conn: sqlite3.Connection, aside: Path) -> None:
        """Copy into the fresh journal the games a set-aside one of ours still yields.

        A power cut on an SD card damages a page or two, not every game: each game
        whose row reads is kept with the longest run of its entries that reads and
        replays (a notice says which were cut short). The set-aside file is read
        from a copy, so it stays byte for byte as it was found.
        """
        import shutil
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "aside.sqlite3"
            try:
                if not aside.is_file():
                    return
                shutil.copyfile(aside, copy)
                _fit_header_to_file(copy)
                wal = Path(f"{aside}-wal")
                if wal.is_file():  # what the last transactions wrote
                    shutil.copyfile(wal, Path(f"{copy}-wal"))
                src = sqlite3.connect(copy, isolation_level=None)
            except (OSError, sqlite3.Error):
                return
            try:
                games = _readable_games(src)
            finally:
                src.close()
        kept, short = [], []
        for (game_id, created, header, finished, result, summary), entries, total in games:
            whole = len(entries) == total
            got = (f"{len(entries)} of {total} entries" if total is not None
                   else f"{len(entries)} entries, those after them unreadable")
            if not whole:
                # the result and summary were of the whole game; one that had ended (or
                # been abandoned) stays out of play: the table must not resume a
                # finished game from its first moves
                summary = None
                result = (_dumps({"abandoned": f"recovered {got} from {aside.name}"})
                          if finished else None)
            conn.execute("BEGIN IMMEDIATE")  # a game at a time, as appended
            try:
                conn.execute("INSERT INTO games (id, created, header, finished, result, summary) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           (game_id, created, header, finished, result, summary))
                conn.executemany("INSERT INTO entries (game_id, seq, entry, time) "
                               "VALUES (?, ?, ?, ?)",
                               [(game_id, seq, text, t) for seq, text, t in entries])
            except sqlite3.Error:
                if conn.in_transaction:  # not after SQLite's own (a full disk)
                    conn.execute("ROLLBACK")
                continue
            conn.execute("COMMIT")
            kept.append(game_id)
            if not whole:
                short.append(f"{game_id}: {got}")
        if kept:
            notice = (f"recovered {len(kept)} game{'s' if len(kept) > 1 else ''} from "
                      f"{aside.name}" + (f" ({'; '.join(short)})" if short else ""))
            self.notices.append(notice)
            log.info("%s", notice)

    def _sqlite(self, path: Path, shared: bool = True) -> sqlite3.Connection:
        """A connection that waits ``lock_wait`` for another's lock: the connect
        timeout and the busy pragma both, as the pragma overrides the timeout."""
        conn = sqlite3.connect(path, timeout=self.lock_wait, isolation_level=None,
                               check_same_thread=not shared)
        conn.execute(f"PRAGMA busy_timeout = {round(self.lock_wait * 1000)}")
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = self._sqlite(self.path)
        conn.execute("PRAGMA foreign_keys = ON")
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":  # e.g. a file system without shared memory
            log.warning("journal %s: WAL mode unavailable, using %s", self.path, mode)
        conn.execute("PRAGMA synchronous = FULL")
        return conn

    def _inspect(self) -> bool:
        """Raise :class:`_Unusable` if the file on disk is not a healthy journal of ours;
        True if it holds nothing yet (missing, empty, or no tables)."""
        path = self.path
        wal = Path(f"{path}-wal")
        if not path.exists():
            if wal.exists() and wal.stat().st_size > 0:
                # SQLite would delete a WAL without its database: keep it for forensics.
                raise _Unusable("missing, but its write-ahead log was left behind")
            return True
        if path.is_dir():
            raise _Unusable("a folder, not a file")
        size = path.stat().st_size
        if size == 0 and not (wal.exists() and wal.stat().st_size > 0):
            return True  # created but never written: nothing to lose
        if size > 0:
            with open(path, "rb") as fh:
                if fh.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
                    raise _Unusable("not an SQLite database")
            if size < 512:
                raise _Unusable(f"truncated ({size} bytes)")
        try:
            conn = self._sqlite(path, shared=False)
        except sqlite3.Error as exc:
            why = machine_error(exc)
            if why is not None:
                raise _machine_failure(path, exc, why) from None
            raise _Unusable(f"unreadable ({exc})") from None
        try:
            app_id = conn.execute("PRAGMA application_id").fetchone()[0]
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")}
            if app_id == 0 and version == 0 and not tables:
                return True  # an empty SQLite file: ours, interrupted before the schema
            if app_id != APPLICATION_ID:
                raise _Unusable("another program's SQLite database"
                                f" (application_id {app_id:#x})")
            if version > SCHEMA_VERSION:
                raise _Unusable(f"written by a newer companion (schema {version}, "
                                f"this one reads {SCHEMA_VERSION})")
            rows = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(5)")]
            if rows != ["ok"]:
                raise _Unusable(f"damaged (integrity check: {'; '.join(rows)})")
            for table, want in _REQUIRED.items():
                have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
                if not want <= have:
                    raise _Unusable(f"damaged (table {table!r} is missing or incomplete)")
            return False
        except sqlite3.DatabaseError as exc:
            why = machine_error(exc)
            if why is not None:  # in use, read-only, a full disk: never taken for damage
                raise _machine_failure(path, exc, why) from None
            raise _Unusable(f"damaged ({exc})") from None
        finally:
            conn.close()

    def _set_aside(self, reason: str) -> Path:
        """Move the file (and its WAL) to ``<name>.corrupt-<timestamp>``; never overwrite.
        Returns where it went."""
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self._clock()))
        base = f"{self.path.name}.corrupt-{stamp}"
        n = 1
        target = self.path.with_name(base)
        while any(Path(f"{target}{s}").exists() for s in ("", *_SIDE_FILES)):
            n += 1
            target = self.path.with_name(f"{base}-{n}")
        # Side files first: a crash half-way leaves the main file where it was.
        for suffix in _SIDE_FILES:
            side = Path(f"{self.path}{suffix}")
            if side.exists():
                _move_no_clobber(side, Path(f"{target}{suffix}"))
        if self.path.exists():
            _move_no_clobber(self.path, target)
        reason = " ".join(reason.split())[:300]  # one line, whatever SQLite said
        notice = (f"journal {self.path} was {reason}: moved it to {target.name} "
                  "and started a fresh journal")
        self.notices.append(notice)  # the caller shows it (page, stderr)
        log.info("%s", notice)
        return target

    @staticmethod
    def _init_schema(conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # not after SQLite's own (a full disk)
                conn.execute("ROLLBACK")
            raise

    def _sweep_evidence(self) -> None:
        """Delete half-written crops (``*.tmp``) and files of our games no row names."""
        if not self.evidence_dir.is_dir():
            return
        with self._lock:  # decoded as file names are: a damaged id cannot stop the sweep
            known = {bytes(r[0]).decode("utf-8", "surrogateescape") for r in self._conn.execute(
                "SELECT CAST(id AS BLOB) FROM games WHERE typeof(id) = 'text'")}
            paths = {bytes(r[0]).decode("utf-8", "surrogateescape") for r in self._conn.execute(
                "SELECT CAST(path AS BLOB) FROM evidence WHERE path IS NOT NULL")}
        for sub in self.evidence_dir.iterdir():
            if not sub.is_dir() or sub.name not in known:
                continue  # another journal's (e.g. a moved-aside file's): not ours to touch
            for f in sub.iterdir():
                rel = f"{sub.name}/{f.name}"
                if f.is_file() and (f.suffix == ".tmp" or rel not in paths):
                    f.unlink(missing_ok=True)

    def close(self) -> None:
        with self._lock:
            self._conn.close()
            self._release_lock()

    def __del__(self) -> None:
        # a journal dropped without close() must not keep its folder locked
        if getattr(self, "_lock_fd", None) is not None:
            self._release_lock()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_writable(self) -> None:
        if self.read_only:
            raise JournalError(f"journal {self.path} is open read-only")

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One committed (and, with synchronous=FULL, fsynced) transaction."""
        self._check_writable()
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                # SQLite has rolled back by itself after some errors (a full disk):
                # a second ROLLBACK would hide the first error behind its own
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # -- JournalSink ---------------------------------------------------------
    def _free_id(self, db: sqlite3.Connection, now: float) -> str:
        """A game id not yet in the journal (ids carry the time, so clashes are rare)."""
        for _ in range(100):
            game_id = self._new_id(now)
            if db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
                return game_id
        raise JournalError("could not find a free game id")

    def begin_game(self, header: dict[str, Any]) -> str:
        """Start a game; the header is a record header (``header_json``)."""
        if not isinstance(header, dict):
            raise JournalError("a game header must be an object")
        text = _dumps(header)
        now = self._clock()
        with self._tx() as db:
            game_id = self._free_id(db, now)
            db.execute("INSERT INTO games (id, created, header) VALUES (?, ?, ?)",
                       (game_id, now, text))
        return game_id

    def append(self, game_id: str, entry: dict[str, Any]) -> None:
        """Add one record entry; it is on disk when this returns."""
        self.append_all(game_id, [entry])

    def append_all(self, game_id: str, entries: Sequence[dict[str, Any]]) -> None:
        """Add record entries in one transaction: all on disk when this returns, or
        none. A correction and the re-checks of the moves after it belong together:
        the correction alone (the disk full between them) no longer replayed."""
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("type") not in ("move", "correction"):
                raise JournalError(f"not a game-record entry: {entry!r}")
        texts = [_dumps(entry) for entry in entries]
        with self._tx() as db:
            row = db.execute("SELECT finished FROM games WHERE id = ?", (game_id,)).fetchone()
            if row is None:
                raise UnknownGameError(f"no game {game_id!r} in the journal")
            seq = db.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM entries WHERE game_id = ?",
                             (game_id,)).fetchone()[0]
            now = self._clock()
            db.executemany("INSERT INTO entries (game_id, seq, entry, time) VALUES (?, ?, ?, ?)",
                           [(game_id, seq + k, text, now) for k, text in enumerate(texts)])
            if row[0]:  # a late correction reopens a finished game: its result is stale
                db.execute("UPDATE games SET finished = 0, result = NULL, summary = NULL "
                           "WHERE id = ?", (game_id,))

    # -- reading ---------------------------------------------------------------
    def raw(self, game_id: str) -> dict[str, Any]:
        """The stored header and entries as a record, without checking them.

        A row that does not read (a header that is not a JSON object, an entry that
        is not JSON) is a JournalError naming the game: never a partial record.
        """
        with self._lock:
            row = self._conn.execute("SELECT CAST(header AS BLOB) FROM games WHERE id = ?",
                                     (game_id,)).fetchone()
            if row is None:
                raise UnknownGameError(f"no game {game_id!r} in the journal")
            texts = self._conn.execute(
                "SELECT CAST(entry AS BLOB) FROM entries WHERE game_id = ? ORDER BY seq",
                (game_id,)).fetchall()
        try:
            header = _header_of(row[0])
            entries = [_json_of(r[0], f"entries[{n}]") for n, r in enumerate(texts)]
        except _Damaged as why:
            raise JournalError(f"game {game_id} is damaged ({why})") from None
        return {"format": RECORD_FORMAT, "header": header, "entries": entries}

    def load(self, game_id: str) -> GameRecord:
        """The game rebuilt from its journal: equal to the live session's record."""
        data = self.raw(game_id)
        try:
            return GameRecord.from_json(data)
        except RulesError as exc:
            raise RecordError(f"game {game_id}: {exc}") from None

    def current_game(self) -> tuple[str, GameRecord] | None:
        """The latest unfinished game, to resume after a restart (None if there is none)."""
        game_id = self.latest_unfinished()
        if game_id is None:
            return None
        return game_id, self.load(game_id)

    def latest_unfinished(self, replays: bool = True) -> str | None:
        """The id :meth:`current_game` would resume, without replaying it: the newest
        unfinished game of the table, before any imported or replayed from photos
        (added while the table's was in play, they are newer, and the table would
        come back on them instead); else the newest imported one (a game carried on
        from another companion), else the newest replayed one (``replays`` false:
        None then)."""
        with self._lock:  # an id that is not text cannot be resumed: skipped
            # imported: every entry written when the game was (`companion import`); an
            # unfinished record imported beside the table's game took the table over
            rows = self._conn.execute(
                "SELECT CAST(id AS BLOB), header, EXISTS (SELECT 1 FROM entries e WHERE "
                "e.game_id = games.id) AND NOT EXISTS (SELECT 1 FROM entries e WHERE "
                "e.game_id = games.id AND e.time > games.created) FROM games WHERE "
                "finished = 0 AND typeof(id) = 'text' ORDER BY created DESC, rowid DESC"
            ).fetchall()
        imported = replayed = None
        for raw_id, header, only_imported in rows:
            try:
                game_id = bytes(raw_id).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if _replayed(header):
                replayed = replayed or game_id
            elif only_imported:
                imported = imported or game_id
            else:
                return game_id
        if imported is not None:
            return imported
        return replayed if replays else None

    def has_game(self, game_id: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM games WHERE id = ?",
                                      (game_id,)).fetchone() is not None

    def list_games(self) -> list[GameInfo]:
        """Every game, oldest first. A game that no longer replays is listed with its error;
        a row that does not read (edited by hand, a bad sector) as damaged, with why."""
        return [self._info(row) for row in self._info_rows("", ())]

    def game_info(self, game_id: str) -> GameInfo:
        """One game's line of :meth:`list_games`, without reading the others."""
        rows = self._info_rows("WHERE g.id = ?", (game_id,))
        if not rows:
            raise UnknownGameError(f"no game {game_id!r} in the journal")
        return self._info(rows[0])

    def _info_rows(self, where: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        # text as bytes, decoded one value at a time: SQLite's own decoding fails the
        # whole query on one value that is not UTF-8
        with self._lock:
            return self._conn.execute(
                "SELECT typeof(g.id), CAST(g.id AS BLOB), "
                "CASE WHEN typeof(g.id) = 'text' THEN NULL ELSE g.id END, "
                "CASE WHEN typeof(g.created) IN ('integer', 'real') THEN g.created END, "
                "CAST(g.header AS BLOB), g.finished, CAST(g.result AS BLOB), "
                "CAST(g.summary AS BLOB), "
                "(SELECT COUNT(*) FROM entries e WHERE e.game_id = g.id) "
                f"FROM games g {where} ORDER BY g.created, g.rowid", params).fetchall()

    def _info(self, row: tuple[Any, ...]) -> GameInfo:
        """A :class:`GameInfo` from one row of :meth:`_info_rows`, whatever it holds."""
        (id_type, id_bytes, id_other, created, header_raw, finished, result_raw,
         summary_raw, n_entries) = row
        gid: str | None = None  # None: the row cannot be read as a game
        shown, damage = repr(id_other), "id is not text"  # shown safely, whatever it is
        if id_type == "text":
            try:
                gid = shown = bytes(id_bytes).decode("utf-8")
            except UnicodeDecodeError:
                shown, damage = repr(bytes(id_bytes)), "id is not UTF-8 text"
        when = float(created) if created is not None and math.isfinite(created) else None
        header: Any = None
        result: Any = None
        try:
            if gid is not None:
                header = _header_of(header_raw)
                result = None if result_raw is None else _json_of(result_raw, "result")
        except _Damaged as why:
            gid, damage = None, str(why)
        if isinstance(header, dict):
            date = str(header.get("date", ""))
            players = header.get("players")
            names = tuple(str(p.get("name", "?")) if isinstance(p, dict) else "?"
                          for p in (players if isinstance(players, list) else []))
        else:
            date, names = "", ()
        if gid is None:
            return GameInfo(id=shown, created=when, date=date, players=names, moves=n_entries,
                            rounds_played=None, rounds=None, finished=bool(finished),
                            over=False, winners=(), error=damage, damage=damage)
        summary: Any = None
        if summary_raw is not None:
            try:
                summary = _json_of(summary_raw, "summary")
            except _Damaged:
                pass  # only a cache of the replay below
        if not isinstance(summary, dict):
            summary = self._summary(gid)
        winners = result.get("winners", []) if isinstance(result, dict) else []
        return GameInfo(
            id=gid, created=when, date=date, players=names,
            moves=summary.get("moves", n_entries), rounds_played=summary.get("rounds_played"),
            rounds=summary.get("rounds"), finished=bool(finished),
            over=bool(summary.get("over", False)),
            winners=tuple(str(w) for w in (winners if isinstance(winners, list) else [])),
            error=summary.get("error"),
            abandoned=isinstance(result, dict) and "abandoned" in result)

    def _summary(self, game_id: str) -> dict[str, Any]:
        try:
            record = self.load(game_id)
            state = record.replay()
        except (RulesError, ValueError, TypeError, RecursionError) as exc:
            return {"error": str(exc) or type(exc).__name__}
        return {"moves": len(record.effective()), "rounds_played": len(state.scores),
                "rounds": state.config.rounds, "over": state.is_over}

    def finish(self, game_id: str, result: dict[str, Any] | None = None) -> None:
        """Mark a game finished (it is no longer resumed). ``result`` defaults to the
        standings if the game is over."""
        summary = self._summary(game_id) if self.has_game(game_id) else None
        if summary is None:
            raise UnknownGameError(f"no game {game_id!r} in the journal")
        if result is None and summary.get("over"):
            result = final_result(self.load(game_id).replay())
        with self._tx() as db:
            db.execute("UPDATE games SET finished = 1, result = ?, summary = ? WHERE id = ?",
                       (None if result is None else _dumps(result), _dumps(summary), game_id))

    # -- interchange -----------------------------------------------------------
    def export(self, game_id: str, *, check: bool = True) -> dict[str, Any]:
        """A ``manhattan-game/1`` record; ``check=False`` gives the stored entries even
        when they no longer replay (the last resort for a damaged game)."""
        if not check:
            return self.raw(game_id)
        return self.load(game_id).to_json()

    def import_record(self, data: Any) -> str:
        """Store a ``manhattan-game/1`` record as a new game (validated first); its id.

        Its date must be a calendar day (``companion games`` sorts and shows it; a
        record read back from the journal is not held to it)."""
        record = GameRecord.from_json(data)
        if record.date:
            try:  # (fromisoformat also takes 20261206 and 2026-W49-7)
                if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", record.date):
                    raise ValueError(record.date)
                _dt.date.fromisoformat(record.date)
            except ValueError:
                raise RecordError(f"'date' in the header must be a day as YYYY-MM-DD, not "
                                  f"{record.date!r}") from None
        for n, entry in enumerate(record.entries):
            warning: object = getattr(entry, "warning", None)
            if warning is not None and not isinstance(warning, str):
                raise RecordError(f"entries[{n}]: 'warning' must be text")
        normal = record.to_json()
        header = {**data["header"], **normal["header"]}  # keep fields newer versions add
        summary = self._summary_of(record)
        result = normal.get("result")
        now = self._clock()
        with self._tx() as db:
            game_id = self._free_id(db, now)
            db.execute("INSERT INTO games (id, created, header, finished, result, summary) "
                       "VALUES (?, ?, ?, ?, ?, ?)",
                       (game_id, now, _dumps(header), int(result is not None),
                        None if result is None else _dumps(result),
                        _dumps(summary) if result is not None else None))
            db.executemany(
                "INSERT INTO entries (game_id, seq, entry, time) VALUES (?, ?, ?, ?)",
                [(game_id, n, _dumps(e), now) for n, e in enumerate(normal["entries"])])
        return game_id

    @staticmethod
    def _summary_of(record: GameRecord) -> dict[str, Any]:
        state = record.replay()
        return {"moves": len(record.effective()), "rounds_played": len(state.scores),
                "rounds": state.config.rounds, "over": state.is_over}

    # -- evidence --------------------------------------------------------------
    def add_evidence(self, game_id: str, ply: int | None, kind: str, jpeg_bytes: bytes) -> str:
        """Keep a photo crop (e.g. of a disputed move); prunes old crops to stay in budget."""
        self._check_writable()
        data = bytes(jpeg_bytes)
        if len(data) > self.evidence_budget:
            raise JournalError(f"evidence of {len(data)} bytes exceeds the whole budget "
                               f"({self.evidence_budget} bytes)")
        safe_kind = re.sub(r"[^a-z0-9_-]+", "-", str(kind).lower())[:32] or "photo"
        with self._lock:
            if not self.has_game(game_id):
                raise UnknownGameError(f"no game {game_id!r} in the journal")
            folder = self.evidence_dir / game_id
            folder.mkdir(parents=True, exist_ok=True)
            ext = {"png": ".png", "bmp": ".bmp", "webp": ".webp", "tiff": ".tif",
                   "heic": ".heic"}.get(image_kind(data[:16]) or "jpeg", ".jpg")
            name = f"{'x' if ply is None else f'{ply:04d}'}-{safe_kind}-{secrets.token_hex(6)}{ext}"
            final = folder / name
            tmp = folder / (name + ".tmp")
            try:
                with open(tmp, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())  # the row committed next must not outlive the bytes
                os.replace(tmp, final)
                _fsync_dir(folder)
            except OSError:
                tmp.unlink(missing_ok=True)
                raise
            try:
                with self._tx() as db:
                    cur = db.execute(
                        "INSERT INTO evidence (game_id, ply, kind, path, bytes, created) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (game_id, ply, str(kind), f"{game_id}/{name}", len(data), self._clock()))
                    evidence_id = int(cur.lastrowid or 0)
            except BaseException:
                final.unlink(missing_ok=True)
                raise
            self.prune_evidence(keep=evidence_id)
        return str(evidence_id)

    def evidence(self, evidence_id: str | int) -> bytes | None:
        """The stored bytes, or None (unknown id, pruned, or lost in a crash)."""
        try:
            key = int(evidence_id)
        except (TypeError, ValueError):
            return None
        if not -2 ** 63 <= key < 2 ** 63:  # no SQLite integer: no such crop (was a 500)
            return None
        with self._lock:
            row = self._conn.execute("SELECT path, blob FROM evidence WHERE id = ?",
                                     (key,)).fetchone()
        if row is None:
            return None
        path, blob = row
        if blob is not None:
            return bytes(blob)
        try:
            return (self.evidence_dir / str(path)).read_bytes()
        except OSError:
            return None

    def evidence_bytes(self) -> int:
        """Bytes of evidence counted against the budget."""
        with self._lock:
            return int(self._conn.execute("SELECT COALESCE(SUM(bytes), 0) FROM evidence")
                       .fetchone()[0])

    def prune_evidence(self, keep: int | None = None) -> list[str]:
        """Delete crops until within budget: finished games' oldest first, then the oldest
        of any game. Returns the ids deleted."""
        deleted: list[str] = []
        self._check_writable()
        with self._lock:
            total = self.evidence_bytes()
            if total <= self.evidence_budget:
                return deleted
            rows = self._conn.execute(
                "SELECT e.id, e.path, e.bytes FROM evidence e JOIN games g ON g.id = e.game_id "
                "WHERE e.id IS NOT ? ORDER BY g.finished DESC, e.created, e.id",
                (keep,)).fetchall()
            for eid, path, size in rows:
                if total <= self.evidence_budget:
                    break
                if path:  # file first: a crash then leaves a row without a file, not a leak
                    (self.evidence_dir / path).unlink(missing_ok=True)
                with self._tx() as db:
                    db.execute("DELETE FROM evidence WHERE id = ?", (eid,))
                total -= size
                deleted.append(str(eid))
        return deleted


def _fit_header_to_file(path: Path) -> None:
    """A database file cut short (a power cut, a card that lost its last pages) whose
    header still counts the pages it had: SQLite refuses every page of it ("database
    disk image is malformed"), and a game whose pages all survived was lost with the
    rest. The copy's count is made the file's own (the header's bytes 28-31)."""
    try:
        with open(path, "r+b") as fh:
            head = fh.read(100)
            if len(head) < 100 or not head.startswith(_SQLITE_MAGIC):
                return
            size = int.from_bytes(head[16:18], "big")
            page = 65536 if size == 1 else size
            if page < 512 or page & (page - 1):
                return
            pages = os.fstat(fh.fileno()).st_size // page
            if 0 < pages < int.from_bytes(head[28:32], "big"):
                fh.seek(28)
                fh.write(pages.to_bytes(4, "big"))
    except OSError:
        return


def _readable_games(src: sqlite3.Connection
                    ) -> list[tuple[tuple[Any, ...], list[tuple[int, str, float]], int | None]]:
    """The games of a damaged journal of ours that still read: each game's row, the
    longest run of its entries from the first that reads and replays, and how many
    entries it had. Reading stops at the first page SQLite cannot read."""
    try:
        if (src.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID
                or src.execute("PRAGMA user_version").fetchone()[0] > SCHEMA_VERSION):
            return []  # not ours, or written by a newer companion: left as it is
    except sqlite3.Error:
        return []
    rows: list[tuple[Any, ...]] = []
    try:  # the table itself, not an index of it (an index page may be the damage)
        for row in src.execute("SELECT id, created, header, finished, result, summary "
                               "FROM games NOT INDEXED"):
            rows.append(tuple(row))
    except sqlite3.Error:
        pass  # the rows read before the damaged page
    rows.sort(key=lambda r: (float(r[1]) if isinstance(r[1], (int, float)) else 0.0, str(r[0])))
    out = []
    for row in rows:
        entries: list[tuple[int, str, float]] = []
        # None: how many there were is not known (a page that does not read)
        total: int | None = None
        try:
            total = int(src.execute("SELECT COUNT(*) FROM entries WHERE game_id = ?",
                                    (row[0],)).fetchone()[0])
        except sqlite3.Error:
            pass
        try:
            for seq, text, t in src.execute("SELECT seq, entry, time FROM entries "
                                            "WHERE game_id = ? ORDER BY seq", (row[0],)):
                if seq != len(entries):
                    break  # a gap: what follows does not follow
                entries.append((int(seq), str(text), float(t)))
        except sqlite3.Error:
            total = None  # cut short by a page that does not read
        if total is not None:
            total = max(total, len(entries))
        try:
            header = json.loads(row[2])
        except (TypeError, ValueError, RecursionError):
            continue
        decoded: list[Any] = []  # the entries up to the first that is not JSON
        for _, text, _ in entries:
            try:
                decoded.append(json.loads(text))
            except (ValueError, RecursionError):
                break

        def replays(k: int, header: Any = header, decoded: list[Any] = decoded) -> bool:
            try:
                GameRecord.from_json({"format": RECORD_FORMAT, "header": header,
                                      "entries": decoded[:k]})
            except (ValueError, TypeError, RulesError, RecursionError):
                return False
            return True

        # the longest run that replays (a damaged entry cuts the game there): a run
        # that replays does so without what follows it, so halving finds its end
        if replays(len(decoded)):
            k = len(decoded)
        elif not replays(0):
            continue  # the header itself is no set-up
        else:
            lo, hi = 0, len(decoded)  # replays(lo), not replays(hi)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if replays(mid) else (lo, mid)
            k = lo
        out.append((row, entries[:k], total))
    return out


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise JournalError(f"cannot store as JSON: {exc}") from None
    except RecursionError:
        raise JournalError("cannot store as JSON: nested too deeply") from None


def _json_of(stored: Any, what: str) -> Any:
    """A stored JSON column, decoded; :class:`_Damaged` says why it does not read."""
    if isinstance(stored, bytes):
        try:
            stored = stored.decode("utf-8")
        except UnicodeDecodeError:
            raise _Damaged(f"{what} is not UTF-8 text") from None
    if not isinstance(stored, str):
        raise _Damaged(f"{what} is not text")
    try:
        return json.loads(stored)
    except RecursionError:
        raise _Damaged(f"{what} is nested too deeply") from None
    except ValueError:
        raise _Damaged(f"{what} is not JSON") from None


def _header_of(stored: Any) -> dict[str, Any]:
    header = _json_of(stored, "header")
    if not isinstance(header, dict):
        raise _Damaged("header is not a JSON object")
    return header


#: What each side file of an SQLite database is, for :func:`journal_part`.
_SIDE_NAMES = {"-wal": "the journal's write-ahead log", "-shm": "the journal's shared-memory "
               "index", "-journal": "the journal's rollback journal"}


def journal_part(target: str | os.PathLike[str], journal_path: str | os.PathLike[str],
                 evidence_dir: str | os.PathLike[str] | None = None) -> str | None:
    """What of the journal's own files ``target`` is ("the journal itself", ...), or None.

    A file written for the user (an export) must never replace the journal, its
    side files, a set-aside copy or a photo crop: compared after resolving links,
    and by inode where the target exists (a hard link to the journal).
    """
    journal = Path(journal_path)
    evidence = Path(evidence_dir) if evidence_dir is not None else journal.parent / "evidence"
    real = Path(os.path.realpath(target))
    parts = {"": "the journal itself", **_SIDE_NAMES}
    for suffix, what in parts.items():
        mine = Path(f"{journal}{suffix}")
        if real == Path(os.path.realpath(mine)):
            return what
        try:
            if os.path.samefile(target, mine):
                return what
        except OSError:  # either is missing
            pass
    if (real.parent == Path(os.path.realpath(journal.parent))
            and real.name.startswith(f"{journal.name}.corrupt-")):
        return "a journal set aside as damaged"
    if real.is_relative_to(Path(os.path.realpath(evidence))):
        return "in the journal's evidence folder"
    return None


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; Windows cannot open directories)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _move_no_clobber(src: Path, dst: Path) -> None:
    """Rename without ever replacing an existing file (hard link + unlink where possible)."""
    try:
        os.link(src, dst)
    except FileExistsError:
        raise JournalError(f"{dst} already exists; not overwriting it") from None
    except OSError:  # no hard links on this file system
        if dst.exists():
            raise JournalError(f"{dst} already exists; not overwriting it") from None
        os.rename(src, dst)
        return
    os.unlink(src)


def open_data_dir(path: str | os.PathLike[str], **kw: Any) -> Journal:
    """The journal of a data folder (created if missing): ``<path>/companion.sqlite3``."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise JournalError(f"{folder}: not a folder")
    folder.mkdir(parents=True, exist_ok=True)
    return Journal(folder / DATA_FILE, **kw)


def table_game_service(session: Any, journal: Journal) -> Callable[[], str | None]:
    """The page's way back from a game replayed from photos to the table's game in
    play (``table_game`` of :class:`companion.web.app.Services`): its newest
    unfinished game, resumed in ``session``; None when the journal has none."""

    def back() -> str | None:
        game_id = journal.latest_unfinished(replays=False)
        if game_id is None:
            return None
        session.resume(journal.load(game_id), game_id)
        return game_id

    return back


def _replayed(header: Any) -> bool:
    """Whether a stored header is a game replayed from photos (one that does not
    read counts as the table's: resuming it reports what is wrong with it)."""
    try:
        data = json.loads(header) if isinstance(header, (str, bytes)) else None
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and is_from_photos(data.get("meta"))


def resume_or_start(session: Any, journal: Journal,
                    config_factory: Callable[[], GameConfig]) -> tuple[str, bool]:
    """Continue the journal's unfinished game in ``session``, or start a new one.

    ``session`` must be a GameSession built with ``journal=journal`` (so new
    moves are journaled). A game that is over is marked finished; one that no
    longer replays (e.g. damaged by hand) is set aside as finished with its
    error, and a notice says so. Returns (game id, resumed?).
    """
    sink = getattr(session, "_journal", journal)
    if sink is not journal:
        raise JournalError("the session must be built with journal=<this journal>")
    game_id = journal.latest_unfinished()
    if game_id is not None:
        try:
            record = journal.load(game_id)
            if not record.replay().is_over:
                session.resume(record, game_id)
                return game_id, True
            journal.finish(game_id)
        except (sqlite3.Error, OSError):
            raise  # the card or the file, not the game: do not give up on the game
        except Exception as exc:  # whatever else, the table must be able to start
            reason = " ".join(str(exc).split()).removeprefix(f"game {game_id}: ")
            notice = (f"could not resume game {game_id} ({reason or type(exc).__name__}); "
                      "it is kept, a new game starts")
            journal.notices.append(notice)
            log.info("%s", notice)
            journal.finish(game_id, {"abandoned": str(exc)})
    session.new_game(config_factory())
    return str(session.game_id), False


__all__ = [
    "APPLICATION_ID", "DATA_FILE", "DEFAULT_EVIDENCE_BUDGET", "SCHEMA_VERSION", "GameInfo",
    "Journal", "JournalError", "UnknownGameError", "default_data_dir", "journal_part",
    "open_data_dir", "resume_or_start", "table_game_service",
]
