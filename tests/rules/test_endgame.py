"""Game end: the 2017 tie-break (highest building, then most buildings) and the
shared rank of the 1994 and Mayfair rules, which name no tie-break."""

from __future__ import annotations

from dataclasses import replace

from rules_helpers import position, tower

from companion.rules import ColorScore, Phase, Score, Site, make_config, standings
from companion.rules.record import final_result


def finished(edition: str, points: dict[str, int], board, players=4):
    cfg = make_config(players, edition=edition)
    s = position(cfg, board=board)
    score = Score({c: ColorScore(buildings=points[c]) for c in cfg.colors}, 0, (), None,
                  (None,) * 6)
    return replace(s, phase=Phase.OVER, scores=(score,))


BOARD_2017 = {
    Site(0, 0, 0): tower(("orange", 4), ("orange", 3)),  # orange: highest 7, 2 buildings
    Site(0, 0, 1): tower(("orange", 1)),
    Site(1, 0, 0): tower(("yellow", 4), ("yellow", 1)),  # yellow: highest 5
    Site(2, 0, 0): tower(("blue", 3), ("blue", 4)),  # blue: highest 7, 3 buildings
    Site(2, 0, 1): tower(("blue", 1)),
    Site(2, 0, 2): tower(("blue", 1)),
    Site(3, 0, 0): tower(("purple", 4), ("purple", 4)),
}


def ranks(state) -> list[tuple[int, str]]:
    return [(r.rank, r.colors[0]) for r in standings(state)]


def test_2017_tie_broken_by_highest_building_then_most_buildings() -> None:
    s = finished("2017", {"orange": 20, "yellow": 20, "purple": 15, "blue": 20}, BOARD_2017)
    assert ranks(s) == [(1, "blue"), (2, "orange"), (3, "yellow"), (4, "purple")]
    rows = standings(s)
    assert [(r.points, r.highest, r.buildings) for r in rows] == [
        (20, 7, 3), (20, 7, 2), (20, 5, 1), (15, 8, 1)]
    result = final_result(s)
    assert result["winners"] == ["Player 4"]
    assert result["tie_break"] == "highest-then-most"


def test_2017_highest_building_decides_before_the_count() -> None:
    board = dict(BOARD_2017)
    board[Site(0, 0, 0)] = tower(("orange", 4), ("orange", 4))  # orange highest 8
    s = finished("2017", {"orange": 20, "yellow": 20, "purple": 15, "blue": 20}, board)
    assert ranks(s)[:2] == [(1, "orange"), (2, "blue")]


def test_2017_complete_tie_is_shared() -> None:
    board = {Site(0, 0, 0): tower(("orange", 2)), Site(1, 0, 0): tower(("yellow", 2))}
    s = finished("2017", {"orange": 10, "yellow": 10, "purple": 3, "blue": 3}, board)
    assert ranks(s) == [(1, "orange"), (1, "yellow"), (3, "purple"), (3, "blue")]
    assert final_result(s)["winners"] == ["Player 1", "Player 2"]


def test_more_points_always_win_whatever_the_buildings() -> None:
    s = finished("2017", {"orange": 21, "yellow": 20, "purple": 15, "blue": 20}, BOARD_2017)
    assert ranks(s)[0] == (1, "orange")


def test_classic_and_mayfair_share_the_rank() -> None:
    board = {Site(0, 0, 0): tower(("red", 4), ("red", 4)), Site(1, 0, 0): tower(("blue", 1)),
             Site(1, 0, 1): tower(("blue", 1))}
    for edition in ("classic", "mayfair"):
        s = finished(edition, {"red": 20, "blue": 20, "green": 20, "black": 5}, board)
        assert ranks(s) == [(1, "red"), (1, "blue"), (1, "green"), (4, "black")]
        result = final_result(s)
        assert result["winners"] == ["Player 1", "Player 2", "Player 3"]
        assert result["tie_break"] == "shared"


def test_2017_two_colour_players_use_their_highest_building_of_either_colour() -> None:
    # 2 players: Player 1 orange+yellow, Player 2 purple+blue
    board = {Site(0, 0, 0): tower(("yellow", 4), ("yellow", 2)),  # P1 highest 6
             Site(1, 0, 0): tower(("blue", 4), ("purple", 1)),  # P2 highest 5
             Site(1, 0, 1): tower(("purple", 1)), Site(1, 0, 2): tower(("blue", 1))}
    s = finished("2017", {"orange": 5, "yellow": 5, "purple": 6, "blue": 4}, board, players=2)
    rows = standings(s)
    assert [(r.rank, r.name, r.points, r.highest, r.buildings) for r in rows] == [
        (1, "Player 1", 10, 6, 1), (2, "Player 2", 10, 5, 3)]
