"""Keys given twice in a JSON object are refused; equal keys in different objects are not."""

from __future__ import annotations

import json

import pytest

from companion.rules import jsonkeys
from companion.rules.board import load_board_json
from companion.rules.errors import InvalidBoardError, RecordError
from companion.rules.record import GameRecord


def test_the_same_key_in_two_objects_is_fine() -> None:
    text = '{"a": {"x": 1}, "b": [{"x": 2}, {"x": 3}]}'
    assert jsonkeys.loads(text) == json.loads(text)


@pytest.mark.parametrize(("text", "key"), [
    ('{"a": 1, "a": 1}', "a"),
    ('{"a": [{"x": 1, "y": 2, "x": 1}]}', "x"),
    ('{"\\u00e9t\\u00e9": 1, "\\u00e9t\\u00e9": 2}', "\u00e9t\u00e9"),
])
def test_a_key_given_twice_is_named(text: str, key: str) -> None:
    with pytest.raises(jsonkeys.DuplicateKeyError) as caught:
        jsonkeys.loads(text)
    assert caught.value.key == key
    assert str(caught.value) == f"key {json.dumps(key)} given twice"


def test_a_long_or_unprintable_key_is_shortened_and_escaped() -> None:
    key = "\x1b[2J" + "k" * 80
    with pytest.raises(jsonkeys.DuplicateKeyError) as caught:
        jsonkeys.loads(json.dumps({"a": 1})[:-1] + f", {json.dumps(key)}: 1, "
                       f"{json.dumps(key)}: 2}}")
    assert str(caught.value) == 'key "\\u001b[2Jkkkkkkkkkkkkkkkkkkkkkkkkkkk..." given twice'


def test_boards_and_records_refuse_them() -> None:
    with pytest.raises(InvalidBoardError, match='^malformed JSON: key "sites" given twice$'):
        load_board_json('{"sites": [], "sites": []}')
    with pytest.raises(RecordError, match='^malformed JSON: key "moves" given twice$'):
        GameRecord.loads('{"format": "manhattan-game/1", "moves": [], "moves": []}')
