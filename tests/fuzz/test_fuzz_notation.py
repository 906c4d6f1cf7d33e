"""Fuzz the move notation: any text is a Move or a NotationError; valid moves round-trip."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.rules import Block, Build, Card, Commit, NotationError, Pass, Seat, Site
from companion.rules.moves import Move
from companion.rules.notation import parse_move, parse_moves

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=600,
                suppress_health_check=[HealthCheck.too_slow])

#: Pieces of real notation, so random text often gets deep into the parser.
TOKENS = st.sampled_from([
    "S", "W", "N", "E", "X", "s", "c00", "c02", "c11", "c22", "c3", "c", "c123", "commit",
    "pass", "?", "red", "blue3", "green4@", "@", "2NE", "0C", "5SW", "6NE", "9XX", "12N",
    "Frankfurt NE", "red:4,3,2,1,1,1", "red:", ":4", "red:5", "red:0", "red:1,,2",
    "blue:4,4 green:1", "-red1", "-", "1", "4", " ", "  ", "\t", "\n", "\u00a0", "é", "#",
    ",", ":", "red1@2NE", "@2NE", "Red2@1C",
])
NOTATION_ISH = st.lists(TOKENS | st.text(max_size=3), max_size=8).map(
    lambda parts: "".join(parts)) | st.lists(TOKENS, max_size=6).map(" ".join)
COLOR = st.from_regex(r"[a-z][a-z0-9_-]{0,7}", fullmatch=True)
SEAT = st.sampled_from(list(Seat))
CARD = st.builds(Card, st.integers(0, 2), st.integers(0, 2))
SITE = st.integers(0, 53).map(Site.from_index)
BLOCK = st.builds(Block, COLOR, st.integers(1, 4))


@st.composite
def commits(draw: st.DrawFn) -> Commit:
    if draw(st.integers(0, 5)) == 0:
        return Commit(draw(SEAT), None)
    # the notation groups by colour, biggest first: generate it in that canonical order
    colors = draw(st.lists(COLOR, min_size=1, max_size=2, unique=True))
    blocks: list[Block] = []
    for c in colors:
        sizes = sorted(draw(st.lists(st.integers(1, 4), min_size=1, max_size=6)), reverse=True)
        blocks.extend(Block(c, s) for s in sizes)
    return Commit(draw(SEAT), tuple(blocks))


MOVES = (st.builds(Build, SEAT, CARD, SITE, BLOCK)
         | st.builds(Pass, SEAT, CARD, st.none() | BLOCK)
         | commits())


def _parse_or_notation_error(text: str) -> Move | None:
    try:
        move = parse_move(text)
    except NotationError as exc:
        assert "\n" not in str(exc) or "\n" in text  # the message quotes the input
        return None
    assert isinstance(move, (Build, Pass, Commit))
    return move


@FUZZ
@given(st.text() | NOTATION_ISH)
def test_any_text_is_a_move_or_a_notation_error(text: str) -> None:
    move = _parse_or_notation_error(text)
    if move is not None:
        # what was read prints in canonical form, which reads back to itself
        canonical = str(move)
        again = parse_move(canonical)
        assert str(again) == canonical
        if not isinstance(move, Commit):  # a commit's blocks are regrouped by colour
            assert again == move


@settings(FUZZ, max_examples=300)
@given(MOVES, st.sampled_from(["{}", " {} ", "{}\n", "\t{}"]))
def test_valid_moves_round_trip(move: Move, frame: str) -> None:
    text = str(move)
    assert parse_move(frame.format(text)) == move
    assert parse_move(" ".join(text.split(" "))) == move


@settings(FUZZ, max_examples=100)
@given(st.lists(MOVES, max_size=8), st.text(max_size=40))
def test_move_lists(moves: list[Move], junk: str) -> None:
    text = "".join(f"{m}  # comment\n\n" for m in moves)
    assert parse_moves(text) == moves
    try:
        parse_moves(junk)
    except NotationError:
        pass
