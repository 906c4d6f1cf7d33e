"""A block really built where the mover's card does not build, in the city of the
card's site, is recorded where it stands, with the rules' warning: the card's site
is taken instead only when a block there explains the change at least as well."""

from __future__ import annotations

import pytest

import companion.simtable as simtable
from companion.controller import Controller
from companion.pipeline import VisionReader
from companion.rules import Block, Build, Commit, Site, apply_move
from companion.session import GameSession
from companion.simtable import SimTable
from tests.controller.viewadvice import game_warnings


def test_a_block_built_in_front_of_its_card_site_keeps_the_wrong_site_warning(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # SimTable seed 6 as the demo films it: move 20 is East's black 3 on Manhattan N
    # (card c12), behind the tower on Manhattan C (test_live_vision). Here East puts
    # it on C instead, as a player may: the table lets it stand (the world's rules
    # are not checked for it), the camera sees it on C
    table = SimTable(seed=6)
    east = table.bots[3]
    chosen = east.choose
    wrong = Site.parse("0C")

    def choose(state):  # East's twentieth move, on the site in front
        move = chosen(state)
        if isinstance(move, Build) and len(table.moves) == 19:
            assert str(move) == "E c12 black3@0N"
            return Build(move.seat, move.card, wrong, Block("black", 3))
        return move

    monkeypatch.setattr(east, "choose", choose)
    monkeypatch.setattr(simtable, "apply_move",
                        lambda state, move: apply_move(state, move, check=False))
    session = GameSession(table.companion_config())
    ctl = Controller(session, VisionReader(colors=list(table.companion_config().colors)))
    while len(table.moves) <= 20:
        frame = table.read()
        ctl.process(frame.image, frame.timestamp)
    builds = [str(m) for m in session.record.moves if not isinstance(m, Commit)]
    assert builds[19] == "E c12 black3@0C" == str(table.moves[19])
    assert builds[:19] == [str(m) for m in table.moves[:19]]
    assert [w["reason"] for w in game_warnings(session, table)] == ["wrong-site"]
