"""The renderer: markers land where the camera model says, truth is honest, output is stable."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.rules.board import Block, Board, Site
from companion.rules.topology import Seat
from companion.sim import Hand, Lighting, Scene, look_at_camera, random_camera, render
from companion.sim.camera import spherical_eye
from companion.sim.layout import default_layout
from companion.sim.render import LABEL_HAND, LABEL_TOP
from companion.sim.scene import Thing
from companion.sim.scenes import random_scene

LAY = default_layout()
NEUTRAL = Lighting(kelvin=6000, ambient_kelvin=6000, ambient=0.4, direct=0.6,
                   light_pos=(100.0, -200.0, 1500.0), softness_mm=4.0, specular=0.0, awb=1.0)


def _detector() -> cv2.aruco.ArucoDetector:
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    return cv2.aruco.ArucoDetector(
        cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50), params)


def _clean(scene: Scene, cam, **kw):  # type: ignore[no-untyped-def]
    args = {"noise": 0.0, "blur": 0.0, "vignetting": 0.0, **kw}
    return render(scene, cam, NEUTRAL, rng=np.random.default_rng(0), **args)


@pytest.mark.parametrize("seed,kind", [(0, "mounted"), (1, "phone"), (4, "mounted"),
                                       (7, "phone")])
def test_marker_corners_round_trip(seed: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    scene = random_scene(rng)
    cam = random_camera(rng, kind)
    assert kind == "mounted" or abs(cam.dist[0]) > 0  # phones carry lens distortion
    r = _clean(scene, cam)
    corners, ids, _ = _detector().detectMarkers(r.image)
    found: dict[int, np.ndarray] = {}
    if ids is not None:
        for c, i in zip(corners, np.asarray(ids).ravel(), strict=True):
            found[int(i)] = np.asarray(c).reshape(4, 2)
    assert r.truth["markers_visible"], "a test camera should see some marker"
    for mid in r.truth["markers_visible"]:
        assert mid in found, f"marker {mid} should be detectable"
        proj = r.camera.project(LAY.marker_corners(mid))
        assert np.abs(found[mid] - proj).max() < 2.0
    assert set(found) <= {0, 1, 2, 3}


def _low_south_camera() -> object:
    return look_at_camera(spherical_eye(800, 40, 0), (0, 0, 0), width=1280, height=720,
                          hfov_deg=65)


def _palette() -> dict[str, tuple[int, int, int]]:
    return LAY.colour_set("classic")


def test_tall_tower_hides_the_building_behind_it() -> None:
    small, tall = Site(4, 0, 1), Site(4, 1, 1)  # small is North of tall: behind it from S
    board = Board.empty().with_block(small, Block("green", 1))
    cam = _low_south_camera()
    seen = _clean(Scene(board, _palette()), cam, distortion=False)
    vis = {(v["city"], v["row"], v["col"]): v for v in seen.truth["visibility"]}
    assert vis[(4, 0, 1)]["top"] > 0.9
    assert {"city": 4, "row": 0, "col": 1} not in seen.truth["unseen"]

    board = board.with_tower(tall, [Block("red", 4)] * 6 + [Block("blue", 1)])
    hidden = _clean(Scene(board, _palette()), cam, distortion=False)
    vis = {(v["city"], v["row"], v["col"]): v for v in hidden.truth["visibility"]}
    assert vis[(4, 0, 1)]["top"] < 0.2
    assert {"city": 4, "row": 0, "col": 1} in hidden.truth["unseen"]
    assert vis[(4, 1, 1)]["top"] > 0.9  # the tall tower's top is in view
    assert not any(s["city"] == 4 and s["row"] == 0 and s["col"] == 1
                   for s in hidden.truth["expected"]["sites"])
    # the full board truth still lists both
    assert len(hidden.truth["board"]["sites"]) == 2


def test_a_thing_on_the_board_is_drawn_and_hides_the_sites_under_it() -> None:
    # a white cup (80 x 80 x 95 mm) set down on Sao Paulo C, seen from 70 degrees
    site = Site(4, 1, 1)
    x, y = (float(v) for v in LAY.site_xy[site.index])
    cam = look_at_camera(spherical_eye(900, 70, 90), (0, 0, 0), width=1280, height=720,
                         hfov_deg=65)
    board = Board.empty().with_block(Site(4, 0, 1), Block("red", 1))
    plain = _clean(Scene(board, _palette()), cam)
    cup = _clean(Scene(board, _palette(), things=(Thing(x, y, (80.0, 80.0, 95.0),
                                                        (235, 235, 230)),)), cam)
    u, v = cam.project(np.array([[x, y, 95.0]])).reshape(-1).astype(int)
    assert plain.image[v, u].max() < 170  # the board's print (144, 154, 160)
    assert cup.image[v, u].min() > 215  # the cup's white top (228, 233, 233)
    assert [s for s in plain.truth["unseen"] if s["city"] == 4] == []
    assert {(s["row"], s["col"]) for s in cup.truth["unseen"] if s["city"] == 4} == {
        (r, c) for r in range(3) for c in range(3)}


def test_hand_covers_sites_and_is_boxed() -> None:
    board = Board.empty().with_block(Site(4, 1, 1), Block("red", 2))
    x, y = LAY.site_xy[Site(4, 1, 1).index]
    hand = Hand(seat=Seat.S, tip_xy=(float(x), float(y) + 30), tip_height=70.0)
    cam = look_at_camera(spherical_eye(900, 70, 90), (0, 0, 0), width=1280, height=720,
                         hfov_deg=65)
    r = _clean(Scene(board, _palette()), cam, hands=[hand])
    info = r.truth["hands"][0]
    assert info["seat"] == "S" and info["pixels"] > 5000
    x0, y0, x1, y1 = info["box"]
    assert 0 <= x0 < x1 <= 1280 and 0 <= y0 < y1 <= 720
    assert (r.labels == LABEL_HAND).sum() == info["pixels"]
    unseen = {(u["city"], u["row"], u["col"]) for u in r.truth["unseen"]}
    assert (4, 1, 1) in unseen  # the tower under the palm


@pytest.mark.parametrize("colour_set", ["classic", "2017"])
def test_top_faces_show_their_colour(colour_set: str) -> None:
    palette = LAY.colour_set(colour_set)
    names = list(palette)
    board = Board.empty()
    for k, name in enumerate(names):
        board = board.with_tower(Site(k, 1, 1), [Block(names[(k + 1) % 4], 2), Block(name, 1)])
    cam = look_at_camera(spherical_eye(850, 70, 0), (0, 0, 0), width=1280, height=720,
                         hfov_deg=65)
    r = _clean(Scene(board, palette), cam)
    assert r.truth["board"]["colors"] == names
    ref = {n: np.array(c[::-1], float) for n, c in palette.items()}  # BGR
    for k, name in enumerate(names):
        px = r.image[r.labels == LABEL_TOP + Site(k, 1, 1).index]
        assert len(px) > 200
        mean = px.reshape(-1, 3).mean(axis=0)
        best = min(ref, key=lambda n: float(np.linalg.norm(ref[n] - mean)))
        assert best == name


def test_same_seed_same_bytes_and_jpeg_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    scene = random_scene(rng, "2017", tall=True)
    cam = random_camera(rng, "phone", size=(800, 600))
    a = render(scene, cam, rng=np.random.default_rng(5), jpeg_quality=85)
    b = render(scene, cam, rng=np.random.default_rng(5), jpeg_quality=85)
    assert a.image.tobytes() == b.image.tobytes()
    assert a.truth == b.truth
    raw = render(scene, cam, rng=np.random.default_rng(5))
    assert raw.image.shape == a.image.shape == (600, 800, 3)
    diff = np.abs(raw.image.astype(int) - a.image.astype(int)).mean()
    assert 0 < diff < 6
    assert a.truth["jpeg_quality"] == 85
    img_path, json_path = a.save(str(tmp_path / "photo"))
    assert img_path.endswith(".jpg")
    assert np.array_equal(cv2.imread(img_path), a.image)
    assert json.loads(Path(json_path).read_text())["board"] == a.truth["board"]


def test_a_camera_rendered_again_reuses_its_ground_to_the_byte() -> None:
    # a live table's frames share the table, the print and the lamp on them
    # (render._ground keeps them for the last two cameras); a frame drawn over the
    # kept ground is the frame drawn from scratch, and another camera gets its own
    from companion.sim.render import _GROUND_CACHE

    rng = np.random.default_rng(21)
    scene = random_scene(rng, "classic", tall=True)
    # one lens, two places: only the pose tells their grounds apart
    cams = [look_at_camera(spherical_eye(900, 60, az), (0, 0, 0), width=640, height=480)
            for az in (0, 90)]

    def shot(cam: object) -> tuple[bytes, dict]:
        r = render(scene, cam, NEUTRAL, rng=np.random.default_rng(3))  # type: ignore[arg-type]
        return r.image.tobytes(), r.truth

    scratch = []
    for cam in cams:
        _GROUND_CACHE.clear()
        scratch.append(shot(cam))
    assert scratch[0][0] != scratch[1][0]
    _GROUND_CACHE.clear()
    assert [shot(cam) for cam in cams + cams] == scratch + scratch
    assert len(_GROUND_CACHE) == 2
    shot(random_camera(rng, "phone", size=(640, 480)))  # the oldest is let go
    assert len(_GROUND_CACHE) == 2


def test_truth_layout() -> None:
    rng = np.random.default_rng(3)
    scene = random_scene(rng)
    r = render(scene, random_camera(rng, "mounted"), rng=rng)
    t = r.truth
    assert t["camera"]["image_size"] == [1280, 720]
    assert t["board"]["format"] == "manhattan-board/1"
    assert len(t["visibility"]) == 54
    assert all(0.0 <= v["top"] <= 1.0 and 0.0 <= v["site"] <= 1.0 for v in t["visibility"])
    low = [(v["city"], v["row"], v["col"]) for v in t["visibility"] if v["top"] < 0.5]
    assert [(u["city"], u["row"], u["col"]) for u in t["unseen"]] == low
    for seat, entry in t["cards"].items():
        assert scene.cards[Seat(seat)] == tuple(entry["cell"])
    assert r.labels.shape == r.image.shape[:2]


def test_card_cells_are_named_from_the_holders_view() -> None:
    """The red cell (r, c) lies r rows from the board-side edge, c columns from the
    holder's left, for every seat."""
    cells = {Seat.S: (0, 2), Seat.W: (1, 0), Seat.N: (2, 1), Seat.E: (0, 0)}
    scene = Scene(Board.empty(), _palette(), cells, {s: 3 for s in cells}, deck=False)
    cam = look_at_camera(spherical_eye(1000, 82, 0), (0, 0, 0), width=1600, height=1200,
                         hfov_deg=72)
    r = _clean(scene, cam, distortion=False)
    assert set(r.truth["cards"]) == {"S", "W", "N", "E"}
    z = -2.0 + 3 * 0.35
    for seat, (row, col) in cells.items():
        along, ang = scene.stack_pose(seat)
        centre, right, fwd = LAY.card_frame(seat, along, ang)
        for grid_x in LAY.card_grid_offsets:
            for rr in range(3):
                for cc in range(3):
                    a = grid_x + (cc - 1) * LAY.card_cell
                    b = LAY.card_size[1] / 2 - LAY.card_top_offset - (rr + 0.5) * LAY.card_cell
                    xy = centre + a * right + b * fwd
                    u, v = np.round(cam.project(np.array([[xy[0], xy[1], z]]))[0]).astype(int)
                    bgr = r.image[v, u].astype(int)
                    is_red = bgr[2] > bgr[1] + 60 and bgr[2] > bgr[0] + 60
                    assert is_red == ((rr, cc) == (row, col)), (seat, rr, cc)


