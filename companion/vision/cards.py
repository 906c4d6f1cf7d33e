"""Read the top card of each seat's played-card stack.

The stack lies outside the board edge in front of its seat, top edge toward
the board. The region where the profile allows it is resampled top-down in
the holder's frame (a: toward the holder's right, b: toward the board), at
a few pixels per millimetre. A card's kind is its red cell, printed twice:
the two red squares sit exactly one grid spacing apart along the card's
width, which finds the card and its rotation even on a white table. Which
of the nine cells is red comes from the printed grid lines around it: each
hypothesis (r, c) predicts where the dark lines and light cells of both
grids are, and the best-matching one wins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from companion.rules.topology import Seat
from companion.vision.colours import WhiteBalance
from companion.vision.geometry import (
    SEAT_FORWARD,
    BoardGeometry,
    CardLayout,
    FloatArray,
    Pose,
    seat_right,
)
from companion.vision.settings import section
from companion.vision.strips import project_fast


@dataclass
class CardRead:
    seat: Seat
    cell: tuple[int, int]
    score: float
    margin: float
    centre_ab: tuple[float, float]  # red-pair midpoint in the seat frame (mm)
    angle_deg: float


def _seat_frame(g: BoardGeometry, seat: Seat) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Origin (middle of the board edge) and unit axes a (holder's right), b (toward board)."""
    e = g.board_edge_point(seat)
    return e, np.asarray(seat_right(seat), np.float64), np.asarray(SEAT_FORWARD[seat],
                                                                    np.float64)


