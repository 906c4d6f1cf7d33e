"""``companion games / export / import`` against a journal that is not what it should be.

Rows edited by hand or damaged on the card, an export aimed at the journal's own
files, and a damaged journal file: each is one line on stderr (or a row marked
damaged), never a traceback, never lost or rewritten game data.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from companion.rules import GameRecord, make_config
from companion.session import GameSession
from companion.store.journal import DATA_FILE, Journal, JournalError

DEEP = "[" * 5000 + "]" * 5000  # json.loads: RecursionError


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``companion ARGS`` in this process: (exit status, stdout, stderr)."""
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder below ``folder`` with its bytes (None for a folder)."""
    return {str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
            for p in sorted(folder.rglob("*"))}


@pytest.fixture
def data(two_games: Any) -> Path:
    """g1: a finished 4-player game (imported) with a photo crop; g2: Ann and Bob, 9 moves."""
    folder: Path = two_games(crop=True)
    return folder


def damage(folder: Path, sql: str, *params: Any) -> None:
    """Edit the journal behind its back, as a hand edit or a bad sector would."""
    db = sqlite3.connect(folder / DATA_FILE)
    db.execute(sql, params)
    db.commit()
    db.close()


# -- export -o never writes over the journal ------------------------------------------

@pytest.mark.parametrize("target, part", [
    (DATA_FILE, "the journal itself"),
    (f"{DATA_FILE}-wal", "the journal's write-ahead log"),
    (f"{DATA_FILE}-shm", "the journal's shared-memory index"),
    (f"{DATA_FILE}-journal", "the journal's rollback journal"),
    (f"{DATA_FILE}.corrupt-20240101-000000", "a journal set aside as damaged"),
    ("evidence/g1/export.json", "in the journal's evidence folder"),
    ("evidence", "in the journal's evidence folder"),
])
def test_export_refuses_the_journals_own_files(data: Path, target: str, part: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    before = snapshot(data)
    out = data / target
    assert cli(capsys, "export", "g1", "--data-dir", str(data), "-o", str(out)) == (
        1, "", f"companion export: {out} is {part}; not writing the export there "
               "(choose another -o file)\n")
    assert snapshot(data) == before
    rc, listing, _ = cli(capsys, "games", "--data-dir", str(data))
    assert rc == 0 and [line.split()[0] for line in listing.splitlines()] == ["ID", "g1", "g2"]


def test_export_refuses_links_to_the_journal(data: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Compared after resolving links, and by inode: a hard link is the journal too."""
    hard = tmp_path / "hard.json"
    os.link(data / DATA_FILE, hard)
    soft = tmp_path / "soft.json"
    soft.symlink_to(data / DATA_FILE)
    dotted = data / "." / ".." / "data" / DATA_FILE
    before = snapshot(data)
    for out in (hard, soft, dotted):
        assert cli(capsys, "export", "g1", "--data-dir", str(data), "-o", str(out)) == (
            1, "", f"companion export: {out} is the journal itself; not writing the export "
                   "there (choose another -o file)\n")
    assert snapshot(data) == before
    assert soft.is_symlink() and os.path.samefile(hard, data / DATA_FILE)


