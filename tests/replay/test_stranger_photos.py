"""Photos that are not of the game: another table's, the board cleared, a new game.

A tower never shrinks, so a photo in which most towers of the photo before are gone
is not of this game. Left in, the replay explained another game's photo by up to three
invented builds and misreads, which put the turn order off for the rest of the game,
and spliced a second game's builds onto the first, all without a word.
"""

from __future__ import annotations

from dataclasses import replace

from test_infer import _bot_game

from companion.replay import Observation, replay
from companion.rules import Board, make_config

#: photos 0-30 of seed 5's four-player game (after 30 builds)
N = 31


def _game(n: int = N):
    cfg, moves, photos, _ = _bot_game(4, 5)
    return make_config(list(cfg.players), edition=cfg.edition), moves[:n - 1], photos[:n]


def test_a_photo_of_another_game_is_left_out_with_a_warning():
    config, moves, photos = _game()
    # photo 40 of a three-player game, between the photos after builds 15 and 16
    _cfg, _moves, others, _ = _bot_game(3, 7)
    stranger = replace(others[40], name="p015b")
    result = replay([*photos[:16], stranger, *photos[16:]], config)
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert result.warnings == [{
        "photo": "p015b", "reason": "stranger-photo",
        "message": "p015b: 9 of the 10 towers p015 shows are gone or lower here, which no "
                   "move and no misread explains: a photo of another board? Left out"}]
    assert not any(m.get("doubtful") for m in result.moves)


def test_one_photo_of_the_empty_board_mid_game_does_not_split_the_game():
    config, moves, photos = _game()
    empty = Observation.from_board("p015b", Board.empty())
    result = replay([*photos[:16], empty, *photos[16:]], config)
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert [(w["photo"], w["reason"]) for w in result.warnings] == [
        ("p015b", "stranger-photo")]
    assert result.warnings[0]["message"].startswith("p015b: 10 of the 10 towers p015 shows")
    assert result.misreads == []


def test_a_new_game_in_the_same_folder_stops_the_replay_where_it_began():
    config, moves, photos = _game(17)
    # a new game (another seed) photographed into the same folder from its empty board
    _cfg, _moves, second, _ = _bot_game(4, 6)
    later = [replace(o, name=f"q{k:03d}") for k, o in enumerate(second[:9])]
    result = replay([*photos, *later], config)
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert result.warnings == [{
        "photo": "q000", "reason": "new-game",
        "message": "q000: 10 of the 10 towers p016 shows are gone from here on: a new game? "
                   "The replay stops at p016; the 9 photos from q000 on are left out "
                   "(replay them as a game of their own)"}]


def test_a_photo_of_a_later_board_is_left_out_by_the_photo_after_it():
    """A photo of the board 45 builds on loses no tower of the photo before it, but the
    next photo, which fits the game, shows most of its towers gone."""
    config, moves, photos = _game()
    later = replace(_bot_game(4, 5)[2][60], name="p015b")
    result = replay([*photos[:16], later, *photos[16:]], config)
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert [(w["photo"], w["reason"]) for w in result.warnings] == [
        ("p015b", "stranger-photo")]
    assert result.warnings[0]["message"].endswith(
        "towers are gone or lower in p016, which no move and no misread explains: a photo "
        "of another board? Left out")


def test_a_first_photo_of_another_game_is_left_out_not_taken_for_a_late_start():
    config, moves, photos = _game()
    _cfg, _moves, others, _ = _bot_game(3, 7)
    first = replace(others[40], name="before")
    result = replay([first, *photos], config)
    assert [m["notation"] for m in result.moves] == [str(m) for m in moves]
    assert [(w["photo"], w["reason"]) for w in result.warnings] == [
        ("before", "stranger-photo")]
