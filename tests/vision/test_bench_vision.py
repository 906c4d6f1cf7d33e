"""`companion bench` vision: what the speed goal compares (no timing asserted)."""

from __future__ import annotations

from companion.bench import bench_vision


def test_vision_bench_reports_the_read_against_decoding_and_markers() -> None:
    out = bench_vision(n=1)
    assert out["goal_ratio"] == 3.0
    for key in ("decode_and_markers", "full_read", "full_read_unknown_colours",
                "full_read_colour_check", "live_read"):
        assert out[key]["n"] == 1 and out[key]["median_ms"] > 0
    ratio = out["full_read"]["median_ms"] / out["decode_and_markers"]["median_ms"]
    assert abs(out["ratio_median"] - ratio) <= 0.011  # one photo: its own ratio
    live = out["live_read"]["median_ms"] / out["decode_and_markers"]["median_ms"]
    assert abs(out["ratio_median_live"] - live) <= 0.011
    assert out["phone_12mp_decode_and_read_ms"] > 0
    assert out["phone_48mp_decode_and_read_ms"] > 0
    stages = out["full_read_stages_median_ms"]
    assert list(stages) == ["markers", "pose", "sites", "cards"]
    # the stages of one read add up to less than the whole (decoding is outside them)
    assert 0 < sum(stages.values()) <= out["full_read"]["median_ms"] + 0.05
