"""Board geometry through a camera: projection round trips and where each seat's
played-card stack falls in the image."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.rules.topology import Seat, default_topology
from companion.sim.camera import undistort_points
from companion.vision.geometry import (
    SEAT_FORWARD,
    Pose,
    board_geometry,
    intrinsics_for_fov,
    look_at_pose,
    points_in_convex,
)
from companion.vision.strips import project_fast

AZIMUTH = {Seat.S: 0.0, Seat.E: 90.0, Seat.N: 180.0, Seat.W: 270.0}
CAMERAS = [(seat, el) for seat in (Seat.S, Seat.W, Seat.N, Seat.E) for el in (40.0, 82.0)]


def camera(seat: Seat, elevation: float, distortion: bool = True) -> Pose:
    dist = (-0.08, 0.02, 0.0004, -0.0003, 0.0) if distortion else (0, 0, 0, 0, 0)
    intr = intrinsics_for_fov((1280, 720), 64.0, dist)
    return look_at_pose(intr, 900.0, elevation, AZIMUTH[seat] + 7.0, (10.0, -15.0, 0.0), 2.0)


def image_to_board(pose: Pose, pix: np.ndarray) -> np.ndarray:
    """Back-project distorted pixels onto the board plane z = 0 (board mm)."""
    K, dist = pose.intrinsics.K, pose.intrinsics.dist
    und = undistort_points(pix.reshape(-1, 1, 2).astype(np.float64), K, dist,
                           (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-12))
    H = pose.plane_homography(0.0)
    xy = cv2.perspectiveTransform(und, np.linalg.inv(H))
    return xy.reshape(-1, 2)


@pytest.mark.parametrize(("seat", "elevation"), CAMERAS)
def test_board_mm_to_image_and_back(seat, elevation):
    pose = camera(seat, elevation)
    g = board_geometry()
    rng = np.random.default_rng([3, int(elevation), "SWNE".index(seat.value)])
    w, h = g.board_size
    pts = np.column_stack([rng.uniform(-w / 2, w / 2, 200), rng.uniform(-h / 2, h / 2, 200),
                           np.zeros(200)])
    pts = np.vstack([pts, np.column_stack([g.site_xy, np.zeros(len(g.site_xy))])])
    pix = pose.project(pts)
    # the fast numpy projection the site reader uses agrees with OpenCV's
    assert np.abs(project_fast(pose, pts) - pix).max() < 1e-6
    back = image_to_board(pose, pix)
    assert np.abs(back - pts[:, :2]).max() < 1e-3  # mm


def test_projection_respects_the_frame_conventions():
    # +x East, +y North, +z up; a camera over the South edge sees North at the top
    pose = camera(Seat.S, 60.0, distortion=False)
    east, north, up = pose.project(np.array([[100.0, 0, 0], [0, 100.0, 0], [0, 0, 100.0]]))
    centre = pose.project(np.zeros((1, 3)))[0]
    assert east[0] > centre[0] + 50
    assert north[1] < centre[1] - 20
    assert up[1] < centre[1] - 20
    assert pose.camera_centre[1] < -300 and pose.camera_centre[2] > 500


def _side(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Sign of the cross product: which side of the image line a -> b each point is."""
    return np.sign((b[0] - a[0]) * (p[..., 1] - a[1]) - (b[1] - a[1]) * (p[..., 0] - a[0]))


EDGE = {  # the board-edge corners in front of each seat (board mm)
    Seat.S: ((-260.0, -190.0), (260.0, -190.0)), Seat.N: ((260.0, 190.0), (-260.0, 190.0)),
    Seat.W: ((-260.0, 190.0), (-260.0, -190.0)), Seat.E: ((260.0, -190.0), (260.0, 190.0)),
}


@pytest.mark.parametrize(("cam_seat", "elevation"), CAMERAS)
def test_each_card_stack_projects_outside_its_own_board_edge(cam_seat, elevation):
    pose = camera(cam_seat, elevation)
    g = board_geometry()
    w, h = g.board_size
    board = pose.project(np.array([[-w / 2, h / 2, 0], [w / 2, h / 2, 0], [w / 2, -h / 2, 0],
                                   [-w / 2, -h / 2, 0]]))
    centre = pose.project(np.zeros((1, 3)))[0]
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        region = g.card_search_region(seat, margin=0.0)
        stack = np.vstack([region, g.card_centre(seat)[None]])
        pix = pose.project(np.column_stack([stack, np.zeros(len(stack))]))
        assert not points_in_convex(board, pix).any(), seat
        a, b = (pose.project(np.array([[*p, 0.0]]))[0] for p in EDGE[seat])
        # beyond the seat's own edge line, on the side away from the board's centre
        assert np.all(_side(a, b, pix) == -_side(a, b, centre)), seat
        # and nearer that edge's middle than any other edge's middle
        mids = {s: pose.project(np.array([[*g.board_edge_point(s), 0.0]]))[0] for s in EDGE}
        c = pix[-1]
        assert min(mids, key=lambda s: np.linalg.norm(mids[s] - c)) is seat


