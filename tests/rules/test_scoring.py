"""Round scoring: unique tallest 3, city majority 2, each building 1 (all rulebooks)."""

from __future__ import annotations

import json

import pytest
from rules_helpers import CITY, EXAMPLES, tower

from companion.rules import Block, Board, Site, SiteView, score_board, score_views
from companion.rules.interchange import score_json

CLASSIC = ("red", "blue", "green", "black")


def views(*entries: tuple[int, int, int, int, str]) -> dict[Site, SiteView]:
    """(city, row, col, height, owner) -> the views scoring needs."""
    out = {}
    for city, row, col, height, owner in entries:
        out[Site(city, row, col)] = SiteView(height, owner)
    return out


def totals(score, colors=CLASSIC) -> dict[str, int]:
    return {c: score.total(c) for c in colors}


# -- the rulebook examples ------------------------------------------------------

@pytest.mark.parametrize("name", ["rulebook-1994", "rulebook-2017", "ties-and-majorities"])
def test_spec_examples_score_exactly(name: str) -> None:
    board = json.loads((EXAMPLES / f"{name}.board.json").read_text())
    want = json.loads((EXAMPLES / f"{name}.score.json").read_text())
    got = score_json(board)
    assert got["colors"] == want["colors"]
    assert list(got["colors"]) == board["colors"]


def test_1994_example_reconstructed_from_the_text() -> None:
    # Hans im Glueck 1994 (Webley's translation): blue has the highest tower, in
    # Frankfurt; black has two towers in Frankfurt and in Hong Kong, the other two
    # players there one each; single blue tower in Sydney, single red in Sao Paulo;
    # no majority in Cairo and Manhattan. Black 5 towers, blue 3, red 4, green 4.
    F, H, S, P, C, M = (CITY[n] for n in ("Frankfurt", "Hong Kong", "Sydney", "Sao Paulo",
                                          "Cairo", "Manhattan"))
    v = views(
        (F, 2, 2, 8, "blue"), (F, 0, 0, 3, "black"), (F, 1, 1, 2, "black"), (F, 0, 2, 1, "green"),
        (H, 0, 1, 3, "black"), (H, 2, 0, 1, "black"), (H, 1, 2, 2, "red"), (H, 2, 2, 4, "green"),
        (S, 1, 1, 1, "blue"),
        (P, 0, 0, 1, "red"),
        (C, 0, 0, 3, "red"), (C, 1, 1, 1, "green"), (C, 2, 2, 7, "black"),
        (M, 0, 0, 2, "blue"), (M, 1, 1, 5, "red"), (M, 2, 2, 3, "green"),
    )
    score = score_views(v, ("black", "blue", "red", "green"))
    assert score.tallest_owner == "blue"
    assert score.tallest_sites == (Site(F, 2, 2),)
    assert score.majorities[F] == "black" and score.majorities[H] == "black"
    assert score.majorities[S] == "blue" and score.majorities[P] == "red"
    assert score.majorities[C] is None and score.majorities[M] is None
    assert {c: score.colors[c].majorities for c in CLASSIC} == {
        "black": 4, "blue": 2, "red": 2, "green": 0}
    assert {c: score.colors[c].buildings for c in CLASSIC} == {
        "black": 5, "blue": 3, "red": 4, "green": 4}
    assert totals(score) == {"black": 9, "blue": 8, "red": 6, "green": 4}


def test_2017_example_counts_from_the_text() -> None:
    # Mandoo 2017: orange 3 for the highest building (city E); yellow majority A,
    # purple B and C, blue D; ties in E and F; purple 9 buildings, blue 6,
    # yellow 5, orange 1.
    v = views(
        (0, 0, 0, 1, "yellow"), (0, 0, 1, 1, "yellow"), (0, 1, 1, 2, "purple"),
        (1, 0, 0, 1, "purple"), (1, 0, 1, 1, "purple"), (1, 2, 2, 1, "blue"),
        (2, 0, 0, 3, "purple"), (2, 1, 1, 1, "purple"), (2, 2, 2, 1, "purple"),
        (2, 2, 0, 2, "yellow"),
        (3, 0, 0, 1, "blue"), (3, 0, 1, 1, "blue"), (3, 0, 2, 1, "purple"),
        (4, 1, 1, 10, "orange"), (4, 0, 0, 1, "blue"),
        (4, 0, 2, 1, "yellow"),
        (5, 0, 0, 1, "purple"), (5, 1, 1, 1, "blue"), (5, 2, 2, 2, "blue"),
        (5, 2, 0, 1, "yellow"), (5, 0, 2, 1, "purple"),
    )
    colors = ("orange", "yellow", "purple", "blue")
    score = score_views(v, colors)
    assert score.majorities == ("yellow", "purple", "purple", "blue", None, None)
    assert {c: score.colors[c].buildings for c in colors} == {
        "orange": 1, "yellow": 5, "purple": 9, "blue": 6}
    assert totals(score, colors) == {"orange": 4, "yellow": 7, "purple": 13, "blue": 8}


