"""How many storeys the block just built has, from the still scenes before and after.

Read from one frame, a tower one storey taller with its top a few
millimetres nearer the camera puts its top face where the true one is. Between
two still scenes of a live table the block is the only thing that changed,
and it changed as a whole: its image runs from its foot on the old top to its
own top, wherever it was set down. So each hypothesis (storeys, colour, a
placement a few mm and degrees off) is a projected prism, scored by the
pixels inside it that changed and look like that block colour, less those
that did not. The old tower's height comes from the game record, and the
towers of the record nearer the camera mask what they hide.

Thresholds are in the config's ``new_block`` section.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from companion.rules import Site, SiteView
from companion.rules.board import MAX_STOREYS
from companion.vision.colours import (
    FACE_INTENSITY_SIGMA,
    BlockColour,
    ColourModel,
    WhiteBalance,
    estimate_white_balance,
    features,
)
from companion.vision.geometry import (
    BoardGeometry,
    Pose,
    board_geometry,
    fill_convex,
    steep_storey_limit,
    storey_shift_mm,
)
from companion.vision.settings import section


@dataclass(frozen=True)
class BlockFit:
    """The best explanation of the change at one site."""

    storeys: int
    colour: str
    score: float
    margin: float  # over the best other storey count, relative to the best score
    scores: Mapping[tuple[str, int], float] = field(default_factory=dict, repr=False)

    def explains(self, colour: str | None, storeys: int, within: float) -> bool:
        """Whether (colour, storeys) scores within ``within`` (relative) of the best."""
        s = self.scores.get((colour or "", storeys))
        return s is not None and (self.score - s) / max(abs(self.score), 1.0) < within


def _option(config: Mapping[str, Any] | None, key: str) -> Any:
    return (config or {}).get(key, section("new_block")[key])


def settle(fit: BlockFit, read: SiteView | None, base_storeys: int,
           config: Mapping[str, Any] | None = None,
           read_scores: Mapping[tuple[int, str], float] | None = None,
           sure: float | None = None, steep: bool = False,
           ) -> tuple[SiteView, bool, bool]:
    """The tower after the build, from the fit and what the photo read there.

    With the reader's own scores for the heights it weighed there
    (``read_scores``: (height, colour) -> score, :meth:`Reading.hypotheses`),
    both are weighed together (:func:`settled_totals`), doubtful under ``sure``
    points of lead (default ``check_margin``, the live table's mark for the
    players; a replay counts a fit sure from ``weighed_doubt``, the evidence it
    weighs, which the players' stricter mark would withhold). Doubtful too where
    the view is ``steep`` there (:func:`steep_site`) and the fit and the reading
    each put another storey count first (:func:`split`). Without them the reading stands
    where the fit scores it within ``keep_reading`` of its best (a near tie is
    not overruled), else the fit decides. Also whether the result is doubtful
    and whether it differs from the reading (the fit decided it).
    """
    totals = settled_totals(fit, read_scores, base_storeys, config)
    if totals is not None:
        storeys, colour, margin = _weigh(totals)
        view = SiteView(base_storeys + storeys, colour)
        need = float(_option(config, "check_margin")) if sure is None else sure
        doubtful = margin < need or steep_split(fit, read_scores, base_storeys, view, steep,
                                                config)
        return view, doubtful, view != read
    grown = read.height - base_storeys if read is not None else 0
    if read is not None and 1 <= grown <= MAX_STOREYS \
            and fit.explains(read.owner, grown, float(_option(config, "keep_reading"))):
        return read, grown != fit.storeys, False
    return (SiteView(base_storeys + fit.storeys, fit.colour),
            fit.margin < float(_option(config, "doubt_margin")), True)


def split(fit: BlockFit, read_scores: Mapping[tuple[int, str], float] | None,
          base_storeys: int, colour: str) -> bool:
    """Whether the fit and the reading each put another storey count first.

    Seen steeply, a storey moves a top by a pixel or two. The fit then counts a
    block's shadow, lit by another lamp in another hue, as plastic of a taller
    block, and the reading sees a top that a storey more or less barely moves;
    the count the two weighed together put first may win by a clear margin and
    be wrong (ray-traced stand seed 94: six one-storey blocks as twos). Measured
    on 39 ray-traced stand games (624 builds): where the view is steep
    (:func:`steep_site`), such a split marks 7 of the 12 wrong builds nobody was
    asked about, for 15 more marks on right ones (docs/vision-errors.md,
    seventy-second session).
    """
    if not read_scores or not fit.scores:
        return False
    mine = {k: v for k, v in read_scores.items() if k[1] == colour} or read_scores
    height, _ = max(mine, key=lambda k: mine[k])
    fits = {k: v for (c, k), v in fit.scores.items() if c == colour}
    return height - base_storeys != max(fits, key=lambda k: fits[k])


def steep_split(fit: BlockFit, read_scores: Mapping[tuple[int, str], float] | None,
                base_storeys: int, view: SiteView, steep: bool,
                config: Mapping[str, Any] | None = None) -> bool:
    """Whether the tower ``view`` that :func:`settle` weighed is doubtful for a steep
    view alone: ``steep`` there (:func:`steep_site`), the fit weighed with the
    reader's scores, and the two rank apart (:func:`split`). The live table marks
    it through :func:`settle`; a replay marks it and still counts the fit."""
    return bool(steep and read_scores and weighs(config) and view.owner is not None
                and split(fit, read_scores, base_storeys, view.owner))


def steep_site(pose: Pose, site: Site, base_storeys: int,
               config: Mapping[str, Any] | None = None,
               geometry: BoardGeometry | None = None) -> bool:
    """Whether a block's first storey on the tower ``base_storeys`` tall at ``site``
    moves its top by less than a block may stand off its site, as the camera sees it
    (:func:`~companion.vision.geometry.storey_shift_mm` under ``split_storey_mm``;
    null: the site reader's own limit for a height it cannot tell, its sites
    section's ``steep_storey_mm`` or ``steep_jitter_factor`` times the profile's
    jitter). There the fit may trade a storey for a placement a few mm off."""
    g = geometry or board_geometry()
    value = _option(config, "split_storey_mm")
    sites = section("sites")
    limit = (steep_storey_limit(g, sites["steep_storey_mm"], sites["steep_jitter_factor"])
             if value is None else float(value))
    return storey_shift_mm(g, pose.camera_centre, site, base_storeys + 1) < limit


def weighs(config: Mapping[str, Any] | None = None) -> bool:
    """Whether :func:`settle` weighs the reader's scores it is given (else the fit
    alone, with the reading kept where the fit nearly agrees)."""
    return float(_option(config, "reading_weight")) > 0


def settled_totals(fit: BlockFit, read_scores: Mapping[tuple[int, str], float] | None,
                   base: int, config: Mapping[str, Any] | None = None,
                   ) -> dict[tuple[int, str], float] | None:
    """The weighed totals :func:`settle` decides by, or None where it does not
    weigh (no reader scores, or ``reading_weight`` 0)."""
    return doubt_totals(fit, read_scores, base, config) if read_scores else None


def doubt_totals(fit: BlockFit, read_scores: Mapping[tuple[int, str], float] | None,
                 base: int, config: Mapping[str, Any] | None = None,
                 ) -> dict[tuple[int, str], float] | None:
    """What the live table keeps of a doubtful build to weigh it again later
    (:func:`reconsider`): :func:`settled_totals`, or where the reader listed no
    heights there (a site seen only past a nearer tower) the fit alone, so that
    the block built on it can still revise it. None where nothing is weighed."""
    if not weighs(config):
        return None
    return weighed_totals(fit, read_scores, base, float(_option(config, "reading_weight")),
                          float(_option(config, "reading_unlisted")))


def _weigh(total: Mapping[tuple[int, str], float]) -> tuple[int, str, float]:
    """The (storeys, colour) the fit and the reading agree on best, and its margin.

    Each explains the same block differently: the fit by the pixels that
    changed (its foot and top move together, but a storey shows only as a thin
    strip seen from above), the reading by the top's place and faces in the
    photo alone. Neither is sure where a storey moves a top by little; wrong
    in different ways, they are right together more often (docs/vision-errors.md,
    twenty-fourth session).
    """
    (storeys, colour), best = max(total.items(), key=lambda kv: kv[1])
    others = [v for (k, _), v in total.items() if k != storeys]
    return storeys, colour, best - max(others) if others else math.inf


def weighed_totals(fit: BlockFit, read_scores: Mapping[tuple[int, str], float] | None,
                   base: int, weight: float, unlisted: float, scale: float | None = None,
                   ) -> dict[tuple[int, str], float]:
    """Every (storeys, colour) of the fit, weighed with the reading.

    Fit scores count in percent of the best fit (``scale``: points per fit
    score instead, so that fits on different towers under the block compare),
    the reader's in its own points times ``weight`` (only differences matter:
    the best of each is no offset); a height the reader did not list scores
    ``unlisted`` under its lowest listed one, and a height it listed in another
    colour only ``unlisted`` under that. Without reader scores, the fit alone.

    The reader lists each height in the colour its top looks most like. A red
    top in shade looks black: the reader's best at the right height was a black
    3, and the fit's red 3, with nothing of the reader's own, lost to a red 2 it
    listed (a ray-traced stand, docs/vision-errors.md, seventy-first session).
    """
    if scale is None:
        scale = 100.0 / max(abs(max(fit.scores.values())), 1.0)
    if not read_scores:
        return {(k, c): v * scale for (c, k), v in fit.scores.items()}
    floor = min(read_scores.values()) - unlisted
    at_height: dict[int, float] = {}
    for (h, _), v in read_scores.items():
        at_height[h] = max(at_height.get(h, -math.inf), v)

    def read(height: int, colour: str) -> float:
        listed = read_scores.get((height, colour))
        if listed is not None:
            return listed
        other = at_height.get(height)
        return floor if other is None else other - unlisted

    return {(k, c): v * scale + weight * read(base + k, c) for (c, k), v in fit.scores.items()}


def contradicts(fit: BlockFit, read_scores: Mapping[tuple[int, str], float] | None,
                base: int, allowed: Collection[tuple[int, str]],
                config: Mapping[str, Any] | None = None) -> bool:
    """Whether the new block the fit and the reading make of the change on the
    recorded tower ``base`` storeys tall (as :func:`settle` weighs them) is one
    the rules refuse there: then the doubtful block under it is weighed again
    (:func:`reconsider`). A block of the same colour, whose foot the fit tells
    worst, never contradicts the one under it: a player may stack any sizes.
    """
    totals = weighed_totals(fit, read_scores, base, float(_option(config, "reading_weight")),
                            float(_option(config, "reading_unlisted")))
    return max(totals, key=lambda k: totals[k]) not in allowed


def reconsider(first: Mapping[tuple[int, str], float], recorded: tuple[int, str],
               fits: Mapping[tuple[int, str], BlockFit],
               allowed: Mapping[tuple[int, str], Collection[tuple[int, str]]],
               read_scores: Mapping[tuple[int, str], float] | None, base: int,
               config: Mapping[str, Any] | None = None) -> tuple[int, str] | None:
    """The earlier, doubtful block at a site that explains both builds there best,
    when it is not the one recorded; else None.

    Asked only where the rules contradict the record (:func:`contradicts`).
    ``first``: the weighed totals of the
    earlier block ((storeys, colour) -> :func:`weighed_totals`); ``fits``: for
    each earlier block looked at (the recorded one among them), the new block
    fitted on the tower that block makes; ``allowed``: the new blocks the rules
    allow on it; ``base``: the tower under the earlier block. Each earlier
    block scores its total plus the best allowed new block's, the fits counted
    on one scale; another block must win by ``revise_margin``.
    """
    if recorded not in fits or recorded not in first:
        return None
    weight = float(_option(config, "reading_weight"))
    unlisted = float(_option(config, "reading_unlisted"))
    scale = 100.0 / max(max(abs(max(f.scores.values())) for f in fits.values()), 1.0)
    joint: dict[tuple[int, str], float] = {}
    for key, fit in fits.items():
        if key not in first:
            continue
        second = weighed_totals(fit, read_scores, base + key[0], weight, unlisted, scale)
        options = [v for k, v in second.items() if k in allowed.get(key, ())]
        if options:
            joint[key] = first[key] + max(options)
    if recorded not in joint:
        return None if not joint else max(joint, key=lambda k: joint[k])
    best = max(joint, key=lambda k: joint[k])
    if best == recorded or joint[best] - joint[recorded] < float(_option(config, "revise_margin")):
        return None
    return best


def _prisms(xy: np.ndarray, z0: float, storey: float, ks: np.ndarray,
            shifts: Sequence[float], turns: Sequence[float], half: float) -> np.ndarray:
    """Corners (N, 8, 3) of every hypothesis: ``ks`` storeys (N,), each shift and turn."""
    n_per = len(shifts) ** 2 * len(turns)
    grid = np.array([(dx, dy, t) for dx in shifts for dy in shifts for t in turns])
    grid = np.tile(grid, (len(ks) // n_per, 1))
    c, s = np.cos(grid[:, 2]), np.sin(grid[:, 2])
    sq = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    x = c[:, None] * sq[None, :, 0] - s[:, None] * sq[None, :, 1]
    y = s[:, None] * sq[None, :, 0] + c[:, None] * sq[None, :, 1]
    out = np.zeros((len(ks), 8, 3))
    out[:, :, 0] = np.tile(x, 2) + xy[0] + grid[:, :1]
    out[:, :, 1] = np.tile(y, 2) + xy[1] + grid[:, 1:2]
    out[:, :4, 2] = z0
    out[:, 4:, 2] = (z0 + storey * ks)[:, None]
    return out


#: the prism's twelve edges: its outline in any view is made of them
_EDGES = np.array([(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
                   (0, 4), (1, 5), (2, 6), (3, 7)])


def _hull_sums(pix: np.ndarray, maps: Sequence[np.ndarray]) -> np.ndarray:
    """Sums of each map over the outline of each projected prism (N, 8, 2), all at once.

    A convex outline's cut at one row is the span of where the prism's edges
    cross that row; row-wise cumulative sums then give each row's part in two
    look-ups. A pixel of a row the outline crosses counts when its centre lies
    within half a pixel of the span.
    """
    h, w = maps[0].shape
    a = pix[:, _EDGES[:, 0], :]  # (N, 12, 2)
    b = pix[:, _EDGES[:, 1], :]
    rows = np.arange(h, dtype=np.float64)
    dy = b[..., 1] - a[..., 1]
    flat = np.abs(dy) < 1e-9
    t = (rows[None, None, :] - a[..., 1:2]) / np.where(flat, 1.0, dy)[..., None]  # (N, 12, h)
    ok = (t >= 0) & (t <= 1) & ~flat[..., None]
    x = a[..., 0:1] + t * (b[..., 0] - a[..., 0])[..., None]
    lo = np.where(ok, x, np.inf).min(axis=1)  # (N, h)
    hi = np.where(ok, x, -np.inf).max(axis=1)
    has = np.isfinite(lo)
    ja = np.clip(np.ceil(np.where(has, lo - 0.5, 0.0)), 0, w).astype(np.int64)
    jb = np.clip(np.floor(np.where(has, hi + 0.5, -1.0)) + 1, 0, w).astype(np.int64)
    jb = np.maximum(jb, ja)
    r = np.broadcast_to(np.arange(h), ja.shape)
    out = np.zeros((len(maps), len(pix)))
    for i, m in enumerate(maps):
        cs = np.zeros((h, w + 1))
        np.cumsum(m, axis=1, out=cs[:, 1:])
        out[i] = (cs[r, jb] - cs[r, ja]).sum(axis=1)
    return out


def change_map(before: np.ndarray, after: np.ndarray, config: Mapping[str, Any] | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel, how surely it changed, in units the hypotheses add up; and where it
    darkened as a shadow darkens (its hue kept, by ``shadow_dim_log`` up to
    ``shadow_log``), which is also what a grey top does to a pale print (see
    :func:`_site_maps`).

    A shadow darkens all channels alike: its hue stays and it costs nothing
    up to ``shadow_log``. New plastic changes the hue, brightens, or (black on
    a pale print) darkens far beyond a shadow.
    """
    a = cv2.GaussianBlur(before, (3, 3), 0).astype(np.float32) + 8.0
    b = cv2.GaussianBlur(after, (3, 3), 0).astype(np.float32) + 8.0
    lr = np.log(b) - np.log(a)
    m = lr.mean(axis=2)
    chroma = np.sqrt(((lr - m[..., None]) ** 2).sum(axis=2))
    shadow_log = float(_option(config, "shadow_log"))
    ch = (chroma / float(_option(config, "chroma_sigma"))
          + np.maximum(m, 0.0) / float(_option(config, "brighter_sigma"))
          + np.maximum(-m - shadow_log, 0.0)
          / float(_option(config, "darker_sigma")))
    out: np.ndarray = (np.minimum(ch, float(_option(config, "change_cap")))
                       - float(_option(config, "change_offset")))
    dim = _option(config, "shadow_dim_log")
    shaded: np.ndarray = (np.zeros(m.shape, bool) if dim is None else
                          (m <= -float(dim)) & (m >= -shadow_log)
                          & (chroma < float(_option(config, "chroma_sigma"))))
    return out, shaded