def test_block_jitter_stands_each_block_at_its_own_pose() -> None:
    """Players stack blocks one by one: with ``block_jitter`` a top block sits off
    its tower's foot, and the truth's top face is the top block's, not the foot's."""
    site = Site(4, 1, 1)
    tower = [Block("red", 2), Block("blue", 3), Block("green", 1)]
    board = Board.empty().with_tower(site, tower)
    rigid = Scene(board, _palette(), layout_seed=5)
    assert rigid.block_poses(site) == [rigid.tower_pose(site)] * 3
    stacked = Scene(board, _palette(), layout_seed=5, block_jitter=(2.5, 4.0))
    poses = stacked.block_poses(site)
    assert poses == stacked.block_poses(site)  # seeded by the layout
    assert len({p for p in poses}) == 3
    x, y, _ = stacked.tower_pose(site)
    cx, cy = LAY.site_xy[site.index]
    room = LAY.pitch / 2 - 0.75 - LAY.footprint / 2
    for px, py, ang in poses:
        assert 0.0 < np.hypot(px - x, py - y) <= 2.5 * np.sqrt(2) + 1e-9
        assert abs(ang - stacked.tower_pose(site)[2]) <= 4.0
        assert abs(px - cx) <= room + 1e-9 and abs(py - cy) <= room + 1e-9
    assert stacked.top_pose(site) == poses[-1]
    cam = look_at_camera(spherical_eye(800, 75, 0), (0, 0, 0), width=1280, height=720,
                         hfov_deg=65)
    r = _clean(stacked, cam, distortion=False)
    top = np.argwhere(r.labels == LABEL_TOP + site.index)[:, ::-1].mean(axis=0)
    z = 6 * LAY.storey
    tx, ty, _ = stacked.top_pose(site)
    assert np.linalg.norm(top - cam.project(np.array([[tx, ty, z]]))[0]) < 1.0
    assert np.linalg.norm(top - cam.project(np.array([[x, y, z]]))[0]) > 1.5
    vis = {(v["city"], v["row"], v["col"]): v for v in r.truth["visibility"]}
    assert vis[(4, 1, 1)]["top"] > 0.95
