"""The one-line move notation and repr() of the small values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import companion.rules
from companion.rules import (
    Block,
    Build,
    Card,
    Commit,
    NotationError,
    Pass,
    Seat,
    Site,
    format_moves,
    parse_move,
    parse_moves,
)

S, W, N, E = Seat.S, Seat.W, Seat.N, Seat.E

EXAMPLES = [
    ("S commit red:4,3,2,1,1,1", Commit(S, tuple(Block("red", k) for k in (4, 3, 2, 1, 1, 1)))),
    ("S commit red:4,4,1,1 green:3,2,2,1",
     Commit(S, tuple(Block("red", k) for k in (4, 4, 1, 1))
            + tuple(Block("green", k) for k in (3, 2, 2, 1)))),
    ("S commit ?", Commit(S, None)),
    ("W c02 blue3@2NE", Build(W, Card(0, 2), Site(2, 0, 2), Block("blue", 3))),
    ("E c20 black1@5SW", Build(E, Card(2, 0), Site(5, 2, 0), Block("black", 1))),
    ("N c11 pass", Pass(N, Card(1, 1))),
    ("N c11 pass -green1", Pass(N, Card(1, 1), Block("green", 1))),
]


@pytest.mark.parametrize(("text", "move"), EXAMPLES, ids=[t for t, _ in EXAMPLES])
def test_readme_notation_examples(text: str, move) -> None:
    assert parse_move(text) == move
    assert str(move) == text


def test_whitespace_is_forgiven() -> None:
    assert parse_move("  W   c02  blue3@2NE ") == EXAMPLES[3][1]
    assert parse_move("S commit   ?") == Commit(S, None)


def test_commit_groups_by_colour_and_sorts_sizes() -> None:
    move = Commit(S, (Block("red", 1), Block("red", 4), Block("red", 2)))
    assert str(move) == "S commit red:4,2,1"
    again = parse_move(str(move))
    assert sorted(again.blocks) == sorted(move.blocks)


@pytest.mark.parametrize("text", [
    "", "S", "S c02", "X c02 red1@2NE", "S c33 red1@2NE", "S c02 red5@2NE", "S c02 red0@2NE",
    "S c02 red1@6NE", "S c02 red1@2XY", "S c02 red1 2NE", "S c02 Red1@2NE", "S c02 1@2NE",
    "S c02 pass -red", "S c02 pass red1", "S c02 pass -red5", "S commit", "S commit red",
    "S commit red:5", "S commit red:", "S commit red:1,,2", "S commit :1,2", "S commit red:1;2",
    "s c02 red1@2NE", "S c02 red1@2NE extra", "S commit red:4 ?",
])
def test_malformed_text_raises_notation_error(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_move(text)
    assert isinstance(info.value, ValueError)
    assert str(info.value)


def test_parse_moves_skips_blanks_and_comments_and_names_the_line() -> None:
    text = "# a game\nS commit ?\n\nW c02 blue3@2NE  # took Frankfurt\n"
    assert parse_moves(text) == [Commit(S, None), EXAMPLES[3][1]]
    with pytest.raises(NotationError, match=r"^line 3: cannot read move 'S c99 pass'"):
        parse_moves("S commit ?\n\nS c99 pass\n")
    moves = [m for _, m in EXAMPLES]
    assert parse_moves(format_moves(moves)) == moves
    assert format_moves(moves).count("\n") == len(moves)


# -- repr() evaluates back -----------------------------------------------------

REPR_VALUES = [
    Site(2, 0, 2), Site(0, 0, 0), Block("red", 4), Block("yellow", 1), Card(0, 2), Card(1, 1),
    S, W, N, E,
    Build(W, Card(0, 2), Site(2, 0, 2), Block("blue", 3)),
    Commit(S, (Block("red", 4), Block("green", 1))), Commit(N, None),
    Pass(N, Card(1, 1)), Pass(E, Card(2, 2), Block("black", 2)),
]


@pytest.mark.parametrize("value", REPR_VALUES, ids=[repr(v) for v in REPR_VALUES])
def test_repr_evals_back(value) -> None:
    again = eval(repr(value), vars(companion.rules))  # noqa: S307 - that is the test
    assert again == value
    assert type(again) is type(value)


# -- hypothesis: every move round-trips ---------------------------------------------

colors = st.one_of(
    st.sampled_from(["red", "blue", "green", "black", "orange", "yellow", "purple"]),
    st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True),
)
seats = st.sampled_from(list(Seat))
cards = st.builds(Card, st.integers(0, 2), st.integers(0, 2))
sites = st.builds(Site, st.integers(0, 5), st.integers(0, 2), st.integers(0, 2))
block_st = st.builds(Block, colors, st.integers(1, 4))
builds = st.builds(Build, seats, cards, sites, block_st)
passes = st.builds(Pass, seats, cards, st.one_of(st.none(), block_st))


@st.composite
def commits(draw: st.DrawFn) -> Commit:
    seat = draw(seats)
    if draw(st.booleans()):
        return Commit(seat, None)
    names = draw(st.lists(colors, min_size=1, max_size=2, unique=True))
    out: list[Block] = []
    for name in names:
        sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=6))
        out.extend(Block(name, k) for k in sorted(sizes, reverse=True))
    return Commit(seat, tuple(out))


moves = st.one_of(builds, passes, commits())


@settings(max_examples=300, derandomize=True, deadline=None)
@given(moves)
def test_every_move_round_trips_through_the_notation(move) -> None:
    text = str(move)
    assert parse_move(text) == move
    assert str(parse_move(text)) == text
    assert "\n" not in text
    assert eval(repr(move), vars(companion.rules)) == move  # noqa: S307


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.text(max_size=30))
def test_random_text_either_parses_or_raises_notation_error(text: str) -> None:
    try:
        move = parse_move(text)
    except NotationError:
        return
    assert parse_move(str(move)) == move


def test_a_commit_is_its_blocks_in_notation_order() -> None:
    """A selection is a set of blocks: typed in any order it is one commit, kept as its
    notation writes it (colours as first given, each largest first), so a record read
    back replays to the same state as the moves played."""
    from companion.rules import Commit, parse_move

    typed = parse_move("S commit red:1,1,2 green:1,3 red:4")
    assert isinstance(typed, Commit)
    assert str(typed) == "S commit red:4,2,1,1 green:3,1"
    assert typed == parse_move("S commit red:4,2,1,1 green:3,1") == parse_move(str(typed))
    assert [(b.color, b.storeys) for b in typed.blocks or ()] == [
        ("red", 4), ("red", 2), ("red", 1), ("red", 1), ("green", 3), ("green", 1)]
