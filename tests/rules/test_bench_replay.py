"""`companion bench`'s replay part: the search on a bot game's exact observations
(no timing asserted: the numbers are the bench's to report)."""

from __future__ import annotations

import pytest

from companion.bench import PARTS, bench_replay


def test_the_replay_bench_times_an_exact_replay_of_a_game() -> None:
    out = bench_replay(players=2, seed=11, builds=14)
    assert out["builds"] == 14
    assert out["every_photo_moves_right"] == 14
    # 5N built on twice between two photos (red 2, green 3) is told as red 1, green 4:
    # the same tower, a warned ambiguity
    assert out["every_other_photo_moves_right"] == 12
    assert 0 < out["every_photo_s"] and 0 < out["every_other_photo_s"]
    assert "replay" in PARTS


def test_the_bench_help_names_every_part(capsys: pytest.CaptureFixture[str]) -> None:
    from companion.cli import main

    with pytest.raises(SystemExit) as done:
        main(["bench", "--help"])
    assert done.value.code == 0
    listed = capsys.readouterr().out.split("comma-separated:", 1)[1].split()[0]
    assert listed.split(",") == PARTS