def _placements(config: Mapping[str, Any] | None) -> tuple[list[float], list[float]]:
    """Where a block may stand off its site: the shifts (mm, each way) and turns
    (radians) every hypothesis is tried at."""
    return ([float(x) for x in _option(config, "shifts_mm")],
            [math.radians(float(x)) for x in _option(config, "turns_deg")])


@dataclass(frozen=True)
class _Maps:
    """What the hypotheses at one site are scored on: per pixel of a window round it."""

    xy: np.ndarray  # the site's centre on the board, mm
    offset: np.ndarray  # the window's corner in the image
    maps: list[np.ndarray]  # change, in view, then how much each colour it looks
    colours: list[str]


def _site_maps(before: np.ndarray, after: np.ndarray, pose: Pose, site: Site, z0: float,
               storeys: int, colours: Sequence[str], model: ColourModel,
               towers: Mapping[Site, int] | None, wb: WhiteBalance | None, g: BoardGeometry,
               config: Mapping[str, Any] | None) -> _Maps | None:
    """The change, visibility and colour maps of the window that holds every
    prism at ``site`` from height ``z0`` (mm) up to ``storeys`` more; None when it
    is out of view."""
    if before.shape != after.shape:
        raise ValueError("the two frames differ in size")
    cand = [c for c in dict.fromkeys(colours) if c in model.names]
    if not cand:
        return None
    H, W = after.shape[:2]
    xy = np.asarray(g.site_xy[site.index], np.float64)
    half = g.footprint / 2
    shifts, _ = _placements(config)
    reach = half * math.sqrt(2) + max(abs(x) for x in shifts)
    box = _prisms(xy, z0, g.storey, np.array([storeys]), [0.0], [0.0], reach)[0]
    corners = pose.project(box)
    if not np.all(np.isfinite(corners)):
        return None
    x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 2, 0)
    x1, y1 = np.minimum(np.ceil(corners.max(axis=0)).astype(int) + 3, (W, H))
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    shape = (int(y1 - y0), int(x1 - x0))
    offset = np.array([x0, y0], np.float64)
    d, shaded = change_map(before[y0:y1, x0:x1], after[y0:y1, x0:x1], config)
    # the record's nearer towers hide what stands behind them
    hidden = np.zeros(shape, np.uint8)
    cam = np.asarray(pose.camera_centre, np.float64)[:2]
    mine = float(np.linalg.norm(xy - cam))
    for other, h in (towers or {}).items():
        oxy = np.asarray(g.site_xy[other.index], np.float64)
        if other == site or h <= 0 or float(np.linalg.norm(oxy - cam)) >= mine:
            continue
        p = pose.project(_prisms(oxy, 0.0, g.storey, np.array([h]), [0.0], [0.0], half)[0])
        p = p - offset
        fill_convex(hidden, p.astype(np.float32), 1, truncate=True)
    seen = hidden == 0
    # how much each pixel looks like each candidate colour rather than another
    wb = wb or estimate_white_balance(after, pose, g)
    f = features(wb.apply(after[y0:y1, x0:x1].reshape(-1, 3)))
    d2 = model.distance2(f, FACE_INTENSITY_SIGMA)
    lim = float(_option(config, "colour_d2"))
    weight = float(_option(config, "colour_weight"))
    looks = {}
    for name in cand:
        i = model.names.index(name)
        own = d2[:, i]
        rest = np.delete(d2, i, axis=1).min(axis=1) if d2.shape[1] > 1 else np.full_like(own, 1e9)
        cm = np.where(own < rest, np.clip((lim - own) / 5.0, -1.0, 1.0), -1.0)
        washed = _washed(f, model.classes[i], config)
        look = weight * cm
        if washed is not None:
            look = np.where(washed, np.maximum(look, 0.0), look)
            if model.classes[i].neutral:
                # a grey top over a pale print darkens it as the block's own shadow
                # would: for a black block such a pixel tells nothing either way
                look = np.where(washed & shaded.ravel(), -d.ravel(), look)
        looks[name] = look.reshape(shape).astype(np.float32)
    maps = [np.where(seen, d, 0.0), seen.astype(np.float64),
            *(np.where(seen, looks[name], 0.0) for name in cand)]
    return _Maps(xy, offset, maps, cand)


