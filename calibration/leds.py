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
    # the largest channel's change (numpy's max over the colour axis took 30 ms a frame,
    # and np.maximum.reduce over the planes stacks them into one array first)
    if diff.ndim == 2:
        grey = diff
    else:
        planes = cv2.split(diff)
        grey = planes[0]
        for plane in planes[1:]:
            grey = cv2.max(grey, plane)
    grey = cv2.GaussianBlur(grey, (0, 0), 2.0)
    peak = float(grey.max())
    if peak < min_delta:
        return None
    # the pixels at half the peak or more, looked for only in the box that holds them
    # all (the same pixels in the same order as over the whole frame: a spot is a few
    # hundred pixels of a million). Whole grey levels: v >= peak / 2 is v > ceil - 1
    if grey.dtype == np.uint8:
        level = float(np.ceil(0.5 * peak)) - 1.0
        _, mask = cv2.threshold(grey, level, 255, cv2.THRESH_BINARY)
        x0, y0, w, h = cv2.boundingRect(mask)
    else:  # (a float frame: no box, the whole of it)
        x0, y0, (h, w) = 0, 0, grey.shape[:2]
    box = grey[y0:y0 + h, x0:x0 + w]
    ys, xs = np.nonzero(box >= 0.5 * peak)
    weights = box[ys, xs].astype(np.float64)
    ys, xs = ys + y0, xs + x0
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


#: frames a change on the strip may take to reach the camera's pictures (a real camera's
#: pipeline delivers each frame one to three frames after the light it shows)
MAX_FRAMES = 15


def locate_leds(show: Callable[[list[tuple[int, int, int]]], Any],
                grab: Callable[[], np.ndarray], count: int,
                pose: tuple[np.ndarray, np.ndarray, np.ndarray], *,
                led_height_mm: float = 0.0, settle: int = 1, max_frames: int = MAX_FRAMES,
                dist: np.ndarray | None = None, dark: np.ndarray | None = None
                ) -> dict[int, tuple[float, float] | None]:
    """Light each LED alone and find where it shines on the board (mm), None for an LED
    the camera never saw. ``pose`` is (K, rvec, tvec) of the board; ``dist`` the lens's
    distortion (the spot is undistorted before it is taken back to the board).

    A camera shows the strip some frames late, so no frame is taken to show the
    strip as it was last told: the dark picture is the last of ``max_frames``
    frames read after the strip went dark; then each LED is lit and frames are read
    until its spot shows against the dark picture (``settle`` frames more, for a
    frame the switch fell in the middle of: the last shows it whole), and the
    strip is turned dark again until the camera shows it so, before the next one.
    ``dark``: that dark picture, when the caller has read it (the strip shown dark
    and ``max_frames`` frames read since).
    Reading one frame per LED, a camera one frame late had every LED mapped one
    place off, in silence.
    """
    import cv2

    K, rvec, tvec = pose
    off = [(0, 0, 0)] * count

    def frames() -> Any:
        for _ in range(max_frames):
            yield grab()

    if max_frames < 1 or settle < 0:
        raise ValueError(f"max_frames must be 1 or more and settle 0 or more, got "
                         f"{max_frames} and {settle}")
    show(off)
    baseline = dark
    if baseline is None:
        baseline = grab()
        for _ in range(max_frames - 1):
            baseline = grab()
    found: dict[int, tuple[float, float] | None] = {}
    for led in range(count):
        frame = list(off)
        frame[led] = (255, 255, 255)
        show(frame)
        spot = None
        for img in frames():
            spot = locate_spot(baseline, img)
            if spot is not None:
                break
        if spot is not None:
            for _ in range(settle):
                spot = locate_spot(baseline, grab()) or spot
            if dist is not None and np.any(np.asarray(dist) != 0):
                u, v = cv2.undistortPoints(np.array([[spot]], np.float64), K,
                                           np.asarray(dist, np.float64), P=K).reshape(2)
                spot = (float(u), float(v))
        found[led] = None if spot is None else image_to_board(spot, K, rvec, tvec,
                                                              led_height_mm)
        show(off)
        if spot is not None and not any(locate_spot(baseline, img) is None
                                        for img in frames()):
            raise LedCalibrationError(
                f"the camera still saw LED {led} lit {max_frames} frames after it was turned "
                "off: is the camera's picture frozen, or something moving in its view?")
    return found


def map_leds(show: Callable[[list[tuple[int, int, int]]], Any],
             grab: Callable[[], np.ndarray], count: int,
             pose: tuple[np.ndarray, np.ndarray, np.ndarray], profile: dict[str, Any],
             *, led_height_mm: float = 0.0, settle: int = 1, max_frames: int = MAX_FRAMES,
             dist: np.ndarray | None = None) -> tuple[LedMap, dict[int, Any]]:
    """Light each LED alone and locate it (:func:`locate_leds`), then map the sites."""
    found = locate_leds(show, grab, count, pose, led_height_mm=led_height_mm, settle=settle,
                        max_frames=max_frames, dist=dist)
    return assign(found, profile, count), found
