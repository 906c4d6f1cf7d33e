"""Legality: one minimal position per refusal reason, and the takeover rule.

How to build (1994): "A player may place a building part on an empty site or
on a sky-scraper that belongs to him without restriction. On sky-scrapers
belonging to another player: after placing the building part, the player must
have at least as many floors (not parts!) of his color as those of the player
the building belonged to before he placed the part."
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from rules_helpers import blocks, committed, position, tower

from companion.rules import (
    REASONS,
    Block,
    Build,
    Card,
    Commit,
    GameState,
    IllegalMoveError,
    Move,
    Pass,
    Phase,
    RulesError,
    Seat,
    Site,
    apply_move,
    check_move,
    is_legal,
    make_config,
    new_game,
)

S, W, N, E = Seat.S, Seat.W, Seat.N, Seat.E


def refused(state: GameState, move: Move) -> IllegalMoveError:
    with pytest.raises(IllegalMoveError) as info:
        check_move(state, move)
    assert not is_legal(state, move)
    return info.value


def build_s(site: Site, block: Block) -> Build:
    """South builds on ``site`` with the card that gives it (S: card cell == site cell)."""
    return Build(S, Card(site.row, site.col), site, block)


# -- one case per reason ------------------------------------------------------

def _game_over() -> tuple[GameState, Move]:
    return replace(position(), phase=Phase.OVER), build_s(Site(0, 0, 0), Block("red", 1))


def _wrong_phase_build() -> tuple[GameState, Move]:
    return new_game(make_config(4)), build_s(Site(0, 0, 0), Block("red", 1))


def _wrong_phase_commit() -> tuple[GameState, Move]:
    return position(), Commit(S, blocks("red", 4, 3, 2, 1, 1, 1))


def _wrong_turn_build() -> tuple[GameState, Move]:
    return position(), Build(W, Card(0, 0), Site(0, 0, 2), Block("blue", 1))


def _wrong_turn_commit() -> tuple[GameState, Move]:
    return new_game(make_config(4)), Commit(W, blocks("blue", 4, 3, 2, 1, 1, 1))


def _wrong_turn_empty_seat() -> tuple[GameState, Move]:
    return position(make_config(3)), Build(E, Card(0, 0), Site(0, 2, 0), Block("black", 1))


def _card_not_in_hand() -> tuple[GameState, Move]:
    s = position(hands=((Card(0, 0),) * 4, (), (), ()))
    return s, build_s(Site(0, 0, 1), Block("red", 1))


def _wrong_site() -> tuple[GameState, Move]:
    return position(), Build(S, Card(0, 0), Site(2, 0, 2), Block("red", 1))


def _not_your_color() -> tuple[GameState, Move]:
    return position(), build_s(Site(0, 0, 0), Block("blue", 1))


def _not_your_color_commit() -> tuple[GameState, Move]:
    return new_game(make_config(4)), Commit(S, blocks("blue", 4, 3, 2, 1, 1, 1))


def _block_not_committed() -> tuple[GameState, Move]:
    # South committed 4,3,2,1,1,1 and has already placed the 4.
    s = position(pending={"red": (3, 2, 1, 1, 1)})
    return s, build_s(Site(0, 0, 0), Block("red", 4))


def _no_blocks_left() -> tuple[GameState, Move]:
    # Two players: South (red+blue) has placed all four red blocks this round.
    cfg = make_config(2)
    s = position(cfg, pending={"red": ()})
    return s, build_s(Site(0, 0, 0), Block("red", 1))


def _too_few_storeys() -> tuple[GameState, Move]:
    s = position(board={Site(1, 1, 1): tower(("blue", 3))})
    return s, build_s(Site(1, 1, 1), Block("red", 2))


def _anti_trust() -> tuple[GameState, Move]:
    cfg = make_config(4, variants=["anti-trust"])
    s = position(cfg, board={Site(1, 1, 1): tower(("red", 1))})
    return s, build_s(Site(1, 1, 1), Block("red", 2))


def _city_closed() -> tuple[GameState, Move]:
    cfg = make_config(4, variants=["slow-growth"])
    return position(cfg), build_s(Site(3, 0, 0), Block("red", 1))


def _monster_site() -> tuple[GameState, Move]:
    cfg = make_config(4, variants=["monster"])
    s = position(cfg)
    assert s.monster == Site(3, 2, 0)
    return s, build_s(Site(3, 2, 0), Block("red", 1))


def _wrong_count() -> tuple[GameState, Move]:
    return new_game(make_config(4)), Commit(S, blocks("red", 4, 3, 2, 1, 1))


def _not_in_supply_commit() -> tuple[GameState, Move]:
    # A colour has three 4-storey blocks only.
    return new_game(make_config(4)), Commit(S, blocks("red", 4, 4, 4, 4, 1, 1))


def _not_in_supply_undeclared() -> tuple[GameState, Move]:
    # Undeclared selection: builds come from the box, which has no red 4 left.
    s = position(pending={"red": None})
    s = replace(s, supply={**s.supply, "red": {4: 0, 3: 4, 2: 6, 1: 11}})
    return s, build_s(Site(0, 0, 0), Block("red", 4))


def _build_possible() -> tuple[GameState, Move]:
    return position(), Pass(S, Card(0, 0))


def _bad_forfeit_not_needed() -> tuple[GameState, Move]:
    full = {Site(c, 0, 0): tower(("blue", 4)) for c in range(6)}
    s = position(board=full, pending={"red": (1,)})
    return s, Pass(S, Card(0, 0), Block("red", 1))


def _bad_forfeit_missing() -> tuple[GameState, Move]:
    full = {Site(c, 0, 0): tower(("blue", 4)) for c in range(6)}
    cfg = make_config(4, no_build="forfeit")
    s = position(cfg, board=full, pending={"red": (1,)})
    return s, Pass(S, Card(0, 0))


CASES: list[tuple[str, Callable[[], tuple[GameState, Move]], str]] = [
    ("game-over", _game_over, "the game is over"),
    ("wrong-phase", _wrong_phase_build, "every player must first choose this round's blocks"),
    ("wrong-phase", _wrong_phase_commit, "blocks are chosen at the start of a round"),
    ("wrong-turn", _wrong_turn_build, "it is Player 1's turn (S), not W's"),
    ("wrong-turn", _wrong_turn_commit, "Player 1 (S) chooses blocks now"),
    ("wrong-turn", _wrong_turn_empty_seat, "nobody plays from seat E"),
    ("card-not-in-hand", _card_not_in_hand, "Player 1 does not hold card c01"),
    ("wrong-site", _wrong_site, "card c00 from seat S gives the NW site, not NE"),
    ("not-your-color", _not_your_color, "blue is not Player 1's colour"),
    ("not-your-color", _not_your_color_commit, "blue is not Player 1's colour"),
    ("block-not-committed", _block_not_committed,
     "red did not commit a 4-storey block for this round (left: 3, 2, 1, 1, 1)"),
    ("no-blocks-left", _no_blocks_left, "Player 1 has no red block left to place this round"),
    ("too-few-storeys", _too_few_storeys,
     "Red needs 3 storeys of its own to take this tower from Blue, and would have 2"),
    ("anti-trust", _anti_trust, "Anti-trust: Player 1 may not build on their own Sydney C"),
    ("city-closed", _city_closed, "Slow Growth: Hong Kong opens later"),
    ("monster-site", _monster_site, "the monster stands on Hong Kong SW"),
    ("wrong-count", _wrong_count, "Player 1 must choose 6 red blocks, not 5"),
    ("not-in-supply", _not_in_supply_commit, "red has 3 block(s) of 4 storeys left, not 4"),
    ("not-in-supply", _not_in_supply_undeclared, "red has no 4-storey block left"),
    ("build-possible", _build_possible, "Player 1 can still build with card c00: S c00 red"),
    ("bad-forfeit", _bad_forfeit_not_needed, "the house rule in force keeps every block"),
    ("bad-forfeit", _bad_forfeit_missing, "a block must be forfeited with this pass"),
]


@pytest.mark.parametrize(("reason", "make", "message"), CASES,
                         ids=[f"{r}-{m.__name__.strip('_')}" for r, m, _ in CASES])
def test_every_refusal_has_its_reason_and_message(
        reason: str, make: Callable[[], tuple[GameState, Move]], message: str) -> None:
    state, move = make()
    err = refused(state, move)
    assert err.reason == reason
    assert err.reason in REASONS
    assert message in str(err)
    assert isinstance(err, ValueError) and isinstance(err, RulesError)
    # apply_move refuses the same way and leaves no trace.
    with pytest.raises(IllegalMoveError) as info:
        apply_move(state, move)
    assert info.value.reason == reason


def test_the_table_covers_every_reason() -> None:
    assert {reason for reason, _, _ in CASES} == set(REASONS)


def test_minimal_positions_differ_from_a_legal_move_only_in_the_broken_rule() -> None:
    # Sanity: the same positions accept the nearest legal move, so each refusal
    # above is caused by the rule it names.
    s = position()
    assert is_legal(s, build_s(Site(0, 0, 0), Block("red", 1)))
    assert is_legal(s, build_s(Site(2, 0, 2), Block("red", 1)))
    s2, _ = _block_not_committed()
    assert is_legal(s2, build_s(Site(0, 0, 0), Block("red", 3)))
    s3, _ = _too_few_storeys()
    assert is_legal(s3, build_s(Site(1, 1, 1), Block("red", 3)))
    s4, _ = _city_closed()
    assert is_legal(s4, build_s(Site(2, 0, 0), Block("red", 1)))
    s5, _ = _monster_site()
    assert is_legal(s5, build_s(Site(3, 2, 1), Block("red", 1)))
    s6, _ = _no_blocks_left()
    assert is_legal(s6, build_s(Site(0, 0, 0), Block("blue", 1)))
    s7, _ = _card_not_in_hand()
    assert is_legal(s7, build_s(Site(0, 0, 0), Block("red", 1)))


# -- block selection ----------------------------------------------------------

def test_commit_phase_goes_in_turn_order_from_the_start_player() -> None:
    s = new_game(make_config(4))
    assert s.phase is Phase.COMMIT
    order = []
    for seat, color in ((S, "red"), (W, "blue"), (N, "green"), (E, "black")):
        assert s.seat is seat
        order.append(seat)
        s = apply_move(s, Commit(seat, blocks(color, 4, 3, 2, 1, 1, 1)))
    assert s.phase is Phase.BUILD and s.seat is S
    assert s.pending["green"] == blocks("green", 4, 3, 2, 1, 1, 1)
    assert s.supply["green"] == {4: 2, 3: 3, 2: 5, 1: 8}


def test_two_colour_commit_needs_four_of_each() -> None:
    s = new_game(make_config(2))
    err = refused(s, Commit(S, blocks("red", 4, 3, 2, 1) + blocks("blue", 4, 3, 2)))
    assert err.reason == "wrong-count"
    assert "must choose 4 blue blocks, not 3" in str(err)
    err = refused(s, Commit(S, blocks("red", 4, 3, 2, 1, 1, 1, 1, 1)))
    assert err.reason == "wrong-count"
    assert "must choose 4 red blocks, not 8" in str(err)
    ok = Commit(S, blocks("red", 4, 4, 4, 3) + blocks("blue", 1, 1, 1, 1))
    assert is_legal(s, ok)


def test_commit_cannot_take_blocks_used_in_earlier_rounds() -> None:
    s = new_game(make_config(4))
    s = replace(s, supply={**s.supply, "red": {4: 0, 3: 1, 2: 6, 1: 11}})
    err = refused(s, Commit(S, blocks("red", 4, 2, 2, 1, 1, 1)))
    assert err.reason == "not-in-supply"
    assert "red has 0 block(s) of 4 storeys left, not 1" in str(err)
    assert is_legal(s, Commit(S, blocks("red", 3, 2, 2, 1, 1, 1)))


def test_undeclared_commit_is_legal_and_builds_take_from_the_box() -> None:
    s = committed(make_config(4), state=apply_move(new_game(make_config(4)), Commit(S, None)))
    assert s.pending["red"] is None
    assert s.remaining_blocks(0) is None
    before = dict(s.supply["red"])
    s = apply_move(s, build_s(Site(0, 0, 0), Block("red", 4)))
    assert s.supply["red"] == {**before, 4: before[4] - 1}
    assert s.placed_this_round["red"] == 1


def test_a_build_must_use_a_committed_unused_block() -> None:
    s = committed(make_config(4), {"red": (4, 1, 1, 1, 1, 1)})
    s = apply_move(s, build_s(Site(0, 0, 0), Block("red", 4)))
    # the others build somewhere
    for seat, site, color in ((W, Site(0, 0, 2), "blue"), (N, Site(0, 2, 2), "green"),
                              (E, Site(0, 2, 0), "black")):
        s = apply_move(s, Build(seat, Card.for_site(seat, site.row, site.col), site,
                                Block(color, 1)))
    err = refused(s, build_s(Site(1, 0, 0), Block("red", 4)))
    assert err.reason == "block-not-committed"
    assert "(left: 1, 1, 1, 1, 1)" in str(err)
    err = refused(s, build_s(Site(1, 0, 0), Block("red", 2)))
    assert err.reason == "block-not-committed"


# -- the takeover rule: storeys, not blocks -----------------------------------------

def test_one_three_storey_block_takes_a_tower_of_two_blocks() -> None:
    # red 1 + red 2 = 3 red storeys in two parts; one blue 3 equals them.
    site = Site(2, 0, 2)
    s = position(board={site: tower(("red", 1), ("red", 2))}, to_move=1)
    move = Build(W, Card.for_site(W, 0, 2), site, Block("blue", 3))
    check_move(s, move)
    after = apply_move(s, move)
    assert after.board.tower(site) == tower(("red", 1), ("red", 2), ("blue", 3))
    assert after.board.owner(site) == "blue"
    assert after.board.height(site) == 6


def test_two_storeys_on_three_are_too_few() -> None:
    site = Site(2, 0, 2)
    s = position(board={site: tower(("red", 3))}, to_move=1)
    err = refused(s, Build(W, Card.for_site(W, 0, 2), site, Block("blue", 2)))
    assert err.reason == "too-few-storeys"
    assert str(err) == ("Blue needs 3 storeys of its own to take this tower from Red, "
                        "and would have 2")


def test_many_small_blocks_lose_to_fewer_storeys_counted_once() -> None:
    # Red has three blocks (3 storeys); blue's 2 is not enough, though blocks don't count.
    site = Site(0, 1, 1)
    s = position(board={site: tower(("red", 1), ("red", 1), ("red", 1))}, to_move=1)
    assert refused(s, Build(W, Card(1, 1), site, Block("blue", 2))).reason == "too-few-storeys"
    assert is_legal(s, Build(W, Card(1, 1), site, Block("blue", 3)))


def test_storeys_lower_in_the_tower_count_for_the_new_owner() -> None:
    # blue 2, red 2, blue 1, red 3: red (owner) has 5 storeys, blue 3 already.
    site = Site(4, 1, 1)
    s = position(board={site: tower(("blue", 2), ("red", 2), ("blue", 1), ("red", 3))},
                 to_move=1)
    assert is_legal(s, Build(W, Card(1, 1), site, Block("blue", 2)))  # 3 + 2 = 5 >= 5
    err = refused(s, Build(W, Card(1, 1), site, Block("blue", 1)))  # 3 + 1 = 4 < 5
    assert "Blue needs 5 storeys of its own to take this tower from Red, and would have 4" \
        in str(err)


def test_only_the_current_owner_counts_not_the_largest_colour() -> None:
    # green 4 below, red 1 on top: red owns it with 1 storey; blue 1 is enough.
    site = Site(4, 1, 1)
    s = position(board={site: tower(("green", 4), ("red", 1))}, to_move=1)
    move = Build(W, Card(1, 1), site, Block("blue", 1))
    check_move(s, move)
    assert apply_move(s, move).board.owner(site) == "blue"
    # and green, which has 4 storeys there, may take it back with a single storey
    s2 = position(board={site: tower(("green", 4), ("red", 1))}, to_move=2)
    check_move(s2, Build(N, Card(1, 1), site, Block("green", 1)))


def test_building_on_ones_own_tower_is_unrestricted() -> None:
    site = Site(5, 2, 2)
    s = position(board={site: tower(("blue", 4), ("red", 1))})
    # red owns it with 1 storey against blue's 4; red may still add a single storey
    move = build_s(site, Block("red", 1))
    check_move(s, move)
    assert apply_move(s, move).board.tower(site) == tower(("blue", 4), ("red", 1), ("red", 1))


def test_two_colour_player_owns_towers_of_either_colour() -> None:
    cfg = make_config(2)  # S: red+blue, N: green+black
    site = Site(1, 0, 0)
    # Blue (South's other colour) on top of a tall green: South may add red freely.
    s = position(cfg, board={site: tower(("green", 4), ("green", 4), ("blue", 1))})
    check_move(s, build_s(site, Block("red", 1)))
    # A tower of the opponent's green: South's red and blue storeys do not add up.
    s2 = position(cfg, board={site: tower(("blue", 2), ("green", 3))})
    err = refused(s2, build_s(site, Block("red", 2)))
    assert err.reason == "too-few-storeys"
    assert "Red needs 3 storeys" in str(err) and "would have 2" in str(err)
    check_move(s2, build_s(site, Block("blue", 1)))  # blue 2 + 1 = 3 >= 3


def test_anti_trust_covers_both_colours_of_a_two_colour_player() -> None:
    cfg = make_config(2, variants=["anti-trust"])
    site = Site(1, 0, 0)
    s = position(cfg, board={site: tower(("blue", 1))})
    err = refused(s, build_s(site, Block("red", 4)))
    assert err.reason == "anti-trust"
    # but building on an opponent's tower is still fine
    s2 = position(cfg, board={site: tower(("green", 1))})
    check_move(s2, build_s(site, Block("red", 1)))


def test_an_empty_site_takes_any_block() -> None:
    s = position()
    for k in (1, 2, 3, 4):
        check_move(s, build_s(Site(3, 1, 2), Block("red", k)))


def test_a_block_exists_committed_in_the_box_or_to_swap_for_a_committed_one() -> None:
    from companion.rules import block_exists

    s = position(pending={"red": (3,)})
    s = replace(s, supply={**s.supply, "red": {4: 0, 3: 0, 2: 1, 1: 0}})
    assert block_exists(s, Block("red", 3))  # committed
    assert block_exists(s, Block("red", 2))  # in the box
    assert block_exists(s, Block("red", 4))  # illegal: the committed 3 given up for it
    s = replace(s, pending={**s.pending, "red": ()})
    assert [block_exists(s, Block("red", k)) for k in (1, 2, 3, 4)] == [
        False, True, False, False]
    assert not block_exists(s, Block("orange", 1))  # no colour of this game
    # applying what no build can place refuses, checked or not
    with pytest.raises(IllegalMoveError, match="red has no 4-storey block left at all"):
        apply_move(s, build_s(Site(0, 0, 0), Block("red", 4)), check=False)
    after = apply_move(s, build_s(Site(0, 0, 0), Block("red", 2)), check=False)
    assert after.supply["red"][2] == 0
