"""Change detection for the live table: does anything move, and is an arm over the board.

Every camera frame goes through :class:`DiffMotionGate` (frame to frame, a
fraction of a millisecond). Frame differencing cannot see a hand that rests
still, so before a settled scene is read, :class:`ArmWatch` compares it with
the last scene that was read: a move changes pixels on the board only (the
block, its shadow, the card on its stack), an arm reaching over the board is a
changed region that runs from the board out of the picture. Thresholds are in
the config's ``change`` section.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from companion.rules.board import MAX_STOREYS
from companion.vision.geometry import BoardGeometry, board_geometry, fill_convex
from companion.vision.settings import section


def _option(config: Mapping[str, Any] | None, key: str) -> Any:
    return (config or {}).get(key, section("change")[key])


class DiffMotionGate:
    """Frame differencing on a small grey thumbnail: a few hundred microseconds."""

    def __init__(self, width: int | None = None, threshold: float | None = None,
                 fraction: float | None = None, *,
                 config: Mapping[str, Any] | None = None) -> None:
        self.width = int(width if width is not None else _option(config, "width"))
        self.threshold = float(threshold if threshold is not None
                               else _option(config, "diff_threshold"))
        self.fraction = float(fraction if fraction is not None
                              else _option(config, "moving_fraction"))
        self._prev: np.ndarray | None = None

    def update(self, image: np.ndarray, timestamp: float) -> bool:
        step = max(1, image.shape[1] // self.width)
        # Strided views cost nothing; two samples per cell average the sensor noise.
        a = image[::step, ::step]
        b = image[step // 2::step, step // 2::step]
        h, w = min(a.shape[0], b.shape[0]), min(a.shape[1], b.shape[1])
        small = a[:h, :w].astype(np.int16) + b[:h, :w]
        grey = small.sum(axis=2) // 6
        prev, self._prev = self._prev, grey
        if prev is None or prev.shape != grey.shape:
            return True  # the first frame, or a picture of another size: all new
        moved = np.count_nonzero(np.abs(grey - prev) > self.threshold)
        return bool(moved > self.fraction * grey.size)


def thumbnail(image: np.ndarray, width: int) -> np.ndarray:
    """Area-averaged small colour copy (float32), width ``width``."""
    h, w = image.shape[:2]
    th = max(1, int(round(h * width / w)))
    small = cv2.resize(image, (width, th), interpolation=cv2.INTER_AREA)
    return np.asarray(small, np.float32)


def board_mask(pose: Any, image_size: tuple[int, int], thumb_shape: tuple[int, int],
               geometry: BoardGeometry | None = None, margin_mm: float = 0.0) -> np.ndarray:
    """Where the board lies in the thumbnail (bool): what a hand must not be over."""
    g = geometry or board_geometry()
    hw, hh = g.board_size[0] / 2 + margin_mm, g.board_size[1] / 2 + margin_mm
    # the edges in steps, so that lens distortion bends them as it bends the image
    u = np.linspace(-1.0, 1.0, 9)
    edge = np.concatenate([np.column_stack([u * hw, np.full(9, hh)]),
                           np.column_stack([u * hw, np.full(9, -hh)]),
                           np.column_stack([np.full(9, hw), u * hh]),
                           np.column_stack([np.full(9, -hw), u * hh])])
    pts = pose.project(np.column_stack([edge, np.zeros(len(edge))]))
    w, h = image_size
    th, tw = thumb_shape
    pts = pts * (tw / w, th / h)
    mask = np.zeros((th, tw), np.uint8)
    fill_convex(mask, np.asarray(pts, np.float32), 1)
    return mask > 0


def tower_masks(pose: Any, image_size: tuple[int, int], thumb_shape: tuple[int, int],
                towers: Mapping[int, int], geometry: BoardGeometry | None = None,
                ) -> list[np.ndarray]:
    """Where each tower could stand once a block is added to it (bool, per
    thumbnail), for the towers whose volume reaches the picture's edge: a new
    top there runs out of the picture as an arm does. ``towers``: site index ->
    storeys."""
    g = geometry or board_geometry()
    if not towers:
        return []
    w, h = image_size
    th, tw = thumb_shape
    half = g.footprint / 2
    index = np.array(sorted(towers), np.int64)
    top = (np.array([towers[int(i)] for i in index], np.float64) + MAX_STOREYS) * g.storey
    square = np.array([(-half, -half), (half, -half), (half, half), (-half, half)])
    boxes = np.zeros((len(index), 8, 3))
    boxes[:, :, :2] = (np.asarray(g.site_xy, np.float64)[index][:, None, :]
                       + np.tile(square, (2, 1))[None])
    boxes[:, 4:, 2] = top[:, None]
    pts = (pose.project(boxes.reshape(-1, 3)) * (tw / w, th / h)).reshape(len(index), 8, 2)
    out: list[np.ndarray] = []
    for p in pts:
        if not np.all(np.isfinite(p)):
            continue
        lo, hi = p.min(axis=0), p.max(axis=0)
        if lo[0] > 0.5 and lo[1] > 0.5 and hi[0] < tw - 1.5 and hi[1] < th - 1.5:
            continue  # inside the picture: its new top cannot pass for an arm
        mask = np.zeros((th, tw), np.uint8)
        fill_convex(mask, np.asarray(p, np.float32), 1)
        out.append(cv2.dilate(mask, np.ones((3, 3), np.uint8)) > 0)
    return out


@dataclass(frozen=True)
class ArmCheck:
    arm: bool
    changed_fraction: float  # of the thumbnail, after aligning for a small camera shake
    shift_px: tuple[float, float]  # thumbnail pixels the scene moved by since the reference
    reason: str


def arm_over_board(reference: np.ndarray, current: np.ndarray, board: np.ndarray,
                   config: Mapping[str, Any] | None = None,
                   towers: Sequence[np.ndarray] = ()) -> ArmCheck:
    """Whether ``current`` differs from ``reference`` by something reaching over the board.

    Both are thumbnails from :func:`thumbnail`; ``board`` is :func:`board_mask`.
    A pixel counts as changed when it leaves the range of its reference
    neighbourhood (so a shake of a pixel changes nothing). A change over a large
    part of the picture is a lamp or a camera bump, not an arm; nor is one lying
    within a tall tower's volume (``towers``, :func:`tower_masks`): its new top.
    """
    ref_grey = reference.mean(axis=2)
    cur_grey = current.mean(axis=2)
    (dx, dy), _ = cv2.phaseCorrelate(ref_grey.astype(np.float64), cur_grey.astype(np.float64))
    if abs(dx) > 0.3 or abs(dy) > 0.3:
        m = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
        reference = cv2.warpAffine(reference, m, (reference.shape[1], reference.shape[0]),
                                   flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    t = float(_option(config, "arm_threshold"))
    kernel = np.ones((3, 3), np.uint8)
    lo = cv2.erode(reference, kernel) - t
    hi = cv2.dilate(reference, kernel) + t
    changed = np.any((current < lo) | (current > hi), axis=2)
    frac = float(changed.mean())
    shift = (float(dx), float(dy))
    if frac > float(_option(config, "arm_global_fraction")):
        return ArmCheck(False, frac, shift, "the whole scene changed (a lamp or a bump)")
    if not changed.any():
        return ArmCheck(False, frac, shift, "nothing changed")
    # skin over a table of skin's colour changes little: bridge the gaps along an arm
    bridge = np.ones((int(_option(config, "arm_bridge_px")),) * 2, np.uint8)
    grown = cv2.morphologyEx(changed.astype(np.uint8), cv2.MORPH_CLOSE, bridge)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    h, w = grown.shape
    min_px = int(_option(config, "arm_min_px"))
    large_px = int(_option(config, "arm_large_px"))
    share = float(_option(config, "arm_tower_share"))
    for k in range(1, n):
        x, y, bw, bh, _area = stats[k]
        at_edge = x == 0 or y == 0 or x + bw == w or y + bh == h
        if not at_edge:
            continue
        mine = changed & (labels == k)
        over = int(np.count_nonzero(mine & board))
        # an arm also lies off the board, between it and the picture's edge, or (where
        # the board runs out of the picture) is large; a tall tower's new top near
        # the edge is neither
        off = int(np.count_nonzero(mine & ~board))
        least = share * (over + off)
        if any(np.count_nonzero(mine & t) >= least for t in towers):
            continue  # a new block on a tower that runs out of the picture
        if over >= min_px and (off >= min_px or over >= large_px):
            if _relit_away(reference, current, changed, lo, hi, config):
                return ArmCheck(False, frac, shift,
                                "the light changed (a lamp), not an arm")
            return ArmCheck(True, frac, shift,
                            f"a change reaches from outside the picture over the board "
                            f"({over} thumbnail pixels on it)")
    return ArmCheck(False, frac, shift, "changes on the board only")


def _relit_away(reference: np.ndarray, current: np.ndarray, changed: np.ndarray,
                lo: np.ndarray, hi: np.ndarray, config: Mapping[str, Any] | None) -> bool:
    """Whether the change is the light's: a lamp switched or moved changes much of the
    picture, its shadows' edges reaching the picture's edge as an arm does, but
    smoothly. The reference relit by the smooth ratio of the two (a Gaussian of
    ``arm_relight_px`` thumbnail pixels) leaves under ``arm_light_ratio`` of the
    changed pixels changed; an arm's sharp outline stays (measured on companion/sim
    tables at 8 pixels: 120 hands leave 0.57 or more, the 22 of 100 lamp changes the
    outline rule took for arms 0.30 or less)."""
    sigma = float(_option(config, "arm_relight_px"))
    if sigma <= 0:
        return False
    ratio = (cv2.GaussianBlur(current, (0, 0), sigma) + 1.0) / (
        cv2.GaussianBlur(reference, (0, 0), sigma) + 1.0)
    # the reference's neighbourhood range, relit alike (the ratio is positive)
    still = np.any((current < lo * ratio) | (current > hi * ratio), axis=2)
    return float(np.count_nonzero(still)) < float(_option(config, "arm_light_ratio")) * float(
        np.count_nonzero(changed))


class ArmWatch:
    """The last scene read, to tell a resting arm from a move.

    ``settle`` after every reading; ``check`` before the next one. Without a
    reference or a pose nothing is held back.
    """

    def __init__(self, config: Mapping[str, Any] | None = None,
                 geometry: BoardGeometry | None = None) -> None:
        self.config = dict(config or {})
        self.geometry = geometry
        self.timeout_seconds = float(_option(self.config, "arm_timeout_seconds"))
        self.fixture_scenes = int(_option(self.config, "arm_fixture_scenes"))
        self._reference: np.ndarray | None = None
        self._board: np.ndarray | None = None
        self._towers: list[np.ndarray] = []
        #: the reference from before a scene read over a resting arm (see settle)
        self._before: tuple[np.ndarray, np.ndarray, list[np.ndarray]] | None = None
        self.last: ArmCheck | None = None
        #: the thumbnail of the frame :meth:`check` looked at last (None: it had none)
        self.seen: np.ndarray | None = None

    def settle(self, image: np.ndarray, pose: Any,
               towers: Mapping[int, int] | None = None, *, held: bool = False) -> None:
        """The scene just read becomes the reference; ``towers`` (site index ->
        storeys) are the towers in it, whose next block may reach out of the picture.

        ``held``: the scene was read only because something from outside the board
        stayed past the timeout: an arm at rest, as often as a phone laid at the
        edge or a camera knocked askew. The reference before it is kept too: once
        an arm read into the reference has gone, every scene after it differed from
        the reference at the picture's edge, was held as an arm, and no still scene
        (each under the timeout) was read again."""
        before = None
        if held and self._reference is not None and self._board is not None:
            before = self._before or (self._reference, self._board, self._towers)
        self._before = before
        if pose is None or not hasattr(pose, "project"):
            self._reference = self._board = None
            self._towers = []
            return
        ref = thumbnail(image, int(_option(self.config, "width")))
        h, w = image.shape[:2]
        self._board = board_mask(pose, (w, h), ref.shape[:2], self.geometry,
                                 float(_option(self.config, "arm_board_margin_mm")))
        self._towers = tower_masks(pose, (w, h), ref.shape[:2], towers or {}, self.geometry)
        self._reference = ref

    def same_outside(self, before: np.ndarray, after: np.ndarray) -> bool:
        """Whether two held-back scenes (their thumbnails, :attr:`seen`) show the same
        change from outside the board: nothing reaches in from the picture's edge
        between them. An arm comes and goes with its hand; a phone laid at the board's
        edge, or the view of a camera knocked askew, stays as it was from one still
        scene to the next."""
        if self._board is None or before.shape != after.shape \
                or before.shape[:2] != self._board.shape[:2]:
            return False
        return not arm_over_board(before, after, self._board, self.config, self._towers).arm

    def check(self, image: np.ndarray) -> bool:
        """True when an arm seems to reach over the board (do not read this frame)."""
        self.seen = None
        if self._reference is None or self._board is None:
            self.last = None
            return False
        cur = self.seen = thumbnail(image, int(_option(self.config, "width")))
        if cur.shape != self._reference.shape:
            self.last = None
            return False
        self.last = arm_over_board(self._reference, cur, self._board, self.config,
                                   self._towers)
        if self.last.arm and self._before is not None and cur.shape == self._before[0].shape:
            # the reference holds a scene read over an arm: this one, as it was before
            # the arm came, is the arm gone (a thing left at the edge, a camera turned,
            # is in the reference and matches it)
            ref, board, towers = self._before
            if not arm_over_board(ref, cur, board, self.config, towers).arm:
                self.last = replace(self.last, arm=False,
                                    reason="the arm read over the board has gone")
        return self.last.arm
