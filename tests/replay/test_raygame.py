"""A game photographed by the independent ray tracer replays to its exact moves.

The other photographed games come from ``companion/sim``, the renderer the
reader grew up with; these photos come from tests/vision/raycast.py, which
shares no code with the companion (its own board art, lamp, plastic, lens and
camera noise). Seed 0, two players, the first four builds, one hand-held phone
photo after each: two of the builds go on top of the first ones, so the
replay has to tell a new block on a tower from the tower it stands on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.replay.raygame import Table, play, shoot_game

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("raygame")
    shoot_game(root, players=2, turns=4, seed=0, kind="phone", workers=2)
    return root


def test_the_table_stays_put_between_photos() -> None:
    """A block keeps its placement once placed; the cards keep their stack."""
    game = play(2, 0, 4)
    table = Table(game, 0, "phone")
    early, late = table.scene(1), table.scene(4)
    first = [o for o in early["objs"] if o["type"] == "box"][0]
    again = [o for o in late["objs"] if o["type"] == "box" and o["site"] == first["site"]][0]
    assert first["c"].tolist() == again["c"].tolist()
    assert late["board"] == {(4, 2, 0): [("red", 1), ("black", 1)],
                             (4, 1, 0): [("red", 3), ("black", 3)]}
    assert late["stacks"] == {"S": (1, 0), "N": (1, 2)}


def test_a_game_of_the_2017_edition_is_set_in_its_colours() -> None:
    """``--edition 2017``: the bots play orange, yellow, purple and blue, and the
    table's plastic is that set's (the games were always the classic set)."""
    game = play(2, 90, 4, "2017")
    table = Table(game, 90, "mounted")
    assert (table.edition, sorted(table.plastic)) == (
        "2017", ["blue", "orange", "purple", "yellow"])
    assert [str(m) for m in game.moves] == ["S c22 yellow1@5SE", "N c00 purple1@5SE",
                                            "S c02 orange3@4NE", "N c02 purple3@3SW"]
    assert table.scene(4)["board"] == {(3, 2, 0): [("purple", 3)], (4, 0, 2): [("orange", 3)],
                                       (5, 2, 2): [("yellow", 1), ("purple", 1)]}


def test_replay_of_ray_traced_photos_is_exact(folder: Path) -> None:
    truth = json.loads((folder / "truth.json").read_text())
    assert truth["moves"] == ["S c20 red1@4SW", "N c02 black1@4SW", "S c10 red3@4W",
                              "N c12 black3@4W"]
    proc = subprocess.run([sys.executable, "-m", "companion", "replay", str(folder), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [m["notation"] for m in out["moves"]] == truth["moves"]
    # nothing to warn of but the photos taken steeper than the profile's 70 degrees
    # (each photo's own camera: its truth file says from where)
    steep = {p.with_suffix(".jpg").name for p in folder.glob("IMG_*.json")
             if json.loads(p.read_text())["meta"]["elevation_deg"] > 70}
    assert steep == {"IMG_000.jpg", "IMG_002.jpg"}  # 75 and 78 degrees; the others 56, 57
    assert {w["photo"] for w in out["warnings"] if w["reason"] == "steep"} == steep
    assert [w for w in out["warnings"] if w["reason"] != "steep"] == []