def _washed(f: np.ndarray, colour: BlockColour, config: Mapping[str, Any] | None
            ) -> np.ndarray | None:
    """Pixels (of features ``f``) that may be ``colour``'s glossy top mirroring a lamp:
    brighter than the plastic by ``washed_log`` or more, with its hue (across it by at
    most ``washed_across`` times their chroma along it, plus ``washed_hue_free``: so
    little chroma is no hue) and no more saturated than it, or for black grey (chroma
    up to ``washed_grey``). None with ``washed_log`` null.

    Such a top turns pale (a green one mint, a black one grey) and looks like no
    block colour, so every pixel of it counted against the block, and a prism
    short enough to leave the top out won: a 2-storey green recorded as a 1 (a
    ray-traced stand, docs/vision-errors.md, seventy-first session). The side
    faces keep the colour; the top's pixels still count their change.
    """
    least = _option(config, "washed_log")
    if least is None:
        return None
    c = f[:, :2].astype(np.float64)
    brighter = f[:, 2] - colour.lum >= float(least)
    if colour.neutral:
        grey: np.ndarray = np.hypot(c[:, 0], c[:, 1]) <= float(_option(config, "washed_grey"))
        return brighter & grey
    along, signed = colour.hue_parts(c)
    across = np.abs(signed)
    free = float(_option(config, "washed_hue_free"))
    out: np.ndarray = brighter & (along >= -free) & (along <= colour.sat) & (
        across <= float(_option(config, "washed_across")) * np.maximum(along, 0.0) + free)
    return out


