"""``companion games / export / import`` as a user runs them: exact output, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion.rules import GameRecord
from companion.store.journal import Journal

ENV = {**os.environ, "TZ": "UTC", "COMPANION_DATA_DIR": "/nonexistent-default"}


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "companion", *args], capture_output=True,
                          text=True, env=ENV, cwd=cwd, timeout=120)


@pytest.fixture
def data_dir(two_games: Any) -> Path:
    """g1: a finished 4-player game (imported); g2: Ann and Bob, 9 moves in."""
    folder: Path = two_games()
    return folder


def test_games_table(data_dir: Path) -> None:
    r = run("games", "--data-dir", str(data_dir))
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == (
        "ID  DATE        PLAYERS                                 ROUNDS  MOVES  STATUS    WINNER\n"
        "g1  2024-05-01  Player 1, Player 2, Player 3, Player 4  4/4     112    finished  "
        "Player 4\n"
        "g2  2024-05-02  Ann, Bob                                0/6     9      in play   -\n")


def test_games_json(data_dir: Path) -> None:
    r = run("games", "--data-dir", str(data_dir), "--json")
    assert (r.returncode, r.stderr) == (0, "")
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert lines == [
        {"id": "g1", "created": "2023-11-14T22:13:21", "date": "2024-05-01",
         "players": ["Player 1", "Player 2", "Player 3", "Player 4"], "moves": 112,
         "rounds_played": 4, "rounds": 4, "finished": True, "over": True,
         "status": "finished", "winners": ["Player 4"], "error": None},
        {"id": "g2", "created": "2023-11-14T22:13:22", "date": "2024-05-02",
         "players": ["Ann", "Bob"], "moves": 9, "rounds_played": 0, "rounds": 6,
         "finished": False, "over": False, "status": "in play", "winners": [], "error": None},
    ]


def test_games_empty_folder_and_default(tmp_path: Path) -> None:
    r = run("games", "--data-dir", str(tmp_path))
    assert (r.returncode, r.stdout, r.stderr) == (0, f"no games in {tmp_path}\n", "")
    assert list(tmp_path.iterdir()) == []  # listing creates nothing
    r = run("games")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "companion games: /nonexistent-default: no such data folder\n"


def test_export_stdout_and_file(data_dir: Path, tmp_path: Path,
                                finished_record: GameRecord) -> None:
    r = run("export", "g1", "--data-dir", str(data_dir))
    assert (r.returncode, r.stderr) == (0, "")
    assert json.loads(r.stdout) == replace(finished_record, date="2024-05-01").to_json()
    out = tmp_path / "g2.json"
    r = run("export", "g2", "--data-dir", str(data_dir), "-o", str(out))
    assert (r.returncode, r.stdout, r.stderr) == (0, f"exported game g2 to {out}\n", "")
    record = GameRecord.loads(out.read_text())
    assert [p.name for p in record.config.players] == ["Ann", "Bob"]
    assert len(record.effective()) == 9


def test_import_then_list(data_dir: Path, tmp_path: Path, finished_record: GameRecord) -> None:
    src = tmp_path / "game.json"
    src.write_text(finished_record.dumps())
    fresh = tmp_path / "new-pi"  # restoring onto a new card: the folder is created
    r = run("import", str(src), "--data-dir", str(fresh))
    assert (r.returncode, r.stderr) == (0, "")
    prefix, _, tail = r.stdout.partition(" as game ")
    game_id, _, rest = tail.partition(" ")
    assert prefix == f"imported {src}"
    assert rest == "(112 moves, finished)\n"
    r = run("export", game_id, "--data-dir", str(fresh))
    assert json.loads(r.stdout) == finished_record.to_json()


@pytest.mark.parametrize("args, error", [
    (["export", "g9", "--data-dir", "{data}"],
     "companion export: no game 'g9' in {data} (see: companion games)"),
    (["export", "g1", "--data-dir", "{tmp}/missing"],
     "companion export: {tmp}/missing: no such data folder"),
    (["games", "--data-dir", "{tmp}/missing"],
     "companion games: {tmp}/missing: no such data folder"),
    (["import", "{tmp}/missing.json", "--data-dir", "{data}"],
     "companion import: {tmp}/missing.json: no such file"),
    (["import", "{tmp}/bad.json", "--data-dir", "{data}"],
     "companion import: {tmp}/bad.json: malformed JSON: Expecting value at line 1 column 12"),
    (["import", "{tmp}/board.json", "--data-dir", "{data}"],
     "companion import: {tmp}/board.json: not a game record (expected format "
     "'manhattan-game/1')"),
    (["import", "{tmp}/baddate.json", "--data-dir", "{data}"],
     "companion import: {tmp}/baddate.json: 'date' in the header must be a day as "
     "YYYY-MM-DD, not '2024-02-30'"),
    (["import", "{tmp}/illegal.json", "--data-dir", "{data}"],
     "companion import: {tmp}/illegal.json: move 1 (S c00 red1@0NW): every player must first "
     "choose this round's blocks"),
    # a device or a pipe: /dev/zero took 24 GB before the kernel stopped it
    (["import", "/dev/zero", "--data-dir", "{data}"],
     "companion import: /dev/zero: not a regular file (a device or a pipe)"),
    (["import", "{tmp}/fifo.json", "--data-dir", "{data}"],
     "companion import: {tmp}/fifo.json: not a regular file (a device or a pipe)"),
    (["import", "{tmp}/big.json", "--data-dir", "{data}"],
     "companion import: {tmp}/big.json: too large for a game record (17825792 bytes; at most "
     "16777216)"),
    (["import", "{tmp}/compactdate.json", "--data-dir", "{data}"],
     "companion import: {tmp}/compactdate.json: 'date' in the header must be a day as "
     "YYYY-MM-DD, not '20240502'"),
    # stored as their repr, or read digit by digit, before
    (["import", "{tmp}/objectname.json", "--data-dir", "{data}"],
     "companion import: {tmp}/objectname.json: players[0]: 'name' must be text"),
    (["import", "{tmp}/objectnote.json", "--data-dir", "{data}"],
     "companion import: {tmp}/objectnote.json: entries[5]: 'note' must be text"),
    (["import", "{tmp}/textorder.json", "--data-dir", "{data}"],
     "companion import: {tmp}/textorder.json: 'slow_growth_order' must be a list of city "
     "numbers"),
    (["import", "{tmp}/digits.json", "--data-dir", "{data}"],
     "companion import: {tmp}/digits.json: malformed JSON: a number of thousands of digits"),
])
def test_errors_are_one_line(data_dir: Path, tmp_path: Path, args: list[str],
                             error: str) -> None:
    (tmp_path / "bad.json").write_text('{"format": }')
    (tmp_path / "board.json").write_text('{"format": "manhattan-board/1", "sites": []}')
    illegal = {"format": "manhattan-game/1",
               "header": {"players": [{"name": "A", "seat": "S", "colors": ["red"]},
                                      {"name": "B", "seat": "N", "colors": ["blue"]},
                                      {"name": "C", "seat": "W", "colors": ["green"]}]},
               "entries": [{"type": "move", "move": "S c00 red1@0NW"}]}
    (tmp_path / "illegal.json").write_text(json.dumps(illegal))
    baddate = {"format": "manhattan-game/1", "entries": [],
               "header": {**illegal["header"], "date": "2024-02-30"}}
    (tmp_path / "baddate.json").write_text(json.dumps(baddate))
    from companion.bots import RandomBot
    from companion.rules import make_config
    from companion.session import GameSession

    session = GameSession(make_config(3, seed=2))
    for _ in range(5):
        session.play(RandomBot(0).choose(session.state))
    good = session.record.to_json()
    for name, change in (
            ("compactdate", lambda r: r["header"].update(date="20240502")),
            ("objectname", lambda r: r["header"]["players"][0].update(name={"a": 1})),
            ("objectnote", lambda r: r["entries"].append(
                {"type": "correction", "replaces": 2, "move": None, "note": {"a": 1}})),
            ("textorder", lambda r: r["header"].update(slow_growth_order="012345"))):
        bad = json.loads(json.dumps(good))
        change(bad)
        (tmp_path / f"{name}.json").write_text(json.dumps(bad))
    os.mkfifo(tmp_path / "fifo.json")
    with open(tmp_path / "big.json", "wb") as fh:  # sparse
        fh.truncate(17 * 1024 * 1024)
    (tmp_path / "digits.json").write_text('{"format": "manhattan-game/1", "seed": 1'
                                          + "0" * 5000 + "}")
    fill = {"data": str(data_dir), "tmp": str(tmp_path)}
    r = run(*[a.format(**fill) for a in args])
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == error.format(**fill) + "\n"
    # nothing was added by a failed import
    assert [g.id for g in Journal(data_dir / "companion.sqlite3").list_games()] == ["g1", "g2"]


def test_damaged_journal_is_reported(tmp_path: Path) -> None:
    """Listing only looks: the damaged file is named, and left where and as it was."""
    (tmp_path / "companion.sqlite3").write_bytes(b"not a database at all" * 40)
    r = run("games", "--data-dir", str(tmp_path))
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"companion games: journal {tmp_path}/companion.sqlite3 is not an "
                        "SQLite database; left as it is\n")
    assert [p.name for p in tmp_path.iterdir()] == ["companion.sqlite3"]
    assert (tmp_path / "companion.sqlite3").read_bytes() == b"not a database at all" * 40
