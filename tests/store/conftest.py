"""Shared set-ups for the journal tests: a deterministic clock, ids and bot games."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from companion.bots import GreedyBot, RandomBot
from companion.rules import GameRecord, make_config
from companion.session import GameSession
from companion.store.journal import Journal


class FakeClock:
    """Seconds that advance by one each call: stable order, stable file names."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def counting_ids(prefix: str = "g") -> Callable[[float], str]:
    counter = itertools.count(1)
    return lambda _now: f"{prefix}{next(counter)}"


@pytest.fixture
def make_journal(tmp_path: Path) -> Iterator[Callable[..., Journal]]:
    """Journals in tmp_path with a fake clock and ids g1, g2, ...; closed afterwards."""
    opened: list[Journal] = []

    def make(name: str = "companion.sqlite3", **kw: Any) -> Journal:
        kw.setdefault("clock", FakeClock())
        kw.setdefault("new_id", counting_ids())
        j = Journal(tmp_path / name, **kw)
        opened.append(j)
        return j

    yield make
    for j in opened:
        try:
            j.close()
        except Exception:
            pass


def play_bots(session: GameSession, moves: int | None = None, seed: int = 0,
              fast: bool = False) -> int:
    """Play greedy-bot moves (all, or ``moves``) through the session; how many were played.
    ``fast`` uses random bots (legal moves, ten times quicker) where play quality is moot."""
    n = len(session.state.players)
    kind = RandomBot if fast else GreedyBot
    bots = [kind(seed * 100 + i) for i in range(n)]
    played = 0
    while not session.state.is_over and (moves is None or played < moves):
        session.play(bots[session.state.to_move].choose(session.state))
        played += 1
    return played


@pytest.fixture(scope="session")
def finished_record() -> GameRecord:
    """A whole 4-player bot game, built once per test run."""
    session = GameSession(make_config(4, seed=11, track_cards=True))
    play_bots(session, seed=11)
    return session.record


@pytest.fixture
def play() -> Callable[..., int]:
    """``play(session, moves=None, seed=0, fast=False)``: bot moves through the session."""
    return play_bots


@pytest.fixture
def fake_clock() -> type[FakeClock]:
    return FakeClock


@pytest.fixture
def ids() -> Callable[..., Callable[[float], str]]:
    return counting_ids


def _two_games(folder: Path, finished: GameRecord, *, crop: bool = False) -> Path:
    """A journal in ``folder``: g1 a finished 4-player game (imported; with a photo
    crop if ``crop``), g2 Ann and Bob, 9 moves in."""
    folder.mkdir()
    with Journal(folder / "companion.sqlite3", clock=FakeClock(1_700_000_000.0),
                 new_id=counting_ids()) as journal:
        journal.import_record(replace(finished, date="2024-05-01").to_json())
        if crop:
            journal.add_evidence("g1", 3, "crop", b"\xff\xd8\xff\xd9")
        cfg = make_config([("Ann", "S", ["red", "blue"]), ("Bob", "N", ["green", "black"])],
                          seed=2, track_cards=True)
        session = GameSession(journal=journal)
        session.new_game(cfg, date="2024-05-02")
        play_bots(session, moves=9, seed=2)
    return folder


@pytest.fixture
def two_games(tmp_path: Path, finished_record: GameRecord) -> Callable[..., Path]:
    """``two_games(crop=False)``: the data folder ``tmp_path/data`` holding g1 and g2."""
    return lambda crop=False: _two_games(tmp_path / "data", finished_record, crop=crop)
