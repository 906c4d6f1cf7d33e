"""Map an LED strip to sites automatically: light one LED at a time, find it.

Each LED is lit alone; the camera's difference to a dark baseline gives the
spot; the board pose takes the spot back to board millimetres; the nearest
site (or a city edge for row/column LEDs, or a board edge for seat LEDs)
claims it. Works for any strip layout, so a table can be wired freely.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from hardware.leds.ledmap import LedMap


class LedCalibrationError(ValueError):
    """The strip could not be mapped; the message says which sites lack an LED."""


def locate_spot(baseline: np.ndarray, lit: np.ndarray, min_delta: float = 40.0
                ) -> tuple[float, float] | None:
    """Image position of the brightest new light, or None if nothing lit up."""
    import cv2

    diff = cv2.absdiff(lit, baseline)
    grey = diff.max(axis=2) if diff.ndim == 3 else diff
    grey = cv2.GaussianBlur(grey, (0, 0), 2.0)
    peak = float(grey.max())
    if peak < min_delta:
        return None
    ys, xs = np.nonzero(grey >= 0.5 * peak)
    weights = grey[ys, xs].astype(np.float64)
    return float((xs * weights).sum() / weights.sum()), float((ys * weights).sum() / weights.sum())


def image_to_board(uv: tuple[float, float], K: np.ndarray, rvec: np.ndarray, tvec: np.ndarray,
                   z_mm: float = 0.0) -> tuple[float, float]:
    """Back-project an (undistorted) image point onto the plane z = ``z_mm``."""
    import cv2

    R, _ = cv2.Rodrigues(np.asarray(rvec, np.float64).reshape(3))
    t = np.asarray(tvec, np.float64).reshape(3) + R[:, 2] * z_mm
    H = np.asarray(K, np.float64) @ np.column_stack([R[:, 0], R[:, 1], t])
    p = np.linalg.solve(H, np.array([uv[0], uv[1], 1.0]))
    return float(p[0] / p[2]), float(p[1] / p[2])


def assign(points: Mapping[int, tuple[float, float] | None], profile: dict[str, Any],
           count: int) -> LedMap:
    """Which LEDs light which site and seat, from where each LED was seen (mm)."""
    centres = np.array(profile["cities"]["centres_mm"], np.float64)
    pitch = float(profile["sites"]["pitch_mm"])
    half_w, half_h = (float(v) / 2 for v in profile["board"]["size_mm"])
    sites: list[list[int]] = [[] for _ in range(len(centres) * 9)]
    seats: dict[str, list[int]] = {}
    for led, p in sorted(points.items()):
        if p is None:
            continue
        x, y = p
        if abs(x) > half_w or abs(y) > half_h:
            seat = _seat_of(x, y, half_w, half_h)
            seats.setdefault(seat, []).append(led)
            continue
        d = np.hypot(centres[:, 0] - x, centres[:, 1] - y)
        city = int(np.argmin(d))
        cx, cy = centres[city]
        col = (x - cx) / pitch + 1
        row = 1 - (y - cy) / pitch
        in_col = -0.5 <= col <= 2.5
        in_row = -0.5 <= row <= 2.5
        c, r = int(round(min(max(col, 0), 2))), int(round(min(max(row, 0), 2)))
        if in_col and in_row:
            sites[city * 9 + r * 3 + c].append(led)
        elif in_col and row > 2.5:  # below the city: a column LED
            for rr in range(3):
                sites[city * 9 + rr * 3 + c].append(led)
        elif in_row and col < -0.5:  # west of the city: a row LED
            for cc in range(3):
                sites[city * 9 + r * 3 + cc].append(led)
    missing = [i for i, leds in enumerate(sites) if not leds]
    if missing:
        raise LedCalibrationError(
            f"{len(missing)} site(s) have no LED the camera could find "
            f"(first: site {missing[0]}); check the strip and that the camera sees the board")
    return LedMap(count, tuple(tuple(s) for s in sites),
                  {k: tuple(v) for k, v in seats.items()}, layout="calibrated",
                  description="mapped by companion calibrate leds")


def _seat_of(x: float, y: float, half_w: float, half_h: float) -> str:
    """The board edge an outside point lies beyond (normalised by the board's size)."""
    if abs(y) / half_h >= abs(x) / half_w:
        return "N" if y > 0 else "S"
    return "E" if x > 0 else "W"


def map_leds(show: Callable[[list[tuple[int, int, int]]], Any],
             grab: Callable[[], np.ndarray], count: int,
             pose: tuple[np.ndarray, np.ndarray, np.ndarray], profile: dict[str, Any],
             *, led_height_mm: float = 0.0, settle: int = 1) -> tuple[LedMap, dict[int, Any]]:
    """Light each LED alone and locate it. ``pose`` is (K, rvec, tvec) of the board."""
    K, rvec, tvec = pose
    off = [(0, 0, 0)] * count

    def capture(frame: list[tuple[int, int, int]]) -> np.ndarray:
        show(frame)
        img = grab()
        for _ in range(settle - 1):
            img = grab()
        return img

    baseline = capture(off)
    found: dict[int, tuple[float, float] | None] = {}
    for led in range(count):
        frame = list(off)
        frame[led] = (255, 255, 255)
        spot = locate_spot(baseline, capture(frame))
        found[led] = None if spot is None else image_to_board(spot, K, rvec, tvec, led_height_mm)
    show(off)
    return assign(found, profile, count), found
