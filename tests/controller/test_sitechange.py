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


def test_a_block_of_the_same_grey_as_what_it_covers_still_shows():
    # a red block on a blue tower can have nearly the grey of the blue top it
    # covers: the change is measured over the colour channels, not on grey
    import cv2
    import numpy as np

    from companion.profiles import load_profile
    from companion.rules import Site

    table = SimTable(seed=4, hand_frames=0, still_frames=2)
    pose = _pose(table)
    before = table.read().image
    site = Site(2, 1, 1)
    top = np.array([[-13.0, -13.0], [13.0, -13.0], [13.0, 13.0], [-13.0, 13.0]])
    cx, cy = load_profile()["cities"]["centres_mm"][site.city]  # the city's centre site
    pts = pose.project(np.column_stack([top + (cx, cy), np.zeros(4)]))
    blue, red = (170, 75, 35), (40, 35, 190)  # BGR, grey 64 and 81
    a, b = before.copy(), before.copy()
    cv2.fillConvexPoly(a, np.round(pts).astype(np.int32), blue)
    cv2.fillConvexPoly(b, np.round(pts).astype(np.int32), red)
    grey = cv2.cvtColor(b, cv2.COLOR_BGR2GRAY).astype(int) - cv2.cvtColor(
        a, cv2.COLOR_BGR2GRAY).astype(int)
    assert np.abs(grey).max() <= 20  # the grey images barely differ
    found, _ = changed_site(site_change_scores(a, b, pose, {}))
    assert found == site
