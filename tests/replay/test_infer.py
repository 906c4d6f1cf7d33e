"""Replay inference on exact observations made from seeded bot games."""

from __future__ import annotations

import functools

import pytest

from companion.bots import GreedyBot
from companion.replay import Observation, exact_photos, infer_players, replay
from companion.rules import Site, make_config, new_game


def _bot_game(n_players: int, seed: int):
    """A seeded bot game: its config, moves, one exact photo per turn, and its end.
    The lists are the caller's own (tests change photos in them)."""
    cfg, moves, photos, state = _played(n_players, seed)
    return cfg, list(moves), list(photos), state


@functools.cache
def _played(n_players: int, seed: int):
    """:func:`_bot_game`'s game, played once a process (the values are immutable)."""
    cfg = make_config(n_players, seed=seed, track_cards=True)
    photos, moves, state = exact_photos(
        cfg, [GreedyBot(seed * 10 + i) for i in range(n_players)])
    return cfg, tuple(moves), tuple(photos), state


#: exact photos replayed past a case: enough for the next photos to settle it (the whole
#: game is replayed below, and every other photo of it in test_skipped_photos)
AFTER = 8


def _up_to(moves, photos, photo: int):
    """A bot game's moves and photos to ``AFTER`` photos past photo ``photo`` (the one
    taken after move ``photo - 1``)."""
    return moves[:photo + AFTER], photos[:photo + AFTER + 1]


@pytest.mark.parametrize("n_players,seed", [(4, 5), (3, 7), (2, 11)])
def test_one_photo_per_turn_gives_the_exact_move_list(n_players, seed):
    cfg, moves, photos, final = _bot_game(n_players, seed)
    result = replay(photos, make_config(list(cfg.players), edition=cfg.edition))
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert result.warnings == []
    assert result.state.totals() == final.totals()
    assert result.state.is_over


def test_players_are_inferred_from_the_card_stacks():
    cfg, moves, photos, final = _bot_game(4, 5)
    config, notes = infer_players(photos)
    assert [(p.seat, p.colors) for p in config.players] == \
        [(p.seat, p.colors) for p in cfg.players]
    result = replay(photos)
    assert [w["reason"] for w in result.warnings] == ["inferred-players"]
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]


def test_two_player_colours_are_paired_by_seat():
    cfg, moves, photos, final = _bot_game(2, 11)
    config, _ = infer_players(photos)
    assert {p.seat: set(p.colors) for p in config.players} == \
        {p.seat: set(p.colors) for p in cfg.players}


def test_one_photo_per_round_recovers_the_builds_and_the_scores():
    cfg, moves, photos, final = _bot_game(4, 5)
    per_round = 24
    round_photos = [photos[0]] + [photos[k] for k in range(per_round, len(photos), per_round)]
    result = replay(round_photos, make_config(list(cfg.players)))
    out = result.to_json()
    assert [r["colors"] for r in out["rounds"]] == [s.to_json()["colors"] for s in final.scores]
    assert all(m["order_known"] is False for m in out["moves"])
    # every changed site of round 1 is reported with its owner and storeys added
    round1 = {(m["city"], m["row"], m["col"]): (m["color"], m["storeys"])
              for m in out["moves"] if m["round"] == 1}
    board1 = photos[per_round].sites
    assert round1 == {(s.city, s.row, s.col): (v.owner, v.height) for s, v in board1.items()}


def test_an_illegal_build_is_kept_with_its_reason():
    cfg = make_config(4)
    state = new_game(cfg)
    from companion.rules import Block, Board, Card, Seat

    board = Board.empty().with_block(Site(0, 0, 0), Block("red", 1))
    photos = [Observation.from_board("a", Board.empty()),
              Observation.from_board("b", board, {Seat.S: Card(2, 2)})]
    result = replay(photos, cfg)
    assert state.phase.value == "commit"
    assert [m["notation"] for m in result.moves] == ["S c22 red1@0NW"]
    assert [w["reason"] for w in result.warnings] == ["wrong-site"]
    assert result.moves[0]["legal"] is False
