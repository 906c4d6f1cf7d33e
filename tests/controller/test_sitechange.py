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


def _focus(scores: list[tuple[str, float]], differ: set[str], grew: set[str] | None = None
           ) -> tuple[str | None, list[str]]:
    """The focus on ``scores``: the reading differs from the record at ``differ``, and
    reads taller at ``grew`` (all of ``differ`` when None)."""
    from companion.controller import _change_config
    from companion.rules import Site
    from companion.vision.sitechange import SiteChange, focus

    taller = {Site.parse(d).name for d in (differ if grew is None else grew)}
    found = focus([SiteChange(Site.parse(s), v) for s, v in scores],
                  lambda site: site.name in {Site.parse(d).name for d in differ},
                  _change_config(), lambda site: site.name in taller)
    return (found.site.name if found.site else None), [c.name for c in found.candidates]


def test_a_new_top_that_covers_the_sites_behind_it_is_found_where_the_reading_grew():
    # SimTable seed 2 (three players, 2017 colours), North's purple 4 on Sao Paulo NE's
    # 4-storey tower: the sites it covers in the photo changed most (N 18.2, NW 12.7),
    # its own site less (8.6, under half of the best) and it alone reads otherwise
    # than the record, taller (8 purple on the 4 recorded). Before, the best site (N),
    # reading as before, was taken and the build was lost
    scores = [("4N", 18.2), ("4NW", 12.7), ("4NE", 8.6), ("4E", 0.8), ("0NW", 0.3)]
    assert _focus(scores, {"4NE"}) == ("Sao Paulo NE", ["Sao Paulo NE"])
    # not a site apart from them (another city), nor one that barely changed
    assert _focus([("4N", 18.2), ("4NW", 12.7), ("1NE", 8.6)], {"1NE"}) == ("Sao Paulo N",
                                                                          ["Sao Paulo N"])
    assert _focus([("4N", 18.2), ("4NW", 12.7), ("4NE", 5.0)], {"4NE"}) == ("Sao Paulo N",
                                                                          ["Sao Paulo N"])
    # nor one that reads lower than before (a block knocked off it: SimTable seed 4's
    # fallen block, test_live_vision's)
    assert _focus(scores, {"4NE"}, grew=set()) == ("Sao Paulo N", ["Sao Paulo N"])
    # a site among the most changed that reads otherwise is taken as before
    assert _focus(scores, {"4NW", "4NE"}) == ("Sao Paulo NW", ["Sao Paulo NW"])
