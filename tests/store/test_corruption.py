"""A damaged or foreign file is set aside, never overwritten, and a fresh journal starts."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from companion.rules import make_config
from companion.session import GameSession
from companion.store.journal import APPLICATION_ID, Journal

CLOCK = 1_700_000_000.0
STAMP = time.strftime("%Y%m%d-%H%M%S", time.localtime(CLOCK))


def _journal(path: Path) -> Journal:
    return Journal(path, clock=lambda: CLOCK)


def _good_db(path: Path, moves: int = 20) -> bytes:
    """A real journal with one game in progress, checkpointed into the main file."""
    with _journal(path) as j:
        session = GameSession(make_config(4, seed=1, track_cards=True), journal=j)
        from companion.bots import GreedyBot

        bots = [GreedyBot(i) for i in range(4)]
        for _ in range(moves):
            session.play(bots[session.state.to_move].choose(session.state))
    return path.read_bytes()


def _foreign_db(path: Path, app_id: int = 0, tables: str = "CREATE TABLE photos (x)") -> None:
    db = sqlite3.connect(path)
    db.executescript(f"{tables}; INSERT INTO {tables.split()[2]} DEFAULT VALUES;")
    db.execute(f"PRAGMA application_id = {app_id}")
    db.commit()
    db.close()


def _truncate(path: Path) -> None:
    data = _good_db(path)
    path.write_bytes(data[: len(data) // 2])


def _flip_middle(path: Path) -> None:
    data = bytearray(_good_db(path))
    # damage a b-tree page (not the header): integrity_check must notice
    for k in range(4096 + 8, 4096 + 200):
        data[k] ^= 0x5A
    path.write_bytes(bytes(data))


CASES: list[tuple[str, Callable[[Path], None], str]] = [
    ("garbage", lambda p: p.write_bytes(b"hello, this is not a database\n" * 50),
     "not an SQLite database"),
    ("tiny", lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 40), "truncated"),
    ("truncated", _truncate, "damaged"),
    ("flipped", _flip_middle, "damaged"),
    ("foreign", _foreign_db, "another program's SQLite database"),
    ("foreign-lookalike", lambda p: _foreign_db(
        p, 0x1234, "CREATE TABLE games (id, created, header, finished, result, summary)"),
     "another program's SQLite database (application_id 0x1234)"),
    ("ours-without-tables", lambda p: _foreign_db(p, APPLICATION_ID),
     "damaged (table 'games' is missing or incomplete)"),
]


@pytest.mark.parametrize("name, damage, reason", CASES, ids=[c[0] for c in CASES])
def test_damaged_file_set_aside(tmp_path: Path, name: str, damage: Callable[[Path], None],
                                reason: str) -> None:
    path = tmp_path / "companion.sqlite3"
    damage(path)
    original = path.read_bytes()
    journal = _journal(path)
    aside = tmp_path / f"companion.sqlite3.corrupt-{STAMP}"
    [notice] = journal.notices
    assert notice.startswith(f"journal {path} was ")
    assert notice.endswith(f": moved it to {aside.name} and started a fresh journal")
    assert reason in notice
    assert "\n" not in journal.notices[0]
    assert aside.read_bytes() == original  # the bytes are all still there
    # and the fresh journal works
    session = GameSession(make_config(2, seed=1), journal=journal)
    assert journal.load(session.game_id or "") == session.record
    journal.close()
    # reopening the fresh file is quiet
    assert _journal(path).notices == []


def test_newer_schema_kept(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"
    _good_db(path, moves=3)
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    original = path.read_bytes()
    journal = _journal(path)
    assert "written by a newer companion (schema 99" in journal.notices[0]
    assert (tmp_path / f"companion.sqlite3.corrupt-{STAMP}").read_bytes() == original


def test_never_overwrites_an_earlier_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"
    first = tmp_path / f"companion.sqlite3.corrupt-{STAMP}"
    first.write_bytes(b"an earlier casualty")
    path.write_bytes(b"x" * 1000)
    journal = _journal(path)
    assert first.read_bytes() == b"an earlier casualty"
    second = tmp_path / f"companion.sqlite3.corrupt-{STAMP}-2"
    assert second.read_bytes() == b"x" * 1000
    assert second.name in journal.notices[0]


def test_wal_moves_with_its_database(tmp_path: Path) -> None:
    """A damaged file's write-ahead log may hold the last moves: it travels along."""
    live = tmp_path / "live" / "companion.sqlite3"
    live.parent.mkdir()
    _good_db(live, moves=3)
    # a power cut while a WAL is not yet checkpointed: copy the files as they are
    holder = sqlite3.connect(live)
    holder.execute("PRAGMA wal_autocheckpoint = 0")
    holder.execute("INSERT INTO games (id, created, header) VALUES ('late', 1, '{}')")
    holder.commit()
    path = tmp_path / "companion.sqlite3"
    wal_bytes = Path(f"{live}-wal").read_bytes()
    assert len(wal_bytes) > 0
    Path(f"{path}-wal").write_bytes(wal_bytes)
    holder.close()
    path.write_bytes(b"garbage" * 200)  # the main file is destroyed, the log survives
    journal = _journal(path)
    aside = tmp_path / f"companion.sqlite3.corrupt-{STAMP}"
    assert Path(f"{aside}-wal").read_bytes() == wal_bytes
    assert aside.read_bytes() == b"garbage" * 200
    assert "not an SQLite database" in journal.notices[0]


