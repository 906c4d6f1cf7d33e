"""Pinhole cameras for the simulated table: explicit poses and random ones in the spec's ranges.

The ranges (distance, elevation, azimuth, field of view, image size) come from the
board profile's ``cameras`` section so a test photo is always one the companion must serve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from companion.profiles import load_profile
from companion.rules.topology import Seat

#: Azimuth (degrees) of the camera's ground position seen from the board centre:
#: 0 over the South edge, 90 East, 180 North, 270 West (same as companion.vision).
SEAT_AZIMUTH: dict[Seat, float] = {Seat.S: 0.0, Seat.E: 90.0, Seat.N: 180.0, Seat.W: 270.0}


def undistort_points(pts: np.ndarray, K: np.ndarray, dist: np.ndarray,
                     criteria: tuple[int, int, float]) -> np.ndarray:
    """``cv2.undistortPoints`` iterated to ``criteria``, back in pixels (``P=K``).
    OpenCV 4 takes the criteria only in ``undistortPointsIter`` (what a Raspberry
    Pi with numpy 1 installs), OpenCV 5 only as ``undistortPoints``' keyword."""
    if hasattr(cv2, "undistortPointsIter"):
        return np.asarray(cv2.undistortPointsIter(pts, K, dist, np.eye(3), K, criteria))
    return np.asarray(cv2.undistortPoints(pts, K, dist, P=K, criteria=criteria))


def _ro(a: Any, shape: tuple[int, ...]) -> np.ndarray:
    out = np.array(a, dtype=np.float64).reshape(shape)
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class CameraModel:
    """Intrinsics (OpenCV pinhole + k1 k2 p1 p2 k3) and the world-mm -> camera pose."""

    K: np.ndarray
    dist: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    width: int
    height: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "K", _ro(self.K, (3, 3)))
        d = np.zeros(5)
        flat = np.asarray(self.dist, np.float64).ravel()[:5]
        d[: flat.size] = flat
        object.__setattr__(self, "dist", _ro(d, (5,)))
        object.__setattr__(self, "rvec", _ro(self.rvec, (3,)))
        object.__setattr__(self, "tvec", _ro(self.tvec, (3,)))
        object.__setattr__(self, "width", int(self.width))
        object.__setattr__(self, "height", int(self.height))

    @property
    def R(self) -> np.ndarray:
        """World -> camera rotation matrix."""
        return cv2.Rodrigues(np.asarray(self.rvec).reshape(3, 1))[0]

    @property
    def centre(self) -> np.ndarray:
        """Optical centre in board millimetres."""
        return -self.R.T @ np.asarray(self.tvec)

    @property
    def size(self) -> tuple[int, int]:
        return (self.width, self.height)

    @property
    def hfov_deg(self) -> float:
        return math.degrees(2 * math.atan(self.width / 2 / float(self.K[0, 0])))

    def project(self, points_mm: np.ndarray, *, distort: bool = True) -> np.ndarray:
        """Board mm (N, 3) -> image pixels (N, 2), with the lens distortion unless told not."""
        pts = np.asarray(points_mm, np.float64).reshape(-1, 3)
        if pts.shape[0] == 0:
            return np.zeros((0, 2))
        dist = self.dist if distort else np.zeros(5)
        img, _ = cv2.projectPoints(pts, np.asarray(self.rvec).reshape(3, 1),
                                   np.asarray(self.tvec).reshape(3, 1), self.K, dist)
        return np.asarray(img, np.float64).reshape(-1, 2)

    def to_camera(self, points_mm: np.ndarray) -> np.ndarray:
        """Board mm (N, 3) -> camera-frame mm (N, 3)."""
        pts = np.asarray(points_mm, np.float64).reshape(-1, 3)
        return pts @ self.R.T + np.asarray(self.tvec).reshape(1, 3)

    def without_distortion(self) -> CameraModel:
        return CameraModel(self.K, np.zeros(5), self.rvec, self.tvec, self.width, self.height)

    def to_json(self) -> dict[str, Any]:
        """The camera-intrinsics JSON of formats.md."""
        return {"camera_matrix": np.asarray(self.K).tolist(),
                "dist_coeffs": [float(v) for v in self.dist],
                "image_size": [self.width, self.height]}

    def pose_json(self) -> dict[str, Any]:
        """Pose (board mm -> camera) for truth files; not part of the intrinsics JSON."""
        return {"rvec": [float(v) for v in self.rvec], "tvec": [float(v) for v in self.tvec],
                "centre_mm": [float(v) for v in self.centre]}


def intrinsics_matrix(width: int, height: int, hfov_deg: float,
                      principal: tuple[float, float] | None = None) -> np.ndarray:
    """Square-pixel K for a horizontal field of view."""
    f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
    cx, cy = principal if principal is not None else ((width - 1) / 2, (height - 1) / 2)
    return np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]], np.float64)


