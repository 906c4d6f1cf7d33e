"""The pose from the edges of a marker a tower stands on (outline.find_marker_edges,
refine_by_marker_edges), on a rendered phone photo whose far marker is painted
over, and the cases that must leave the pose alone."""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from companion.sim import sample_photo
from companion.vision.geometry import Intrinsics, Pose, board_geometry
from companion.vision.outline import _outward, find_marker_edges, refine_by_marker_edges
from companion.vision.pose import detect_markers
from companion.vision.reader import read_image
from companion.vision.settings import section

SEED = 5  # phone; marker 1 lies farthest from the camera
G = board_geometry()
CFG = section("marker_edges")


def _true_pose(truth: dict) -> Pose:
    cam, pose = truth["camera"], truth["pose"]
    intr = Intrinsics(np.array(cam["camera_matrix"], float), np.array(cam["dist_coeffs"], float),
                      tuple(cam["image_size"]))
    return Pose(np.array(pose["rvec"]), np.array(pose["tvec"]), intr)


def _block_on(image: np.ndarray, pose: Pose, mid: int, inside: float, outside: float
              ) -> np.ndarray:
    """``image`` with a dark blue square (a tower's foot, seen from above) painted on
    the marker's corner nearest the board's middle: ``inside`` mm of it over the
    marker, ``outside`` mm beyond its corner."""
    cx, cy = G.marker_centres[mid]
    sx, sy = -np.sign(cx), -np.sign(cy)
    x0, y0 = cx + sx * G.marker_size / 2, cy + sy * G.marker_size / 2
    a, b = (x0 - sx * inside, y0 - sy * inside), (x0 + sx * outside, y0 + sy * outside)
    square = np.array([[a[0], a[1], 0], [b[0], a[1], 0], [b[0], b[1], 0], [a[0], b[1], 0]])
    out = image.copy()
    cv2.fillConvexPoly(out, np.round(pose.project(square)).astype(np.int32), (120, 40, 20))
    return out


@lru_cache(maxsize=1)
def _photo() -> tuple[np.ndarray, Pose, list[str]]:
    r = sample_photo(SEED, "phone")
    return r.image, _true_pose(r.truth), list(r.truth["colors"])


def _tops_off(true: Pose, pose: Pose) -> float:
    """Median distance (px) between where the two poses put the sites' axes 300 mm up."""
    pts = np.array([[x, y, 300.0] for x, y in G.site_xy])
    return float(np.median(np.linalg.norm(true.project(pts) - pose.project(pts), axis=1)))


def test_a_marker_a_tower_stands_on_is_lost_but_its_edges_are_found_where_they_are() -> None:
    image, true, _ = _photo()
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    assert sorted(detect_markers(grey, G)) == [0, 1, 2, 3]
    covered = cv2.cvtColor(_block_on(image, true, 1, 14, 8), cv2.COLOR_BGR2GRAY)
    assert sorted(detect_markers(covered, G)) == [0, 2, 3]
    fits = find_marker_edges(covered, true, G, [1], CFG)
    assert [f.edge for f in fits] == [8, 9, 10, 11]  # 4 + 4 * marker + side
    for f in fits:
        # the steps peak within a fifth of a pixel of the printed edge
        assert abs(float(np.median(_outward(true, G, f)))) < 0.3
        assert len(f.obj) >= CFG["min_samples"]


def test_the_lost_markers_edges_bring_the_tall_tops_nearer_where_they_are() -> None:
    image, true, colors = _photo()
    covered = _block_on(image, true, 1, 14, 8)
    grey = cv2.cvtColor(covered, cv2.COLOR_BGR2GRAY)
    without = read_image(covered, None, colors, config={"marker_edges": {"enabled": False}})
    assert without.pose.markers == (0, 2, 3)
    markers = detect_markers(grey, G)
    solved = read_image(covered, None, colors, config={"marker_edges": {"enabled": False},
                                                       "outline": {"enabled": False}}).pose
    pose, edges = refine_by_marker_edges(grey, solved, markers, G, CFG, fit_focal=True)
    assert pose is not solved and {f.edge for f in edges} == {8, 9, 10, 11}
    assert _tops_off(true, pose) < 0.7 * _tops_off(true, solved)
    # and the reader's pose (the board's outline no longer kept over the edges)
    read = read_image(covered, None, colors).pose
    assert _tops_off(true, read) < 0.7 * _tops_off(true, without.pose)


def test_a_tower_over_most_of_a_marker_moves_nothing() -> None:
    # its top's edges run along the marker's, light quiet zone outside, dark inside:
    # found as edges, but the marker's printed cells are not where the pose puts them
    image, true, colors = _photo()
    covered = _block_on(image, true, 1, 46, 4)
    grey = cv2.cvtColor(covered, cv2.COLOR_BGR2GRAY)
    markers = detect_markers(grey, G)
    assert sorted(markers) == [0, 2, 3]
    solved = read_image(covered, None, colors, config={"marker_edges": {"enabled": False},
                                                       "outline": {"enabled": False}}).pose
    assert find_marker_edges(grey, solved, G, [1], CFG)
    pose, edges = refine_by_marker_edges(grey, solved, markers, G, CFG, fit_focal=True)
    assert pose is solved and edges == []


def test_all_markers_found_or_the_section_off_leaves_the_pose() -> None:
    image, true, _ = _photo()
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    markers = detect_markers(grey, G)
    assert refine_by_marker_edges(grey, true, markers, G, CFG, True) == (true, [])
    three = {k: v for k, v in markers.items() if k != 1}
    assert refine_by_marker_edges(grey, true, three, G, {**CFG, "enabled": False}, True) \
        == (true, [])


def test_a_marker_near_the_photos_edge_is_looked_at_without_reaching_past_it() -> None:
    # the crop round a marker the pose puts just inside the photo's border stops there
    image, true, _ = _photo()
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    left = int(np.floor(true.project(G.marker_corners(1))[:, 0].min())) - int(CFG["search_px"]) - 5
    K = true.intrinsics.K.copy()
    K[0, 2] -= left
    shifted = Pose(true.rvec, true.tvec, Intrinsics(K, true.intrinsics.dist,
                                                    (grey.shape[1] - left, grey.shape[0])))
    fits = find_marker_edges(np.ascontiguousarray(grey[:, left:]), shifted, G, [1], CFG)
    assert [f.edge for f in fits] == [8, 9, 10, 11]