def test_orphan_wal_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"
    Path(f"{path}-wal").write_bytes(b"log without its database")
    journal = _journal(path)
    aside = Path(f"{tmp_path / f'companion.sqlite3.corrupt-{STAMP}'}-wal")
    assert aside.read_bytes() == b"log without its database"
    assert "write-ahead log" in journal.notices[0]


def test_empty_file_is_a_fresh_journal(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"
    path.write_bytes(b"")
    journal = _journal(path)
    assert journal.notices == []
    assert journal.list_games() == []
    assert list(tmp_path.glob("*.corrupt-*")) == []


def _damage_page_of(path: Path, name: str) -> None:
    """Overwrite the b-tree page of ``name`` (an index) with noise: the tables still
    read, integrity_check does not pass."""
    db = sqlite3.connect(path)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    [root] = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    db.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * page_size
    data[start:start + page_size] = bytes((k * 37 + 11) % 256 for k in range(page_size))
    path.write_bytes(bytes(data))


def _two_games(path: Path, ids: tuple[str, str] | None = None) -> dict[str, object]:
    """A finished game and one in progress, checkpointed into the main file (``ids``:
    theirs, for a page layout that does not vary with random ids)."""
    from companion.bots import GreedyBot

    records = {}
    named = iter(ids or ())
    with (_journal(path) if ids is None else
          Journal(path, clock=lambda: CLOCK, new_id=lambda now: next(named))) as j:
        for seed, moves in ((1, None), (2, 12)):
            session = GameSession(make_config(2, seed=seed), journal=j)
            bots = [GreedyBot(i) for i in range(2)]
            n = 0
            while not session.state.is_over and (moves is None or n < moves):
                session.play(bots[session.state.to_move].choose(session.state))
                n += 1
            records[session.game_id] = session.record
    return records


def test_the_games_a_damaged_journal_still_yields_are_recovered(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"
    records = _two_games(path)
    with _journal(path) as before:
        listed = before.list_games()
    _damage_page_of(path, "games_created")
    original = path.read_bytes()
    journal = _journal(path)
    aside = tmp_path / f"companion.sqlite3.corrupt-{STAMP}"
    assert len(journal.notices) == 2 and "damaged (database disk image is malformed)" in (
        journal.notices[0])
    assert journal.notices[1] == f"recovered 2 games from {aside.name}"
    assert aside.read_bytes() == original  # read from a copy: the file kept as found
    # rows as they were: flags and summaries (both games began at the same clock time)
    assert {g.id: g for g in journal.list_games()} == {g.id: g for g in listed}
    assert sorted(g.over for g in listed) == [False, True]
    for gid, rec in records.items():
        assert journal.load(gid) == rec
    journal.close()
    assert _journal(path).notices == []  # the fresh file is healthy


def _damage_entry_and_index(path: Path, game_id: str, seq: int) -> Journal:
    """Entry ``seq`` of ``game_id`` unreadable and an index page noise: the journal opened."""
    db = sqlite3.connect(path)
    db.execute("UPDATE entries SET entry = '{bad' WHERE game_id = ? AND seq = ?",
               (game_id, seq))
    db.commit()
    db.close()
    _damage_page_of(path, "games_created")
    return _journal(path)


def test_a_game_is_recovered_up_to_its_first_entry_that_does_not_read(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"
    records = _two_games(path)
    playing = [gid for gid, rec in records.items() if not rec.replay().is_over][0]
    journal = _damage_entry_and_index(path, playing, 5)
    aside = tmp_path / f"companion.sqlite3.corrupt-{STAMP}"
    assert journal.notices[1] == (f"recovered 2 games from {aside.name} "
                                  f"({playing}: 5 of 12 entries)")
    assert len(journal.load(playing).entries) == 5
    assert journal.load(playing).entries == records[playing].entries[:5]


def test_a_finished_game_recovered_in_part_is_not_taken_back_into_play(tmp_path: Path
                                                                       ) -> None:
    """A finished (or abandoned) game whose last entries did not read came back as "in
    play" with its first moves, and the table resumed it."""
    path = tmp_path / "companion.sqlite3"
    records = _two_games(path)
    done = [gid for gid, rec in records.items() if rec.replay().is_over][0]
    playing = [gid for gid in records if gid != done][0]
    with _journal(path) as j:  # as the table's next start marks it
        j.finish(done)
    journal = _damage_entry_and_index(path, done, 7)
    aside = tmp_path / f"companion.sqlite3.corrupt-{STAMP}"
    total = len(records[done].entries)
    assert journal.notices[1] == (f"recovered 2 games from {aside.name} "
                                  f"({done}: 7 of {total} entries)")
    info = journal.game_info(done)
    assert (info.status, info.moves) == ("abandoned", 7)
    assert journal.latest_unfinished() == playing
    journal.close()


def test_a_journal_cut_short_yields_the_games_on_its_pages(tmp_path: Path) -> None:
    """A file that lost its last page (a power cut, a failing card) still counts it in
    its header, and SQLite refused every page of it: no game was recovered, though
    the finished one's pages were all there."""
    path = tmp_path / "companion.sqlite3"
    records = _two_games(path, ids=("20240501-200000-aaaa", "20240501-200000-bbbb"))
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.truncate(size - 4096)
    journal = _journal(path)
    aside = tmp_path / f"companion.sqlite3.corrupt-{STAMP}"
    assert journal.notices[1].startswith(f"recovered 2 games from {aside.name}")
    # each from its first entry up to the lost page (the entries of the one in play
    # lay after the finished one's 79th)
    kept = {gid: len(journal.load(gid).entries) for gid in records}
    assert kept == {"20240501-200000-aaaa": 79, "20240501-200000-bbbb": 0}
    for gid, n in kept.items():
        assert journal.load(gid).entries == records[gid].entries[:n]
    assert journal.notices[1] == (
        f"recovered 2 games from {aside.name} (20240501-200000-aaaa: 79 entries, those after "
        "them unreadable; 20240501-200000-bbbb: 0 entries, those after them unreadable)")
    assert aside.stat().st_size == size - 4096  # read from a copy: kept as found
    journal.close()


def test_another_programs_database_is_not_recovered_from(tmp_path: Path) -> None:
    path = tmp_path / "companion.sqlite3"
    _foreign_db(path, 0x1234, "CREATE TABLE games (id, created, header, finished, result, "
                "summary)")
    journal = _journal(path)
    assert len(journal.notices) == 1 and journal.list_games() == []
