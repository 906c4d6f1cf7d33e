"""Colours named that the photos do not show are said, not silently read.

The reader reads each top as the nearest of the colours it is told. A 1994
game replayed with the 2017 colours named (`--colors`, or a game.json of the
other edition) read its towers as short blue ones and its moves as 2017 builds,
without a word. The replay now reads its last photos again with the colour set
recognised from each, and says when they show another set; and the colours
named, with no game.json, are the ones the players are inferred among.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from companion.cli import main
from companion.commands import colour_mismatch

WARNING = ("the photos show the classic colours (red, blue, green, black), not the colours "
           "named (orange, yellow, purple, blue): the moves read with those may be wrong")


def _replay(folder: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    assert main(["replay", str(folder), "--json", "--workers", "1", *extra]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_the_other_editions_colours_named_are_said(classic_game, capsys) -> None:
    folder, _ = classic_game
    out = _replay(folder, capsys, "--colors", "orange,yellow,purple,blue")
    assert out["warnings"][0] == {"photo": None, "reason": "colours", "message": WARNING}
    # the players are inferred among the colours named, as asked
    assert sorted(c for p in out["players"] for c in p["colors"]) == [
        "blue", "orange", "purple", "yellow"]


def test_the_warning_is_a_line_of_the_text_output(classic_game, capsys) -> None:
    folder, _ = classic_game
    assert main(["replay", str(folder), "--workers", "1",
                 "--colors", "orange,yellow,purple,blue"]) == 0
    assert f"warning: {WARNING}" in capsys.readouterr().out.splitlines()


def test_the_right_colours_named_say_nothing(classic_game, capsys) -> None:
    folder, _ = classic_game
    out = _replay(folder, capsys, "--colors", "red,blue,green,black")
    assert [w for w in out["warnings"] if w["reason"] == "colours"] == []
    assert [m["notation"] for m in out["moves"]] == [
        "S c12 red1@0E", "N c10 green1@0E", "S c12 red1@0E", "N c01 black3@1S",
        "S c21 red3@1S", "N c11 green1@3C"]
    # three of the four colours (a three-player game's) are no other set either
    assert colour_mismatch(folder, sorted(p.name for p in folder.glob("*.jpg")), None,
                           ["red", "blue", "green"]) is None


def test_what_cannot_be_judged_is_not(classic_game) -> None:
    folder, names = classic_game
    wrong = ["orange", "yellow", "purple", "blue"]
    assert colour_mismatch(folder, names, None, wrong) == WARNING
    assert colour_mismatch(folder, names, None, None) is None
    # colours of no one set (a table's own blocks): nothing to compare with
    assert colour_mismatch(folder, names, None, ["red", "orange"]) is None
    # the first photos show fewer than three towers: no set is recognised from them
    assert colour_mismatch(folder, names[:2], None, wrong) is None
    # no more than six photos are read again: a late photo past six early ones is not
    assert colour_mismatch(folder, [names[-1]] + [names[0]] * 5, None, wrong) == WARNING
    assert colour_mismatch(folder, [names[-1]] + [names[0]] * 6, None, wrong) is None
