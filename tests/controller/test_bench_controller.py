"""`companion bench` controller: what the live-loop goals are measured on (no timing asserted)."""

from __future__ import annotations

from companion.bench import bench_controller
from companion.pipeline import VisionReader


def test_controller_bench_reports_moves_latency_fit_and_memory() -> None:
    out = bench_controller(moves=3, seed=2, reader=VisionReader())
    assert out["moves_recorded"] == 3
    assert out["moves_right"] == 3
    lat = out["still_to_move_s"]
    assert lat["goal"] == 0.5 and 0 < lat["median"] <= lat["max"]
    fit = out["new_block_fit_ms"]  # one fit per build (each changes one site)
    assert fit["median"] is not None and 0 < fit["median"] <= fit["max"]
    read = out["still_read_ms"]  # at least one reading per build's still scene
    assert read["median"] is not None and 0 < read["median"] <= read["max"]
    assert out["rss_goal_mb"] == 250 and out["max_rss_mb"] > 0
