"""Glue between the camera, the vision reader and the controller.

``VisionReader`` adapts :func:`companion.vision.reader.read_image` to the
controller's reader protocol (rules-engine types out, cards as ``Card``);
``CameraView`` keeps the last frame with the detected board drawn on it for
the page ("for trust and for calibration"); sites read by a narrow margin are
drawn in amber with a "?", so the players know which towers to check.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from companion.rules import Card, Seat, Site, SiteView


@dataclass
class Reading:
    sites: dict[Site, SiteView]
    unseen: list[Site]
    cards: dict[Seat, Card]
    pose: Any = None
    timings: dict[str, float] = field(default_factory=dict)
    #: read sites whose reading won narrowly: the camera view marks them for a look
    doubtful: list[Site] = field(default_factory=list)
    wb: Any = None  # the white balance it was read with (the new-block fit reuses it)
    #: per site, the reader's scores for the towers it weighed there (the new-block
    #: fit weighs them with its own: companion.vision.newblock.settle)
    site_scores: dict[Site, dict[tuple[int, str], float]] = field(default_factory=dict)
    #: the reader's warning when the camera shows the board small (a low camera mode,
    #: a camera mounted far): the players are told once
    small: str | None = None

    def hypotheses(self) -> dict[Site, dict[tuple[int, str], float]]:
        return self.site_scores


class VisionReader:
    """Reads one still frame; a frame with no board raises a ValueError subclass."""

    def __init__(self, camera: Any = None, colors: list[str] | None = None,
                 config: dict[str, Any] | None = None) -> None:
        self.camera = camera
        self.colors = colors
        self.config = config

    def __call__(self, image: np.ndarray, previous_pose: Any = None,
                 height_range: Any = None) -> Reading:
        """``height_range``: site -> (lowest, highest) height the game record allows."""
        from companion.vision.reader import read_image, small_warning

        # mirrored=False: the motion gate and the new block's fit compare the frames as
        # the camera gives them, so a mirrored camera is told, not read flipped;
        # find_centre=False: a camera's frame is never cut on one side, and the first
        # still scene of an uncalibrated camera of an odd shape would wait seconds
        r = read_image(image, camera=self.camera, colors=self.colors, config=self.config,
                       previous_pose=previous_pose, height_range=height_range, mirrored=False,
                       find_centre=False)
        # the live table knows a block went where the scene changed: a height this view
        # cannot tell for sure is still the best evidence of its storeys (and a narrow
        # one stays doubtful, as before the reader told it apart)
        if getattr(r, "unresolved", None):
            r = r.with_guesses()
        cards = {Seat(s) if not isinstance(s, Seat) else s: _card(c) for s, c in r.cards.items()}
        return Reading(dict(r.sites), list(r.unseen), cards, r.pose,
                       dict(getattr(r, "timings", {}) or {}),
                       list(getattr(r, "doubtful", []) or []), getattr(r, "wb", None),
                       r.hypotheses() if hasattr(r, "hypotheses") else {},
                       small_warning(getattr(r, "site_px", None), self.config,
                                     "in the camera's picture"))


def _card(value: Any) -> Card:
    if isinstance(value, Card):
        return value
    if isinstance(value, dict):
        value = value["cell"]
    return Card(int(value[0]), int(value[1]))


class CameraView:
    """The latest frame as JPEG, with site outlines and readings drawn on it."""

    def __init__(self, max_width: int = 960) -> None:
        self.max_width = max_width
        self._lock = threading.Lock()
        self._jpeg: bytes | None = None

    def update(self, image: np.ndarray, reading: Any) -> None:
        import cv2

        canvas = image.copy()
        pose = getattr(reading, "pose", None)
        if pose is not None and hasattr(pose, "project"):
            _draw_board(canvas, pose, reading)
        h, w = canvas.shape[:2]
        if w > self.max_width:
            canvas = cv2.resize(canvas, (self.max_width, h * self.max_width // w),
                                interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", canvas, [cv2.IMWRITE_JPEG_QUALITY, 80])
        if ok:
            with self._lock:
                self._jpeg = buf.tobytes()

    def __call__(self) -> bytes | None:
        with self._lock:
            return self._jpeg


#: Outline colours (BGR): unseen, read, read but doubtful (worth a look), empty.
UNSEEN_BGR = (0, 0, 255)
READ_BGR = (0, 255, 255)
DOUBTFUL_BGR = (0, 160, 255)
EMPTY_BGR = (200, 200, 200)


def _draw_board(canvas: np.ndarray, pose: Any, reading: Any) -> None:
    """Each site's outline at its tower's top; doubtful readings in amber, with a "?"."""
    import cv2

    from companion.profiles import load_profile

    prof = load_profile()
    pitch = float(prof["sites"]["pitch_mm"])
    half = float(prof["blocks"]["footprint_mm"]) / 2
    unseen = set(getattr(reading, "unseen", ()))
    doubtful = set(getattr(reading, "doubtful", ()) or ())
    sites = getattr(reading, "sites", {})
    for index in range(54):
        site = Site.from_index(index)
        cx, cy = prof["cities"]["centres_mm"][site.city]
        x, y = cx + (site.col - 1) * pitch, cy + (1 - site.row) * pitch
        view = sites.get(site)
        z = 12.0 * view.height if view else 0.0
        square = np.array([[x - half, y - half, z], [x + half, y - half, z],
                           [x + half, y + half, z], [x - half, y + half, z]])
        pts = pose.project(square).astype(np.int32)
        doubt = view is not None and site in doubtful and site not in unseen
        if doubt:
            cv2.polylines(canvas, [pts.reshape(-1, 1, 2)], True, DOUBTFUL_BGR, 2, cv2.LINE_AA)
        else:
            colour = UNSEEN_BGR if site in unseen else (READ_BGR if view else EMPTY_BGR)
            cv2.polylines(canvas, [pts.reshape(-1, 1, 2)], True, colour, 1, cv2.LINE_AA)
        if view is not None:
            cx_px, cy_px = pts.mean(axis=0)
            org = (int(cx_px) - 8, int(cy_px) + 4)
            text = f"{view.height}{view.owner[0]}"
            cv2.putText(canvas, text, org, cv2.FONT_HERSHEY_SIMPLEX, 0.4, (255, 255, 255), 1,
                        cv2.LINE_AA)
            if doubt:
                (tw, _th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.4, 1)
                cv2.putText(canvas, "?", (org[0] + tw + 1, org[1]), cv2.FONT_HERSHEY_SIMPLEX,
                            0.4, DOUBTFUL_BGR, 1, cv2.LINE_AA)