def test_export_keeps_a_file_named_like_its_temporary(data: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    """The file was written as ``<out>.tmp`` first: someone's own ``game.json.tmp`` went."""
    out = tmp_path / "game.json"
    (tmp_path / "game.json.tmp").write_text("my notes")
    out.write_text("old export")
    out.chmod(0o640)
    assert cli(capsys, "export", "g2", "--data-dir", str(data), "-o", str(out)) == (
        0, f"exported game g2 to {out}\n", "")
    assert (tmp_path / "game.json.tmp").read_text() == "my notes"
    assert len(GameRecord.loads(out.read_text()).effective()) == 9
    assert stat.S_IMODE(out.stat().st_mode) == 0o640  # replaced, permissions kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "game.json", "game.json.tmp"]


def test_export_that_fails_keeps_the_old_file(data: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The new contents reach the disk (fsync) before they replace the old ones."""
    out = tmp_path / "game.json"
    out.write_text("old export")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    assert cli(capsys, "export", "g2", "--data-dir", str(data), "-o", str(out)) == (
        1, "", f"companion export: {out}: cannot write (No space left on device)\n")
    assert out.read_text() == "old export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "game.json"]  # no temp


def test_export_to_a_pipe_writes_into_it(data: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A pipe (or /dev/stdout, /dev/null) is written to, not replaced by a file."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()), daemon=True)
    reader.start()
    rc, out, err = cli(capsys, "export", "g2", "--data-dir", str(data), "-o", str(pipe))
    reader.join(timeout=30)
    if reader.is_alive():  # unblock the reader before failing
        with open(pipe, "wb"):
            pass
    assert (rc, out, err) == (0, f"exported game g2 to {pipe}\n", "")
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert len(GameRecord.loads(got[0].decode()).effective()) == 9


# -- rows that do not read -------------------------------------------------------------

@pytest.mark.parametrize("sql, params, why", [
    ("UPDATE games SET header = ? WHERE id = 'g1'", ("[1,2]",), "header is not a JSON object"),
    ("UPDATE games SET header = ? WHERE id = 'g1'", (DEEP,), "header is nested too deeply"),
    ("UPDATE games SET header = ? WHERE id = 'g1'", ("not json",), "header is not JSON"),
    ("UPDATE games SET header = CAST(? AS TEXT) WHERE id = 'g1'", (b'{"\xff": 1}',),
     "header is not UTF-8 text"),
], ids=["list", "deep", "not-json", "not-utf8"])
def test_a_damaged_header_is_listed_and_refused_by_name(
        data: Path, sql: str, params: tuple[Any, ...], why: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    damage(data, sql, *params)
    before = snapshot(data)
    status = f"damaged ({why})"
    rc, out, err = cli(capsys, "games", "--data-dir", str(data))
    assert (rc, err) == (0, "")
    w = len(status)
    assert out == (f"ID  DATE        PLAYERS   ROUNDS  MOVES  {'STATUS'.ljust(w)}  WINNER\n"
                   f"g1  -           -         ?       ?      {status}  -\n"
                   f"g2  2024-05-02  Ann, Bob  0/6     9      {'in play'.ljust(w)}  -\n")
    rc, out, err = cli(capsys, "games", "--data-dir", str(data), "--json")
    assert (rc, err) == (0, "")
    g1, g2 = (json.loads(line) for line in out.splitlines())
    assert (g1["id"], g1["status"], g1["error"], g1["players"]) == ("g1", "damaged", why, [])
    assert (g2["id"], g2["status"], g2["moves"]) == ("g2", "in play", 9)
    for raw in ([], ["--raw"]):
        assert cli(capsys, "export", "g1", "--data-dir", str(data), *raw) == (
            1, "", f"companion export: game g1 is damaged ({why})\n")
    assert snapshot(data) == before


@pytest.mark.parametrize("value, shown, why", [
    (b"\xff\xfe", "b'\\xff\\xfe'", "id is not text"),
    ("CAST", "b'x\\xff'", "id is not UTF-8 text"),
], ids=["blob", "not-utf8"])
def test_an_id_that_is_not_text_is_shown_safely(data: Path, value: Any, shown: str, why: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    if value == "CAST":
        damage(data, "UPDATE games SET id = CAST(? AS TEXT) WHERE id = 'g1'", b"x\xff")
    else:
        damage(data, "UPDATE games SET id = ? WHERE id = 'g1'", value)
    rc, out, err = cli(capsys, "games", "--data-dir", str(data))
    assert (rc, err) == (0, "")
    status = f"damaged ({why})"
    lines = out.splitlines()
    assert lines[1].split("  ")[0] == shown
    assert lines[1].endswith(f"  {status}  -")
    assert lines[2].startswith("g2 ")
    rc, out, err = cli(capsys, "games", "--data-dir", str(data), "--json")
    assert (rc, err) == (0, "")
    first, second = (json.loads(line) for line in out.splitlines())
    assert (first["id"], first["status"], first["error"]) == (shown, "damaged", why)
    assert second["id"] == "g2"


@pytest.mark.parametrize("created", ["yesterday", 1e300, float("inf"), b"\x00"])
def test_a_created_time_that_is_no_time_reads_as_none(data: Path, created: Any,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    damage(data, "UPDATE games SET created = ? WHERE id = 'g2'", created)
    rc, out, err = cli(capsys, "games", "--data-dir", str(data), "--json")
    assert (rc, err) == (0, "")
    rows = {row["id"]: row for row in map(json.loads, out.splitlines())}
    assert rows["g2"]["created"] is None and rows["g2"]["status"] == "in play"
    assert rows["g1"]["created"] == time.strftime("%Y-%m-%dT%H:%M:%S",
                                                  time.localtime(1_700_000_001.0))
    rc, out, err = cli(capsys, "games", "--data-dir", str(data))
    assert (rc, err) == (0, "")
    assert sorted(line.split()[0] for line in out.splitlines()[1:]) == ["g1", "g2"]


def test_an_id_with_control_characters_stays_on_one_line(data: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    for table, column in (("games", "id"), ("entries", "game_id")):
        damage(data, f"UPDATE {table} SET {column} = ? WHERE {column} = 'g2'",
               "g2\n\x1b[31mred")
    rc, out, err = cli(capsys, "games", "--data-dir", str(data))
    assert (rc, err) == (0, "")
    assert out == (
        "ID               DATE        PLAYERS                                 ROUNDS  MOVES  "
        "STATUS    WINNER\n"
        "g1               2024-05-01  Player 1, Player 2, Player 3, Player 4  4/4     112    "
        "finished  Player 4\n"
        "g2\\n\\x1b[31mred  2024-05-02  Ann, Bob                                0/6     9      "
        "in play   -\n")
    rc, out, err = cli(capsys, "games", "--data-dir", str(data), "--json")
    assert json.loads(out.splitlines()[1])["id"] == "g2\n\x1b[31mred"


def test_a_damaged_result_or_entry(data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A result that is not JSON marks the game damaged but its moves still export; an
    entry nested too deeply makes the game damaged and its export one line."""
    damage(data, "UPDATE games SET result = 'nope' WHERE id = 'g1'")
    damage(data, "UPDATE entries SET entry = ? WHERE game_id = 'g2' AND seq = 3", DEEP)
    rc, out, err = cli(capsys, "games", "--data-dir", str(data))
    assert (rc, err) == (0, "")
    assert out.splitlines()[1:] == [
        "g1  2024-05-01  Player 1, Player 2, Player 3, Player 4  ?       ?      "
        "damaged (result is not JSON)  -",
        "g2  2024-05-02  Ann, Bob                                ?       ?      damaged"
        "                       -",
    ]
    rc, out, err = cli(capsys, "games", "--data-dir", str(data), "--json")
    g2 = json.loads(out.splitlines()[1])
    assert g2["error"] == "game g2 is damaged (entries[3] is nested too deeply)"
    rc, out, err = cli(capsys, "export", "g1", "--data-dir", str(data))
    assert (rc, err) == (0, "") and len(json.loads(out)["entries"]) == 112
    for raw in ([], ["--raw"]):
        assert cli(capsys, "export", "g2", "--data-dir", str(data), *raw) == (
            1, "", "companion export: game g2 is damaged (entries[3] is nested too deeply)\n")


# -- import next to a damaged row ----------------------------------------------------------

def _import(data: Path, tmp_path: Path, record: GameRecord,
            capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str, str]:
    src = tmp_path / "game.json"
    src.write_text(record.dumps())
    before = {g.id for g in Journal(data / DATA_FILE).list_games()}
    rc, out, err = cli(capsys, "import", str(src), "--data-dir", str(data))
    added = [g.id for g in Journal(data / DATA_FILE).list_games() if g.id not in before]
    assert len(added) == 1  # imported once: a retry after a false failure made two
    return rc, out, err, added[0]


def test_import_next_to_a_damaged_row_says_it_worked(data: Path, tmp_path: Path,
                                                     finished_record: GameRecord,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    damage(data, "UPDATE games SET header = '[1,2]' WHERE id = 'g1'")
    rc, out, err, game_id = _import(data, tmp_path, finished_record, capsys)
    assert (rc, out, err) == (
        0, f"imported {tmp_path / 'game.json'} as game {game_id} (112 moves, finished)\n", "")


def test_import_never_reports_failure_once_the_game_is_in(
        data: Path, tmp_path: Path, finished_record: GameRecord,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Journal, game_id: str) -> None:
        raise RuntimeError("a bug after the commit")

    monkeypatch.setattr(Journal, "game_info", broken)
    rc, out, err, game_id = _import(data, tmp_path, finished_record, capsys)
    assert (rc, out, err) == (
        0, f"imported {tmp_path / 'game.json'} as game {game_id}\n",
        f"companion import: warning: game {game_id} is imported, but reading it back failed "
        "(a bug after the commit)\n")


def test_import_the_card_refuses_is_one_line(data: Path, tmp_path: Path,
                                             finished_record: GameRecord,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def full(self: Journal, data: Any) -> str:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Journal, "import_record", full)
    src = tmp_path / "game.json"
    src.write_text(finished_record.dumps())
    assert cli(capsys, "import", str(src), "--data-dir", str(data)) == (
        1, "", f"companion import: {src}: not imported (database or disk is full)\n")


# -- a damaged journal file: games and export only look -----------------------------------

def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE photos (x); INSERT INTO photos DEFAULT VALUES;")
    db.close()


def _newer(path: Path) -> None:
    with Journal(path):
        pass
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()


def _half(path: Path) -> None:
    with Journal(path) as j:
        GameSession(make_config(2, seed=1), journal=j)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("make, reason", [
    (lambda p: p.write_bytes(b"not a database at all" * 40), "not an SQLite database"),
    (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 40), "truncated (56 bytes)"),
    (_half, "damaged (database disk image is malformed)"),
    (_foreign, "another program's SQLite database (application_id 0x0)"),
    (_newer, "written by a newer companion (schema 99, this one reads 1)"),
    (lambda p: Path(f"{p}-wal").write_bytes(b"the last moves"),
     "missing, but its write-ahead log was left behind"),
    (lambda p: p.mkdir(), "a folder, not a file"),
], ids=["junk", "tiny", "half", "foreign", "newer", "orphan-wal", "folder"])
def test_games_and_export_leave_a_damaged_journal_as_it_is(
        tmp_path: Path, make: Any, reason: str, finished_record: GameRecord,
        capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = folder / DATA_FILE
    make(path)
    before = snapshot(folder)
    line = f"journal {path} is {reason}; left as it is\n"
    assert cli(capsys, "games", "--data-dir", str(folder)) == (1, "", f"companion games: {line}")
    assert cli(capsys, "games", "--data-dir", str(folder), "--json") == (
        1, "", f"companion games: {line}")
    out = tmp_path / "g1.json"
    assert cli(capsys, "export", "g1", "--data-dir", str(folder), "-o", str(out)) == (
        1, "", f"companion export: {line}")
    assert snapshot(folder) == before
    assert not out.exists()
    if reason == "a folder, not a file":
        return
    # import (like the table) still sets the file aside and starts afresh
    src = tmp_path / "game.json"
    src.write_text(finished_record.dumps())
    rc, _, err = cli(capsys, "import", str(src), "--data-dir", str(folder))
    assert rc == 0
    assert err.startswith(f"companion import: warning: journal {path} was {reason}: moved it "
                          f"to {DATA_FILE}.corrupt-")
    assert len(list(folder.glob(f"{DATA_FILE}.corrupt-*"))) == 1


@pytest.mark.parametrize("content", [b"", None], ids=["zero-bytes", "empty-sqlite"])
def test_a_journal_never_written_lists_no_games_and_stays(tmp_path: Path, content: bytes | None,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    """Zero bytes or an empty SQLite file: no games, and the file is not filled in."""
    path = tmp_path / DATA_FILE
    if content is None:
        sqlite3.connect(path).close()
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE t (x)")
        db.execute("DROP TABLE t")
        db.commit()
        db.close()
    else:
        path.write_bytes(content)
    before = snapshot(tmp_path)
    assert cli(capsys, "games", "--data-dir", str(tmp_path)) == (
        0, f"no games in {tmp_path}\n", "")
    assert cli(capsys, "export", "g1", "--data-dir", str(tmp_path)) == (
        1, "", f"companion export: no game 'g1' in {tmp_path} (see: companion games)\n")
    assert snapshot(tmp_path) == before


def test_a_read_only_journal_refuses_writes(data: Path) -> None:
    before = snapshot(data)
    with Journal(data / DATA_FILE, read_only=True) as journal:
        assert [g.id for g in journal.list_games()] == ["g1", "g2"]
        for write in (lambda: journal.begin_game({}),
                      lambda: journal.append("g2", {"type": "correction"}),
                      lambda: journal.finish("g2"),
                      lambda: journal.add_evidence("g2", 1, "crop", b"x")):
            with pytest.raises(JournalError, match=r"^journal .* is open read-only$"):
                write()
    assert snapshot(data) == before
