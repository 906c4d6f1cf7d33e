"""A journal that refuses a move (a full or failing SD card): the game stays as it was,
the players are told once, the move is tried again, and nothing is lost."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from companion.controller import Controller
from companion.rules import legal_moves, make_config
from companion.session import GameSession, JournalFailure
from companion.store.journal import Journal

from .test_controller_fake_reader import _script

FULL = "database or disk is full"
TOLD = (f"the game could not be saved ({FULL}): the companion keeps the move and tries "
        "again; free space on its card")


class FullCard:
    """The journal, with the card filling up when told (sqlite's own error)."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.full = False

    def begin_game(self, header: dict[str, Any]) -> str:
        if self.full:
            raise sqlite3.OperationalError(FULL)
        return self.journal.begin_game(header)

    def append(self, game_id: str, entry: dict[str, Any]) -> None:
        if self.full:
            raise sqlite3.OperationalError(FULL)
        self.journal.append(game_id, entry)


def _scene(ctl: Controller, k: int, seconds: float, t: list[float]) -> list[str]:
    """A hand (three moving frames), then scene ``k`` still at 15 fps for ``seconds``."""
    out = [ctl.process(np.random.default_rng(k).integers(0, 255, (72, 128, 3), np.uint8),
                       t[0]) for _ in range(3)]
    t[0] += 3 / 15
    for _ in range(round(seconds * 15)):
        out.append(ctl.process(np.full((72, 128, 3), k, np.uint8), t[0]))
        t[0] += 1 / 15
    return out


def test_a_move_the_journal_refuses_is_held_and_tried_again(tmp_path: Path) -> None:
    cfg, builds, readings = _script(3, 6)
    journal = Journal(tmp_path / "journal.sqlite")
    card = FullCard(journal)
    session = GameSession(journal=card)
    session.new_game(make_config(list(cfg.players)))
    reads: list[int] = []

    def reader(image: np.ndarray, previous_pose: Any = None) -> Any:
        reads.append(int(image[0, 0, 0]))
        return readings[int(image[0, 0, 0])]

    ctl = Controller(session, reader, still_seconds=0.4)
    t = [0.0]
    for k in range(4):
        _scene(ctl, k, 0.6, t)
    played = [str(m) for m in session.record.moves]
    assert [m for m in played if "@" in m] == [str(b) for b in builds[:3]]
    card.full = True
    out = _scene(ctl, 4, 10.0, t)
    # read once when still, once more 5 s later; the frames between wait
    assert out.count("not-saved") == 2 and out.count("read") == 0
    assert [str(m) for m in session.record.moves] == played  # the game as it was
    warnings = session.snapshot()["warnings"]
    assert [(w["reason"], w["message"], w["resolved"]) for w in warnings] == [
        ("not-saved", TOLD, False)]  # told once
    assert ctl.stats.not_saved == 2
    card.full = False
    out = _scene(ctl, 4, 6.0, t)
    # the still scene is read as the next hand comes, and saved
    assert out[0] == "read-before-motion" and "not-saved" not in out
    assert [str(m) for m in session.record.moves if "@" in str(m)] == [
        str(b) for b in builds[:4]]
    assert [w["resolved"] for w in session.snapshot()["warnings"]] == [True]
    _scene(ctl, 5, 0.6, t)
    # nothing lost: the journal holds every move the table saw, in order
    assert [str(m) for m in journal.load(session.game_id).moves] == [
        str(m) for m in session.record.moves]
    assert [str(m) for m in session.record.moves if "@" in str(m)] == [
        str(b) for b in builds[:5]]


def test_the_session_names_the_refusal() -> None:
    class Broken:
        def begin_game(self, header: dict[str, Any]) -> str:
            return "g1"

        def append(self, game_id: str, entry: dict[str, Any]) -> None:
            raise OSError(5, "Input/output error")

    cfg, _builds, _readings = _script(3, 1)
    session = GameSession(make_config(list(cfg.players)), journal=Broken())
    with pytest.raises(JournalFailure) as err:
        session.play(next(iter(legal_moves(session.state))))
    assert str(err.value) == "the game could not be saved ([Errno 5] Input/output error)"
    assert session.record.moves == []


class FillingCard(Journal):
    """A card with room for ``room`` more entries; a transaction that does not fit
    writes nothing, as SQLite rolls it back."""

    room: int | None = None

    def append(self, game_id: str, entry: dict[str, Any]) -> None:
        self.append_all(game_id, [entry])

    def append_all(self, game_id: str, entries: Any) -> None:
        if self.room is not None:
            if len(entries) > self.room:
                raise sqlite3.OperationalError(FULL)
            self.room -= len(entries)
        super().append_all(game_id, entries)


def test_a_correction_and_its_rechecks_are_saved_together_or_not_at_all(
        tmp_path: Path) -> None:
    """The correction was saved on its own, then each re-check of the moves after it: a
    card full between them kept the correction without the re-checks, and the game
    no longer replayed (the page said "not saved", a retry deleted a second move, a
    restart abandoned the game)."""
    from companion.bots import RandomBot

    journal = FillingCard(tmp_path / "companion.sqlite3")
    session = GameSession(journal=journal)
    session.new_game(make_config(4, seed=3, track_cards=True))
    bots = [RandomBot(i) for i in range(4)]
    for _ in range(12):
        session.play(bots[session.state.to_move].choose(session.state))
    game_id = str(session.game_id)
    before = session.record
    saved = journal.load(game_id).to_json()
    journal.room = 1  # room for the correction, not for the re-checks after it
    with pytest.raises(JournalFailure, match=f"^the game could not be saved \\({FULL}\\)$"):
        session.correct(5, None, "deleted by mistake")
    assert session.record == before
    assert journal.load(game_id).to_json() == saved
    journal.room = None
    done = session.correct(5, None, "deleted by mistake")
    assert done["flagged"]  # the moves after it went out of turn: re-checked, flagged
    assert journal.load(game_id).replay().board == session.state.board
    assert journal.load(game_id).to_json() == session.record.to_json()
    journal.close()
