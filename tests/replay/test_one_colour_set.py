"""A game is played with one colour set: a photo read alone as the other set is read
again with the game's colours.

A folder whose photos were read as two sets (a photo or two of lamp-washed tops)
made the replay fail outright: "'orange' is not a colour of Manhattan (Hans im
Glueck, 1994)".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from companion import commands

CLASSIC = ["red", "blue", "green", "black"]
SET_2017 = ["orange", "yellow", "purple", "blue"]


def _reading(colors: list[str], towers: list[tuple[int, str]]) -> dict[str, Any]:
    return {"format": "manhattan-board/1", "colors": colors, "unseen": [],
            "sites": [{"city": k, "row": 1, "col": 1, "height": h, "owner": c}
                      for k, (h, c) in enumerate(towers)]}


def test_photos_read_as_another_set_are_read_again_with_the_games(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in range(4):
        (tmp_path / f"IMG_{k}.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    asked: list[tuple[str, Any]] = []
    alone = {"IMG_0.jpg": _reading(CLASSIC, [(1, "red")]),
             "IMG_1.jpg": _reading(CLASSIC, [(1, "red"), (2, "blue")]),
             "IMG_2.jpg": _reading(SET_2017, [(1, "orange"), (2, "blue"), (3, "orange")]),
             "IMG_3.jpg": _reading(CLASSIC, [(1, "red"), (2, "blue"), (3, "red")])}

    def read_one(job: tuple[str, Any, Any, bool]) -> dict[str, Any]:
        path, _camera, colors, _check = job
        name = Path(path).name
        asked.append((name, colors))
        if colors is None:
            return {"path": path, "reading": alone[name]}
        assert list(colors) == CLASSIC
        return {"path": path, "reading": _reading(CLASSIC, [(1, "red"), (2, "blue"),
                                                            (3, "red")])}

    monkeypatch.setattr(commands, "_read_one", read_one)
    observations, skipped, _ = commands.read_folder(tmp_path, None, None, workers=1,
                                                    fixed_camera=False)
    assert skipped == []
    # six classic towers against three: IMG_2 read again with the classic colours
    assert asked[4:] == [("IMG_2.jpg", tuple(CLASSIC))]
    assert [o.name for o in observations] == [f"IMG_{k}.jpg" for k in range(4)]
    assert {v.owner for v in observations[2].sites.values()} == {"red", "blue"}
    assert observations[2].notes == (("colour-set", "read with the game's colours (red, "
                                      "blue, green, black); alone it looked like orange, "
                                      "yellow, purple, blue"),)
    assert all(o.notes == () for o in observations[:2])