@dataclass(frozen=True)
class _SeatMap:
    """A seat's top-down region in one pose: where each of its pixels lies in the
    photo (``mx``, ``my``), which lie inside it, and what follows from that alone,
    so a still camera's reads remap only the image."""

    mx: np.ndarray
    my: np.ndarray
    inside: np.ndarray
    corner: tuple[float, float]  # (a0, b0), mm
    seen: float  # share of the region inside the photo
    whole: bool  # all of it inside
    footprint: tuple[slice, slice]  # the photo rows, columns its pixels are taken from
    # the blurred inside weights per shade sigma (see _shade_free), made when first asked
    weights: dict[float, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def shade_weights(self, sigma: float) -> tuple[np.ndarray, np.ndarray]:
        """The inside mask as float weights and its blur (floored at 1e-3)."""
        hit = self.weights.get(sigma)
        if hit is None:
            m = self.inside.astype(np.float32)
            hit = (m, np.maximum(cv2.GaussianBlur(m, (0, 0), sigma), 1e-3))
            for arr in hit:
                arr.setflags(write=False)
            self.weights[sigma] = hit
        return hit


_MAP_CACHE: dict[tuple[Any, ...], _SeatMap] = {}


def _seat_maps(pose: Pose, g: BoardGeometry, seat: Seat, s: float, margin: float,
               shape: tuple[int, ...]) -> _SeatMap:
    """Where each pixel of a seat's top-down region lies in the photo, and whether
    inside it. Cached per pose like the site strips: a still camera keeps its pose,
    so live reads remap only the image."""
    key = (pose.cache_key, seat, s, margin, tuple(shape[:2]), g.fingerprint)
    hit = _MAP_CACHE.get(key)
    if hit is not None:
        return hit
    origin, ax, bx = _seat_frame(g, seat)
    pts, W, H, a0, b0 = _seat_grid(g.card, tuple(origin.tolist()), tuple(ax.tolist()),
                                   tuple(bx.tolist()), s, margin)
    pix = project_fast(pose, pts).astype(np.float32)
    # interpolate the coarse map onto every pixel of the resampled region (one
    # channel at a time: OpenCV's two-channel remap rounds differently)
    fx, fy = _fine_grid(W, H, _MAP_STEP)
    mx = cv2.remap(pix[..., 0], fx, fy, cv2.INTER_LINEAR)
    my = cv2.remap(pix[..., 1], fx, fy, cv2.INTER_LINEAR)
    ih, iw = shape[:2]
    inside = (mx >= 0) & (mx <= iw - 1) & (my >= 0) & (my <= ih - 1)
    for arr in (mx, my, inside):
        arr.setflags(write=False)
    if len(_MAP_CACHE) > 16:
        _MAP_CACHE.clear()
    n_in = cv2.countNonZero(inside.view(np.uint8))  # an exact count: inside.mean()'s sum
    out = _SeatMap(mx, my, inside, (a0, b0), n_in / inside.size, n_in == inside.size,
                   _footprint(mx, my, (ih, iw)))
    _MAP_CACHE[key] = out
    return out


#: the coarse map's spacing, in pixels of the resampled region
_MAP_STEP = 8


@lru_cache(maxsize=16)
def _seat_grid(card: CardLayout, origin_t: tuple[float, ...], ax_t: tuple[float, ...],
               bx_t: tuple[float, ...], s: float, margin: float
               ) -> tuple[FloatArray, int, int, float, float]:
    """The board points (on the table) of a seat's coarse map, its region's size
    W x H in pixels and corner (a0, b0) mm, from the seat's frame (:func:`_seat_frame`,
    as tuples): the board's geometry alone, so made once for every pose."""
    w, h = card.size
    reach = card.along_edge + w / 2 + h * np.sin(np.deg2rad(card.angle_deg)) + margin
    b_hi = -card.edge_gap + margin / 2 + 6  # a little over the board edge
    b_lo = -(card.edge_gap + h + w * np.sin(np.deg2rad(card.angle_deg)) + margin)
    a0, b0 = -reach, b_hi
    W = int(np.ceil(2 * reach * s))
    H = int(np.ceil((b_hi - b_lo) * s))
    origin, ax, bx = (np.asarray(t, np.float64) for t in (origin_t, ax_t, bx_t))
    # coarse map through the exact (distorting) projection, then upsampled
    step = _MAP_STEP
    gx = np.arange(0, W + step, step, dtype=np.float64)
    gy = np.arange(0, H + step, step, dtype=np.float64)
    GX, GY = np.meshgrid(gx, gy)
    a = a0 + GX / s
    b = b0 - GY / s
    xy = origin[None, None, :] + a[..., None] * ax + b[..., None] * bx
    pts = np.concatenate([xy, np.zeros(xy.shape[:2] + (1,))], axis=-1)
    pts.setflags(write=False)
    return pts, W, H, float(a0), float(b0)


def _footprint(mx: np.ndarray, my: np.ndarray, shape: tuple[int, int]
               ) -> tuple[slice, slice]:
    """The photo's rows and columns a remap through (mx, my) can read: from the floor
    of the least coordinate to the ceiling of the greatest, within the photo
    (the whole photo if a coordinate is not finite)."""
    lo = np.array([my.min(), mx.min()], np.float64)
    hi = np.array([my.max(), mx.max()], np.float64)
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        return slice(0, shape[0]), slice(0, shape[1])
    y0, x0 = (max(0, int(np.floor(v))) for v in lo)
    y1, x1 = (max(0, min(n, int(np.ceil(v)) + 1)) for v, n in zip(hi, shape, strict=True))
    return slice(y0, y1), slice(x0, x1)


@lru_cache(maxsize=4)
def _fine_grid(W: int, H: int, step: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel of a W x H region in units of the coarse map's ``step``: the same
    for every seat and pose, so made once."""
    fx, fy = np.meshgrid(np.arange(W, dtype=np.float32) / step,
                         np.arange(H, dtype=np.float32) / step)
    for arr in (fx, fy):
        arr.setflags(write=False)
    return fx, fy


def _hidden(sm: _SeatMap, covered: np.ndarray | None) -> np.ndarray | None:
    """The seat pixels a tower hides (``covered``: uint8 photo mask with some pixel
    set, or None); None when it hides none of them."""
    if covered is None:
        return None
    if not covered[sm.footprint].any():
        return None  # no tower pixel where the region's pixels are taken from
    hidden: np.ndarray = cv2.remap(covered, sm.mx, sm.my, cv2.INTER_NEAREST,
                                   borderMode=cv2.BORDER_CONSTANT) > 0
    return hidden if hidden.any() else None


def _covered_u8(covered: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray | None:
    """``covered`` as the uint8 mask remap takes, None when it covers nothing (or
    is not the photo's size): the test made once for the four seats."""
    if covered is None or covered.shape != tuple(shape[:2]) or not covered.any():
        return None
    return covered if covered.dtype == np.uint8 else covered.astype(np.uint8)


def _colour_lut(wb: WhiteBalance, tone: float) -> tuple[np.ndarray, ...]:
    """Per channel (B, G, R), a (256,) float32 table: each 8-bit level white-balanced
    and toned.

    The same arithmetic as on the seat's pixels (``wb.apply``, then the tone
    power) applied to the 256 levels a channel can take: ``cv2.LUT`` then gives
    every pixel the very value, without a float power over the whole region.
    """
    x = wb.apply(np.repeat(np.arange(256, dtype=np.uint8)[:, None], 3, axis=1))
    if tone != 1.0:
        x = np.power(np.maximum(x, 0.0), np.float32(1.0 / tone))
    return tuple(np.ascontiguousarray(x[:, i], dtype=np.float32) for i in range(3))


def read_card(image: np.ndarray, pose: Pose, g: BoardGeometry, seat: Seat, wb: WhiteBalance,
              config: dict[str, Any] | None = None, debug: dict[str, Any] | None = None,
              covered: np.ndarray | None = None, tone: float = 1.0,
              saturation: float = 1.0) -> CardRead | None:
    """The red cell (r, c) of ``seat``'s top card, from the holder's view; None if not seen.

    ``covered``: photo pixels towers hide; the card is read around them.
    ``tone``: the photo's tone exponent (the sites' fit): its colours are taken
    back to the nominal curve, so a flat camera's red cell is red enough.
    ``saturation``: how saturated the photo shows the block colours, against
    their nominal saturation (below 1: a muted camera); the red cell's
    threshold is lowered with it.
    """
    cfg = {**section("cards"), **(config or {})}
    return _read_seat_muted(image, pose, g, seat, cfg, _colour_lut(wb, tone),
                            _covered_u8(covered, image.shape[:2]), saturation, debug)


def _read_seat_muted(image: np.ndarray, pose: Pose, g: BoardGeometry, seat: Seat,
                     cfg: dict[str, Any], lut: tuple[np.ndarray, ...],
                     covered: np.ndarray | None, saturation: float,
                     debug: dict[str, Any] | None = None,
                     guessed: np.ndarray | None = None) -> CardRead | None:
    """:func:`_read_seat`, and for a photo taken for a muted one (its tops less
    saturated than ``saturation_keep``) whose card was refused as a red pattern
    (``max_red_share``), again at the red threshold of a camera that is not
    (``muted_retry``).

    A lamp or the tone fit can leave the tops less saturated than the red cells
    are: the lowered threshold then takes a red checked cloth's lighter squares
    too, and the card among them is refused as cloth (raycast mounted 15012: a
    card in plain view on a gingham cloth, the tops at 0.8 of their saturation,
    its grids a third red). A card refused for anything else is not looked at
    again: a stack seen in part would only get another chance to pass.
    """
    seen: dict[str, Any] = {} if debug is None else debug
    res = _read_seat(image, pose, g, seat, cfg, lut, covered, saturation, seen, guessed)
    most = cfg.get("max_red_share")
    if (res is None and cfg.get("muted_retry", False) and most is not None
            and saturation < float(cfg["saturation_keep"])
            and float(seen.get("red_share", 0.0)) > float(most)):
        res = _read_seat(image, pose, g, seat, cfg, lut, covered, 1.0, debug, guessed)
    return res


def _read_seat(image: np.ndarray, pose: Pose, g: BoardGeometry, seat: Seat,
               cfg: dict[str, Any], lut: tuple[np.ndarray, ...], covered: np.ndarray | None,
               saturation: float, debug: dict[str, Any] | None = None,
               guessed: np.ndarray | None = None) -> CardRead | None:
    """:func:`read_card` with what the four seats share made once by the caller: the
    merged config, the colour table (:func:`_colour_lut`) and ``covered`` as from
    :func:`_covered_u8`; ``guessed`` likewise, the pixels the guesses of sites left
    unseen would cover (:func:`_doubted_by_guesses`)."""
    s = float(cfg["px_per_mm"])
    sm = _seat_maps(pose, g, seat, s, float(cfg["margin_mm"]), image.shape[:2])
    if sm.seen < 0.2:
        return None  # before any pixel is resampled
    rect = cv2.remap(image, sm.mx, sm.my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    hidden = _hidden(sm, covered)
    inside = sm.inside
    a0, b0 = sm.corner
    # redness with plain channel arithmetic on the white-balanced image, each channel
    # white-balanced and toned through the table (the same values, a lookup each)
    b, gch, r = (cv2.LUT(ch, t) for ch, t in zip(cv2.split(rect), lut, strict=True))
    k = 1.0 if saturation >= float(cfg["saturation_keep"]) else max(
        saturation, float(cfg["min_saturation"]))
    grow = float(cfg["red_grow"])
    strong, weak = _red_masks(b, gch, r, inside, k, k * float(cfg["red_chroma"]), grow)
    shade: list[np.ndarray] = []
    sigma = float(cfg["shade_mm"]) * s

    def lum() -> np.ndarray:
        # the seat's brightness free of shade: made once, when a card hypothesis first
        # needs it, for the pairs, the grown pairs and the lone cells alike
        if not shade:
            grey = cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY).astype(np.float32)
            shade.append(_shade_free(grey, s, float(cfg["shade_mm"]), inside,
                                     None if sm.whole or sigma <= 0
                                     else sm.shade_weights(sigma)))
        return shade[0]

    # points of a hypothesis are checked against ``inside`` and ``hidden`` only
    # where they leave some out
    seen = None if sm.whole else inside
    # pairs are fitted without the red cells a tower cuts (a cut cell's centre moves
    # the pair's fit a cell off); a lone cell is judged on the printed pattern, cut or not
    cut = _cut_by_towers(hidden, float(cfg["tower_cut_mm"]) * s)
    keep = cfg.get("cut_whole_share")
    red, whole, centres = _red_centres(strong, s, g, cut, keep)
    found = _find_card(whole, lum, seen, hidden, (a0, b0), s, g, cfg, debug)
    if found is None and grow < 1.0:
        # a small far card's red cells, blurred into the grey grid around them, pass
        # only at their cores, smaller than a cell; grown to the pixels nearly as red
        # around them (hysteresis), each is a cell's size again. Only when the cores
        # alone read no card: grown, a cell can merge with red art beside it
        assert weak is not None
        red, grown, _ = _red_centres(_grown(weak.view(np.uint8), strong), s, g, cut, keep)
        found = _find_card(grown, lum, seen, hidden, (a0, b0), s, g, cfg, debug)
        least = cfg["weak_pair_margin"]
        if found is None and least is not None:
            # a card whose red cells are both a little paler than the threshold (a
            # lamp's wash over the paper): the two weak cells, one grid spacing apart,
            # judged on the printed pattern like any pair, but with the card's own
            # red art among the candidates it must win clearly
            red, faint, _ = _red_centres(weak, s, g, cut, keep)
            found = _find_card(faint, lum, seen, hidden, (a0, b0), s, g, cfg, debug)
            if found is not None and found[1] < float(least):
                found = None
    if found is not None and hidden is not None and not cfg["red_in_towers"] and _both_hidden(
            found, hidden, (a0, b0), s, g):
        found = None  # both red cells within towers' silhouettes: the towers' red
    if found is None and hidden is not None and float(cfg["single_min_score"]) < 1.0:
        found = _find_card_by_one(centres, lum, seen, hidden, (a0, b0), s, g, cfg)
    if debug is not None:
        debug.update({"rect": rect, "red": red})
    if found is None:
        return None
    read = CardRead(seat, found[2], found[0], found[1], found[3], found[4])
    if not _card_in_frame(read, pose, g, image.shape[:2]):
        return None  # too little of the grids in the photo to tell the cell
    if _doubted_by_guesses(read, sm, guessed, seen, hidden, (a0, b0), s, g, cfg):
        return None  # a tower the sites could not settle may stand over it
    most = cfg.get("max_red_share")
    share = _red_share(read, strong, inside, hidden, (a0, b0), s, g)
    if debug is not None:
        debug["red_share"] = share
    if most is not None and share > float(most):
        return None  # red all over what would be its grids: a red pattern, no card
    return read


def _doubted_by_guesses(read: CardRead, sm: _SeatMap, guessed: np.ndarray | None,
                        inside: np.ndarray | None, hidden: np.ndarray | None,
                        origin: tuple[float, float], s: float, g: BoardGeometry,
                        cfg: dict[str, Any]) -> bool:
    """Whether a card read by under ``guess_margin`` has ``guess_share`` or more of its
    window's clear points under the towers guessed for sites left unseen (``guessed``:
    uint8 photo mask, or None).

    Those towers are left out of ``covered`` (a phantom guess would hide a card in
    plain view), so where one does stand before the stack, its faces are read as
    the card's window: the fourteen raycast sets' four cards read a column off all
    lie under such a guess, won by 0.016-0.059, and of the 1,105 right ones, 30
    lie under one, the narrowest won by 0.061 (docs/vision-errors.md,
    seventy-eighth session). A card won by less than twice the margin a clear
    one needs is not read there."""
    share = cfg.get("guess_share")
    if share is None or guessed is None or read.margin >= float(cfg["guess_margin"]):
        return False
    doubt = _hidden(sm, guessed)
    if doubt is None:
        return False
    x, y, _, clear = _window_points(doubt.shape, origin, s, read.centre_ab[0],
                                    read.centre_ab[1], float(np.deg2rad(read.angle_deg)), g,
                                    inside, hidden)
    n = int(clear.sum())
    if n == 0:
        return False
    iy = np.clip(np.round(y).astype(np.int64), 0, doubt.shape[0] - 1)
    ix = np.clip(np.round(x).astype(np.int64), 0, doubt.shape[1] - 1)
    return float((doubt[iy, ix] & clear).sum()) / n >= float(share)


def _both_hidden(found: tuple[float, float, tuple[int, int], tuple[float, float], float],
                 hidden: np.ndarray, origin: tuple[float, float], s: float,
                 g: BoardGeometry) -> bool:
    """Whether both red cells of a pair read (its midpoint and angle, rectified seat
    pixels) lie under the towers' silhouettes: a tall tower's red blocks beyond the
    board's edge, read a little short, pass for a card's two cells there."""
    (am, bm), ang = found[3], np.deg2rad(found[4])
    mid = np.array(_seat_px(am, bm, origin, s))
    half = float(g.card.grid_offsets[1] - g.card.grid_offsets[0]) * s / 2
    step = half * np.array([np.cos(ang), -np.sin(ang)])
    return _under(hidden, mid - step) and _under(hidden, mid + step)


def _seat_px(a: Any, b: Any, origin: tuple[float, float], s: float) -> tuple[Any, Any]:
    """Seat-frame mm (``a``, ``b``: numbers or arrays) as rectified seat pixels (x, y):
    ``origin`` at pixel (0, 0), ``s`` pixels a mm, b growing upwards."""
    return (a - origin[0]) * s, (origin[1] - b) * s


def _under(hidden: np.ndarray, point: FloatArray) -> bool:
    """Whether the rectified seat pixel nearest ``point`` (x, y) is one a tower hides."""
    x, y = int(round(float(point[0]))), int(round(float(point[1])))
    return 0 <= x < hidden.shape[1] and 0 <= y < hidden.shape[0] and bool(hidden[y, x])


def _red_share(read: CardRead, red: np.ndarray, inside: np.ndarray,
               hidden: np.ndarray | None, origin: tuple[float, float], s: float,
               g: BoardGeometry) -> float:
    """The share of the read card's two grids (rectified seat pixels in the photo
    and not behind a tower) that is red. A card's grids are grey but for its two
    red cells (2 of 18); a pair of red squares of a checked tablecloth, taken
    for a card's, has the cloth's other red squares all over the grids."""
    poly = [_seat_px(pa, pb, origin, s) for pa, pb in _grids_ab(read, g, 0.0)]
    mask = np.zeros(red.shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(np.asarray(poly) * 16).astype(np.int32), 1,
                       lineType=cv2.LINE_8, shift=4)
    area = mask.astype(bool) & inside
    if hidden is not None:
        area &= ~hidden
    n = int(area.sum())
    return float((red & area).sum()) / n if n else 0.0


def _red_masks(b: np.ndarray, gch: np.ndarray, r: np.ndarray, inside: np.ndarray, k: float,
               threshold: float, grow: float) -> tuple[np.ndarray, np.ndarray | None]:
    """The red pixels (chroma over ``threshold``, the hue within ``k`` times its
    bounds, in the photo) of the white-balanced planes, and (``grow`` < 1) those
    ``grow`` times as red.

    The chroma is taken everywhere; the hue and the photo's edge only at the
    few pixels red enough for either mask, with the same operations on the same
    values as over the whole region (so the same bits).
    """
    # in place, the same operations in the same order as (r + g + b + 0.12) etc.
    ssum = r + gch
    ssum += b
    ssum += 0.12
    c1 = np.subtract(r, gch)
    c1 /= ssum
    idx = np.flatnonzero(c1 > (min(threshold, grow * threshold) if grow < 1.0 else threshold))
    c1_red = c1.ravel()[idx]
    c2_red = np.subtract(gch.ravel()[idx], b.ravel()[idx])
    c2_red /= ssum.ravel()[idx]
    hue_red = (c2_red < k * 0.2) & (c2_red > k * -0.25) & inside.ravel()[idx]
    strong = _scatter(idx, (c1_red > threshold) & hue_red, c1.shape)
    if grow >= 1.0:
        return strong, None
    return strong, _scatter(idx, (c1_red > grow * threshold) & hue_red, c1.shape)


def _scatter(idx: np.ndarray, values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A False mask of ``shape`` with ``values`` at the flat indices ``idx``."""
    out = np.zeros(int(np.prod(shape)), bool)
    out[idx] = values
    return out.reshape(shape)


def _grown(weak: np.ndarray, strong: np.ndarray) -> np.ndarray:
    """The connected regions of ``weak`` (uint8) that hold a ``strong`` pixel.

    Labelled over the bounding box of ``weak`` only (no region reaches past
    it): which regions are kept does not depend on how they are numbered.
    """
    out = np.zeros(weak.shape, bool)
    x, y, w, h = cv2.boundingRect(weak)
    if w == 0 or h == 0:
        return out
    crop = weak[y:y + h, x:x + w]
    n_weak, labels = cv2.connectedComponents(crop, connectivity=8)
    keep = np.zeros(n_weak, bool)
    keep[np.unique(labels[strong[y:y + h, x:x + w]])] = True
    keep[0] = False
    out[y:y + h, x:x + w] = keep[labels]
    return out


def _find_card(centres: list[FloatArray], lum: Callable[[], np.ndarray],
               inside: np.ndarray | None, hidden: np.ndarray | None,
               origin: tuple[float, float], s: float, g: BoardGeometry, cfg: dict[str, Any],
               debug: dict[str, Any] | None
               ) -> tuple[float, float, tuple[int, int], tuple[float, float], float] | None:
    """The best card a pair of the red cells at ``centres`` (rectified seat pixels)
    explains: (score, margin, cell, centre (a, b) mm, angle deg), or None when none
    qualifies. ``lum``: the seat's shade-free brightness, made when first asked.
    ``inside``, ``hidden``: None when the whole seat is in the photo, when no
    tower hides any of it."""
    a0, b0 = origin
    spacing = float(g.card.grid_offsets[1] - g.card.grid_offsets[0])
    best: tuple[float, float, tuple[int, int], tuple[float, float], float] | None = None
    best_ang, best_ncc = 0.0, np.zeros(9)  # the best pair's angle (rad) and pattern fits
    max_ang = np.deg2rad(g.card.angle_deg + 5)
    for i, j in _near_pairs(centres, s, spacing):
        ci, cj = centres[i], centres[j]
        d = (cj - ci) / s  # mm in the rectified frame (x = a, y = -b)
        if not 0.85 * spacing < np.hypot(*d) < 1.15 * spacing or d[0] <= 0:
            continue
        ang = np.arctan2(-d[1], d[0])  # rotation of the card's a-axis
        if abs(ang) > max_ang:
            continue
        mid = (ci + cj) / 2
        am = a0 + mid[0] / s
        bm = b0 - mid[1] / s
        scores, ncc, enough = _cell_scores(lum(), (a0, b0), s, am, bm, ang, g, inside,
                                           hidden, float(cfg["min_seen"]))
        order = np.argsort(-scores.ravel())
        # the best fit must have its pattern in view and the printed pattern in it:
        # a hypothesis whose card runs off the photo cannot be ruled out by one
        # that fits what is left, and a split between bright and dark alone
        # (red tower faces over the table) is not a card
        if not enough.flat[order[0]] or ncc.flat[order[0]] < float(cfg["min_pattern_ncc"]):
            continue
        top = float(scores.ravel()[order[0]])
        margin = top - float(scores.ravel()[order[1]])
        rc = divmod(int(order[0]), 3)
        if best is None or top > best[0]:
            best = (top, margin, (int(rc[0]), int(rc[1])), (am, bm), float(np.degrees(ang)))
            best_ang, best_ncc = ang, ncc
            if debug is not None:
                debug["scores"] = scores
                debug["ncc"] = ncc
    if debug is not None:
        debug.update({"blobs": len(centres), "best": best})
    if best is None:
        return None
    if best[1] < cfg["min_margin"]:
        # a near tie over the whole window (a card beneath sticking out beside the top
        # one, a textured table) stands when the grids' pattern alone tells the cell
        pattern = cfg.get("min_pattern_margin")
        if pattern is None:
            return None
        flat = best_ncc.ravel()
        k = 3 * best[2][0] + best[2][1]
        if float(flat[k]) - float(np.max(np.delete(flat, k))) < float(pattern):
            return None
    # a card seen in part must explain its window better: the fewer of its points
    # the photo shows, the likelier a chance pair of red things explains them
    need = float(cfg["min_grid_score"])
    partial = cfg.get("partial_grid_score")
    if partial is not None and best[0] < float(partial):
        clear = _window_points(lum().shape, origin, s, best[3][0], best[3][1], best_ang, g,
                               inside, hidden)[3]
        if float(clear.mean()) < float(cfg["whole_window"]):
            need = max(need, float(partial))
    return best if best[0] >= need else None


def _near_pairs(centres: list[FloatArray], s: float, spacing: float) -> list[tuple[int, int]]:
    """The ordered pairs (i, j), i != j, in the order of two loops over ``centres``,
    that can be a card's two red cells: j to the right of i and about ``spacing``
    mm from it. A loose sieve (0.8 to 1.2 spacings) over all pairs at once; the
    caller still applies its exact test to the few that pass."""
    if len(centres) < 2:
        return []
    c = np.asarray(centres, np.float64)
    d = (c[None, :, :] - c[:, None, :]) / s
    sq = d[..., 0] ** 2 + d[..., 1] ** 2
    near = (d[..., 0] > 0) & (sq > (0.8 * spacing) ** 2) & (sq < (1.2 * spacing) ** 2)
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(near), strict=True)]


def _red_centres(red: np.ndarray, s: float, g: BoardGeometry, cut: np.ndarray | None,
                 whole_share: float | None = None
                 ) -> tuple[np.ndarray, list[FloatArray], list[FloatArray]]:
    """The opened red mask and the centres of its cell-sized red regions: those that do
    not touch ``cut`` (the pixels a tower hides, grown: :func:`_cut_by_towers`), and
    all of them. With ``whole_share``, a region touching ``cut`` still counts as whole
    when it is as large as the largest region that does not touch it, to that share
    in area and in width and height: a tower beside a red cell need not cut it."""
    red = cv2.morphologyEx(red.astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    n, labels, stats, cent, box = _components(red)
    cell = g.card.cell
    area = (cell * s) ** 2
    small = [k for k in range(1, n)
             if 0.3 * area < stats[k, cv2.CC_STAT_AREA] < 1.6 * area
             and max(stats[k, cv2.CC_STAT_WIDTH], stats[k, cv2.CC_STAT_HEIGHT])
             < 1.9 * cell * s]
    large = [k for k in range(1, n) if k not in small and stats[k, cv2.CC_STAT_AREA] > 0.3 * area]
    centres = [cent[k] for k in small]
    whole = centres
    if cut is not None and small:
        # a red cell a tower's silhouette cuts shows only its uncovered part, whose
        # centre is not the cell's: a card fitted to it lies a cell off
        x, y, w, h = box
        touching = set(np.unique(labels[cut[y:y + h, x:x + w]]).tolist())
        free = [k for k in small if k not in touching]
        if whole_share is not None and free:
            # the largest cell no tower comes near: what a whole cell looks like here
            size = [cv2.CC_STAT_AREA, cv2.CC_STAT_WIDTH, cv2.CC_STAT_HEIGHT]
            least = float(whole_share) * stats[free][:, size].max(axis=0)
            free += [k for k in small if k in touching and bool(np.all(stats[k, size] >= least))]
        whole = [cent[k] for k in small if k in free]
    if not large:
        return red, whole, centres  # no region to look for cells in
    # the cells are looked for around the large regions only (see _cells_in)
    x, y, w, h = box
    pad = _cell_kernels(cell * s)[1] + 2  # over the widest filter _cells_in applies
    y0, x0 = max(0, y - pad), max(0, x - pad)
    y1, x1 = min(red.shape[0], y + h + pad), min(red.shape[1], x + w + pad)
    big = np.zeros((y1 - y0, x1 - x0), bool)
    big[y - y0:y - y0 + h, x - x0:x - x0 + w] = np.isin(labels, large)
    inner = _cells_in(big, cell * s, (x0, y0))
    return red, whole + inner, centres + inner


def _cut_by_towers(hidden: np.ndarray | None, reach_px: float) -> np.ndarray | None:
    """The seat pixels within ``reach_px`` of a tower's silhouette (``hidden``), or None
    (no tower there, or ``reach_px`` 0: red cells a tower cuts are kept)."""
    if hidden is None or reach_px <= 0:
        return None
    k = 2 * int(np.ceil(reach_px)) + 1
    grown: np.ndarray = cv2.dilate(hidden.view(np.uint8), np.ones((k, k), np.uint8)) > 0
    return grown


def _components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, np.ndarray,
                                           tuple[int, int, int, int]]:
    """``cv2.connectedComponentsWithStats`` of a uint8 mask (8-connected), labelled
    over the box that holds its pixels only: the red is a few cells of a wide
    region. Returns the count, the labels within the box, the stats and centroids
    in the whole mask's pixels, and the box (x, y, w, h).

    The box starts on an even row and column, so the labeller's 2 x 2 blocks
    fall as over the whole mask and number the regions in the same order. The
    centroids are the whole mask's to the bit: each is its pixel sum over the
    area, and the sum within the box (an integer, recovered exactly from its
    centroid) is moved by the box corner times the area before dividing.
    """
    x, y, w, h = cv2.boundingRect(mask)
    if w == 0 or h == 0:  # no region: the background's label alone
        return 1, np.zeros((0, 0), np.int32), np.zeros((1, 5), np.int32), np.zeros((1, 2)), (
            0, 0, 0, 0)
    w, h = w + x % 2, h + y % 2
    x, y = x - x % 2, y - y % 2
    n, labels, stats, cent = cv2.connectedComponentsWithStats(
        mask[y:y + h, x:x + w], connectivity=8)
    if x or y:
        stats = stats.copy()
        stats[1:, cv2.CC_STAT_LEFT] += x
        stats[1:, cv2.CC_STAT_TOP] += y
        area = stats[:, cv2.CC_STAT_AREA].astype(np.float64)[:, None]
        sums = np.rint(cent * area)
        cent = (sums + area * np.array([x, y], np.float64)) / area
    return n, labels, stats, cent, (x, y, w, h)


def _find_card_by_one(centres: list[FloatArray], lum: Callable[[], np.ndarray],
                      inside: np.ndarray | None, hidden: np.ndarray, origin: tuple[float, float],
                      s: float, g: BoardGeometry, cfg: dict[str, Any]
                      ) -> tuple[float, float, tuple[int, int], tuple[float, float], float] | None:
    """The card one red cell explains when a tower hides the other one.

    A card has its red cell in both grids; with a tower over one of them the
    pair search has nothing to pair. The lone cell is taken as either grid's,
    its partner put under the tower at each angle the stack may lie at
    (``single_angle_step_deg``), and the card read as the pair's would be. Only
    where the partner's place is hidden by a tower, and never from a red cell
    whose centre lies under a tower's silhouette: a lone red cell in plain view is
    no card's, and red within a tower is the tower's. The winning cell must beat
    every other cell, at any angle and in either grid, by ``single_min_margin``
    (more than a pair's ``min_margin``: many more hypotheses, more of them fit by
    chance) and score ``single_min_score``.
    """
    a0, b0 = origin
    if not centres:
        return None
    spacing = float(g.card.grid_offsets[1] - g.card.grid_offsets[0])
    max_ang = g.card.angle_deg + 5
    step = float(cfg["single_angle_step_deg"])
    angles = np.deg2rad(np.arange(-max_ang, max_ang + 1e-6, step))
    best: tuple[float, float, tuple[int, int], tuple[float, float], float] | None = None
    per_cell = np.full(9, -np.inf)  # each cell's best score over every hypothesis
    for ci in centres:
        if not cfg["red_in_towers"] and _under(hidden, ci):
            # red under a tower's silhouette is the tower's: a tall tower's red block,
            # a storey past the height read, is no card's cell in view
            continue
        for side in (1.0, -1.0):  # the lone cell is the left grid's, or the right one's
            for ang in angles:
                cj = ci + side * spacing * s * np.array([np.cos(ang), -np.sin(ang)])
                if not _under(hidden, cj):
                    continue
                mid = (ci + cj) / 2
                am, bm = a0 + mid[0] / s, b0 - mid[1] / s
                scores, ncc, enough = _cell_scores(lum(), (a0, b0), s, am, bm, float(ang), g,
                                                   inside, hidden, float(cfg["min_seen"]))
                flat = np.where(enough.ravel() & (ncc.ravel() >= float(cfg["min_pattern_ncc"])),
                                scores.ravel(), -np.inf)
                per_cell = np.maximum(per_cell, flat)
                k = int(np.argmax(flat))
                if np.isfinite(flat[k]) and (best is None or flat[k] > best[0]):
                    rc = divmod(k, 3)
                    best = (float(flat[k]), 0.0, (int(rc[0]), int(rc[1])), (am, bm),
                            float(np.degrees(ang)))
    if best is None:
        return None
    k = 3 * best[2][0] + best[2][1]
    margin = best[0] - float(np.max(np.delete(per_cell, k)))
    if best[0] < float(cfg["single_min_score"]) or margin < float(cfg["single_min_margin"]):
        return None
    return (best[0], margin, *best[2:])


def _cell_kernels(cell_px: float) -> tuple[int, int]:
    """:func:`_cells_in`'s box sizes: a cell's core, and the ring around it."""
    k = max(3, int(round(0.7 * cell_px)))
    return k, max(k + 2, int(round(1.6 * cell_px)))


def _cells_in(mask: np.ndarray, cell_px: float,
              offset: tuple[int, int] = (0, 0)) -> list[FloatArray]:
    """Centres of red-cell-sized squares inside red regions too large to be one cell.

    A red cell printed next to red artwork merges with it into one region; the
    cell is still a square of red with little red around it on most sides.

    ``mask`` may be a part of the seat's mask, at ``offset`` (x, y) in it, with
    a clear border wider than the filters below (or at the seat's own edge):
    the box sums of a 0/1 mask are exact counts, so the part gives the very
    centres the whole would, moved by ``offset``.
    """
    if not mask.any():
        return []
    m = mask.astype(np.float32)
    k, k2 = _cell_kernels(cell_px)
    inner = cv2.boxFilter(m, -1, (k, k))
    outer = cv2.boxFilter(m, -1, (k2, k2))
    ring = (outer * k2 * k2 - inner * k * k) / float(k2 * k2 - k * k)
    peak = inner >= cv2.dilate(inner, np.ones((k, k), np.uint8))
    ys, xs = np.nonzero((inner >= 0.85) & (ring < 0.5) & peak)
    order = np.argsort(ring[ys, xs])
    out: list[FloatArray] = []
    for y, x in zip(ys[order], xs[order], strict=True):
        p = np.array([x + offset[0], y + offset[1]], np.float64)
        if all(np.hypot(*(p - q)) > 0.8 * cell_px for q in out):
            out.append(p)
        if len(out) >= 8:
            break
    return out


def grid_corners(read: CardRead, g: BoardGeometry, pad: float = 1.0) -> FloatArray:
    """(4, 3) board-mm corners of the part of the read card that carries both grids."""
    origin, ax, bx = _seat_frame(g, read.seat)
    out = []
    for pa, pb in _grids_ab(read, g, pad):
        xy = origin + pa * ax + pb * bx
        out.append((xy[0], xy[1], 0.0))
    return np.asarray(out)


def _grids_ab(read: CardRead, g: BoardGeometry, pad: float) -> list[tuple[float, float]]:
    """The four corners, in the seat frame (a, b mm), of the part of the read card
    that carries both grids, ``pad`` mm wider all round."""
    cell = g.card.cell
    x0 = min(g.card.grid_offsets) - 1.5 * cell - pad
    x1 = max(g.card.grid_offsets) + 1.5 * cell + pad
    y0, y1 = g.card.top_offset - pad, g.card.top_offset + 3 * cell + pad
    r, c = read.cell
    rx = (c - 1) * cell  # the red cell's centre, card-local (x right, y down from the top)
    ry = g.card.top_offset + cell / 2 + r * cell
    ang = np.deg2rad(read.angle_deg)
    ua = np.array([np.cos(ang), np.sin(ang)])
    ub = np.array([-np.sin(ang), np.cos(ang)])
    out = []
    for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1)):
        out.append((float(read.centre_ab[0] + (x - rx) * ua[0] - (y - ry) * ub[0]),
                    float(read.centre_ab[1] + (x - rx) * ua[1] - (y - ry) * ub[1])))
    return out


def _card_in_frame(read: CardRead, pose: Pose, g: BoardGeometry, shape: tuple[int, ...],
                   min_fraction: float = 0.75) -> bool:
    """Most of the card's two grids lie inside the photo.

    Only the grids are read (both red cells were found, and the printed
    pattern is compared where the photo has it): a card whose lower part
    runs off the photo reads as surely as a whole one.
    """
    pix = project_fast(pose, grid_corners(read, g)).astype(np.float32)
    h, w = shape[:2]
    frame = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    full = abs(cv2.contourArea(pix))
    if full < 1.0:
        return False
    area, _ = cv2.intersectConvexConvex(pix, frame)
    return bool(area / full >= min_fraction)


#: regions of the scoring window: the printed pattern, off the card, the card below it
_PATTERN, _OFF, _BELOW = 0, 1, 2


@lru_cache(maxsize=8)
def _card_window(card: CardLayout, step: float = 0.75
                 ) -> tuple[FloatArray, FloatArray, FloatArray, np.ndarray]:
    """One lattice around the red pair, and what each of the nine hypotheses puts there.

    Returns the lattice (x right, y down, mm from the red pair's midpoint) and, per
    hypothesis (r, c) in row-major order, the predicted brightness and the region
    of every point. Every hypothesis is judged on the same points: one a cell
    off must also explain the part of the card it leaves out (the card's top
    edge, its frame, the grid's last line), not just the part it covers.
    Cached per card layout; callers must not modify the arrays.
    """
    cell = card.cell
    half_w = card.size[0] / 2
    fr = card.frame
    bottom = card.top_offset + 3 * cell + 4.0  # the pattern: down to just below the grids
    rs, cs = np.meshgrid(np.arange(3), np.arange(3), indexing="ij")
    rx = ((cs.ravel() - 1) * cell)[:, None]  # the red pair's midpoint, card-local
    ry = (card.top_offset + cell / 2 + rs.ravel() * cell)[:, None]
    us = np.arange(-half_w - 2.0 - cell, half_w + 2.0 + cell + 1e-6, step)
    ws = np.arange(-2.0 - float(ry.max()), bottom - float(ry.min()) + 1e-6, step)
    U, V = np.meshgrid(us, ws)
    u = U.ravel()
    w = V.ravel()
    X = u[None, :] + rx  # card-local, per hypothesis
    Y = w[None, :] + ry
    off = (Y < 0) | (np.abs(X) > half_w)
    region = np.where(off, _OFF, np.where(Y > bottom, _BELOW, _PATTERN)).astype(np.int8)
    pred = np.ones_like(X)
    if fr > 0.5:  # the dark frame, and a blurred step into the blank card
        rim = np.minimum(Y, half_w - np.abs(X))
        pred = np.where(rim < fr - 0.25, 0.3, np.where(rim < fr + 0.5, 0.65, 1.0))
    for go in card.grid_offsets:
        gx = X - (go - 1.5 * cell)  # from the grid's left edge
        gy = Y - card.top_offset  # from the grid's top edge
        grid = (gx >= 0) & (gx <= 3 * cell) & (gy >= 0) & (gy <= 3 * cell)
        line = (np.minimum(gx % cell, cell - gx % cell) < 0.7) | (
            np.minimum(gy % cell, cell - gy % cell) < 0.7)
        pred = np.where(grid, np.where(line, 0.3, 0.85), pred)
        red = (np.abs(X - (go + rx)) < cell / 2 - 0.7) & (np.abs(Y - ry) < cell / 2 - 0.7)
        pred = np.where(red, 0.5, pred)
    for a in (u, w, pred, region):
        a.setflags(write=False)
    return u, w, pred, region


@lru_cache(maxsize=8)
def _card_masks(card: CardLayout) -> tuple[FloatArray, FloatArray, FloatArray,
                                            tuple[FloatArray, FloatArray]]:
    """:func:`_card_window`'s regions as 0/1 weights (pattern, pattern times the
    prediction and its square, then off the card and below the grids), so the
    nine hypotheses' sums are matrix products."""
    _, _, pred, region = _card_window(card)
    m = (region == _PATTERN).astype(np.float64)
    out = (m, m * pred, m * pred * pred,
           ((region == _OFF).astype(np.float64), (region == _BELOW).astype(np.float64)))
    for a in (*out[:3], *out[3]):
        a.setflags(write=False)
    return out


@lru_cache(maxsize=8)
def _card_sums(card: CardLayout) -> tuple[FloatArray, tuple[FloatArray, ...], FloatArray,
                                          FloatArray]:
    """The sums :func:`_cell_scores` takes over every window point when all are clear
    (the common case: the card wholly in the photo, no tower before it): the
    pattern's and each flat region's point counts (exact in any order), and the
    prediction and its square summed by the very product the general case makes
    (``mp @ c`` with ``c`` all ones), so the fast path gives the same bits."""
    m, mp, mpp, flat = _card_masks(card)
    ones = np.ones(m.shape[1])
    out = (m.sum(axis=1), tuple(f.sum(axis=1) for f in flat), mp @ ones, mpp @ ones)
    for a in (out[0], *out[1], out[2], out[3]):
        a.setflags(write=False)
    return out


def _shade_free(grey: np.ndarray, s: float, shade_mm: float,
                inside: np.ndarray | None = None,
                weights: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Each pixel against the mean brightness around it (``shade_mm`` > 0), so a shadow
    edge across the card (a tower's, a hand's) does not outweigh the printed grid.

    Where the region runs off the photo (``inside`` false) the mean is taken over
    the photo only: the black fill outside would brighten the card beside it.
    ``weights``: ``inside`` as float and its blur floored at 1e-3, when already
    made (:meth:`_SeatMap.shade_weights`: they depend on the pose alone).
    """
    sigma = shade_mm * s
    if sigma > 0:
        mean: np.ndarray
        if inside is not None and not inside.all():
            m, norm = weights if weights is not None else (
                inside.astype(np.float32),
                np.maximum(cv2.GaussianBlur(inside.astype(np.float32), (0, 0), sigma), 1e-3))
            mean = cv2.GaussianBlur(grey * m, (0, 0), sigma) / norm
        else:
            mean = cv2.GaussianBlur(grey, (0, 0), sigma)
        np.maximum(mean, 1.0, out=mean)  # a fresh array: floored and divided in place
        out: np.ndarray = np.divide(grey, mean, out=mean)
        return out
    return grey / max(float(grey.max()), 1.0)


def _window_points(shape: tuple[int, ...], origin: tuple[float, float], s: float,
                   am: float, bm: float, ang: float, g: BoardGeometry,
                   inside: np.ndarray | None, hidden: np.ndarray | None,
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where :func:`_card_window`'s points fall for the red pair's midpoint (``am``,
    ``bm``) and angle: rectified seat pixels (x, y), whether each is in the photo
    (``ok``), and whether it is in the photo and no tower hides it (``clear``)."""
    u, w, _, _ = _card_window(g.card)
    ca, sa = np.cos(ang), np.sin(ang)
    H, W = shape[:2]
    pa = am + u * ca + w * sa
    pb = bm + u * sa - w * ca
    xs, ys = _seat_px(pa, pb, origin, s)
    x, y = xs.astype(np.float32), ys.astype(np.float32)
    ok = (x >= 0) & (x <= W - 1) & (y >= 0) & (y <= H - 1)
    part = inside is not None and not inside.all()
    covered = hidden is not None and hidden.any()
    if part or covered:  # the nearest pixel of each point, where it is looked up
        iy = np.clip(np.round(y).astype(np.int64), 0, H - 1)
        ix = np.clip(np.round(x).astype(np.int64), 0, W - 1)
    if part:
        assert inside is not None
        ok &= inside[iy, ix]
    clear = ok
    if covered:
        assert hidden is not None
        clear = ok & ~hidden[iy, ix]
    return x, y, ok, clear


def _cell_scores(lum: np.ndarray, origin: tuple[float, float], s: float,
                 am: float, bm: float, ang: float, g: BoardGeometry,
                 inside: np.ndarray | None = None, hidden: np.ndarray | None = None,
                 min_seen: float = 0.3) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """(3, 3) how well each red-cell hypothesis explains the card around the red pair;
    (3, 3) how its printed pattern alone correlates; (3, 3) whether it can win.

    Hypothesis (r, c) fixes where the card's edges and centre line are relative
    to the red pair. Over one window for all nine, it predicts the printed
    pattern on the card's top part (the frame, light cells, dark grid lines,
    the red cells, blank card around and between the grids), and only a flat
    level, its own, off the card and on the card below the grids. The score is
    the square root of the share of the window's variance so explained (the
    normalised correlation when the pattern covers the whole window). A
    hypothesis one cell off predicts grid where there is blank card, and must
    call the card's real top edge, frame or last grid line "off the card" or
    "below the grids", where nothing but a flat level is allowed. Points off
    the photo (``inside`` false) are left out; so are points a tower hides
    (``hidden``); a hypothesis can win only with ``min_seen`` of its pattern
    clear of towers and 70% of it in the photo.
    """
    x, y, ok, clear = _window_points(lum.shape[:2], origin, s, am, bm, ang, g, inside, hidden)
    v = cv2.remap(lum, x[None, :], y[None, :], cv2.INTER_LINEAR)[0].astype(np.float64)
    out = np.full(9, -np.inf)
    ncc = np.full(9, -np.inf)
    enough = np.zeros(9, bool)
    c = clear.astype(np.float64)
    # every point clear (the card in view, no tower before it): the sums over the
    # clear points that do not involve the photo are the layout's, made once
    every = bool(clear.all())
    n = float(c.sum())
    vc = v * c
    sst = float(vc @ v) - float(vc.sum()) ** 2 / max(n, 1.0)
    if n < 3 or sst <= 1e-12:
        return out.reshape(3, 3), ncc.reshape(3, 3), enough.reshape(3, 3)
    # per hypothesis and region, sums over the clear points: all nine at once
    m, mp, mpp, flat = _card_masks(g.card)
    n_pat, n_flat, p_all, pp_all = _card_sums(g.card)
    sse = np.zeros(9)
    for f, nf_all in zip(flat, n_flat, strict=True):
        nf = nf_all if every else f @ c
        s1 = f @ vc
        sse += np.where(nf > 0, f @ (vc * v) - s1 * s1 / np.maximum(nf, 1.0), 0.0)
    nm = n_pat if every else m @ c
    s_v = m @ vc
    s_p = p_all if every else mp @ c
    svv = m @ (vc * v) - s_v * s_v / np.maximum(nm, 1.0)
    spp = (pp_all if every else mpp @ c) - s_p * s_p / np.maximum(nm, 1.0)
    svp = mp @ vc - s_v * s_p / np.maximum(nm, 1.0)
    sse += svv - np.where(svp > 0, svp * svp / np.maximum(spp, 1e-12), 0.0)
    usable = nm >= 0.1 * n_pat
    out[usable] = np.sqrt(np.maximum(0.0, 1.0 - sse[usable] / sst))
    ncc[usable] = (svp / np.maximum(np.sqrt(np.maximum(svv * spp, 0.0)), 1e-9))[usable]
    # the pattern's points in the photo: counts, exact in any order
    in_photo = nm if clear is ok else m @ ok.astype(np.float64)
    enough[:] = usable & (in_photo >= 0.7 * n_pat) & (nm >= min_seen * n_pat)
    return out.reshape(3, 3), ncc.reshape(3, 3), enough.reshape(3, 3)


def read_cards(image: np.ndarray, pose: Pose, g: BoardGeometry, wb: WhiteBalance,
               config: dict[str, Any] | None = None, covered: np.ndarray | None = None,
               tone: float = 1.0, saturation: float = 1.0,
               guessed: np.ndarray | None = None) -> dict[Seat, tuple[int, int]]:
    """Every seat whose played stack is visible: seat -> (r, c) of its top card.
    ``covered``: photo pixels the towers read hide; ``guessed``: those the guesses
    of the sites left unseen would (a narrow card there is not read)."""
    out: dict[Seat, tuple[int, int]] = {}
    cfg = {**section("cards"), **(config or {})}
    # once for the four seats
    lut = _colour_lut(wb, tone)
    cov = _covered_u8(covered, image.shape[:2])
    guess = _covered_u8(guessed, image.shape[:2])
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        res = _read_seat_muted(image, pose, g, seat, cfg, lut, cov, saturation, None, guess)
        if res is not None:
            out[seat] = res.cell
    return out
