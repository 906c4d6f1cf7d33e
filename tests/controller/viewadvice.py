"""The live table's warnings with the camera's view advice set apart (test helper)."""

from __future__ import annotations

from typing import Any

from companion.session import GameSession
from companion.vision.geometry import Intrinsics, Pose, good_elevation


def game_warnings(session: GameSession, table: Any, slack_deg: float = 1.0) -> list[dict]:
    """The session's warnings but the advice on how the camera looks at the board, which
    must be there, once, exactly when ``table``'s camera looks from outside the board
    profile's good band (either way within ``slack_deg`` of an edge: the reader
    estimates the elevation from the markers; the camera's own pose says it exactly)."""
    warnings = session.snapshot()["warnings"]
    view = [w for w in warnings
            if w["reason"] == "camera" and w["message"].startswith("The camera looks")]
    cam = table.camera
    elevation = Pose(cam.rvec, cam.tvec,
                     Intrinsics(cam.K, cam.dist, (cam.width, cam.height))).elevation_deg
    (low, high), _ = good_elevation()
    if low + slack_deg < elevation < high - slack_deg:
        assert view == [], elevation
    elif elevation > high + slack_deg or elevation < low - slack_deg:
        assert len(view) == 1, elevation
    return [w for w in warnings if w not in view]