@pytest.mark.parametrize("seat", [Seat.S, Seat.W, Seat.N, Seat.E])
def test_card_cells_map_to_the_sites_they_point_at(seat):
    """The grid printed on a card, lying in front of its seat, points at the site the
    rules give for that seat (reference-board.md): cell directions on the table agree
    with site directions inside a city."""
    g = board_geometry()
    topo = default_topology()
    centre = g.card_centre(seat)
    for grid in (0, 1):
        mid = g.card_to_board(seat, centre, 0.0, np.array(g.card_cell_local(grid, 1, 1)))[0]
        for r in range(3):
            for c in range(3):
                if (r, c) == (1, 1):
                    continue
                cell = g.card_to_board(seat, centre, 0.0, np.array(g.card_cell_local(grid, r, c)))
                row, col = topo.site_for_card(seat, r, c)
                site = g.site_xy[row * 3 + col] - g.site_xy[4]  # city 0, relative to its centre
                d = cell[0] - mid
                cos = float(d @ site / (np.linalg.norm(d) * np.linalg.norm(site)))
                assert cos > 0.999, (seat, r, c, row, col)
    # a card's far row (r = 0) lies toward the board
    fwd = np.asarray(SEAT_FORWARD[seat])
    far = g.card_to_board(seat, centre, 0.0, np.array(g.card_cell_local(0, 0, 1)))[0]
    near = g.card_to_board(seat, centre, 0.0, np.array(g.card_cell_local(0, 2, 1)))[0]
    assert (far - near) @ fwd > 0


def test_a_gross_marker_outlier_is_named_only_when_three_others_fit() -> None:
    from companion.vision.geometry import Intrinsics, Pose
    from companion.vision.pose import gross_outlier

    g = board_geometry()
    K = np.array([[1200.0, 0, 800], [0, 1200.0, 600], [0, 0, 1]])
    pose = Pose(np.array([2.4, 0.0, 0.0]), np.array([0.0, 40.0, 800.0]),
                Intrinsics(K, np.zeros(5), (1600, 1200)))
    rng = np.random.default_rng(3)
    markers = {k: pose.project(g.marker_corners(k)) + rng.normal(0, 0.3, (4, 2))
               for k in range(4)}
    assert gross_outlier(markers, pose, g) is None  # all fit within a pixel
    bent = {**markers, 2: markers[2] + np.array([[14.0, -9.0], [0, 0], [0, 0], [0, 0]])}
    assert gross_outlier(bent, pose, g) == 2
    three = {k: v for k, v in bent.items() if k != 0}
    assert gross_outlier(three, pose, g) is None  # two would be left: keep all
    mild = {**markers, 2: markers[2] + np.array([[2.5, 0], [0, 0], [0, 0], [0, 0]])}
    assert gross_outlier(mild, pose, g) is None  # under 3 px: not gross


def test_one_bent_corner_of_three_markers_is_put_back_where_the_others_say() -> None:
    from companion.vision.geometry import Intrinsics
    from companion.vision.pose import estimate_intrinsics, repair_bent_corner, solve_pose

    g = board_geometry()
    K = np.array([[1000.0, 0, 640], [0, 1000.0, 360], [0, 0, 1]])
    truth = look_at_pose(Intrinsics(K, np.zeros(5), (1280, 720)), 950.0, 77.0, 20.0,
                         (0.0, 0.0, 0.0), 1.0)
    rng = np.random.default_rng(5)
    markers = {k: truth.project(g.marker_corners(k)) + rng.normal(0, 0.3, (4, 2))
               for k in (0, 1, 2)}

    def fitted(found: dict[int, np.ndarray]) -> Pose:
        return solve_pose(found, estimate_intrinsics(found, g, (1280, 720)), g).pose

    clean = fitted(markers)
    assert repair_bent_corner(markers, clean, g, True) is markers  # nothing to mend
    bent = {**markers, 0: markers[0] + np.array([[0, 0], [0, 0], [4.5, -2.0], [0, 0]])}
    pose = fitted(bent)
    mended = repair_bent_corner(bent, pose, g, True)
    assert mended is not bent
    moved = [(k, c) for k in bent for c in range(4) if not np.allclose(mended[k][c], bent[k][c])]
    assert moved == [(0, 2)]  # only the bent corner, put back within a pixel of the truth
    assert np.linalg.norm(mended[0][2] - truth.project(g.marker_corners(0))[2]) < 1.0
    # a mild bend is left alone: under corner_px it costs less than a lost corner
    mild = {**markers, 0: markers[0] + np.array([[0, 0], [0, 0], [1.5, 0], [0, 0]])}
    assert repair_bent_corner(mild, fitted(mild), g, True) is mild
    # with known intrinsics the corner is judged against the pose alone
    known = solve_pose(bent, truth.intrinsics, g).pose
    assert sorted(k for k in bent if not np.array_equal(
        repair_bent_corner(bent, known, g, False)[k], bent[k])) == [0]


@pytest.mark.parametrize("elevation", [40.0, 55.0, 82.0, 90.0])
def test_the_elevation_is_the_optical_axis_angle_over_the_board(elevation: float) -> None:
    # the angle the camera looks down at, whatever its side, roll or aim point
    intr = intrinsics_for_fov((1280, 720), 64.0)
    for azimuth, roll, target in ((0.0, 0.0, (0.0, 0.0, 0.0)), (117.0, 3.0, (40.0, -25.0, 0.0)),
                                  (250.0, -2.0, (-60.0, 10.0, 0.0))):
        pose = look_at_pose(intr, 900.0, elevation, azimuth, target, roll)
        assert pose.elevation_deg == pytest.approx(elevation, abs=1e-6)
