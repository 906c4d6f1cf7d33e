"""The live table on stills the independent ray tracer shot from a stand.

The controller's other filmed games come from ``companion/sim``; here a seeded
game is photographed by ``tests/vision/raycast.py`` (shares no code with the
companion) from one mounted camera, and the controller watches the stills as
a camera films them, an arm reaching in between (``tests.controller.raystand``).
"""

from __future__ import annotations

from pathlib import Path

from tests.controller.raystand import frames, run, tally
from tests.replay.raygame import shoot_game


def test_the_live_table_records_a_ray_traced_stand_game_exactly(tmp_path: Path) -> None:
    # stand seed 54: 59 degrees, a point lamp low in the west; three blocks stacked
    # on one site by both players, then a 3-storey block
    truth = shoot_game(tmp_path, players=2, turns=4, seed=54, kind="mounted")
    assert truth["moves"] == ["S c02 red1@0NE", "N c20 black1@0NE", "S c02 blue1@0NE",
                              "N c12 black3@5W"]
    n = sum(1 for _ in frames(tmp_path))
    assert n == 15 + 4 * (5 + 15)  # the empty board, then each still after an arm
    out = run(tmp_path)
    assert out["recorded"] == truth["moves"]
    assert out["warnings"] == []
    # (the first block, a red 1 under two more, is marked for the players to check)
    assert out["doubtful"] == [True, False, False, False]
    assert tally(out) == {"moves": 4, "right": 4, "wrong_marked": 0, "wrong_unmarked": 0,
                          "right_marked": 1}
