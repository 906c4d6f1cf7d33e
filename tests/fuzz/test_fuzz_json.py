"""Fuzz the JSON readers: board (``parse_board_json``, ``score_json``) and game record
(``GameRecord.from_json``). Whatever a hand-edited or damaged file holds, they give a
result or a ValueError (RecordError for records) with a one-line message; nothing else.

Two sources of inputs: arbitrary JSON-like values, and real documents with one to
three mutations (a value replaced by a wrong type or a near miss, a key dropped, a
list item repeated), which reach the deep checks that random values never do.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.bots import RandomBot
from companion.rules import GameRecord, RecordError, make_config
from companion.rules.board import parse_board_json
from companion.rules.interchange import score_json
from companion.session import GameSession

FUZZ = settings(derandomize=True, database=None, deadline=None, max_examples=300,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

JSON = st.recursive(  # what json.loads can return, NaN, Infinity and huge ints included
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=12,
)
#: Wrong types a hand-written file really has.
WRONG = st.sampled_from([None, True, False, 0, -1, 1.5, float("nan"), float("inf"),
                         -float("inf"), 10 ** 30, -(10 ** 30), "", "x", [], [1], {}, {"a": 1}])


def _near(value: Any) -> st.SearchStrategy[Any]:
    """Near misses of a value: what a typo or an off-by-one makes of it."""
    if isinstance(value, bool):
        return st.sampled_from([not value, 0, 1, "true"])
    if isinstance(value, int):
        return st.sampled_from([value - 1, value + 1, -value, 0, 9, 54, float(value),
                                str(value), 2 ** 63, 10 ** 5000 if value > 5 else -1])
    if isinstance(value, float):
        return st.sampled_from([value + 0.5, -value, str(value), 3])
    if isinstance(value, str):
        return st.sampled_from(["", value.upper(), value + "x", value[:-1], " " + value,
                                "red", "purple", "S", "X", "2NE", "c00", "c33", "S c00 pass",
                                "S commit ?", "S commit red:4,3,2,1,1,1", "move", "correction",
                                "inserts", "replaces"])
    return st.nothing()


@st.composite
def mutated(draw: st.DrawFn, docs: list[Any]) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(docs)))
    for _ in range(draw(st.integers(1, 3))):
        parent: Any = None
        key: Any = None
        node = doc
        while isinstance(node, (dict, list)) and node and draw(st.integers(0, 5)) > 0:
            key = (draw(st.sampled_from(sorted(node))) if isinstance(node, dict)
                   else draw(st.integers(0, len(node) - 1)))
            parent, node = node, node[key]
        op = draw(st.sampled_from(["replace", "replace", "near", "near", "delete", "repeat"]))
        if parent is None:
            if op in ("replace", "delete"):
                doc = copy.deepcopy(draw(WRONG | JSON))
            continue
        if op == "delete":
            del parent[key]
        elif op == "repeat" and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(node))
        elif op == "near":
            parent[key] = copy.deepcopy(draw(_near(node) | WRONG))
        else:  # copies: the strategies' constants must never be mutated in place
            parent[key] = copy.deepcopy(draw(WRONG | JSON))
    return doc


def _bot_record(n: int, seed: int, plies: int | None = None, edition: str = "classic",
                variants: tuple[str, ...] = (), undo: bool = False) -> dict[str, Any]:
    session = GameSession(make_config(n, edition=edition, variants=variants, seed=seed,
                                      track_cards=True))
    bots = [RandomBot(seed + i) for i in range(n)]
    while not session.state.is_over and (plies is None or
                                         len(session.record.effective()) < plies):
        session.play(bots[session.state.to_move].choose(session.state))
    if undo:
        session.undo()
        session.correct(0, session.record.moves[0], "fixed by hand")
        last = session.record.moves[-1]
        session.undo()
        session.insert(len(session.record.moves), last, "missed by the camera")
    return session.record.to_json()


def _examples() -> list[Any]:
    folder = Path(__file__).resolve().parents[3] / "shared" / "spec" / "examples"
    if not folder.is_dir():
        folder = Path(__file__).resolve().parents[1] / "data" / "spec-examples"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.board.json"))]


RECORDS = [
    _bot_record(3, 4),                                     # a whole game, with its result
    _bot_record(4, 5, plies=40, undo=True),                # corrections, one round scored
    _bot_record(2, 6, plies=30, edition="mayfair", variants=("monster",)),
    _bot_record(4, 7, plies=25, variants=("godzilla", "slow-growth")),
]
BOARDS = _examples() + [
    {**GameRecord.from_json(r).replay().board.to_json(GameRecord.from_json(r).config.colors),
     "players": r["header"]["players"]}
    for r in RECORDS
]


# Known engine bugs, reported to the lead (companion/rules is not ours to edit). The
# broad fuzz tests below let exactly these signatures pass so that they keep hunting for
# new bugs. Fixed ones stay pinned by the regression tests at the end.
KNOWN_BOARD_BUGS: list[tuple[type[BaseException], str]] = []
KNOWN_RECORD_BUGS: list[tuple[type[BaseException], str]] = []


def _known(exc: BaseException, known: list[tuple[type[BaseException], str]]) -> bool:
    return any(isinstance(exc, kind) and text in str(exc) for kind, text in known)


def _board_only_value_errors(data: Any) -> None:
    try:
        parse_board_json(data)
    except ValueError as exc:
        assert "\n" not in str(exc)
    try:
        result = score_json(data)
    except ValueError as exc:
        assert "\n" not in str(exc)
        return
    except Exception as exc:
        if _known(exc, KNOWN_BOARD_BUGS):
            return
        raise
    json.dumps(result)  # a score that comes out is plain JSON
    assert set(result) >= {"colors", "breakdown"}


def _record_only_value_errors(data: Any) -> None:
    try:
        record = GameRecord.from_json(data)
    except ValueError as exc:  # RecordError nearly always; see the report for the rest
        assert "\n" not in str(exc)
        return
    except Exception as exc:
        if _known(exc, KNOWN_RECORD_BUGS):
            return
        raise
    # what loads must also write back out and load again to the same game
    again = GameRecord.from_json(json.loads(json.dumps(record.to_json())))
    assert again.replay() == record.replay()


def test_seed_documents_are_valid() -> None:
    for board in BOARDS:
        score_json(board)
    for record in RECORDS:
        GameRecord.from_json(record)


@FUZZ
@given(mutated(BOARDS))
def test_board_mutations(data: Any) -> None:
    _board_only_value_errors(data)


@FUZZ
@given(JSON)
def test_board_arbitrary_json(data: Any) -> None:
    _board_only_value_errors(data)


@settings(FUZZ, max_examples=200)
@given(mutated(RECORDS))
def test_record_mutations(data: Any) -> None:
    _record_only_value_errors(data)


@settings(FUZZ, max_examples=200)
@given(JSON)
def test_record_arbitrary_json(data: Any) -> None:
    _record_only_value_errors(data)


# -- bugs fuzzing found once (fixed; kept as regression tests) ------------------------

_PLAYERS = [{"name": "A", "seat": "S", "colors": ["red"]},
            {"name": "B", "seat": "N", "colors": ["blue"]},
            {"name": "C", "seat": "W", "colors": ["green"]}]


@pytest.mark.parametrize("seat", [[], {}], ids=["list", "object"])
def test_known_bug_board_unhashable_seat(seat: Any) -> None:
    with pytest.raises(ValueError):
        score_json({"format": "manhattan-board/1",
                    "sites": [{"city": 0, "row": 0, "col": 0, "height": 1, "owner": "red"}],
                    "players": [{"name": "A", "seat": seat, "colors": ["red"]}]})


@pytest.mark.parametrize("where", ["seed", "slow_growth_order", "replaces", "inserts"])
def test_known_bug_record_infinity(where: str) -> None:
    data: dict[str, Any] = {"format": "manhattan-game/1",
                            "header": {"players": _PLAYERS},
                            "entries": [{"type": "move", "move": "S commit ?"}]}
    inf = json.loads("Infinity")
    if where == "seed":
        data["header"]["seed"] = inf
    elif where == "slow_growth_order":
        data["header"]["slow_growth_order"] = [inf] * 6
    elif where == "inserts":
        data["entries"].append({"type": "correction", "inserts": inf, "move": "W commit ?"})
    else:
        data["entries"].append({"type": "correction", "replaces": inf, "move": None})
    with pytest.raises(RecordError):
        GameRecord.from_json(data)
