"""manhattan-board/1 validation and the `companion score` object, through the API."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rules_helpers import EXAMPLES

from companion.rules import InvalidBoardError, RulesError, parse_board_json
from companion.rules.board import load_board_json
from companion.rules.interchange import score_json


def site(city: int = 0, row: int = 0, col: int = 0, height: Any = 1, owner: Any = "red",
         **extra: Any) -> dict[str, Any]:
    return {"city": city, "row": row, "col": col, "height": height, "owner": owner, **extra}


BAD_BOARDS: list[tuple[str, Any, str]] = [
    ("not-an-object", [site()], "board JSON must be an object"),
    ("wrong-format", {"format": "manhattan-board/9", "sites": []},
     "unsupported board format 'manhattan-board/9'"),
    ("unknown-colour", {"sites": [site(owner="pink")]},
     "sites[0] (Manhattan NW): unknown colour 'pink'"),
    ("colour-not-declared", {"colors": ["red", "blue"], "sites": [site(owner="green")]},
     "unknown colour 'green' (colours in play: blue, red)"),
    ("block-colour-unknown", {"sites": [site(height=2, owner="red", blocks=[
        {"color": "mauve", "storeys": 1}, {"color": "red", "storeys": 1}])]},
     "sites[0].blocks[0]: unknown colour 'mauve'"),
    ("city-out-of-range", {"sites": [site(city=6)]},
     "sites[0]: site out of range: city 6, row 0, col 0"),
    ("row-out-of-range", {"sites": [site(row=3)]}, "sites[0]: site out of range"),
    ("negative-col", {"sites": [site(col=-1)]}, "sites[0]: site out of range"),
    ("city-not-a-number", {"sites": [site(city="2")]},
     "sites[0]: 'city' must be a whole number, not '2'"),
    ("negative-height", {"sites": [site(height=-2)]},
     "sites[0] (Manhattan NW): height must be a positive whole number, not -2"),
    ("zero-height", {"sites": [site(height=0)]}, "height must be a positive whole number, not 0"),
    ("fractional-height", {"sites": [site(height=1.5)]}, "not 1.5"),
    ("boolean-height", {"sites": [site(height=True)]}, "not True"),
    ("missing-owner", {"sites": [{"city": 0, "row": 0, "col": 0, "height": 2}]},
     "sites[0] (Manhattan NW): missing owner colour"),
    ("height-disagrees", {"sites": [site(height=5, owner="red", blocks=[
        {"color": "blue", "storeys": 3}, {"color": "red", "storeys": 1}])]},
     "sites[0] (Manhattan NW): height 5 disagrees with its blocks (4 storeys)"),
    ("owner-disagrees", {"sites": [site(height=4, owner="blue", blocks=[
        {"color": "blue", "storeys": 3}, {"color": "red", "storeys": 1}])]},
     "sites[0] (Manhattan NW): owner 'blue' is not the top block's colour 'red'"),
    ("block-too-big", {"sites": [site(height=5, blocks=[{"color": "red", "storeys": 5}])]},
     "sites[0].blocks[0]: storeys must be 1 to 4, not 5"),
    ("empty-blocks", {"sites": [site(blocks=[])]}, "sites[0]: 'blocks' must be a non-empty list"),
    ("duplicate-site", {"sites": [site(2, 0, 2), site(2, 0, 2, owner="blue")]},
     "sites[1]: site Frankfurt NE is listed twice"),
    ("sites-not-a-list", {"sites": {"city": 0}}, "'sites' must be a list"),
    ("site-not-an-object", {"sites": ["2NE"]}, "sites[0] must be an object"),
    ("colors-twice", {"colors": ["red", "red"], "sites": []}, "'colors' names a colour twice"),
    ("colors-not-a-list", {"colors": "red", "sites": []},
     "'colors' must be a list of colour names"),
    ("unseen-not-a-list", {"sites": [], "unseen": 5}, "'unseen' must be a list"),
    ("unseen-twice", {"sites": [], "unseen": [{"city": 0, "row": 0, "col": 0}] * 2},
     "unseen[1]: Manhattan NW is listed twice"),
    ("unseen-also-a-site", {"sites": [site()], "unseen": [{"city": 0, "row": 0, "col": 0}]},
     "unseen[0]: Manhattan NW is also listed in 'sites'"),
    ("too-many-storeys", {"sites": [site(c, r, k, height=4, owner="red",
                                         blocks=[{"color": "red", "storeys": 4}])
                                    for c in range(2) for r in range(2) for k in range(2)]},
     "impossible board: 8 red blocks of 4 storeys, a colour has only 3"),
    # the board's total against the colours in play, not against every colour known
    ("taller-than-one-colours-box", {"colors": ["red"], "sites": [site(height=300)]},
     "impossible board: 300 storeys in all, 1 colour(s) have only 47"),
    ("taller-than-four-colours-box", {"colors": ["red", "blue", "green", "black"],
                                      "sites": [site(height=189)]},
     "impossible board: 189 storeys in all, 4 colour(s) have only 188"),
    ("two-editions-colours", {"sites": [site(owner="red"), site(1, owner="orange")]},
     "colours of no one edition: orange, red (name the colours in play with 'colors')"),
    ("colour-name-with-a-line-break", {"colors": ["red\nblue"], "sites": []},
     "'colors': 'red\\nblue' is no colour name (printable, at most 20 characters)"),
    ("colour-name-with-an-escape", {"colors": ["\x1b[31mred"], "sites": []},
     "'colors': '\\x1b[31mred' is no colour name"),
    ("players-duplicate-name", {"sites": [], "players": [
        {"name": "Ann", "colors": ["red"]}, {"name": "Ann", "colors": ["blue"]}]},
     "players[1]: player 'Ann' is listed twice"),
    ("players-shared-colour", {"sites": [], "players": [
        {"name": "Ann", "colors": ["red"]}, {"name": "Bob", "colors": ["red"]}]},
     "players[1]: colour 'red' belongs to two players"),
    ("players-bad-seat", {"sites": [], "players": [{"name": "Ann", "seat": "NE",
                                                     "colors": ["red"]}]},
     "players[0]: unknown seat 'NE'"),
    ("players-unknown-colour", {"sites": [], "players": [{"name": "Ann", "colors": ["teal"]}]},
     "players[0]: unknown colour 'teal'"),
]


@pytest.mark.parametrize(("name", "data", "message"), BAD_BOARDS, ids=[n for n, _, _ in BAD_BOARDS])
def test_bad_boards_raise_a_value_error_with_a_one_line_message(
        name: str, data: Any, message: str) -> None:
    with pytest.raises(InvalidBoardError) as info:
        score_json(data)
    assert isinstance(info.value, ValueError) and isinstance(info.value, RulesError)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_malformed_json_text() -> None:
    with pytest.raises(InvalidBoardError, match="malformed JSON: Expecting ',' delimiter"):
        load_board_json('{"sites": [1 2]}')


def test_score_json_output_shape() -> None:
    data = {"sites": [site(2, 0, 2, height=7, owner="red", blocks=[
        {"color": "blue", "storeys": 3}, {"color": "red", "storeys": 4}])],
        "players": [{"name": "Ann", "seat": "S", "colors": ["red", "green"]},
                    {"name": "Bob", "seat": "N", "colors": ["blue", "black"]}]}
    out = score_json(data)
    # colours not declared: the classic set covers the board, zeros included
    assert out["colors"] == {
        "red": {"tallest": 3, "majorities": 2, "buildings": 1, "total": 6},
        "blue": {"tallest": 0, "majorities": 0, "buildings": 0, "total": 0},
        "green": {"tallest": 0, "majorities": 0, "buildings": 0, "total": 0},
        "black": {"tallest": 0, "majorities": 0, "buildings": 0, "total": 0}}
    assert out["players"] == {"Ann": 6, "Bob": 0}
    assert out["breakdown"]["tallest"]["sites"] == ["Frankfurt NE"]


def test_2017_colours_are_recognised_without_a_declaration() -> None:
    out = score_json({"sites": [site(owner="purple"), site(1, owner="orange")]})
    assert list(out["colors"]) == ["orange", "yellow", "purple", "blue"]


def test_empty_board_scores_zero_for_every_declared_colour() -> None:
    out = score_json({"format": "manhattan-board/1", "colors": ["red", "blue"], "sites": []})
    assert out["colors"] == {c: {"tallest": 0, "majorities": 0, "buildings": 0, "total": 0}
                             for c in ("red", "blue")}


def test_photo_readings_without_blocks_and_with_unseen_sites() -> None:
    data = {"sites": [site(0, 0, 0, height=9, owner="blue")],
            "unseen": [{"city": 4, "row": 1, "col": 1}]}
    views, towers, colors, unseen = parse_board_json(data)
    assert towers == {} and colors is None
    assert [s.code for s in unseen] == ["4C"]
    assert score_json(data)["colors"]["blue"]["total"] == 6


@pytest.mark.parametrize("name", ["rulebook-1994", "rulebook-2017", "ties-and-majorities"])
def test_examples_load_through_the_text_loader(name: str) -> None:
    text = (EXAMPLES / f"{name}.board.json").read_text()
    views, towers, colors, _ = load_board_json(text)
    assert views and set(towers) == set(views)
    assert colors == json.loads(text)["colors"]


def test_vendored_examples_equal_the_spec_when_it_is_present() -> None:
    from rules_helpers import SPEC, VENDORED_EXAMPLES

    spec = SPEC / "examples"
    if not spec.is_dir():
        return  # nothing to compare against here; the copies are what the tests read
    names = sorted(p.name for p in spec.glob("*.json"))
    assert names == sorted(p.name for p in VENDORED_EXAMPLES.glob("*.json"))
    for name in names:
        assert (spec / name).read_bytes() == (VENDORED_EXAMPLES / name).read_bytes(), name
