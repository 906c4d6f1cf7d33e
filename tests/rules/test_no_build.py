"""No legal build: detection and the pass / forfeit house rules (docs/rules-decisions.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rules_helpers import position, tower

from companion.rules import (
    ALL_CARDS,
    Block,
    Card,
    IllegalMoveError,
    NoBuildPolicy,
    Pass,
    Phase,
    Seat,
    Site,
    apply_move,
    check_move,
    has_legal_build,
    legal_builds,
    legal_moves,
    make_config,
)

S, W = Seat.S, Seat.W
# Every NW site holds a blue 2: South's last red 1 cannot go there (c00 from S is NW).
NW_BLOCKED = {Site(c, 0, 0): tower(("blue", 2)) for c in range(6)}
# Every site holds a blue 2: South cannot place a red 1 anywhere.
ALL_BLOCKED = {Site(c, r, k): tower(("blue", 2))
               for c in range(6) for r in range(3) for k in range(3)}


def reason(state, move) -> str:
    with pytest.raises(IllegalMoveError) as info:
        check_move(state, move)
    return f"{info.value.reason}: {info.value}"


def test_a_card_with_no_legal_build_is_detected() -> None:
    s = position(board=NW_BLOCKED, pending={"red": (1,)})
    assert [b for b in legal_builds(s, (Card(0, 0),))] == []
    assert legal_builds(s, (Card(0, 1),)) != []
    assert has_legal_build(s)  # other cards would do


def test_pass_rule_discards_the_card_and_keeps_the_block() -> None:
    s = position(board=NW_BLOCKED, pending={"red": (1,)})
    move = Pass(S, Card(0, 0))
    check_move(s, move)
    after = apply_move(s, move)
    assert after.played[S] == (Card(0, 0),)
    assert after.pending["red"] == (Block("red", 1),)
    assert after.placed_this_round["red"] == 5
    assert after.board == s.board
    assert after.seat is W and after.ply == 1
    assert after.removed["red"] == {}


def test_pass_with_a_buildable_card_is_refused() -> None:
    s = position(board=NW_BLOCKED, pending={"red": (1,)})
    assert reason(s, Pass(S, Card(0, 1))).startswith(
        "build-possible: Player 1 can still build with card c01: S c01 red1@0N")


def test_forfeit_rule_gives_up_a_committed_block() -> None:
    cfg = make_config(4, no_build="forfeit")
    nw_blue4 = {Site(c, 0, 0): tower(("blue", 4)) for c in range(6)}
    s = position(cfg, board=nw_blue4, pending={"red": (3, 1)})
    assert reason(s, Pass(S, Card(0, 0))) == \
        "bad-forfeit: a block must be forfeited with this pass"
    assert reason(s, Pass(S, Card(0, 0), Block("red", 4))) == \
        "bad-forfeit: red4 is not among the blocks left"
    assert reason(s, Pass(S, Card(0, 0), Block("blue", 1))).startswith("not-your-color")
    after = apply_move(s, Pass(S, Card(0, 0), Block("red", 3)))
    assert after.pending["red"] == (Block("red", 1),)
    assert after.placed_this_round["red"] == 5
    assert after.removed["red"] == {3: 1}
    assert after.board == s.board


def test_pass_rule_refuses_a_forfeit_it_does_not_need() -> None:
    s = position(board=NW_BLOCKED, pending={"red": (1,)})
    assert reason(s, Pass(S, Card(0, 0), Block("red", 1))) == \
        "bad-forfeit: the house rule in force keeps every block"


def test_when_no_card_at_all_fits_even_the_pass_rule_forfeits() -> None:
    s = position(board=ALL_BLOCKED, pending={"red": (1,)})
    assert s.config.no_build is NoBuildPolicy.PASS
    assert not has_legal_build(s)
    moves = legal_moves(s)
    assert moves == [Pass(S, card, Block("red", 1)) for card in ALL_CARDS]
    assert reason(s, Pass(S, Card(1, 1))) == \
        "bad-forfeit: a block must be forfeited with this pass"
    after = apply_move(s, Pass(S, Card(1, 1), Block("red", 1)))
    assert after.blocks_left_this_round(0) == 0
    assert after.removed["red"] == {1: 1}


def test_a_forfeit_can_end_the_round() -> None:
    # South is the last player with a block left this round.
    s = position(board=ALL_BLOCKED, pending={"red": (1,), "blue": (), "green": (),
                                              "black": ()})
    after = apply_move(s, Pass(S, Card(2, 2), Block("red", 1)))
    assert after.round == 2 and after.phase is Phase.COMMIT
    assert len(after.scores) == 1
    # 54 blue buildings of height 2: tie for the tallest; blue owns every city
    assert after.scores[0].total("blue") == 54 + 12
    assert after.seat is W


def test_tracked_hands_a_pass_needs_every_card_in_hand_to_fail() -> None:
    hand = (Card(0, 0), Card(0, 0), Card(0, 1), Card(0, 0))
    s = position(board=NW_BLOCKED, pending={"red": (1,)},
                 hands=(hand, (), (), ()), deck=(Card(2, 2),) * 10)
    assert reason(s, Pass(S, Card(0, 0))).startswith(
        "build-possible: Player 1 can still build with the hand: S c01 red1@0N")
    s2 = replace(s, hands=((Card(0, 0),) * 4, (), (), ()))
    assert legal_moves(s2) == [Pass(S, Card(0, 0))]
    after = apply_move(s2, Pass(S, Card(0, 0)))
    assert after.hands is not None and after.hands[0] == (Card(0, 0),) * 3 + (Card(2, 2),)


def test_forfeit_of_a_colour_already_placed_is_refused() -> None:
    # Two players, undeclared selections: South has placed all 4 red, 2 blue.
    cfg = make_config(2, no_build="forfeit")
    greens = {site: tower(("green", 4), ("green", 4)) for site in ALL_BLOCKED}
    s = position(cfg, board=greens, pending={"red": None, "blue": None})
    s = replace(s, placed_this_round={"red": 4, "blue": 2, "green": 0, "black": 0})
    assert not has_legal_build(s)
    assert reason(s, Pass(S, Card(0, 0), Block("red", 1))) == \
        "bad-forfeit: Player 1 has no red block left this round"
    s_no4 = replace(s, supply={**s.supply, "blue": {4: 0, 3: 4, 2: 6, 1: 11}})
    assert reason(s_no4, Pass(S, Card(0, 0), Block("blue", 4))) == \
        "bad-forfeit: blue has no 4-storey block left"
    after = apply_move(s, Pass(S, Card(0, 0), Block("blue", 4)))
    assert after.placed_this_round["blue"] == 3
    assert after.supply["blue"][4] == 2
    assert after.removed["blue"] == {4: 1}
    # every legal move is one of the blue forfeits
    moves = legal_moves(s)
    assert moves and all(isinstance(m, Pass) and m.forfeit is not None
                         and m.forfeit.color == "blue" for m in moves)


def test_godzilla_moves_after_a_build_but_not_after_a_pass() -> None:
    # Godzilla "moves after you play a card and build a piece"; the Mayfair monster
    # moves whenever a card is played.
    start = Site(4, 1, 1)
    for variant, moved in (("godzilla", False), ("monster", True)):
        cfg = make_config(4, variants=[variant], monster_start=start)
        s = position(cfg, board=NW_BLOCKED, pending={"red": (1,)}, monster=start)
        after = apply_move(s, Pass(S, Card(0, 0)))  # c00 from S points north-west
        assert (after.monster != start) is moved, variant
        if moved:
            assert after.monster == Site(4, 0, 0)
