"""Pixel-level change localisation on the simulated table: the move is where the
image changed, whatever a whole-board reading says elsewhere."""

from __future__ import annotations

from companion.simtable import SimTable
from companion.vision.geometry import Intrinsics, Pose
from companion.vision.sitechange import changed_site, site_change_scores


def _pose(table: SimTable) -> Pose:
    cam = table.camera
    return Pose(cam.rvec, cam.tvec, Intrinsics(cam.K, cam.dist, (cam.width, cam.height)))


def test_the_changed_site_is_found_from_pixels():
    table = SimTable(seed=3, hand_frames=0, still_frames=1)
    pose = _pose(table)
    prev = table.read()
    heights = {}
    found = []
    while len(table.moves) < 10:
        frame = table.read()
        scores = site_change_scores(prev.image, frame.image, pose, heights)
        site, _ = changed_site(scores)
        found.append(site)
        prev = frame
        heights = {s: v.height for s, v in table.world.board.views().items()}
    assert found == [m.site for m in table.moves[:10]]


def test_no_change_gives_no_site():
    table = SimTable(seed=4, hand_frames=0, still_frames=2)
    a, b = table.read(), table.read()
    scores = site_change_scores(a.image, b.image, _pose(table), {})
    assert changed_site(scores) == (None, [])