def fit_new_block(before: np.ndarray, after: np.ndarray, pose: Pose, site: Site,
                  base_storeys: int, colours: Sequence[str], model: ColourModel, *,
                  towers: Mapping[Site, int] | None = None, wb: WhiteBalance | None = None,
                  geometry: BoardGeometry | None = None,
                  config: Mapping[str, Any] | None = None) -> BlockFit | None:
    """The storeys (1..max) and colour of the block built at ``site`` between two frames.

    ``base_storeys``: the tower there before (the record's); ``colours``: the
    colours the block may have (names of ``model``); ``towers``: the record's
    other towers, whose silhouettes hide what stands behind them. None when
    too little of the block would be in view or nothing there changed.
    """
    g = geometry or board_geometry()
    top = int(_option(config, "max_storeys"))
    z0 = g.storey * base_storeys
    m = _site_maps(before, after, pose, site, z0, top, colours, model, towers, wb, g, config)
    if m is None:
        return None
    shifts, turns = _placements(config)
    ks = np.repeat(np.arange(1, top + 1), len(shifts) ** 2 * len(turns))
    prisms = _prisms(m.xy, z0, g.storey, ks, shifts, turns, g.footprint / 2)  # (N, 8, 3)
    pix = pose.project(prisms.reshape(-1, 3)).reshape(len(ks), 8, 2) - m.offset
    sums = _hull_sums(pix, m.maps)  # (maps, N)
    best_visible = int(sums[1].max())
    scores: dict[tuple[str, int], float] = {}
    for j, name in enumerate(m.colours):
        total = sums[0] + sums[2 + j]
        for k in range(1, top + 1):
            scores[(name, k)] = float(total[ks == k].max())
    if best_visible < int(_option(config, "min_visible_px")):
        return None
    (colour, storeys), score = max(scores.items(), key=lambda kv: kv[1])
    if not score > float(_option(config, "min_change")):
        return None
    rivals = [v for (c, k), v in scores.items() if k != storeys]
    second = max(rivals) if rivals else -math.inf
    margin = (score - second) / max(abs(score), 1.0)
    return BlockFit(storeys, colour, score, margin, scores)


