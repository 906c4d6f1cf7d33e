"""Shared set-ups for the journal tests: a deterministic clock, ids and bot games."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
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