def look_at_camera(eye_mm: tuple[float, float, float] | np.ndarray,
                   target_mm: tuple[float, float, float] | np.ndarray = (0.0, 0.0, 0.0), *,
                   width: int = 1280, height: int = 720, hfov_deg: float = 65.0,
                   K: np.ndarray | None = None, dist: np.ndarray | None = None,
                   roll_deg: float = 0.0) -> CameraModel:
    """A camera at ``eye_mm`` looking at ``target_mm``; the image top shows the far side."""
    eye = np.asarray(eye_mm, np.float64).reshape(3)
    tgt = np.asarray(target_mm, np.float64).reshape(3)
    fwd = tgt - eye
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, np.array([0.0, 0.0, 1.0]))
    if np.linalg.norm(right) < 1e-6:  # straight down: keep North at the image top
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    R = np.vstack([right, down, fwd])
    if roll_deg:
        r = math.radians(roll_deg)
        Rz = np.array([[math.cos(r), -math.sin(r), 0], [math.sin(r), math.cos(r), 0], [0, 0, 1]])
        R = Rz @ R
    tvec = -R @ eye
    if K is None:
        K = intrinsics_matrix(width, height, hfov_deg)
    return CameraModel(K, np.zeros(5) if dist is None else dist,
                       cv2.Rodrigues(R)[0].ravel(), tvec, width, height)


def spherical_eye(distance_mm: float, elevation_deg: float, azimuth_deg: float) -> np.ndarray:
    """Camera position from the board centre (azimuth 0 = over the South edge, 90 = East)."""
    e, a = math.radians(elevation_deg), math.radians(azimuth_deg)
    return distance_mm * np.array([math.cos(e) * math.sin(a), -math.cos(e) * math.cos(a),
                                   math.sin(e)])


def random_camera(rng: np.random.Generator, kind: str = "mounted", side: Seat | None = None,
                  size: tuple[int, int] | None = None) -> CameraModel:
    """A camera drawn from reference-board.md's ranges for a mounted camera or a phone.

    Mounted: above one side (+-25 deg azimuth), 58-72 deg hfov, calibrated lens with
    mild distortion. Phone: any azimuth (+-45 deg of ``side`` when given), 55-70 deg hfov
    (typical phone main camera), k1 in [-0.12, 0.08].
    """
    if kind not in ("mounted", "phone"):
        raise ValueError(f"unknown camera kind {kind!r} (mounted or phone)")
    prof = load_profile()["cameras"][kind]
    d_lo, d_hi = (float(v) * 1000 for v in prof["distance_m"])
    e_lo, e_hi = (float(v) for v in prof["elevation_deg"])
    distance = rng.uniform(d_lo, d_hi)
    elevation = rng.uniform(e_lo, e_hi)
    if kind == "mounted":
        spread = float(prof["azimuth_deg"])
        seat = side if side is not None else Seat(rng.choice(["S", "W", "N", "E"]))
        azimuth = SEAT_AZIMUTH[seat] + rng.uniform(-spread, spread)
        hfov = rng.uniform(float(prof["hfov_deg"][0]), float(prof["hfov_deg"][1]))
        w, h = size if size is not None else tuple(int(v) for v in prof["min_size"])
        k1 = rng.uniform(-0.06, 0.03)
        k2 = rng.uniform(-0.02, 0.02)
        roll = float(np.clip(rng.normal(0, 2.0), -5, 5))
    else:
        if side is not None:
            azimuth = SEAT_AZIMUTH[side] + rng.uniform(-45, 45)
        else:
            azimuth = rng.uniform(0, 360)
        hfov = rng.uniform(55, 70)
        w, h = size if size is not None else tuple(int(v) for v in prof["min_size"])
        k1 = rng.uniform(-0.12, 0.08)
        k2 = rng.uniform(-0.04, 0.04)
        roll = float(np.clip(rng.normal(0, 4.0), -10, 10))
    p1, p2 = np.clip(rng.normal(0, 4e-4, 2), -1e-3, 1e-3)
    dist = np.array([k1, k2, p1, p2, 0.0])
    principal = ((w - 1) / 2 + float(np.clip(rng.normal(0, 0.008 * w), -0.02 * w, 0.02 * w)),
                 (h - 1) / 2 + float(np.clip(rng.normal(0, 0.008 * h), -0.02 * h, 0.02 * h)))
    K = intrinsics_matrix(int(w), int(h), hfov, principal)
    target = np.zeros(3)
    target[:2] = np.clip(rng.normal(0, 20.0, 2), -45, 45)
    eye = spherical_eye(distance, elevation, azimuth)
    return look_at_camera(eye, target, width=int(w), height=int(h), K=K, dist=dist,
                          roll_deg=roll)
