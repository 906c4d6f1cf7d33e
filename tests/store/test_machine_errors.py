"""A journal the machine cannot write (a full disk, a lock, a read-only file) is healthy:
it is never set aside as damaged, and the command says so in one line."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from companion.store.journal import Journal, JournalError, machine_error
from tests.store.test_commands import ENV


def _error(code: int, text: str) -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError(text)
    exc.sqlite_errorcode = code  # type: ignore[attr-defined]
    return exc


@pytest.mark.parametrize(("code", "why"), [
    (13, "the disk is full"), (5, "busy"), (517, "busy"), (8, "read-only"),
    (1032, "read-only"), (14, "cannot be opened"), (10, "the disk failed to read or write"),
    (11, None), (26, None), (1, None)])
def test_what_an_sqlite_error_says_of_the_machine(code: int, why: str | None) -> None:
    """Extended codes (517 SQLITE_BUSY_SNAPSHOT, 1032 SQLITE_READONLY_DBMOVED) count by
    their primary code; damage (11 CORRUPT, 26 NOTADB) and plain errors are the file's."""
    assert machine_error(_error(code, "x")) == why
    assert machine_error(ValueError("x")) is None


def _fill_then_limit(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_disk_leaves_the_journal_where_and_as_it_was(two_games: Any,
                                                           tmp_path: Path) -> None:
    """`companion import` on a full card set the healthy journal aside as "damaged",
    left a zero-byte journal, and ended in a traceback; after space was freed every
    game was gone from view and the table started a new one."""
    folder: Path = two_games()
    journal = folder / "companion.sqlite3"
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    record = tmp_path / "game.json"
    with Journal(journal, read_only=True) as j:
        record.write_text(json.dumps(j.export("g2")), encoding="utf-8")
    # no file may grow: as on a full disk, writes fail (EFBIG)
    proc = subprocess.run(
        [sys.executable, "-m", "companion", "import", str(record), "--data-dir", str(folder)],
        capture_output=True, text=True, env=ENV, timeout=120,
        preexec_fn=lambda: _fill_then_limit(0))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"companion import: journal {journal}: ")
    assert proc.stderr.endswith("; nothing was moved or changed: free some space or check "
                                "the card, then start again\n")
    assert not [p for p in folder.iterdir() if ".corrupt" in p.name]
    assert journal.read_bytes() == before["companion.sqlite3"]
    with Journal(journal, read_only=True) as j:
        assert [g.id for g in j.list_games()] == ["g1", "g2"]


def test_a_journal_another_process_holds_is_busy_not_damaged(two_games: Any) -> None:
    folder: Path = two_games()
    journal = folder / "companion.sqlite3"
    holder = sqlite3.connect(journal, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(JournalError) as caught:
            # the journal waits 15 s for a lock; the test need not
            Journal(journal, lock_wait=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert str(caught.value) == (f"journal {journal} is busy (database is locked); is "
                                 "another companion writing it?")
    assert not [p for p in folder.iterdir() if ".corrupt" in p.name]
    with Journal(journal) as j:
        assert [g.id for g in j.list_games()] == ["g1", "g2"]
    assert os.path.exists(journal)


def test_one_writer_per_journal(two_games: Any, tmp_path: Path) -> None:
    """Two tables on one data folder both resumed g2 and interleaved their moves (it
    no longer replayed); an import beside a running table could set its journal
    aside. The second writer is refused in one line; readers still look."""
    folder: Path = two_games()
    journal = folder / "companion.sqlite3"
    record = tmp_path / "game.json"
    table = Journal(journal)
    try:
        record.write_text(json.dumps(table.export("g1")), encoding="utf-8")
        with pytest.raises(JournalError) as caught:
            Journal(journal)
        assert str(caught.value) == (f"journal {journal} is in use by another companion "
                                     f"(process {os.getpid()}); stop it first, or use its page")
        proc = subprocess.run([sys.executable, "-m", "companion", "import", str(record),
                               "--data-dir", str(folder)],
                              capture_output=True, text=True, env=ENV, timeout=120)
        assert (proc.returncode, proc.stdout) == (1, "")
        assert proc.stderr == (f"companion import: journal {journal} is in use by another "
                               f"companion (process {os.getpid()}); stop it first, or use "
                               "its page\n")
        with Journal(journal, read_only=True) as look:  # `companion games` still works
            assert [g.id for g in look.list_games()] == ["g1", "g2"]
    finally:
        table.close()
    with Journal(journal) as after:  # closed, the folder is free again
        assert [g.id for g in after.list_games()] == ["g1", "g2"]