# -- the tallest building --------------------------------------------------------

def test_empty_board_scores_nothing() -> None:
    score = score_board(Board.empty(), CLASSIC)
    assert totals(score) == dict.fromkeys(CLASSIC, 0)
    assert score.tallest_height == 0
    assert score.tallest_sites == ()
    assert score.tallest_owner is None
    assert score.majorities == (None,) * 6
    assert list(score.colors) == list(CLASSIC)


def test_a_single_building_takes_everything() -> None:
    score = score_views(views((3, 2, 0, 1, "green")), CLASSIC)
    assert score.colors["green"].tallest == 3
    assert score.colors["green"].majorities == 2
    assert score.colors["green"].buildings == 1
    assert totals(score) == {"red": 0, "blue": 0, "green": 6, "black": 0}


def test_two_tallest_of_different_owners_score_nobody() -> None:
    v = views((0, 0, 0, 7, "red"), (5, 2, 2, 7, "blue"), (1, 1, 1, 3, "green"))
    score = score_views(v, CLASSIC)
    assert score.tallest_owner is None
    assert score.tallest_height == 7
    assert score.tallest_sites == (Site(0, 0, 0), Site(5, 2, 2))
    assert [score.colors[c].tallest for c in CLASSIC] == [0, 0, 0, 0]
    # Each owns the only building of its city: majorities still count.
    assert totals(score) == {"red": 3, "blue": 3, "green": 3, "black": 0}


def test_two_tallest_of_the_same_owner_score_nobody() -> None:
    # Mayfair: "no player receives these bonus points, even if the same player
    # controls both buildings".
    v = views((0, 0, 0, 6, "red"), (0, 2, 2, 6, "red"), (1, 0, 0, 2, "blue"))
    score = score_views(v, CLASSIC)
    assert score.colors["red"].tallest == 0
    assert score.tallest_owner is None
    assert len(score.tallest_sites) == 2
    assert totals(score) == {"red": 4, "blue": 3, "green": 0, "black": 0}


def test_a_tie_below_the_top_does_not_matter() -> None:
    v = views((0, 0, 0, 9, "black"), (1, 0, 0, 5, "red"), (2, 0, 0, 5, "blue"))
    score = score_views(v, CLASSIC)
    assert score.tallest_owner == "black"
    assert score.colors["black"].tallest == 3


def test_tallest_counts_storeys_of_every_colour() -> None:
    # "the building with the most floors, regardless of the color of these floors"
    board = Board.from_towers({
        Site(0, 0, 0): tower(("red", 4), ("red", 4)),  # 8, all red
        Site(1, 0, 0): tower(("red", 4), ("blue", 4), ("blue", 1)),  # 9, blue on top
    })
    score = score_board(board, CLASSIC)
    assert score.tallest_owner == "blue"
    assert score.tallest_height == 9
    assert score.colors["blue"].tallest == 3
    assert score.colors["red"].tallest == 0


# -- majorities ------------------------------------------------------------------

def test_majority_tie_2_2_with_a_third_colour_at_1_scores_nobody() -> None:
    v = views((2, 0, 0, 1, "red"), (2, 0, 1, 1, "red"), (2, 1, 0, 1, "blue"),
              (2, 1, 1, 1, "blue"), (2, 2, 2, 1, "green"), (0, 0, 0, 5, "black"))
    score = score_views(v, CLASSIC)
    assert score.majorities[2] is None
    assert score.city_counts[2] == {"red": 2, "blue": 2, "green": 1}
    assert [score.colors[c].majorities for c in CLASSIC] == [0, 0, 0, 2]
    assert totals(score) == {"red": 2, "blue": 2, "green": 1, "black": 6}


