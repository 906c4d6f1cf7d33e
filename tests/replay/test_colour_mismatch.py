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
from companion.commands import colour_mismatch, read_folder
from companion.replay import Observation

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


def test_the_last_photos_are_checked_where_they_are_read(classic_game) -> None:
    folder, names = classic_game
    wrong = ["orange", "yellow", "purple", "blue"]
    observations, skipped, _ = read_folder(folder, None, wrong, workers=1, fixed_camera=False)
    assert skipped == [] and len(observations) == len(names) == 7
    # the first photo is not asked (the last six are); only the last shows three towers
    assert [o.colours_shown for o in observations] == [None] * 6 + ["classic"]
    assert colour_mismatch(observations, wrong) == WARNING
    # three of the four colours (a three-player game's) are no other set either
    assert colour_mismatch(observations, ["red", "blue", "green"]) is None
    # nothing named: nothing asked
    observations, _, _ = read_folder(folder, None, None, workers=1, fixed_camera=False)
    assert {o.colours_shown for o in observations} == {None}


def _shown(*sets: str | None) -> list[Observation]:
    return [Observation(f"{n}.jpg", {}, colours_shown=s) for n, s in enumerate(sets)]


def test_what_cannot_be_judged_is_not() -> None:
    wrong = ["orange", "yellow", "purple", "blue"]
    assert colour_mismatch(_shown(None, "classic", "classic", "classic"), wrong) == WARNING
    assert colour_mismatch(_shown("classic"), wrong) == WARNING
    assert colour_mismatch(_shown("classic", "classic"), None) is None
    # colours of no one set (a table's own blocks): nothing to compare with
    assert colour_mismatch(_shown("classic", "classic"), ["red", "orange"]) is None
    # no photo told (too few towers on each)
    assert colour_mismatch(_shown(None, None, None), wrong) is None
    # the photos disagree among their last three that tell: not said
    assert colour_mismatch(_shown("classic", "2017", None, "classic"), wrong) is None
    # an earlier photo past the last three that tell is not weighed
    assert colour_mismatch(_shown("2017", "classic", "classic", "classic"), wrong) == WARNING
    # the set shown holds the colours named
    assert colour_mismatch(_shown("2017", "2017"), wrong) is None
    assert colour_mismatch(_shown("classic"), ["blue"]) is None


def test_only_the_last_six_photos_are_asked(tmp_path, monkeypatch) -> None:
    import companion.commands as commands

    asked: dict[str, bool] = {}

    def read_one(job):
        asked[Path(job[0]).name] = job[3]
        return {"path": job[0], "error": "not read here"}

    for n in range(8):
        (tmp_path / f"{n}.jpg").write_bytes(b"")
    monkeypatch.setattr(commands, "_read_one", read_one)
    read_folder(tmp_path, None, ["red", "blue"], workers=1, fixed_camera=False)
    assert [asked[f"{n}.jpg"] for n in range(8)] == [False] * 2 + [True] * 6
    read_folder(tmp_path, None, None, workers=1, fixed_camera=False)
    assert set(asked.values()) == {False}