def fit_stacks(before: np.ndarray, after: np.ndarray, pose: Pose, site: Site,
               base_storeys: int, stacks: Sequence[Sequence[tuple[str, int]]],
               model: ColourModel, *, towers: Mapping[Site, int] | None = None,
               wb: WhiteBalance | None = None, geometry: BoardGeometry | None = None,
               config: Mapping[str, Any] | None = None) -> list[float] | None:
    """Scores, on the scale of ``fit_new_block``, of blocks built on one another at
    ``site`` between two frames: each stack a list of (colour, storeys) from the
    bottom. Stacks of one height differ only in where each colour should show: a
    pair stacked under one hand is told from one block of the top's colour by
    the lower block's side faces. Each block keeps the placement of the one
    under it. None when the site is out of view."""
    g = geometry or board_geometry()
    z0 = g.storey * base_storeys
    tallest = max(sum(k for _, k in st) for st in stacks)
    colours = [c for st in stacks for c, _ in st]
    m = _site_maps(before, after, pose, site, z0, tallest, colours, model, towers, wb, g,
                   config)
    if m is None or any(c not in m.colours for c in colours):
        return None
    shifts, turns = _placements(config)
    n = len(shifts) ** 2 * len(turns)
    out = []
    for st in stacks:
        total = sum(k for _, k in st)
        # the prism from each block's foot to the stack's top, every placement
        feet = np.cumsum([0] + [k for _, k in st[:-1]])
        score = None
        for (colour, _), foot in zip(st, feet, strict=True):
            prisms = _prisms(m.xy, z0 + g.storey * foot, g.storey,
                             np.full(n, total - foot), shifts, turns, g.footprint / 2)
            pix = pose.project(prisms.reshape(-1, 3)).reshape(n, 8, 2) - m.offset
            sums = _hull_sums(pix, m.maps)
            looks = sums[2 + m.colours.index(colour)]
            if score is None:  # the whole stack: its change, and the bottom's colour
                score, below = sums[0] + looks, colour
            else:  # from here up the colour is this block's, not the one below's
                score = score - sums[2 + m.colours.index(below)] + looks
                below = colour
        assert score is not None
        out.append(float(score.max()))
    return out
