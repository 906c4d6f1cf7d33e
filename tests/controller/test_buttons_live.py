"""Table buttons drive the session: confirm accepts warnings, undo takes back a move."""

from __future__ import annotations

from companion.live import handle_buttons
from companion.rules import Block, Build, Card, Commit, Seat, Site, make_config
from companion.session import GameSession
from hardware.buttons import TableButtons


def test_confirm_and_undo_buttons():
    session = GameSession(make_config(4))
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        session.play(Commit(seat, None))
    session.play(Build(Seat.S, Card(2, 2), Site(0, 0, 0), Block("red", 1)), allow_illegal=True)
    assert [w["reason"] for w in session.snapshot()["warnings"]] == ["wrong-site"]
    buttons = TableButtons(backend="fake")
    try:
        buttons.press("confirm")
        assert handle_buttons(session, buttons.drain()) == ["confirm"]
        assert [w["resolved"] for w in session.snapshot()["warnings"]] == [True]
        buttons.press("undo")
        assert handle_buttons(session, buttons.drain()) == ["undo"]
        assert [str(m) for m in session.record.moves] == [
            "S commit ?", "W commit ?", "N commit ?", "E commit ?"]
        corr = session.record.entries[-1]
        assert corr.note == "undo" and corr.move is None
    finally:
        buttons.close()


def test_an_undo_the_journal_refuses_leaves_the_game_and_the_loop_alone(caplog):
    """A full card: the undo is not made (the record as it was), and the run loop that
    handles the buttons goes on instead of ending `companion run`."""
    import sqlite3

    class FullCard:
        full = False

        def begin_game(self, header):
            return "g1"

        def append(self, game_id, entry):
            if self.full:
                raise sqlite3.OperationalError("database or disk is full")

    card = FullCard()
    session = GameSession(make_config(4), journal=card)
    session.play(Commit(Seat.S, None))
    card.full = True
    assert handle_buttons(session, ["undo", "next_round"]) == ["next_round"]
    assert [str(m) for m in session.record.moves] == ["S commit ?"]
    assert "undo button: the game could not be saved (database or disk is full)" in caplog.text
    card.full = False
    assert handle_buttons(session, ["undo"]) == ["undo"]
    assert session.record.moves == []