def test_three_against_two_and_two_wins_the_majority() -> None:
    # Mayfair's own example: 3 against 2 and 2 earns the 2 points although 3 is
    # not more than the others combined.
    v = views((4, 0, 0, 1, "red"), (4, 0, 1, 1, "red"), (4, 0, 2, 1, "red"),
              (4, 1, 0, 1, "blue"), (4, 1, 1, 1, "blue"),
              (4, 2, 0, 1, "green"), (4, 2, 1, 2, "green"))
    score = score_views(v, CLASSIC)
    assert score.majorities[4] == "red"
    assert totals(score) == {"red": 5, "blue": 2, "green": 2 + 3, "black": 0}


def test_majority_counts_buildings_not_storeys() -> None:
    v = views((1, 0, 0, 12, "red"), (1, 2, 2, 1, "blue"), (1, 2, 1, 1, "blue"))
    score = score_views(v, CLASSIC)
    assert score.majorities[1] == "blue"
    assert totals(score) == {"red": 3 + 1, "blue": 2 + 2, "green": 0, "black": 0}


def test_one_colour_alone_in_a_city_has_the_majority_and_empty_cities_score_nobody() -> None:
    v = views((5, 1, 1, 1, "black"))
    score = score_views(v, CLASSIC)
    assert score.majorities == (None, None, None, None, None, "black")
    assert score.city_counts[0] == {}


def test_full_city_of_one_colour() -> None:
    v = views(*[(0, r, c, 1 + r + c, "green") for r in range(3) for c in range(3)])
    score = score_views(v, CLASSIC)
    # 9 buildings, majority, unique tallest (height 5 at SE)
    assert score.colors["green"].buildings == 9
    assert score.tallest_sites == (Site(0, 2, 2),)
    assert score.total("green") == 9 + 2 + 3


def test_every_city_majority_adds_up() -> None:
    v = views(*[(city, 0, 0, 1, "red") for city in range(6)], (0, 1, 1, 2, "blue"))
    score = score_views(v, CLASSIC)
    assert score.majorities == (None, "red", "red", "red", "red", "red")
    assert score.colors["red"].majorities == 10
    assert score.colors["blue"].tallest == 3
    assert totals(score) == {"red": 16, "blue": 4, "green": 0, "black": 0}


# -- colours ----------------------------------------------------------------------

def test_colour_on_board_but_not_in_play_is_still_scored() -> None:
    score = score_views(views((0, 0, 0, 1, "purple")), ("red",))
    assert list(score.colors) == ["red", "purple"]
    assert score.total("purple") == 6
    assert score.total("red") == 0


def test_two_colour_players_sum_their_colours() -> None:
    # 1994: "Scoring is done as though there were four players on the board. At
    # game end, each player adds the scores from his two colors together."
    v = views((0, 0, 0, 4, "red"), (0, 0, 1, 1, "green"), (0, 0, 2, 1, "blue"),
              (1, 0, 0, 1, "green"))
    score = score_views(v, CLASSIC)
    # Manhattan: red 1, green 1, blue 1 -> no majority even though Ann has two.
    assert score.majorities[0] is None
    assert score.players([("Ann", ("red", "green")), ("Bob", ("blue", "black"))]) == {
        "Ann": (3 + 1) + (1 + 2 + 1), "Bob": 1}


def test_score_to_json_breakdown() -> None:
    board = Board.from_towers({Site(2, 0, 2): (Block("red", 3),),
                               Site(2, 1, 1): (Block("red", 3),)})
    data = score_board(board, CLASSIC).to_json()
    assert data["colors"]["red"] == {"tallest": 0, "majorities": 2, "buildings": 2, "total": 4}
    assert data["breakdown"]["tallest"] == {
        "height": 3, "sites": ["Frankfurt NE", "Frankfurt C"], "owner": None, "tie": True}
    assert data["breakdown"]["majorities"]["Frankfurt"] == {"owner": "red",
                                                            "counts": {"red": 2}}
    assert data["breakdown"]["majorities"]["Cairo"] == {"owner": None, "counts": {}}
