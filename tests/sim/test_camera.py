"""Camera models: projection agrees with OpenCV, random cameras stay in the spec's ranges."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from companion.profiles import load_profile
from companion.rules.topology import Seat
from companion.sim.camera import (
    SEAT_AZIMUTH,
    CameraModel,
    look_at_camera,
    random_camera,
    spherical_eye,
)


def _angles(cam: CameraModel) -> tuple[float, float, float]:
    """(distance mm, elevation deg, azimuth deg) of the camera seen from the board centre."""
    c = cam.centre
    d = float(np.linalg.norm(c))
    elev = math.degrees(math.asin(c[2] / d))
    az = math.degrees(math.atan2(c[0], -c[1])) % 360
    return d, elev, az


def _az_diff(a: float, b: float) -> float:
    return abs((a - b + 180) % 360 - 180)


def test_project_matches_opencv() -> None:
    cam = random_camera(np.random.default_rng(3), "phone")
    pts = np.random.default_rng(0).uniform(-200, 200, (20, 3))
    pts[:, 2] = np.abs(pts[:, 2])
    ref, _ = cv2.projectPoints(pts, np.asarray(cam.rvec), np.asarray(cam.tvec), cam.K, cam.dist)
    assert np.allclose(cam.project(pts), np.asarray(ref).reshape(-1, 2))


def test_look_at_puts_target_on_principal_point_and_far_side_up() -> None:
    eye = spherical_eye(900, 60, 0)  # over the South edge
    cam = look_at_camera(eye, (0, 0, 0), width=1280, height=720, hfov_deg=65)
    uv = cam.project(np.array([[0.0, 0.0, 0.0], [0.0, 100.0, 0.0], [100.0, 0.0, 0.0]]))
    assert np.allclose(uv[0], cam.K[:2, 2], atol=1e-6)
    assert uv[1, 1] < uv[0, 1]  # North is up in the image
    assert uv[2, 0] > uv[0, 0]  # East is to the right
    d, e, a = _angles(cam)
    assert d == pytest.approx(900) and e == pytest.approx(60) and a == pytest.approx(0, abs=1e-6)


def test_camera_json_is_the_formats_md_intrinsics() -> None:
    cam = random_camera(np.random.default_rng(1), "mounted")
    js = cam.to_json()
    assert set(js) == {"camera_matrix", "dist_coeffs", "image_size"}
    assert np.asarray(js["camera_matrix"]).shape == (3, 3)
    assert len(js["dist_coeffs"]) == 5 and js["image_size"] == [1280, 720]


@pytest.mark.parametrize("kind", ["mounted", "phone"])
def test_random_cameras_stay_in_range(kind: str) -> None:
    prof = load_profile()["cameras"][kind]
    d_lo, d_hi = (1000 * v for v in prof["distance_m"])
    e_lo, e_hi = prof["elevation_deg"]
    for seed in range(300):
        cam = random_camera(np.random.default_rng(seed), kind)
        d, e, a = _angles(cam)
        assert d_lo - 1e-6 <= d <= d_hi + 1e-6
        assert e_lo - 1e-6 <= e <= e_hi + 1e-6
        assert (cam.width, cam.height) == tuple(prof["min_size"])
        # the camera looks near the board centre
        c = cam.project(np.zeros((1, 3)), distort=False)[0]
        assert abs(c[0] - cam.width / 2) < 0.2 * cam.width
        assert abs(c[1] - cam.height / 2) < 0.25 * cam.height
        if kind == "mounted":
            assert prof["hfov_deg"][0] - 1e-6 <= cam.hfov_deg <= prof["hfov_deg"][1] + 1e-6
            assert min(_az_diff(a, s) for s in SEAT_AZIMUTH.values()) <= prof["azimuth_deg"] + 1e-6
        else:
            assert -0.12 <= cam.dist[0] <= 0.08
            assert cam.width * 3 == cam.height * 4


def test_random_camera_side_is_respected() -> None:
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        for seed in range(30):
            cam = random_camera(np.random.default_rng(seed), "mounted", side=seat)
            assert _az_diff(_angles(cam)[2], SEAT_AZIMUTH[seat]) <= 25 + 1e-6


def test_random_camera_is_deterministic() -> None:
    a = random_camera(np.random.default_rng(9), "phone")
    b = random_camera(np.random.default_rng(9), "phone")
    assert np.array_equal(a.K, b.K) and np.array_equal(a.rvec, b.rvec)
    assert np.array_equal(a.dist, b.dist)
