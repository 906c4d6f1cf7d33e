"""Tower height and top colour of each site, with occlusion reasoning.

Each site is read along its strip (see :mod:`companion.vision.strips`). A
hypothesis (height h, depth offset d of the tower along the line of sight)
predicts where three edges fall on every lateral line of the strip: the
near-bottom edge (board -> side faces), the near-top edge (side -> top face)
and the far-top edge (top face -> whatever lies beyond). It is scored by how
uniform and how block-coloured the predicted top-face band is, by edges
found exactly where predicted, and by penalties for board-like samples
where the side faces should stand and block-like samples just in front.
Height 0 is the empty site. The depth offset absorbs the placement jitter
of real blocks; the near-bottom edge pins it down when the foot is visible.

Sites are read in groups from nearest to farthest from the camera; each
tower read paints its silhouette into an occlusion mask so that a farther
site ignores pixels that belong to it. A site whose best explanation lies
mostly under that mask goes to ``unseen`` instead of being guessed.
All sites of a group are scored at once with array operations.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import cv2
import numpy as np

from companion.rules.board import Site
from companion.vision.blas import limit_blas_threads
from companion.vision.colours import (
    CHROMA_EPS,
    FACE_INTENSITY_SIGMA,
    LOG_EPS,
    BoardModel,
    ColourClass,
    ColourModel,
    WhiteBalance,
    block_probability,
    features,
    fit_board_model,
    sample_bilinear,
)
from companion.vision.geometry import BoardGeometry, FloatArray, Pose, fill_convex, within_reach
from companion.vision.reductions import min_last, sum_axis, sum_last
from companion.vision.settings import section
from companion.vision.strips import Strips, build_strips, project_fast, sample_strips


@dataclass
class SiteResult:
    site: Site
    height: int | None  # None: unseen
    color: str | None
    score: float = 0.0
    margin: float = 0.0  # best score minus the best rival (other height or colour)
    visible: float = 1.0  # visible fraction of the chosen top band (footprint if empty)
    depth: float = 0.0  # chosen depth offset (mm)
    uniform: float = 0.0
    reason: str = ""
    top_feature: FloatArray | None = None  # mean colour feature of the chosen top band
    rivals: list[tuple[int, str | None, float]] = field(default_factory=list)
    #: the best tower hypothesis (even when empty wins): height, colour, depth, visible
    #: fraction, uniformity and colour fit of its top band, its top feature
    tower: tuple[int, str, float, float, float, float, FloatArray] | None = None
    foot_visible: float = 1.0  # visible fraction of the footprint (board level)
    #: how much the footprint's samples in view look like board rather than plastic
    #: (the empty hypothesis' ``empty_board`` term: 1 board, -1 plastic)
    foot_board: float = 0.0
    #: how much brighter the top band is than the side face just below it (log
    #: intensity; NaN: too little of that face in view), for the reading and for
    #: its best tower (``tower``)
    side_step: float = float("nan")
    tower_side_step: float = float("nan")
    #: a site read hidden: the height and colour it read before its top was found
    #: mostly out of view (:meth:`SiteReader._exact_visibility` looks at that top again)
    hidden_best: tuple[int, str | None] | None = None

    def take_tower(self) -> None:
        """Read the site as its best tower (``tower``), every field that describes the
        reading taken from it: the rescues of a tower the empty site or a doubt beat."""
        tw = self.tower
        assert tw is not None
        self.height, self.color, self.reason = tw[0], tw[1], ""
        self.depth, self.visible, self.uniform, self.top_feature = tw[2], tw[3], tw[4], tw[6]
        self.side_step = self.tower_side_step


def plastic_footprint_penalty(board: FloatArray, shown: FloatArray, hidden: FloatArray,
                              cfg: Mapping[str, Any]) -> FloatArray:
    """What the empty site loses where its footprint looks like plastic
    (:meth:`SiteReader._score`): ``empty_plastic_weight`` points per unit of
    plastic likeness beyond ``empty_plastic_free``, less as the footprint shows
    the board's print (none from ``empty_plastic_print`` up: the empty site's own
    evidence) and as it lies out of view (none at ``empty_plastic_visible`` in view
    or less: what shows of a footprint mostly hidden may be a tower in front that
    was not read).

    ``board``: the empty hypothesis' ``empty_board`` term (1 board, -1 plastic, 0
    out of view); ``shown`` its ``empty_print``; ``hidden`` its ``empty_hidden``
    (the footprint's share out of view)."""
    beyond = np.clip(-board - float(cfg["empty_plastic_free"]), 0.0, None)
    unprinted = np.clip(1.0 - shown / float(cfg["empty_plastic_print"]), 0.0, 1.0)
    least = float(cfg["empty_plastic_visible"])
    seen = np.clip((1.0 - hidden - least) / max(1.0 - least, 1e-6), 0.0, 1.0)
    return np.asarray(float(cfg["empty_plastic_weight"]) * beyond * unprinted * seen)


def covered_tower_lead(r: SiteResult, cfg: Mapping[str, Any]) -> float | None:
    """How far a covered site's best tower leads the next hypothesis, when it passes
    the covered-tower rescue's tests (:meth:`SiteReader._covered_towers`, before its
    arm rule): the empty site won by under ``covered_tower_empty_margin``, the
    tower leads by ``covered_tower_margin`` or more, its top and foot in view
    enough. None when it does not (or the rescue is off)."""
    tw = r.tower
    need = float(cfg["covered_tower_margin"])
    if need <= 0 or tw is None or len(r.rivals) < 2 or r.margin >= float(
            cfg["covered_tower_empty_margin"]):
        return None
    lead = float(r.rivals[0][2] - r.rivals[1][2])
    if lead < need or tw[3] < float(cfg["min_visible"]) or (
            r.foot_visible < float(cfg["min_foot_visible"])):
        return None
    return lead


def recolour_tops(results: Sequence[SiteResult], model: ColourModel,
                  fitted: ColourModel) -> None:
    """Each top's colour decided again under ``fitted`` (the colours re-centred on the
    photo's confident tops), where the scorer gave it the colour nearest it under
    ``model``; heights stay (they hardly depend on the exact centres).

    A top the scorer gave another colour keeps it: nearest is not how that colour
    was decided. A glossy top in a lamp's mirror image is pastel, fits no colour
    and is nearest black or yellow, and took its side face's colour
    (:meth:`SiteReader._glare_colour`); decided again by nearness it went back to
    the colour the scorer had refused (raycast phone 16008: three orange tops read
    yellow; mounted 14: a pink-washed red top read black).
    """
    tops = [(r, r.top_feature) for r in results if r.height and r.top_feature is not None]
    if not tops:
        return
    feats = np.stack([f for _, f in tops])
    was = np.argmin(model.distance2(feats), axis=1)
    now = np.argmin(fitted.distance2(feats), axis=1)
    for (r, _), k0, k in zip(tops, was, now, strict=True):
        if model.names[int(k0)] == r.color:
            r.color = fitted.names[int(k)]


def claim_split_colour(results: Sequence[SiteResult], model: ColourModel,
                       cfg: Mapping[str, Any]) -> int:
    """Tops of one colour in two groups apart, one of them another colour in play.

    Each top takes the colour it fits best, and a colour's spread is wide
    (black accepts any top with a little chroma, a chromatic colour any
    saturation in a wide band): a pale, lamp-tinted blue can fit black as
    well as blue, and then every blue top of the photo reads black. The
    photo tells them apart: the tops another colour in play fits about as
    well (``split_fit_d2`` of squared distance or less over their own), when
    they lie apart from the rest (no two tops of the two groups closer than
    ``split_chroma`` in chroma), are that colour, if it has fewer than
    ``split_min_tops`` tops of its own (0: off; each group needs as many).
    For a chromatic colour the step between the groups must lie at least
    ``split_across`` across its hue: its lit and shaded tops differ in
    saturation, along it. Only uniform tops (``split_min_uniform``) count.
    Returns how many tops changed colour.
    """
    least = int(cfg["split_min_tops"])
    if least <= 0:
        return 0
    by: dict[str, list[SiteResult]] = {}
    for r in results:
        if (r.height and r.color and r.top_feature is not None
                and r.uniform >= float(cfg["split_min_uniform"])):
            by.setdefault(str(r.color), []).append(r)
    classes = {c.name: c for c in model.classes}
    changed = 0
    for name, mine in list(by.items()):
        if len(mine) < 2 * least:
            continue
        a = classes[name]
        feats = np.array([r.top_feature for r in mine], np.float64)
        x = feats[:, :2]  # chroma: brightness varies with light and shade alike
        own = a.distance2(feats)
        best: tuple[float, str, np.ndarray] | None = None
        for b in model.classes:
            if b.name == name or len(by.get(b.name, ())) >= least:
                continue  # a colour with tops of its own does not take a second group
            side = b.distance2(feats) - own <= float(cfg["split_fit_d2"])
            if min(int(side.sum()), int((~side).sum())) < least:
                continue
            near, rest = x[side], x[~side]
            gap = float(np.min(np.linalg.norm(near[:, None, :] - rest[None, :, :], axis=-1)))
            if gap < float(cfg["split_chroma"]):
                continue
            if not a.neutral:
                # (the rest's median: a third group, another colour misread too, pulls
                # its mean away)
                step = near.mean(axis=0) - np.median(rest, axis=0)
                across = abs(step[0] * a.hue[1] - step[1] * a.hue[0])
                if across < float(cfg["split_across"]) * float(np.linalg.norm(step)):
                    continue
            if best is None or gap > best[0]:
                best = (gap, b.name, side)
        if best is None:
            continue
        _, other, side = best
        moved = [r for r, move in zip(mine, side, strict=True) if move]
        for r in moved:
            r.color = other
        by[other] = moved  # a colour takes one group at most
        changed += len(moved)
    return changed


class _Rounds(NamedTuple):
    """What the occlusion rounds (:meth:`SiteReader._read_all`) leave to the steps
    after the checks: the mask each site was last scored under (S, N, L), the
    strip samples' pixels and the sites' nearness ranks it was drawn with, and
    the heights the rounds read (a tower the checks found after them hides
    sites the rounds read without it)."""

    scored_under: np.ndarray
    px: np.ndarray
    py: np.ndarray
    rank: np.ndarray
    heights: list[int | None]
    #: each site's reading in the first round, scored with nothing in front of it
    #: (height, colour, score, depth; height None: unseen even so)
    first: list[tuple[int | None, str | None, float, float]]


class _Best(NamedTuple):
    """A site's best hypotheses (:meth:`SiteReader._best`)."""

    depth: np.ndarray  # (H,) each height's best depth
    score: FloatArray  # (H,) its score
    won: int  # the best height's index
    order: np.ndarray  # (H,) the heights' indices, best first
    tower: int  # the best tower's height index (-1: the empty site alone scored)


def _nearness_order(strips: Strips) -> np.ndarray:
    """The sites from the nearest to the camera to the farthest: the site at each
    rank of :func:`_nearness_rank`. The strips' alone: kept with them."""
    hit: np.ndarray | None = strips.cache.get("nearness_order")
    if hit is not None:
        return hit
    return strips.keep("nearness_order", np.argsort(np.abs(strips.rho_c)))


def _nearness_rank(strips: Strips) -> np.ndarray:
    """Each site's rank by distance from the camera (0 = nearest): a tower can
    hide only the sites ranked after it. The strips' alone: kept with them, as
    every occlusion step asks for it."""
    hit: np.ndarray | None = strips.cache.get("nearness_rank")
    if hit is not None:
        return hit
    rank = np.empty(len(strips.rho_c), np.int64)
    rank[_nearness_order(strips)] = np.arange(len(strips.rho_c))
    return strips.keep("nearness_rank", rank)


def _occluded(nearest: np.ndarray, px: np.ndarray, py: np.ndarray,
              rank: np.ndarray) -> np.ndarray:
    """Which strip samples (pixels ``px``, ``py``; (S, N, L)) a nearer site's silhouette
    in ``nearest`` (:meth:`SiteReader._silhouettes`) covers."""
    return np.asarray(nearest[py, px] < rank[:, None, None])


@dataclass
class StripFeatures:
    """Per-sample evidence of every site strip."""

    samples: FloatArray  # (S, N, L, 3) colour features
    block: FloatArray  # (S, N, L) probability of block plastic
    inside: np.ndarray  # (S, N, L) sample inside the image
    site_print: FloatArray | None = None  # (S, N, L) looks like an empty site's print

#: Evidence terms of a (height, depth) hypothesis; the score is their weighted sum.
FEATURES: tuple[str, ...] = (
    "empty",  # 1 for the empty-site hypothesis (a bias)
    "empty_board",  # footprint looks like board, not plastic (visible part)
    "empty_hidden",  # footprint not visible
    "uniform",  # top band uniform (visible part)
    "colour",  # top band mean close to a block colour
    "plastic",  # top band mean more plastic than board or table
    "edge_far",  # far-top edge where predicted (gated by a plausible top)
    "edge_near",  # near-top edge (side -> top)
    "edge_base",  # foot edge into plastic
    "edge_far_raw",
    "edge_base_raw",
    "side",  # board-like samples where side faces should be
    "foot",  # board-like samples on the footprint below the top
    "front",  # plastic just in front of the tower
    "depth",  # squared depth offset (placement prior)
    "top_hidden",  # top band not visible
    "log_height",
    "uniform_colour",
    "empty_print",  # footprint shows the empty-site print (learnt from this photo)
    "foot_print",  # the empty-site print shows where the tower should stand
    "base_fit",  # board just before the predicted foot, plastic just after
    "beyond",  # colour contrast between the top band and what lies just beyond it
)

DEFAULT_WEIGHTS: dict[str, float] = {
    "empty": 0.0, "empty_board": 10.0, "empty_hidden": -5.0, "uniform": 10.0,
    "colour": 10.0, "plastic": 5.0, "edge_far": 15.0, "edge_near": 7.0, "edge_base": 10.0,
    "edge_far_raw": 0.0, "edge_base_raw": 0.0, "side": -15.0, "foot": -40.0, "front": -15.0,
    "depth": -0.5, "top_hidden": -5.0, "log_height": 0.0, "uniform_colour": 0.0,
    "empty_print": 5.0, "foot_print": -10.0, "base_fit": 3.0, "beyond": 2.0,
}


class Scorer:
    """Score of each hypothesis from its evidence terms: linear, or a small network."""

    def __init__(self, names: Sequence[str], linear: FloatArray,
                 hidden: tuple[FloatArray, FloatArray, FloatArray] | None = None,
                 scale: FloatArray | None = None) -> None:
        index = {n: i for i, n in enumerate(names)}
        missing = [n for n in FEATURES if n not in index]
        if missing:
            raise ValueError(f"scorer lacks features: {', '.join(missing)}")
        self.order = np.array([index[n] for n in FEATURES])
        self.inv = np.empty_like(self.order)
        self.inv[self.order] = np.arange(len(self.order))
        self.identity = bool(np.array_equal(self.inv, np.arange(len(self.inv))))
        self.scale = np.ones(len(names)) if scale is None else np.asarray(scale, np.float64)
        self.linear = np.asarray(linear, np.float64)
        self.hidden = hidden
        # the hidden layer in single precision: its tanh is most of the scorer's time
        # and five times faster so; the scores move by a few millionths of a point
        self._hidden32 = None if hidden is None else tuple(
            np.asarray(a, np.float32) for a in hidden)

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | None) -> Scorer:
        """The ``sites.scorer`` section: a network (``features``, ``scale``, ``W1``,
        ``b1``, ``w2``, ``wl``) or linear weights by feature name.

        Raises ValueError with a one-line message for a malformed section, so a
        hand-edited override fails before any photo is read, not in the middle.
        """
        if not cfg:
            return cls(FEATURES, np.array([DEFAULT_WEIGHTS[n] for n in FEATURES]))
        if "W1" in cfg:
            return cls._network(cfg)
        unknown = sorted(k for k in cfg if k not in DEFAULT_WEIGHTS and not k.startswith("_"))
        if unknown:
            raise ValueError(f"sites.scorer: no feature {unknown[0]!r} (a network needs W1)")
        try:
            weights = [float(cfg.get(n, DEFAULT_WEIGHTS[n])) for n in FEATURES]
        except (TypeError, ValueError):
            raise ValueError("sites.scorer: a linear scorer's weights must be numbers") from None
        return cls(FEATURES, np.array(weights))

    @classmethod
    def _network(cls, cfg: Mapping[str, Any]) -> Scorer:
        keys = ("features", "scale", "W1", "b1", "w2", "wl")
        missing = [k for k in keys if k not in cfg]
        if missing:
            raise ValueError(f"sites.scorer: a network needs {missing[0]!r}")
        unknown = sorted(k for k in cfg if k not in keys and not k.startswith("_"))
        if unknown:
            raise ValueError(f"sites.scorer: a network has no {unknown[0]!r}")
        names = cfg["features"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError("sites.scorer: features must be a list of names")
        n = len(names)
        try:
            arrays = {k: np.asarray(cfg[k], np.float64) for k in ("scale", "W1", "b1", "w2", "wl")}
        except (TypeError, ValueError):
            raise ValueError("sites.scorer: scale, W1, b1, w2 and wl must be numbers") from None
        if arrays["b1"].ndim != 1:
            raise ValueError("sites.scorer: b1 must be a list of numbers (one per hidden unit)")
        hidden = arrays["b1"].shape[0]
        shapes = {"scale": (n,), "W1": (n, hidden), "b1": (hidden,), "w2": (hidden,),
                  "wl": (n,)}
        for k, want in shapes.items():
            if arrays[k].shape != want:
                raise ValueError(f"sites.scorer: {k} must be {' x '.join(map(str, want))} "
                                 f"numbers for {n} features and {hidden} hidden units, "
                                 f"got {' x '.join(map(str, arrays[k].shape)) or 'one'}")
        return cls(names, arrays["wl"], (arrays["W1"], arrays["b1"], arrays["w2"]),
                   arrays["scale"])

    def __call__(self, F: FloatArray) -> FloatArray:
        """(..., n_features) evidence (in FEATURES order) -> (...) scores."""
        # F[..., inv] is laid out feature-major whatever F's layout: keep that layout
        # (F as _features builds it has it already), the matrix products sum alike
        X = F if self.identity and F.strides[-1] > F.strides[0] else F[..., self.inv]
        if self._hidden32 is not None:
            X = X / self.scale
        s = X @ self.linear
        if self._hidden32 is not None:
            W1, b1, w2 = self._hidden32
            hidden = X.astype(np.float32) @ W1
            hidden += b1
            np.tanh(hidden, out=hidden)
            s = s + hidden @ w2
        return s


@dataclass
class StripSamples:
    """What the strips show, whatever the colours in play: each sample's colour
    feature, and the colour bin the classifiers judge it by."""

    samples: FloatArray  # (S, N, L, 3) colour features
    bins: FloatArray  # (B, 3) the features of the bins (5 bits per channel) present
    inv: np.ndarray  # (S * N * L,) each sample's bin
    inside: np.ndarray  # (S, N, L) sample inside the image


def sample_features(image: np.ndarray, strips: Strips, wb: WhiteBalance,
                    rows: int | None = None) -> StripSamples:
    """The strip samples' colour features (of the first ``rows`` rows only, when given)."""
    raw = sample_strips(image, strips, rows)  # (S, N, L, 3)
    S, N, L, _ = raw.shape
    flat = raw.reshape(-1, 3)
    f = features(wb.apply(flat))
    # the classifiers run once per distinct colour (5 bits per channel), not per sample
    if flat.dtype == np.uint8:  # v + 0.5, clipped and truncated, is v itself
        q8 = flat.astype(np.int32) >> 3
    else:
        q8 = np.clip(flat + 0.5, 0, 255).astype(np.int32) >> 3
    key = (q8[:, 0] << 10) | (q8[:, 1] << 5) | q8[:, 2]
    # np.unique(key, return_inverse=True), by a table over all 2 ** 15 keys (no sort)
    present = np.zeros(1 << 15, bool)
    present[key] = True
    uniq = np.flatnonzero(present)
    slot = np.cumsum(present) - 1
    inv = slot[key]
    bins = np.column_stack([uniq >> 10, (uniq >> 5) & 31, uniq & 31]).astype(np.float32) * 8 + 4
    return StripSamples(f.reshape(S, N, L, 3), features(wb.apply(bins)), inv,
                        strips.inside[:, :N])


def strip_features(image: np.ndarray, strips: Strips, wb: WhiteBalance,
                   model: ColourModel, cfg: dict[str, Any],
                   board: BoardModel | None = None,
                   site_print: ColourClass | None = None,
                   rows: int | None = None,
                   shown: StripSamples | None = None) -> StripFeatures:
    """Each strip sample's colour features, plastic and print likeness; of the first
    ``rows`` rows of each strip only, when no hypothesis looks further. ``shown``:
    :func:`sample_features` of these, when already known."""
    if shown is None:
        shown = sample_features(image, strips, wb, rows)
    S, N, L, _ = shown.samples.shape
    fb, inv = shown.bins, shown.inv
    p = block_probability(fb, model, board, cfg["block_t2"], cfg["block_soft"])[inv]
    q = None
    if site_print is not None:
        q = print_likeness(fb, site_print, model)[inv].reshape(S, N, L)
    return StripFeatures(shown.samples, p.reshape(S, N, L), shown.inside, q)


def print_likeness(f: FloatArray, site_print: ColourClass, model: ColourModel) -> FloatArray:
    """How much samples look like an empty site's print rather than any block."""
    d_print = site_print.mahalanobis2(f)
    d_block = min_last(model.distance2(f, FACE_INTENSITY_SIGMA))
    return (1.0 / (1.0 + np.exp(np.clip((d_print - d_block) / 2.0, -30, 30)))) * (d_print < 12.0)


def fit_site_print(feats: FloatArray, model: ColourModel, min_sites: int = 3,
                   min_block_d2: float = 4.0, near_block_d2: float | None = None,
                   near_min_sites: int = 6, brighter_log: float | None = None
                   ) -> ColourClass | None:
    """The empty-site print, from the footprint colours of all 54 sites.

    Empty sites share one print, so their footprints form the largest tight
    cluster that is not a block colour; towers scatter over the block
    colours. Returns a Gaussian, or None when too few sites look empty.

    A print of nearly a block's colour (a lavender print beside purple blocks)
    has no footprint that far from every block. Then, with ``near_block_d2``,
    the print is looked for again among footprints nearer the block colours,
    and must be shared by ``near_min_sites`` sites: a few tops of one colour
    shaded alike must not pass for it.

    Tower faces the camera sees in shadow are far from every block colour too,
    and towers of one colour in one lamp's shadow are shaded alike: on a
    crowded board they can outnumber the empty sites. With ``brighter_log``,
    the densest cluster of the rest is the print instead when it has
    ``min_sites`` and lies that much brighter (log intensity): printed paper
    under the lamp, where the faces turned from it are dark.
    """
    x = np.asarray(feats, np.float64).reshape(-1, 3)
    ok = np.all(np.isfinite(x), axis=1)
    d_block = np.full(len(x), np.inf)
    d_block[ok] = model.distance2(x[ok]).min(axis=1)
    found = _print_cluster(x[ok & (d_block > min_block_d2)], min_sites, brighter_log)
    if found is None and near_block_d2 is not None and near_block_d2 < min_block_d2:
        found = _print_cluster(x[ok & (d_block > near_block_d2)],
                               max(min_sites, near_min_sites), brighter_log)
    return found


def _print_cluster(cand: FloatArray, min_sites: int,
                   brighter_log: float | None = None) -> ColourClass | None:
    """The densest tight cluster of ``cand`` as a Gaussian, if it has ``min_sites``
    (or the brighter one :func:`fit_site_print` prefers)."""
    if len(cand) < min_sites:
        return None
    scale = np.array([0.05, 0.05, 0.35])
    z = cand / scale
    # the densest point: most neighbours within 2 sigma
    d = np.sqrt(np.sum((z[:, None, :] - z[None, :, :]) ** 2, axis=-1))
    near = d < 2.0
    counts = near.sum(axis=1)
    k = int(np.argmax(counts))
    members = cand[d[k] < 2.5]
    if len(members) < min_sites:
        return None
    if brighter_log is not None:
        rest = d[k] >= 2.5
        if rest.sum() >= min_sites:
            c2 = (near & rest[None, :]).sum(axis=1) * rest
            k2 = int(np.argmax(c2))
            other = cand[rest & (d[k2] < 2.5)]
            if (len(other) >= min_sites and float(np.median(other[:, 2]))
                    >= float(np.median(members[:, 2])) + brighter_log):
                members = other
    mu = np.median(members, axis=0)
    cov = np.cov(members.T) if len(members) > 3 else np.diag(scale ** 2)
    cov = cov + np.diag([0.02 ** 2, 0.02 ** 2, 0.12 ** 2])
    return ColourClass("print", mu, cov)


def footprint_span_axes(v: FloatArray, lateral: FloatArray, half: float
                        ) -> tuple[FloatArray, FloatArray, np.ndarray, np.ndarray]:
    """Where lines along the sight direction cross an axis-aligned square.

    ``v`` is (G, 2) unit sight directions, ``lateral`` (G, L) or (L,) offsets
    across them. Returns near and far distances along v (G, L) and which
    side (x = 0, y = 1) each crossing is on. Seen diagonally the square's
    near and far edges are up to 41 % farther from its centre than its
    half-size, and a line close to a corner may leave through a side.
    """
    v = np.atleast_2d(np.asarray(v, np.float64))
    lat = np.column_stack([-v[:, 1], v[:, 0]])
    lateral = np.broadcast_to(np.asarray(lateral, np.float64), (len(v),) + np.shape(lateral)[-1:])
    lo = np.full(lateral.shape, -np.inf)
    hi = np.full(lateral.shape, np.inf)
    lo_ax = np.zeros(lateral.shape, np.int64)
    hi_ax = np.zeros(lateral.shape, np.int64)
    for k in range(2):
        off = lateral * lat[:, k:k + 1]
        vk = v[:, k:k + 1]
        flat = np.abs(vk) < 1e-9
        safe = np.where(flat, 1.0, vk)
        t1 = (-half - off) / safe
        t2 = (half - off) / safe
        tl = np.where(flat, np.where(np.abs(off) > half, np.inf, -np.inf), np.minimum(t1, t2))
        th = np.where(flat, np.where(np.abs(off) > half, -np.inf, np.inf), np.maximum(t1, t2))
        lo_ax = np.where(tl > lo, k, lo_ax)
        hi_ax = np.where(th < hi, k, hi_ax)
        lo = np.maximum(lo, tl)
        hi = np.minimum(hi, th)
    hi = np.maximum(hi, lo)
    return lo, hi, lo_ax, hi_ax


def _ncc(x: FloatArray, y: FloatArray) -> float:
    """Normalised correlation of two equally long sample vectors."""
    a = x - x.mean()
    b = y - y.mean()
    return float(a @ b / np.sqrt(max(float((a @ a) * (b @ b)), 1e-12)))


def _chromaticity(bgr: np.ndarray) -> FloatArray:
    """(2, ...) planes (r - g) / sum and (g - b) / sum of raw BGR samples (..., 3):
    what a shadow leaves of a colour (shade scales the sum, hardly the ratios)."""
    x = bgr.astype(np.float32)
    b, g, r = x[..., 0], x[..., 1], x[..., 2]
    total = b + g + r + 3.0  # not x.sum(axis=-1): the same sums, a slower strided loop
    out: FloatArray = np.stack([(r - g) / total, (g - b) / total])
    return out


class _PrintHue:
    """The empty sites' print as a chromaticity pattern, made on first use.

    What a shadow leaves of the print when its hard edge runs across a site:
    shade scales the brightness, hardly the hue. ``planes``: (2, sites,
    samples), :func:`_chromaticity`; ``members``: the sites the template is the
    median of. A print of one hue (spread under ``contrast``) has no pattern:
    every site then correlates -1.
    """

    def __init__(self, planes: FloatArray, members: Sequence[int], contrast: float) -> None:
        self.planes = planes
        self.members = list(members)
        self.contrast = contrast
        self.tmpl: FloatArray | None = None
        self.flat = False

    def ncc(self, site: int, mask: np.ndarray) -> float:
        """Correlation of a site's samples ``mask`` with the template, each channel
        about its own mean (the channels' levels differ and must not pass for a pattern)."""
        if self.tmpl is None:
            self.tmpl = np.median(self.planes[:, self.members], axis=1)
            self.flat = float(np.sqrt(self.tmpl.var(axis=1).sum())) < self.contrast
        if self.flat:
            return -1.0
        a = self.planes[:, site, mask]
        b = self.tmpl[:, mask]
        return _ncc((a - a.mean(axis=1, keepdims=True)).ravel(),
                    (b - b.mean(axis=1, keepdims=True)).ravel())


def _print_colour_offset(planes: FloatArray, vis: np.ndarray, members: Sequence[int],
                         cities: Sequence[int], city_sites: int = 0,
                         city_spread: float = 0.0) -> FloatArray:
    """How far each site's colour lies from the print's (chromaticity, 0 = the same).

    ``planes``: (2, sites, samples), :func:`_chromaticity`; ``vis``: the samples
    in view; ``members``: the sites showing the print. Each site's median
    chromaticity against the median of the members, and against the members of
    its own city (a print may tint each city) when there are two or more: the
    nearer counts. Seen from above, a block's top lines up with the printed
    square under it and passes for its pattern; its colour does not. A city
    whose print is known (``city_sites`` or more other members, four in five
    within ``city_spread`` of their median) is the only measure: a pale top
    in a tinted city can lie near the median print of all cities.
    """
    seen = np.asarray(vis.any(axis=1))
    med = np.stack([_masked_row_median(planes[0], vis, np.nan),
                    _masked_row_median(planes[1], vis, np.nan)], axis=1)
    out = np.zeros(len(med))
    ref = np.array([i for i in members if seen[i]], np.int64)
    if len(ref) == 0:
        return out
    out = np.where(seen, np.hypot(*(med - np.median(med[ref], axis=0)).T), 0.0)
    city = np.asarray(cities)
    for c in np.unique(city):
        own = ref[city[ref] == c]
        if len(own) < 2:
            continue
        here = np.flatnonzero((city == c) & seen)
        # each site against the others of its city: a member leaves itself out
        others = np.broadcast_to(own, (len(here), len(own)))
        keep = others != here[:, None]
        enough = keep.sum(axis=1) >= 2
        if not enough.any():
            continue
        here, others, keep = here[enough], others[enough], keep[enough]
        pts = med[others]  # (sites, members, 2)
        centre = np.stack([_masked_row_median(pts[..., k], keep, np.nan) for k in (0, 1)],
                          axis=1)
        d = np.hypot(*(med[here] - centre).T)
        known = np.zeros(len(here), bool)
        if city_sites > 0:
            # some boards print each site in its own tint: then no city is known
            dev = np.hypot(*(pts - centre[:, None, :]).transpose(2, 0, 1))
            n = keep.sum(axis=1)
            known = (n >= city_sites) & (
                5 * (keep & (dev <= city_spread)).sum(axis=1) >= 4 * n)
        out[here] = np.where(known, d, np.minimum(out[here], d))
    return out


def _peak_reach(peak: FloatArray) -> int:
    """How many boundaries away an edge's peak still counts (:meth:`SiteReader._edge_profile`)."""
    return max(1, int(np.ceil(2.5 * float(np.max(peak)))))


def _rows_needed(geo: Mapping[str, Any], sel: np.ndarray, n: int, reach: int
                 ) -> tuple[int, int]:
    """The strip rows and the edge boundaries the hypotheses at sites ``sel`` look at.

    Returns (rows, last boundary): every row index of ``geo`` (bands, edges,
    feet) is at most the last boundary less ``reach`` + 1; an edge there is
    known from boundaries up to ``reach`` + 1 further (its local maximum and
    how far a peak reaches), each from rows up to its window's end. Cumulative
    sums of the first rows are those of all rows, so the rows past them change
    nothing.
    """
    top = 0

    def walk(a: Any) -> None:
        nonlocal top
        if isinstance(a, (tuple, list)):
            for x in a:
                walk(x)
        elif isinstance(a, np.ndarray) and a.dtype.kind in "iu":
            top = max(top, int(a[sel].max()))

    for key, value in geo.items():
        if key != "edge_idx":
            walk(value)
    last = min(n, top + reach + 1)
    ends = geo["edge_idx"][3][sel][:, :last + 1]  # each boundary's window end
    return min(n, max(top, int(ends.max()))), last


def _heights_of(geo: Mapping[str, Any], scored: np.ndarray, nh: int) -> dict[str, Any]:
    """:meth:`SiteReader._geometry`'s row indices for the heights ``scored`` only
    (the arrays with a height axis of ``nh``; the ones set by the depth alone stay)."""
    def cut(a: Any) -> Any:
        if isinstance(a, tuple):
            return tuple(cut(x) for x in a)
        if isinstance(a, list):
            return [cut(x) for x in a]
        if isinstance(a, np.ndarray) and a.ndim == 3 and a.shape[1] == nh:
            return a[:, scored]
        return a

    return {k: cut(v) for k, v in geo.items()}


def _colour_fit(d2: FloatArray) -> FloatArray:
    """The ``colour`` evidence term from a colour distance: 1 on the colour, -1 far off."""
    return 1.0 - np.minimum(d2, 16.0) / 8.0


def _clusters(xy: FloatArray, radius: float) -> np.ndarray:
    """Each point's cluster label, points closer than ``radius`` linked (single linkage)."""
    n = len(xy)
    label = np.arange(n)
    if n < 2:
        return label
    linked = np.linalg.norm(xy[:, None, :] - xy[None, :, :], axis=-1) < radius
    for _ in range(n):  # propagate the smallest label through links to a fixed point
        new = np.where(linked, label[None, :], n).min(axis=1)
        new = np.minimum(new, label)
        if np.array_equal(new, label):
            break
        label = new
    return np.unique(label, return_inverse=True)[1].reshape(-1)


def _agreeing_group(x: FloatArray, min_sites: int, agree: float) -> np.ndarray:
    """The largest group of rows that correlate at ``agree`` with one (a mask).

    An arm across the board covers many of the sites read empty (skin or
    cloth shows no tower either); with half of them covered the plain median
    blurs the print away. The site that correlates at ``agree`` or better with
    the most others, and those that do with it, show the print. ``x``: one row
    of n x n samples per site. Fewer than ``min_sites`` such sites: every row
    (the plain median).
    """
    # a shading ramp (an arm's round side, a soft shadow) is no print: compare
    # what is left after a plane through each site's samples
    n = int(round(np.sqrt(x.shape[1])))
    u = np.linspace(-1.0, 1.0, n)
    U, V = np.meshgrid(u, u)
    A = np.column_stack([np.ones(n * n), U.ravel(), V.ravel()])
    z = x - (A @ np.linalg.lstsq(A, x.T, rcond=None)[0]).T
    z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-9)
    c = z @ z.T
    best = int(np.argmax((c >= agree).sum(axis=1)))
    group: np.ndarray = c[best] >= agree
    if int(group.sum()) < min_sites:
        return np.ones(len(x), bool)
    return group


def _masked_row_median(x: FloatArray, mask: np.ndarray, empty: float) -> FloatArray:
    """Each row's median over its ``mask`` samples (``empty`` for a row with none):
    what ``np.nanmedian`` gives with the rest set to NaN, by one sort."""
    k = mask.sum(axis=1)
    s = np.sort(np.where(mask, x, np.inf), axis=1)
    rows = np.arange(len(x))
    lo = s[rows, np.maximum(k - 1, 0) // 2]
    hi = s[rows, np.maximum(k, 1) // 2]
    out: FloatArray = np.where(k > 0, (lo + hi) / 2, empty)
    return out


def _csum(x: FloatArray) -> FloatArray:
    """Cumulative sum along axis 1 with a leading zero row (summed into place:
    concatenating a zero row to the sums costs three times the sums themselves)."""
    out = np.empty(x.shape[:1] + (x.shape[1] + 1,) + x.shape[2:])
    out[:, 0] = 0.0
    if x.dtype == out.dtype:
        np.cumsum(x, axis=1, out=out[:, 1:])
    else:  # summed in x's own precision, as before, then widened
        out[:, 1:] = np.cumsum(x, axis=1)
    return out


def _take(cs: FloatArray, rows: np.ndarray) -> FloatArray:
    """``cs[g, rows[g, ...]]`` for every site g: one flat gather, several times
    faster than the equivalent fancy indexing ``cs[G3, rows]``."""
    G, n1 = cs.shape[:2]
    off = (np.arange(G) * n1).reshape((G,) + (1,) * (rows.ndim - 1))
    return np.take(cs.reshape((G * n1,) + cs.shape[2:]), rows + off, axis=0)


def _band(cs: FloatArray, a: np.ndarray, b: np.ndarray) -> FloatArray:
    """The sum over the rows from ``a`` to ``b`` of every site, from its cumulative sums."""
    out: FloatArray = _take(cs, b) - _take(cs, a)
    return out


def _pad_columns(x: FloatArray, r: int) -> FloatArray:
    """``np.pad(x, ((0, 0), (r, r)))``: ``r`` zero columns either side of a 2-D array,
    without np.pad's general machinery (it costs more than the copy)."""
    out = np.zeros((x.shape[0], x.shape[1] + 2 * r), x.dtype)
    out[:, r:r + x.shape[1]] = x
    return out


def _lsum(x: FloatArray) -> FloatArray:
    """Sum over the lateral axis (2): what ``np.sum(x, axis=2)`` gives for a few
    laterals, without a slow strided reduction."""
    return sum_axis(x, 2)


def _sample_pixels(strips: Strips, rows: int, shape: tuple[int, int]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The pixel (x, y) nearest each strip sample of the first ``rows`` rows, within
    the photo: where the occlusion masks are looked up. The pose's alone: kept with
    the strips."""
    key = ("sample_pixels", rows, shape)
    hit: tuple[np.ndarray, np.ndarray] | None = strips.cache.get(key)
    if hit is not None:
        return hit
    h, w = shape
    pix = np.round(np.nan_to_num(strips.pix[:, :rows], nan=-1.0, posinf=-1.0, neginf=-1.0))
    pix = np.clip(pix, -1, max(h, w)).astype(np.int64)  # far off-image points stay off
    return strips.keep(key, (np.clip(pix[..., 0], 0, w - 1), np.clip(pix[..., 1], 0, h - 1)))


_STRIP_CACHE: dict[tuple[Any, ...], Strips] = {}


@dataclass
class _Photo:
    """What reading the sites derives from the photo alone (its pixels, pose and white
    balance), not from the colours in play: a second read of the same photo (with
    another colour set, or the toned colours) takes it as it is."""

    image: np.ndarray
    pose_key: tuple[Any, ...]
    strips: Strips
    wb: WhiteBalance
    rows: int | None
    board: BoardModel | None
    shown: StripSamples

    def matches(self, image: np.ndarray, pose: Pose, strips: Strips, wb: WhiteBalance,
                rows: int | None) -> bool:
        """Whether this is what that photo, pose and white balance give."""
        return (self.strips is strips and self.rows == rows and self.pose_key == pose.cache_key
                and (self.wb is wb or (np.array_equal(self.wb.white, wb.white)
                                       and np.array_equal(self.wb.black, wb.black)
                                       and self.wb.noise == wb.noise))
                and (self.image is image or (self.image.shape == image.shape
                                             and np.array_equal(self.image, image))))


@dataclass
class _Foot:
    """What lies just above a predicted base edge, whatever the colours: the windows
    one and two windows up, their samples in view and how alike they look
    (:meth:`plastic` weighs it with the block likeness)."""

    a: np.ndarray  # cumulative-sum rows at the edge
    b: np.ndarray  # and one window above it
    n1: FloatArray  # samples in view in the first window
    same: FloatArray  # how alike the two windows look
    ok: np.ndarray  # both windows have samples in view

    @classmethod
    def of(cls, cf: FloatArray, cw: FloatArray,
           rows: tuple[np.ndarray, np.ndarray, np.ndarray]) -> _Foot:
        """``rows``: cumulative-sum indices at the base edge and one and two windows
        above it."""
        a, b, c = rows
        n1 = _band(cw, a, b)
        n2 = _band(cw, b, c)
        m1 = _band(cf, a, b) / np.maximum(n1, 1e-6)[..., None]
        m2 = _band(cf, b, c) / np.maximum(n2, 1e-6)[..., None]
        same = np.exp(-sum_last((m1 - m2) ** 2) / 4.0)
        return cls(a, b, n1, same, (n1 > 0.5) & (n2 > 0.5))

    def plastic(self, cp: FloatArray) -> FloatArray:
        """How much the rows just above the base edge look like block plastic
        continuing up (``cp``: cumulative block probability). A printed site outline
        is an edge too, but what follows it is board or a thin line, not the same
        colour as the face above."""
        p1 = _band(cp, self.a, self.b) / np.maximum(self.n1, 1e-6)
        out: FloatArray = np.where(self.ok, self.same * np.clip(2 * p1 - 0.5, 0, 1), 0.0)
        return out


@dataclass
class _Evidence:
    """What the photo shows for every hypothesis of some sites, whatever the colours
    in play (:meth:`SiteReader._evidence`), and what it was made from."""

    idx: np.ndarray
    strips: Strips
    samples: FloatArray
    vis: FloatArray
    noise: float
    scored: np.ndarray | None
    geo: dict[str, Any]
    sel: np.ndarray
    L: int
    rows: int
    c: int
    w: FloatArray
    wc: FloatArray
    depths: FloatArray
    heights: np.ndarray
    J: float
    sig: FloatArray
    uniform: FloatArray
    top_feat: FloatArray
    vis_top: FloatArray
    n_sd: FloatArray
    m_sd: FloatArray
    #: per sideways offset: far-top, near-top and base edge strengths, and the foot
    shifts: list[tuple[FloatArray, FloatArray, FloatArray, _Foot]]
    n_ref: FloatArray
    sa: np.ndarray
    fe: np.ndarray
    nfoot: FloatArray
    fa: np.ndarray
    fb: np.ndarray
    nf: FloatArray
    ea: np.ndarray
    eb: np.ndarray
    ne: FloatArray
    fp_vis: FloatArray
    base_rows: tuple[np.ndarray, np.ndarray, np.ndarray]
    n_before: FloatArray
    n_after: FloatArray
    beyond: FloatArray
    side_colour: FloatArray

    def shows(self, idx: np.ndarray, st: Strips, samples: FloatArray, vis: FloatArray,
              noise: float, scored: np.ndarray | None) -> bool:
        """Whether this is the evidence of those sites, strip samples and weights."""
        return (self.strips is st and self.samples is samples and self.noise == noise
                and np.array_equal(self.idx, idx)
                and ((self.scored is None) if scored is None
                     else self.scored is not None and np.array_equal(self.scored, scored))
                and np.array_equal(self.vis, vis))


class SiteReader:
    """Reads all sites of one image given a pose, white balance and colour model."""

    def __init__(self, geometry: BoardGeometry, config: dict[str, Any] | None = None) -> None:
        self.g = geometry
        self.cfg = {**section("sites"), **(config or {})}
        self.offsets = tuple(float(v) for v in self.cfg["lateral_mm"])
        self.debug: dict[str, Any] = {}
        self.board: BoardModel | None = None
        self.noise = 0.01
        self.site_print: ColourClass | None = None
        self._nearest: np.ndarray | None = None
        self._range: dict[int, tuple[int, int]] = {}
        self._photo: _Photo | None = None
        #: the photo evidence of the last scorings (:meth:`_photo_evidence`), newest first
        self._evidence_made: list[_Evidence] = []
        self.scorer = Scorer.from_config(self.cfg.get("scorer") or self.cfg.get("weights"))
        limit_blas_threads(int(self.cfg["blas_threads"]))

    def sharing_photo(self) -> SiteReader:
        """A reader of the same settings that starts from this one's photo caches (the
        board model, strip samples and hypothesis evidence: each taken only when it
        matches the photo read), its own state otherwise: another scoring of the same
        photo, with other colours, costs what the colours change and no more."""
        other = SiteReader(self.g, self.cfg)
        other._photo = self._photo
        other._evidence_made = list(self._evidence_made)
        return other

    def strips(self, pose: Pose) -> Strips:
        """The strip sampling of a pose (cached: a fixed camera keeps its pose).

        Keyed by what the strips are built from, the board and this reader's
        settings with the pose: two readers of other settings in one process
        (an A/B evaluation) must not take each other's strips.
        """
        g = self.g
        key = (pose.cache_key, g.fingerprint, int(self.cfg["max_height"]), self.offsets)
        hit = _STRIP_CACHE.get(key)
        if hit is None:
            hit = build_strips(pose, self.g, int(self.cfg["max_height"]), offsets=self.offsets)
            if len(_STRIP_CACHE) > 4:
                _STRIP_CACHE.clear()
            _STRIP_CACHE[key] = hit
        return hit

    def read(self, image: np.ndarray, pose: Pose, wb: WhiteBalance, model: ColourModel,
             strips: Strips | None = None,
             height_range: Mapping[int, tuple[int, int]] | None = None,
             ) -> tuple[list[SiteResult], Strips, ColourModel]:
        """All 54 sites; returns results, the strips and the (possibly refitted) model.

        ``height_range``: site index -> the lowest and highest height it can have
        (tracking a game: a tower never shrinks and grows by at most one block).
        """
        cfg = self.cfg
        self._range = dict(height_range or {})
        if strips is None:
            strips = self.strips(pose)
        photo = self._photo_of(image, pose, strips, wb)
        board = photo.board
        self.board = board
        self.noise = wb.noise
        self.site_print = self.print_model(image, pose, wb, model)
        sf = strip_features(image, strips, wb, model, cfg, board, self.site_print,
                            photo.rows, photo.shown)
        self._nearest = None
        results, rounds = self._read_all(image, pose, strips, sf, model)
        self._unexplained_tops(pose, strips, results)
        if cfg["print_check"]:
            self._check_empty_sites(image, pose, strips, results)
        if cfg["occlusion"]:
            # the tops rescued and the towers the print refutes change silhouettes too
            self._uncover_after_checks(pose, strips, sf, model, results, rounds)
        self._doubt_close_readings(results)
        self._doubt_bright_sides(results)
        self._doubt_shared_tops(pose, strips, results, rounds.first)
        if cfg["refit_colours"]:
            fitted = self._refit(results, model)
            if fitted is not None:
                recolour_tops(results, model, fitted)
                model = fitted
        if claim_split_colour(results, model, cfg) and cfg["refit_colours"]:
            model = self._refit(results, model) or model
        return results, strips, model

    def _photo_of(self, image: np.ndarray, pose: Pose, strips: Strips,
                  wb: WhiteBalance) -> _Photo:
        """The board model and strip samples of this photo: those of the last read
        when it read the same photo (the colour set settled, or the colours toned)."""
        rows = self._rows_to_read(strips)
        if self._photo is None or not self._photo.matches(image, pose, strips, wb, rows):
            board = self.board_model(image, pose, wb) if self.cfg["board_model"] else None
            self._photo = _Photo(image, pose.cache_key, strips, wb, rows, board,
                                 sample_features(image, strips, wb, rows))
        return self._photo

    def _doubt_close_readings(self, results: list[SiteResult]) -> None:
        """A reading that beat a far different one by a hair goes to ``unseen`` ("close").

        Both explain the photo alike, so reporting either is a guess: an empty
        site that beat a tower by under ``empty_doubt_margin`` (half of them
        are towers on the raycast frames), a tower that beat another tower two
        or more storeys off, or of another colour, by under
        ``tower_doubt_margin`` (two in five read wrong), or the same colour a
        storey taller or shorter by under ``storey_doubt_margin`` (placement
        moves a top by a storey's worth; four in ten read wrong, where a wrong
        site weighs four unseen ones). A tower that beat the empty site by
        under ``tower_empty_doubt_margin`` is doubted too: on 26 sets of four
        renderers a third of those are phantoms, hidden sites or the wrong
        tower (docs/vision-errors.md, fifty-seventh session); by more it stays.
        An empty site that won by a hair stays too when its footprint looks like
        the board (``foot_board`` of ``empty_doubt_board`` or more; null: always
        doubted): 70 of 76 such readings were empty on those sets.
        A doubted tower keeps its
        height and colour as the guess (the reader lists it ``unresolved``, as
        the heights a steep view cannot tell); a doubted empty site has none.

        A one-storey tower not doubted so whose footprint looks like the board
        (``foot_board`` of ``board_foot_doubt`` or more; null: none) is doubted
        as "board": a block covers its footprint, so its samples there are its
        own plastic, and a one-storey reading on board-like samples is the print
        itself (a blue lamp over a pale print, a dark print under a black colour)
        as often as a block coloured like the board: on 26 sets (raycast,
        Mitsuba, `companion/sim`, `synth.py`) 17 wrong or hidden sites against
        13 right (docs/vision-errors.md, fifty-seventh session).
        """
        empty = float(self.cfg["empty_doubt_margin"])
        tower = float(self.cfg["tower_doubt_margin"])
        storey = float(self.cfg["storey_doubt_margin"])
        over_empty = float(self.cfg.get("tower_empty_doubt_margin") or 0.0)
        board = self.cfg.get("empty_doubt_board")
        board_foot = float("inf") if board is None else float(board)
        least = self.cfg.get("board_foot_doubt")
        one_on_board = float("inf") if least is None else float(least)
        for r in results:
            if r.reason or r.height is None:
                continue
            if r.rivals:
                h, c, _ = r.rivals[0]
                if r.height == 0:
                    close = h > 0 and r.margin < empty and r.foot_board < board_foot
                else:
                    far = abs(h - r.height) >= 2 or c != r.color
                    close = r.margin < (over_empty if h == 0 else tower if far else storey)
                if close:
                    r.reason = "close"
                    if r.height == 0:
                        r.height, r.color = None, None
                    continue
            if r.height == 1 and r.color is not None and r.foot_board >= one_on_board:
                r.reason = "board"

    def _doubt_shared_tops(self, pose: Pose, st: Strips, results: list[SiteResult],
                           first: Sequence[tuple[int | None, str | None, float, float]],
                           ) -> None:
        """Of two towers whose tops show at one place in the photo, the one that won
        by less goes to ``unseen`` ("shared").

        Two tops cannot both be seen at one place: the nearer would hide the
        farther. Read tall, a low tower's hypothesis finds its top where a
        farther tower of that colour has one, its foot where the low tower's is,
        and wins (a 2-storey yellow read as a 10-storey purple). The other way
        round, a site hidden behind a tower is read on that tower's top. So
        when a tower reading's top face, drawn in the photo, lies
        ``shared_top_share`` or more (null: off) on the top of a farther tower
        read in its colour, the reading with the smaller margin is kept apart
        as a guess (and nothing more when it is already doubted). Unseen sites'
        guesses do not count: a hidden site's is scored past the nearer
        reading's silhouette, a covered site's is the scorer's second choice,
        and either is often made of the nearer tower's own faces. On 26 sets of
        four renderers, 16 hidden sites read wrong and 5 wrong towers went to
        unseen, and so did 8 right ones (docs/vision-errors.md, sixty-second
        session).

        The farther tower may not be read at all: a low tower read tall hides
        the tower whose top it took, so that one is left hidden behind it, and
        the two readings agree with each other. What tells is the first
        occlusion round (``first``: each site's height, colour, score and depth
        scored with nothing in front of it): there the farther site read its own
        tower. Where that first reading, in the tall reading's colour, has its
        top ``shared_top_share`` or more on the tall reading's and scored more
        than it by over ``shared_hidden_lead`` (null: not looked at), the tall
        reading goes to unseen; the farther site stays hidden (read as its first
        reading, it is as often a site truly hidden). Two points: both readings are
        the photo's evidence for one top, and a point or two is the noise of such
        scores; at 0 as many wrong readings went, and seven right ones for one
        (docs/vision-errors.md, eightieth session).
        """
        least = self.cfg["shared_top_share"]
        if least is None:
            return
        rank = _nearness_rank(st)
        # every tower read: its top face in the photo (the nearer and the farther alike),
        # projected in one call (this runs on every read, the live table's too)
        read = [j for j, r in enumerate(results) if r.height]
        if not read:
            return
        faces = self._top_faces(pose, st, np.array(read), np.array(
            [results[j].height for j in read]), np.array([results[j].depth for j in read]))
        tops = dict(zip(read, faces.astype(np.float32), strict=True))
        lead_cfg = self.cfg["shared_hidden_lead"]
        lead = 0.0 if lead_cfg is None else float(lead_cfg)  # (None: no hidden site looked at)
        # the sites left hidden whose first reading was a tower: that tower's top
        behind: dict[int, np.ndarray] = {}
        hid = [] if lead_cfg is None else [
            j for j, r in enumerate(results)
            if r.reason in ("hidden", "foot hidden") and first[j][0]]
        if hid:
            hf = self._top_faces(pose, st, np.array(hid), np.array(
                [first[j][0] for j in hid]), np.array([first[j][3] for j in hid]))
            behind = dict(zip(hid, hf.astype(np.float32), strict=True))
        for i, face in tops.items():
            r = results[i]
            if r.reason or r.color is None:
                continue
            area = abs(float(cv2.contourArea(face)))
            if area < 4.0:
                continue  # a top a pixel or two across (or behind the camera)
            for j, other in behind.items():
                if (first[j][1] != r.color or rank[j] <= rank[i]
                        or first[j][2] <= r.score + lead):
                    continue
                shared, _ = cv2.intersectConvexConvex(face, other)
                if shared >= float(least) * area:
                    r.reason = "shared"  # its top is the hidden site's own
                    break
            if r.reason:
                continue
            for j, other in tops.items():
                if results[j].color != r.color or rank[j] <= rank[i]:
                    continue
                shared, _ = cv2.intersectConvexConvex(face, other)
                if shared >= float(least) * area:
                    # the one that won by less is the other's top read again
                    if results[j].margin < r.margin:
                        if not results[j].reason:
                            results[j].reason = "shared"
                    else:
                        r.reason = "shared"
                    break

    def _doubt_bright_sides(self, results: list[SiteResult]) -> None:
        """A tower whose side face is as bright as its top, won by under
        ``bright_side_margin`` and not doubted already, goes to ``unseen`` ("side").

        Just below a top the tower's own side face shows, a vertical face that
        the light reaches less than the top: in a photo the sure towers' tops are
        brighter than their sides by a typical step (their median, from
        ``bright_side_sure_margin`` and at least three of them; under
        ``bright_side_least_step`` the light is too flat to tell). A reading whose
        "side" is as bright as its top (under ``bright_side_share`` of that
        step) has another top there: its own, a storey or more lower, or a nearer
        tower's, the reading being a farther tower's top seen past it. On 26 sets
        of four renderers (docs/vision-errors.md, fifty-ninth session) 89 of the
        145 readings so doubted were wrong or at hidden sites; every renderer
        gained. The guess is kept as a "close" reading's is.
        """
        margin = self.cfg.get("bright_side_margin")
        if margin is None:
            return
        sure = float(self.cfg["bright_side_sure_margin"])
        steps = [r.side_step for r in results
                 if r.height and not r.reason and r.margin >= sure and np.isfinite(r.side_step)]
        if len(steps) < 3:
            return
        typical = float(np.median(steps))
        if typical < float(self.cfg["bright_side_least_step"]):
            return  # flat light: the tops no brighter than the sides, nothing to tell
        below = float(self.cfg["bright_side_share"]) * typical
        for r in results:
            if (r.height and r.color is not None and not r.reason
                    and r.margin < float(margin) and r.side_step < below):
                r.reason = "side"

    def _check_empty_sites(self, image: np.ndarray, pose: Pose, strips: Strips,
                           results: list[SiteResult]) -> None:
        """An empty site must look like the other empty sites: anything else covers it;
        a tower's site must not look like them.

        Every empty site of a board shows the same print. Each site read as
        empty is resampled top-down over its footprint (board mm, so all sites
        line up) and compared by normalised correlation with the median of all
        empty sites (when that is flat, of the ones that agree with each other:
        :func:`_agreeing_group`), over the part no nearer tower read hides (an unseen
        site's guess hides nothing here: ``print_past_guesses``). A hand,
        an arm or a tower the scorer missed does not show the print's pattern,
        or shows it in another colour (:func:`_print_colour_offset`: a top over
        its printed square): the site goes to ``unseen`` rather than being
        reported empty (an empty site won by under ``print_close_margin`` needs
        a closer match, ``print_close_ncc``: a washed-out top half matches the
        print; a print
        under a soft shadow, under a hard shadow's edge or in a hue pattern
        passes: :meth:`_shaded_print`, :meth:`_split_shadow_ncc`,
        :class:`_PrintHue`). A tower stands on
        its footprint and covers it in every view, so a site read as a tower
        whose footprint shows the print very clearly (a phantom explained by
        towers farther back) is empty; and a lone site without the print whose
        best tower nearly won is that tower (:meth:`_covered_towers`).
        """
        cfg = self.cfg
        g = self.g
        empty = [i for i, r in enumerate(results) if r.height == 0]
        if len(empty) < int(cfg["print_min_sites"]):
            return
        n = int(cfg["print_grid"])
        half = float(cfg["print_half_mm"])
        H, W = image.shape[:2]
        mx, my, ok, px, py = self._print_grid(pose, strips, n, half, (H, W))
        bgr = cv2.remap(image, mx, my, cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE).reshape(-1, 3)
        v = (bgr.astype(np.float32) @ np.array([0.114, 0.587, 0.299], np.float32)).reshape(
            len(g.sites), -1)
        nsites = len(g.sites)
        rank = _nearness_rank(strips)
        nearest = self._nearest
        # the sites left unseen hide nothing from the check: their guesses are painted
        # so that the rounds read no tower on their faces, but a guess may be a phantom
        # over the very footprint looked at here
        guesses = self._guesses(results) if cfg["print_past_guesses"] else set()
        if guesses or nearest is None or nearest.shape != (H, W):
            nearest = self._silhouettes(pose, strips, results, rank, (H, W), skip=guesses)
        behind = (nearest[py, px].reshape(nsites, -1) < rank[:, None])
        vis = ok & ~behind
        # shading-free: each site relative to its own median brightness
        med = _masked_row_median(v, vis, 1.0)
        pn = v / np.maximum(med, 1.0)[:, None]
        clean = [i for i in empty if vis[i].mean() > 0.9]
        if len(clean) < int(cfg["print_min_sites"]):
            return
        # the print is learnt from the sites surely empty: where many towers were
        # read empty (a washed-out photo), their tops would make half the median
        least = cfg["print_template_margin"]  # null: every site read empty
        if least is not None:
            sure = [i for i in clean if results[i].margin >= float(least)]
            if len(sure) >= int(cfg["print_min_sites"]):
                clean = sure
        tmpl = np.median(pn[clean], axis=0)
        # a plain print, or one blurred by the many sites an arm covers: the sites
        # that agree with each other show the print, if there is one. An arm over
        # half the empty sites leaves the median at a fraction of the print's
        # contrast, and how flat exactly is chance: the agreeing sites' median is
        # also taken when it has ``print_agree_gain`` times the contrast
        group = [i for i, keep in zip(clean, _agreeing_group(
            pn[clean], int(cfg["print_min_sites"]), float(cfg["print_agree_ncc"])),
            strict=True) if keep]
        agreed = tmpl if len(group) == len(clean) else np.median(pn[group], axis=0)
        contrast = float(np.std(tmpl))
        if contrast < float(cfg["print_min_contrast"]) or float(np.std(agreed)) >= float(
                cfg["print_agree_gain"]) * contrast:
            clean, tmpl = group, agreed
            if float(np.std(tmpl)) < float(cfg["print_min_contrast"]):
                return  # a plain print: nothing to compare
        planes = _chromaticity(bgr.reshape(nsites, -1, 3))
        hue = _PrintHue(planes, clean, float(cfg["print_chroma_contrast"]))
        off_colour = _print_colour_offset(planes, vis, clean, [site.city for site in g.sites],
                                          int(cfg["print_city_sites"]),
                                          float(cfg["print_city_spread"]))
        self.debug["print_ncc"] = {}
        self.debug["print_colour"] = off_colour
        covered: list[int] = []
        # covered for a half match of the print alone (below): no tower is read there
        half_match: set[int] = set()
        # each site's share in view (counts over the grid: exact, all sites at once)
        shares = vis.mean(axis=1)
        plastic = (None if cfg["print_hidden_plastic"] is None
                   else float(cfg["print_hidden_plastic"]))
        for i in range(nsites):
            m = vis[i]
            share = shares[i]
            off = off_colour[i] > float(cfg["print_colour_offset"])
            if share < float(cfg["print_min_visible"]):
                # too little in view for the print's pattern; its colour still tells:
                # a tower the scorer missed shows its plastic past the nearer one. So
                # does what the empty site was read on: an empty site is read where
                # the board shows, not on a footprint whose samples look like plastic
                if i not in empty:
                    continue
                on_plastic = plastic is not None and results[i].foot_board < plastic
                if on_plastic and not off:
                    # nothing shows what stands there, only that the board does not:
                    # unseen, no tower guessed from the scorer's second choice
                    # (measured: as often a hidden site's phantom as the tower)
                    r = results[i]
                    r.height, r.color, r.reason = None, None, "covered"
                    continue
                if not (on_plastic
                        or (share >= float(cfg["print_colour_min_visible"]) and off)):
                    continue
            else:
                ncc = _ncc(pn[i][m], tmpl[m])
                self.debug["print_ncc"][i] = ncc
                if i not in empty:
                    # a tower covers its own footprint in any view: a clear print there,
                    # not hidden by a nearer tower, means the tower read is not there
                    # (unless in another colour: a top seen from above, over its square)
                    if (results[i].height and share >= float(cfg["print_tower_visible"])
                            and ncc >= float(cfg["print_empty_ncc"]) and not off
                            and self._range.get(i, (0, 0))[0] == 0):
                        results[i].height, results[i].color = 0, None
                    continue
                # an empty reading won by a hair needs a closer match to the print: a
                # washed-out top the scorer took for the board by a point or two half
                # matches it
                least = (float(cfg["print_close_ncc"])
                         if results[i].margin < float(cfg["print_close_margin"])
                         else float(cfg["print_min_ncc"]))
                if not ((ncc < least and not (
                        share >= float(cfg["print_shaded_visible"])
                        and self._shaded_print(pn[i], tmpl, n, half)) and not (
                        hue.ncc(i, m) >= float(cfg["print_chroma_ncc"])) and not (
                        self._split_shadow_ncc(pn[i][m], tmpl[m])
                        >= float(cfg["print_split_ncc"]))) or off):
                    continue
                if not off and ncc >= float(cfg["print_min_ncc"]):
                    half_match.add(i)
            # not the print: a hand or its shadow, or a tower the scorer missed (a
            # dark shadow looks like a black top, so no tower is guessed either); or
            # the print's pattern in another colour than the print's: a top outlined
            # like the site below it (seen from above, a block's top lines up with
            # the printed square)
            r = results[i]
            r.height, r.color, r.reason = None, None, "covered"
            covered.append(i)
        self._covered_towers(results, covered, half_match)

    def _print_grid(self, pose: Pose, strips: Strips, n: int, half: float,
                    shape: tuple[int, int]) -> tuple[np.ndarray, ...]:
        """Where :meth:`_check_empty_sites` samples each site's footprint (n x n points
        ``half`` mm either side): the remap maps (S, n * n), which samples are in
        the photo (S, n * n), and the nearest pixel of each. The pose's alone: kept
        with its strips. (A site a row: remap refuses a map side of 32767 or more,
        which one row of all sites reached at a grid of 25.)"""
        H, W = shape
        key = ("print_grid", n, half, shape)
        hit: tuple[np.ndarray, ...] | None = strips.cache.get(key)
        if hit is not None:
            return hit
        g = self.g
        k = np.linspace(-half, half, n)
        X, Y = np.meshgrid(k, -k)
        offs = np.column_stack([X.ravel(), Y.ravel()])
        pts = (g.site_xy[:, None, :] + offs[None]).reshape(-1, 2)
        pix = project_fast(pose, np.column_stack([pts, np.zeros(len(pts))])).astype(np.float32)
        ok = ((pix[:, 0] >= 0) & (pix[:, 0] <= W - 1) & (pix[:, 1] >= 0)
              & (pix[:, 1] <= H - 1)).reshape(len(g.sites), -1)
        px = np.clip(np.round(pix[:, 0]).astype(np.int64), 0, W - 1)
        py = np.clip(np.round(pix[:, 1]).astype(np.int64), 0, H - 1)
        rows = len(g.sites)
        return strips.keep(key, (np.ascontiguousarray(pix[:, 0]).reshape(rows, -1),
                                 np.ascontiguousarray(pix[:, 1]).reshape(rows, -1), ok, px, py))

    def _covered_towers(self, results: list[SiteResult], covered: list[int],
                        half_match: Collection[int] = ()) -> None:
        """A lone site whose print check fails and whose best tower nearly won is that tower.

        The print check is evidence the scorer does not have: no print there. A
        tower the empty hypothesis beat by a hair (``covered_tower_empty_margin``),
        clearly better than any other tower (``covered_tower_margin``), explains
        it; a glossy top washed out by a lamp's mirror image looks like the board
        behind it and loses to the empty site narrowly. An arm or its shadow
        covers several neighbouring sites: a covered site in a chain of
        ``covered_tower_cluster`` or more covered sites, each within
        ``covered_tower_radius_mm`` of the next, stays unseen. Two covered
        neighbours alone are as often two towers the scorer missed (or a tall
        tower and the phantom its top makes at the site behind it). The sites in
        ``half_match`` half match the print (covered only because the empty site won
        narrowly: ``print_close_ncc``): an arm's lone shadow does too, and no
        tower is read there (they still make chains).
        """
        cfg = self.cfg
        need = float(cfg["covered_tower_margin"])
        if need <= 0 or not covered:
            return
        rescue = []
        for i in covered:
            if i in half_match:
                continue
            r = results[i]
            lead = covered_tower_lead(r, cfg)
            if lead is not None and r.tower is not None:
                rescue.append((i, lead))
        if not rescue:
            return
        # the arms: chains of covered sites (clustered only when some site qualifies)
        group = _clusters(self.g.site_xy[covered], float(cfg["covered_tower_radius_mm"]))
        size = np.bincount(group)
        arm = {i for i, k in zip(covered, group, strict=True)
               if size[k] >= int(cfg["covered_tower_cluster"])}
        for i, lead in rescue:
            if i in arm:
                continue
            r = results[i]
            r.take_tower()
            r.score, r.margin = float(r.rivals[0][2]), lead

    def _split_shadow_ncc(self, x: FloatArray, tmpl: FloatArray) -> float:
        """The print's correlation with a hard shadow's edge taken out (-1: no such edge).

        A tower's shadow with a sharp edge darkens part of a site by one
        factor: the brightness splits into two levels (the best split of the
        sorted samples, the darker at most ``print_split_ratio`` of the
        brighter, each at least 15% of the samples), and with each part
        scaled to its own median the print's pattern shows again. Plastic
        or an arm shows no print on either side. A print whose own lines are
        that much darker than its paper is split at its lines instead and
        gains nothing (the plain correlation still decides those).
        """
        if len(x) < 20:
            return -1.0
        v = np.sort(x)
        # Otsu on the brightness: the split that best separates two levels
        c = np.cumsum(v)
        k = np.arange(1, len(v))
        m0 = c[:-1] / k
        m1 = (c[-1] - c[:-1]) / (len(v) - k)
        between = k * (len(v) - k) * (m1 - m0) ** 2
        j = int(np.argmax(between))
        lo, hi = m0[j], m1[j]
        frac = (j + 1) / len(v)
        if hi <= 0 or lo / hi > float(self.cfg["print_split_ratio"]) or not (
                0.15 <= frac <= 0.85):
            return -1.0
        thr = 0.5 * (v[j] + v[j + 1])
        dark = x <= thr
        y = np.where(dark, x / max(float(np.median(x[dark])), 1e-6),
                     x / max(float(np.median(x[~dark])), 1e-6))
        return _ncc(y, tmpl / max(float(np.median(tmpl)), 1e-6))

    def _shaded_print(self, x: FloatArray, tmpl: FloatArray, n: int, half: float) -> bool:
        """A site in full view that is the print under a tower's soft shadow.

        The shadow is a brightness ramp across the site, larger than any line
        of the print: against the mean around each sample (both the site and
        the print) the pattern is plainly the print's again.
        """
        shade = float(self.cfg["print_shade_mm"])
        if shade <= 0:
            return False
        sigma = shade * (n - 1) / (2 * half)

        def local(v: FloatArray) -> FloatArray:
            im = v.reshape(n, n).astype(np.float32)
            out: FloatArray = im / np.maximum(cv2.GaussianBlur(im, (0, 0), sigma), 0.05)
            return out.ravel()

        return _ncc(local(x), local(tmpl)) >= float(self.cfg["print_shaded_ncc"])

    def print_model(self, image: np.ndarray, pose: Pose, wb: WhiteBalance,
                    model: ColourModel) -> ColourClass | None:
        """What an empty site looks like in this photo (see :func:`fit_site_print`)."""
        g = self.g
        H, W = image.shape[:2]
        key = ("print_points", (H, W))
        strips = self.strips(pose)
        hit = strips.cache.get(key)
        if hit is None:  # the pose's alone: a still camera projects them once
            k = np.linspace(-8.0, 8.0, 5)
            X, Y = np.meshgrid(k, k)
            offs = np.column_stack([X.ravel(), Y.ravel()])
            pts = (g.site_xy[:, None, :] + offs[None]).reshape(-1, 2)
            pix = project_fast(pose, np.column_stack([pts, np.zeros(len(pts))]))
            inside = ((pix[:, 0] >= 0) & (pix[:, 0] < W) & (pix[:, 1] >= 0)
                      & (pix[:, 1] < H)).reshape(len(g.sites), -1).all(axis=1)
            hit = strips.keep(key, (np.clip(pix, 0, [W - 1, H - 1]), inside))
        at, inside = hit
        vals = sample_bilinear(image, at)
        f = features(wb.apply(vals)).reshape(len(g.sites), -1, 3)
        med = np.median(f, axis=1)
        med[~inside] = np.nan
        return fit_site_print(med, model, min_block_d2=float(self.cfg["print_block_d2"]),
                              near_block_d2=float(self.cfg["print_near_block_d2"]),
                              near_min_sites=int(self.cfg["print_near_min_sites"]),
                              brighter_log=float(self.cfg["print_brighter_log"]))

    def board_model(self, image: np.ndarray, pose: Pose, wb: WhiteBalance) -> BoardModel:
        """What board and table look like in this photo, from places no tower can cover.

        Board-plane points outside every site's tallest possible silhouette
        (and off the markers and card stacks) can only show print, table or
        a hand; their colour clusters tell board from plastic whatever the art.
        """
        vals = sample_bilinear(image, self._board_points(pose, image.shape[:2]))
        return fit_board_model(features(wb.apply(vals)), k=int(self.cfg["board_clusters"]))

    def _board_points(self, pose: Pose, shape: tuple[int, ...]) -> FloatArray:
        """The pixels :meth:`board_model` samples: they depend on the pose alone, so
        they are kept with its strips (a still camera finds them once)."""
        H, W = shape[:2]
        key = ("board_points", (H, W), float(self.cfg["max_height"]),
               float(self.cfg["board_sample_mm"]), float(self.cfg["table_ring_mm"]))
        strips = self.strips(pose)
        hit: FloatArray | None = strips.cache.get(key)
        if hit is not None:
            return hit
        g = self.g
        mask = np.zeros((H, W), np.uint8)
        reach = g.footprint / 2 + g.jitter_mm + 2.0
        top = float(self.cfg["max_height"]) * g.storey
        sq = np.array([[-reach, reach], [reach, reach], [reach, -reach], [-reach, -reach]])
        boxes = np.zeros((len(g.site_xy), 8, 3))
        boxes[:, :4, :2] = g.site_xy[:, None, :] + sq[None]
        boxes[:, 4:, :2] = boxes[:, :4, :2]
        boxes[:, 4:, 2] = top
        for corners in project_fast(pose, boxes).astype(np.float32):
            fill_convex(mask, corners, 1)
        for mid in g.marker_centres:
            r = g.marker_size / 2 + g.marker_quiet + 3
            cx, cy = g.marker_centres[mid]
            quad = np.array([[cx - r, cy + r, 0], [cx + r, cy + r, 0], [cx + r, cy - r, 0],
                             [cx - r, cy - r, 0]])
            fill_convex(mask, project_fast(pose, quad), 1, is_hull=True)
        bw, bh = g.board_size
        step = float(self.cfg["board_sample_mm"])
        ring = float(self.cfg["table_ring_mm"])
        xs = np.arange(-bw / 2 - ring, bw / 2 + ring, step)
        ys = np.arange(-bh / 2 - ring, bh / 2 + ring, step)
        X, Y = np.meshgrid(xs, ys)
        # the card stacks lie within this band outside the board's edge: skip it
        inner = (np.abs(X) < bw / 2 + 2) & (np.abs(Y) < bh / 2 + 2)
        far = (np.abs(X) > bw / 2 + g.card.edge_gap + g.card.size[1] + 15) | (
            np.abs(Y) > bh / 2 + g.card.edge_gap + g.card.size[1] + 15)
        keep = inner | far
        pts = np.column_stack([X[keep], Y[keep], np.zeros(int(keep.sum()))])
        pix = project_fast(pose, pts)
        ok = (pix[:, 0] >= 0) & (pix[:, 0] < W - 1) & (pix[:, 1] >= 0) & (pix[:, 1] < H - 1)
        pix = pix[ok]
        ok2 = mask[pix[:, 1].astype(np.int32), pix[:, 0].astype(np.int32)] == 0
        return strips.keep(key, pix[ok2])

    def _refit(self, results: list[SiteResult], model: ColourModel) -> ColourModel | None:
        """Re-centre each colour on the confidently read tops of this photo."""
        samples: dict[str, list[FloatArray]] = {}
        for r in results:
            if (r.height and r.color and r.top_feature is not None
                    and r.margin >= self.cfg["refit_min_margin"] and r.uniform > 0.6):
                samples.setdefault(r.color, []).append(r.top_feature)
        if not samples:
            return None
        return model.fit({k: np.asarray(v) for k, v in samples.items()}, prior_weight=3.0)

    def _read_all(self, image: np.ndarray, pose: Pose, strips: Strips, sf: StripFeatures,
                  model: ColourModel) -> tuple[list[SiteResult], _Rounds]:
        """Score all sites at once, then re-score those that read towers now occlude.

        A site's occluders are the towers nearer to the camera; since those may
        change when they are re-scored themselves, this repeats until nothing
        changes (two or three rounds).
        """
        cfg = self.cfg
        h, w = image.shape[:2]
        n = len(self.g.sites)
        rank = _nearness_rank(strips)
        # (the rows the strip features were sampled at: all, or the first ones)
        px, py = _sample_pixels(strips, sf.inside.shape[1], (h, w))
        occluded = np.zeros(sf.inside.shape, bool)
        scored_under = occluded.copy()  # the mask each site was last scored under
        results: list[SiteResult] = [None] * n  # type: ignore[list-item]
        todo = np.arange(n)
        first: list[tuple[int | None, str | None, float, float]] = []
        for _ in range(int(cfg["occlusion_rounds"])):
            for i, res in zip(todo, self._score_under(todo, occluded, strips, sf, model),
                              strict=True):
                results[int(i)] = res
            if not first:
                for r in results:
                    seen, colour = (r.height, r.color) if r.height is not None else (
                        r.hidden_best or (None, None))
                    first.append((seen, colour, r.score, r.depth))
            scored_under[todo] = occluded[todo]
            if not cfg["occlusion"]:
                break
            nearest = self._silhouettes(pose, strips, results, rank, (h, w))
            self._nearest = nearest  # the silhouettes of the results as they stand
            new_occ = _occluded(nearest, px, py, rank)
            changed = np.flatnonzero(np.any(new_occ != occluded, axis=(1, 2)))
            occluded = new_occ
            if len(changed) == 0:
                break
            todo = changed
        if cfg["occlusion"] and cfg["uncover_margin"] is not None:
            self._uncover_hidden(pose, strips, sf, model, results, rank, occluded,
                                 scored_under, px, py)
        if cfg["occlusion"] and cfg["exact_visible"]:
            self._exact_visibility(pose, strips, results, rank)
        if cfg["occlusion"] and cfg["occlude_unseen"] and float(cfg["refute_margin"]) > 0:
            self._refute_guesses(pose, strips, sf, model, results, rank, occluded, px, py,
                                 scored_under)
        return results, _Rounds(scored_under, px, py, rank, [r.height for r in results], first)

    def _top_face(self, pose: Pose, st: Strips, i: int, height: int,
                  depth: float) -> FloatArray:
        """Site ``i``'s top face at ``height`` storeys and ``depth`` mm along its line of
        sight, in the photo: (4, 2) pixel corners."""
        return self._top_faces(pose, st, np.array([i]), np.array([height]),
                               np.array([depth]))[0]

    def _top_faces(self, pose: Pose, st: Strips, idx: np.ndarray, heights: np.ndarray,
                   depths: np.ndarray) -> FloatArray:
        """:meth:`_top_face` of the sites ``idx`` at once: (n, 4, 2) pixel corners."""
        g = self.g
        h = g.footprint / 2
        centres = g.site_xy[idx] + depths[:, None] * st.v[idx]
        pts = np.empty((len(idx), 4, 3))
        pts[:, :, :2] = centres[:, None, :] + np.array([[-h, h], [h, h], [h, -h], [-h, -h]])
        pts[:, :, 2] = (heights * g.storey)[:, None]
        return project_fast(pose, pts)

    def _top_visible(self, pose: Pose, st: Strips, i: int, height: int, depth: float,
                     rank: np.ndarray) -> float:
        """The share of site ``i``'s top face (at ``height`` and ``depth``) in the photo
        that no nearer tower's silhouette covers, over its pixels."""
        assert self._nearest is not None
        pix = self._top_face(pose, st, i, height, depth)
        H, W = self._nearest.shape
        lo = np.floor(pix.min(axis=0)).astype(int)
        hi = np.ceil(pix.max(axis=0)).astype(int)
        if np.any(hi - lo < 2) or np.any(hi - lo > 4 * max(H, W)):
            return 0.0  # a top a pixel wide, or one behind the camera
        local = np.zeros((hi[1] - lo[1] + 1, hi[0] - lo[0] + 1), np.uint8)
        cv2.fillConvexPoly(local, np.round(pix - lo).astype(np.int32), 1)
        ys, xs = np.nonzero(local)
        if len(ys) == 0:
            return 0.0
        ys, xs = ys + lo[1], xs + lo[0]
        inside = (ys >= 0) & (ys < H) & (xs >= 0) & (xs < W)
        free = np.zeros(len(ys), bool)
        free[inside] = self._nearest[ys[inside], xs[inside]] >= rank[i]
        return float(free.mean())

    def _exact_visibility(self, pose: Pose, st: Strips, results: list[SiteResult],
                          rank: np.ndarray) -> None:
        """A tower read hidden whose top face shows half or more (``min_visible``) past
        the nearer towers' silhouettes is read.

        The hidden test weighs a top's samples on the strip's three lateral
        lines, 10 mm of a 26 mm top: a nearer tower beside the line of sight
        covers one or two of them whole and the third not at all, while most
        of the face shows. The face itself, filled in the photo and looked up in
        the silhouettes, says how much of it is in view. The other way (a
        reading whose lines show but whose face is mostly covered) is left to
        the lines: sent to ``unseen`` so, more right readings are lost than
        wrong ones; so is a site the checks after the rounds uncover (two wrong
        readings for one right: docs/vision-errors.md, sixty-first session).
        """
        if self._nearest is None:
            return
        cfg = self.cfg
        least = float(cfg["min_visible"])
        changed = False
        for i, r in enumerate(results):
            if r.reason != "hidden" or r.hidden_best is None or not r.hidden_best[0]:
                continue
            height, colour = r.hidden_best
            shown = self._top_visible(pose, st, i, height, r.depth, rank)
            if shown < least:
                continue
            r.height, r.color, r.reason, r.visible = height, colour, "", shown
            r.hidden_best = None
            if self._foot_hidden(r):
                r.reason = "foot hidden"
                r.height, r.color = None, None
            changed = True
        if changed:
            self._nearest = self._silhouettes(pose, st, results, rank, self._nearest.shape[:2])

    def _uncover_after_checks(self, pose: Pose, strips: Strips, sf: StripFeatures,
                              model: ColourModel, results: list[SiteResult],
                              rounds: _Rounds) -> None:
        """:meth:`_uncover_hidden` again once the checks after the rounds changed readings
        (a tower the print refutes hides nothing; a site under it stayed hidden), and
        :meth:`_cover_read` for the towers the checks found (which hide sites read)."""
        if self._nearest is None:
            return
        hiders = self._found_after_rounds(results, rounds.heights)
        uncover = self.cfg["uncover_margin"] is not None and any(
            r.reason in ("hidden", "foot hidden") for r in results)
        if not hiders and not uncover:
            return  # (nothing to cover or uncover: the silhouettes are not drawn again)
        scored_under, px, py, rank = rounds[:4]
        self._nearest = self._silhouettes(pose, strips, results, rank, self._nearest.shape[:2])
        occluded = _occluded(self._nearest, px, py, rank)
        if hiders:
            self._cover_read(strips, sf, model, results, hiders, occluded, rounds)
        if uncover:
            # (the last step that looks at silhouettes: none are drawn after it)
            self._uncover_hidden(pose, strips, sf, model, results, rank, occluded,
                                 scored_under, px, py, redraw=False)

    def _found_after_rounds(self, results: list[SiteResult],
                            before: list[int | None]) -> set[int]:
        """The towers the checks after the occlusion rounds found (none with
        ``cover_margin`` null): a site read empty in the rounds that the checks
        read as a tower, and a covered site whose best tower passes the covered-tower
        rescue's tests but the arm rule kept unseen (:func:`covered_tower_lead`)."""
        if self.cfg["cover_margin"] is None:
            return set()
        return {i for i, r in enumerate(results)
                if (r.height and not before[i]) or (
                    r.reason == "covered" and covered_tower_lead(r, self.cfg) is not None)}

    def _cover_read(self, strips: Strips, sf: StripFeatures, model: ColourModel,
                    results: list[SiteResult], hiders: set[int], occluded: np.ndarray,
                    rounds: _Rounds) -> None:
        """Read again, under the silhouettes as they now stand, the towers that
        ``hiders`` newly hide in part and that won by under ``cover_margin`` (not
        the hiders themselves: the checks read them on evidence the scorer lacks).

        A tall tower read empty in the occlusion rounds hid nothing there, so the
        site behind it was read on the tower's own faces: a phantom of its colour
        (companion/sim phone 605/5: 3E, a 4-storey blue read empty and then found
        by the print check; 3C behind it, an empty site hidden by it, read as a
        2-storey blue). A covered site's guess is painted as :meth:`_painted`
        paints every unseen site's, but only a guess the rescue's tests pass
        is trusted to hide a reading: every covered site's guess hid more right
        towers than phantoms (docs/vision-errors.md, sixty-second session).
        """
        assert self._nearest is not None
        scored_under, px, py = rounds[:3]
        at_rank = _nearness_order(strips)
        least = float(self.cfg["cover_margin"])
        cand = []
        for i, r in enumerate(results):
            if i in hiders or not (r.height and not r.reason and r.margin < least):
                continue
            new = occluded[i] & ~scored_under[i]
            if not np.any(new):
                continue
            if self._covering(py[i][new], px[i][new], at_rank) & hiders:
                cand.append(i)
        if not cand:
            return
        idx = np.array(cand, np.int64)
        for i, res in zip(idx, self._score_under(idx, occluded, strips, sf, model),
                          strict=True):
            results[int(i)] = res
            scored_under[int(i)] = occluded[int(i)]

    def _covering(self, ys: np.ndarray, xs: np.ndarray, at_rank: np.ndarray) -> set[int]:
        """The sites whose silhouettes (as last drawn) cover the pixels (``ys``, ``xs``);
        ``at_rank``: the site at each nearness rank."""
        assert self._nearest is not None
        return {int(at_rank[c]) for c in np.unique(self._nearest[ys, xs])
                if c < len(at_rank)}

    def _uncover_hidden(self, pose: Pose, strips: Strips, sf: StripFeatures,
                        model: ColourModel, results: list[SiteResult], rank: np.ndarray,
                        occluded: np.ndarray, scored_under: np.ndarray, px: np.ndarray,
                        py: np.ndarray, redraw: bool = True) -> None:
        """Read again the hidden sites that the towers as finally read no longer hide
        (``redraw``: the silhouettes drawn again when one is taken, for the steps after).

        The occlusion rounds stop after ``occlusion_rounds``: a site found hidden
        behind a nearer site's first reading (a phantom, a tower a storey too
        tall) stays hidden when that reading changes in the last round. Such a
        site, read under the final silhouettes, takes the new reading when it is
        a reading that wins by ``uncover_margin`` or more; the other sites are
        left as they were (another round for all of them sent more sites to
        ``unseen`` than it brought back, docs/vision-errors.md).
        """
        cand = np.array([i for i, r in enumerate(results)
                         if r.height is None and r.reason in ("hidden", "foot hidden")
                         and np.any(scored_under[i] & ~occluded[i])], np.int64)
        if len(cand) == 0:
            return
        least = float(self.cfg["uncover_margin"])
        taken = False
        for i, res in zip(cand, self._score_under(cand, occluded, strips, sf, model),
                          strict=True):
            if res.height is not None and res.margin >= least:
                results[int(i)] = res
                scored_under[int(i)] = occluded[int(i)]
                taken = True
        if taken and redraw and self._nearest is not None:
            self._nearest = self._silhouettes(pose, strips, results, rank,
                                              self._nearest.shape[:2])

    def _refute_guesses(self, pose: Pose, strips: Strips, sf: StripFeatures,
                        model: ColourModel, results: list[SiteResult], rank: np.ndarray,
                        occluded: np.ndarray, px: np.ndarray, py: np.ndarray,
                        scored_under: np.ndarray) -> None:
        """Drop unseen sites' guesses that a site behind them contradicts.

        A site the reader cannot settle hides what lies behind it with its best
        guess. When the guess is a phantom (its "top" is a farther tower's),
        the farther site, read without the guess in the way, settles surely:
        its own reading stands, the guess hides nothing, and every other site
        it hid is read again without it.
        """
        if self._nearest is None:
            return
        h, w = self._nearest.shape
        guesses = {i for i, r in enumerate(results) if r.height is None and r.tower is not None}
        if not guesses:
            return
        plain = self._silhouettes(pose, strips, results, rank, (h, w), skip=guesses)
        occ_plain = _occluded(plain, px, py, rank)
        cand = np.array([i for i, r in enumerate(results)
                         if r.height is None and r.reason in ("hidden", "foot hidden")
                         and np.any(occ_plain[i] != occluded[i])], np.int64)
        if len(cand) == 0:
            return
        at_rank = _nearness_order(strips)
        refuted: set[int] = set()
        for i, res in zip(cand, self._score_under(cand, occ_plain, strips, sf, model),
                          strict=True):
            if res.height is None or res.margin < float(self.cfg["refute_margin"]):
                continue
            results[int(i)] = res
            scored_under[int(i)] = occ_plain[int(i)]
            refuted |= self._covering(py[i], px[i], at_rank) & guesses
        if not refuted:
            return
        # a refuted guess hides nothing: every site it hid is read again without it
        self._nearest = self._silhouettes(pose, strips, results, rank, (h, w), skip=refuted)
        occ = _occluded(self._nearest, px, py, rank)
        again = np.array([i for i in cand if results[int(i)].height is None
                          and int(i) not in refuted and np.any(occ[i] != occluded[i])],
                         np.int64)
        if len(again):
            for i, res in zip(again, self._score_under(again, occ, strips, sf, model),
                              strict=True):
                results[int(i)] = res
                scored_under[int(i)] = occ[int(i)]

    def _unexplained_tops(self, pose: Pose, st: Strips, results: list[SiteResult]) -> None:
        """A top seen without its foot that no tower farther back explains is its own.

        A foot-hidden top is doubted because along the line of sight a taller
        tower farther back may show the same top (:meth:`_decide`). That tower,
        if there, is read, or guessed where it is unseen (as the silhouettes paint
        it, :meth:`_painted`): when none of the top's
        colour farther back covers the place the top shows in the photo and the
        top scores ``foot_hidden_keep_score`` or more (null: never), the top
        stands. (Measured on all three renderers' sets: eight tops read right for
        each read wrong or read at a hidden site; a lower score, or any colour
        explaining, reads more of the hidden sites' phantoms.)
        """
        keep = self.cfg["foot_hidden_keep_score"]
        if keep is None:
            return
        cand = [i for i, r in enumerate(results)
                if r.reason == "foot hidden" and r.tower is not None and r.score >= float(keep)]
        if not cand:
            return
        g = self.g
        rank = _nearness_rank(st)
        towers = self._painted(results, rank)  # read, or an unseen site's guess
        hulls = self._hulls(pose, st, towers)
        k = (np.arange(5) - 2) / 2 * 0.4 * g.footprint  # a 5 x 5 grid over 80% of a top
        grid = np.stack(np.meshgrid(k, k), -1).reshape(-1, 2)
        for i in cand:
            r = results[i]
            tw = r.tower
            assert tw is not None
            top = np.zeros((len(grid), 3))
            top[:, :2] = g.site_xy[i] + tw[2] * st.v[i] + grid
            top[:, 2] = tw[0] * g.storey
            pts = [(float(x), float(y)) for x, y in project_fast(pose, top)]
            explained = any(
                any(cv2.pointPolygonTest(hull, p, False) >= 0 for p in pts)
                for (j, _, _, colour), hull in zip(towers, hulls, strict=True)
                if rank[j] > rank[i] and colour == tw[1])
            if not explained:
                r.take_tower()

    def _score_under(self, idx: np.ndarray, occluded: np.ndarray, st: Strips,
                     sf: StripFeatures, model: ColourModel) -> list[SiteResult]:
        """Score the sites ``idx`` with the strip samples ``occluded`` masks left out."""
        vis = (sf.inside[idx] & ~occluded[idx]).astype(np.float64)
        return self._score(idx, st, sf, vis, model)

    def tower_mask(self, pose: Pose, strips: Strips, results: list[SiteResult],
                   shape: tuple[int, int]) -> np.ndarray:
        """Pixels the towers read cover.

        What lies beside the board (the played cards) is read only where no
        tower stands in front of it: a tower's side face, striped by its
        storeys, would otherwise count against (or for) a card's grid. Unseen
        sites' guesses are left out: a phantom guess would hide a card in
        plain view.
        """
        n = len(results)
        rank = _nearness_rank(strips)
        guesses = {i for i, r in enumerate(results) if r.height is None}
        covered: np.ndarray = self._silhouettes(pose, strips, results, rank, shape,
                                                skip=guesses) < n
        return covered

    def guessed_mask(self, pose: Pose, strips: Strips, results: list[SiteResult],
                     shape: tuple[int, int], covered: np.ndarray | None) -> np.ndarray:
        """Pixels the guesses of the sites left unseen would cover that no tower read
        covers (``covered``, :meth:`tower_mask`): where such a tower may stand before
        a card stack, a card read there narrowly is not read (the cards' ``guess_share``)."""
        n = len(results)
        every: np.ndarray = self._silhouettes(pose, strips, results, _nearness_rank(strips),
                                              shape) < n
        return every if covered is None else every & ~covered

    def _silhouettes(self, pose: Pose, st: Strips, results: list[SiteResult],
                     rank: np.ndarray, shape: tuple[int, int],
                     skip: set[int] | None = None) -> np.ndarray:
        """Per pixel, the rank of the nearest read tower covering it (n if none).

        A site too hidden to read may still hide what lies behind it: its best
        tower hypothesis is painted too (``occlude_unseen``), so the faces of a
        tower the reader could not settle are not read as towers farther back.
        """
        n = len(results)
        # ranks fit a byte (a board has fewer than 255 sites): a quarter of the memory
        # to fill and to look up, and the polygons fill the same pixels at any depth
        mask = np.full(shape, n, np.uint8 if n < 255 else np.int32)
        towers = self._painted(results, rank, skip)
        hulls = self._hulls(pose, st, towers)
        plain = within_reach(hulls, shape)  # as nearly always: no corner to clamp
        for (i, _, _, _), hull in zip(towers, hulls, strict=True):
            if plain:
                cv2.fillConvexPoly(mask, np.round(hull.reshape(-1, 2)).astype(np.int32),
                                   int(rank[i]))
            else:
                fill_convex(mask, hull, int(rank[i]), is_hull=True)
        return mask

    def _painted(self, results: list[SiteResult], rank: np.ndarray,
                 skip: set[int] | None = None) -> list[tuple[int, int, float, str | None]]:
        """The towers that hide what lies behind them, far first: each tower read, and
        (``occlude_unseen``) each unseen site's best tower, unless in ``skip``. Site,
        height, depth and colour."""
        guesses = self._guesses(results) - (skip or set())
        towers: list[tuple[int, int, float, str | None]] = []
        for i in np.argsort(-rank):  # far first, near overwrite
            r = results[int(i)]
            if r is None:
                continue
            if r.height:
                towers.append((int(i), int(r.height), float(r.depth), r.color))
            elif int(i) in guesses:
                assert r.tower is not None
                towers.append((int(i), int(r.tower[0]), float(r.tower[2]), r.tower[1]))
        return towers

    def _guesses(self, results: Sequence[SiteResult | None]) -> set[int]:
        """The unseen sites whose best tower the silhouettes paint (``occlude_unseen``)."""
        if not self.cfg["occlude_unseen"]:
            return set()
        return {i for i, r in enumerate(results)
                if r is not None and r.height is None and r.tower is not None}

    def _hulls(self, pose: Pose, st: Strips,
               towers: Sequence[tuple[int, int, float, str | None]]) -> list[np.ndarray]:
        """Each tower's outline in the photo (float32 convex hull): its box, a little
        wider than a block (``occluder_pad_mm``), at its depth along the line of sight."""
        if not towers:
            return []
        g = self.g
        half = g.footprint / 2 + self.cfg["occluder_pad_mm"]
        sq = np.array([[-half, half], [half, half], [half, -half], [-half, -half]])
        ii = np.array([t[0] for t in towers])
        centres = g.site_xy[ii] + np.array([t[2] for t in towers])[:, None] * st.v[ii]
        boxes = np.zeros((len(towers), 8, 3))
        boxes[:, :4, :2] = centres[:, None, :] + sq[None]
        boxes[:, 4:, :2] = boxes[:, :4, :2]
        boxes[:, 4:, 2] = (np.array([t[1] for t in towers]) * g.storey)[:, None]
        pix = project_fast(pose, boxes).astype(np.float32)
        return [cv2.convexHull(pix[k]) for k in range(len(towers))]

    # -- scoring ------------------------------------------------------------

    def _score(self, idx: np.ndarray, st: Strips, sf: StripFeatures, vis: FloatArray,
               model: ColourModel) -> list[SiteResult]:
        """Score every (height, depth) hypothesis of the sites ``idx``: the fitted
        scorer over the evidence terms, less the side-colour penalty and the
        plastic-footprint penalty of the empty site.

        The fitted scorer gives the empty site 8 points or more even where every
        footprint sample in view looks like plastic; a tower whose colour fits a
        little worse (another renderer's blue, a cast fitted on green tops) scores
        less and the site goes to ``unseen`` ("covered") or, its occlusion not
        painted, hides nothing. So the empty site loses points where its footprint
        looks like plastic (:func:`plastic_footprint_penalty`). On the raycast sets
        3,106 -> 3,000 (docs/vision-errors.md, seventieth session)."""
        F, aux = self._features(idx, st, sf, vis, model)
        score = self.scorer(F)
        w_side = float(self.cfg["side_colour_weight"])
        if w_side > 0:
            # not a term of the fitted scorer: a penalty on top of it (refitting the
            # scorer has cost more than it gained, docs/vision-errors.md)
            cap = float(self.cfg["side_colour_cap"])
            score = score - w_side * np.clip(
                aux["side_colour"] - float(self.cfg["side_colour_free"]), 0.0, cap) / cap
        if float(self.cfg["empty_plastic_weight"]) > 0:  # also not a term of the fitted scorer
            # (the scorer's output is a new array each call: taken off in place)
            score[:, 0, :] -= plastic_footprint_penalty(
                F[:, 0, :, FEATURES.index("empty_board")],
                F[:, 0, :, FEATURES.index("empty_print")],
                F[:, 0, :, FEATURES.index("empty_hidden")], self.cfg)
        self.debug = {**aux, "score": score, "features": F, "sites": idx}
        best = self._best(idx, score, aux["heights"])
        results = [self._decide(int(idx[k]), best[k], aux["cls"][k], aux["vis"][k],
                                aux["uniform"][k], aux["top_feat"][k], aux["depths"],
                                aux["heights"], model, aux["colour"][k], aux["side_step"][k])
                   for k in range(len(idx))]
        board = F[:, 0, :, FEATURES.index("empty_board")]  # the empty hypothesis' row
        for k, r in enumerate(results):
            r.foot_board = float(board[k, best[k].depth[0]])
        return results

    def _best(self, idx: np.ndarray, score: FloatArray, heights: np.ndarray) -> list[_Best]:
        """Per site of ``idx``, its best hypotheses (:class:`_Best`) among the heights its
        range allows: the arg-maxima and the sort of all sites at once (the same
        indices as site by site; per site they cost more than the scoring)."""
        limited = None
        for k, i in enumerate(idx):
            limits = self._range.get(int(i))
            if limits is None:
                continue
            allowed = (heights >= limits[0]) & (heights <= limits[1])
            if allowed.any() and not allowed.all():
                if limited is None:
                    limited = score.copy()
                limited[k] = np.where(allowed[:, None], score[k], -np.inf)
        if limited is not None:
            score = limited
        depth = np.argmax(score, axis=2)  # (G, H): each height's best depth
        per_h = np.take_along_axis(score, depth[..., None], axis=2)[..., 0]
        won = np.argmax(per_h, axis=1)
        order = np.argsort(-per_h, axis=1)
        tower = (1 + np.argmax(per_h[:, 1:], axis=1) if len(heights) > 1
                 else np.full(len(idx), -1))
        return [_Best(depth[k], per_h[k], int(won[k]), order[k], int(tower[k]))
                for k in range(len(idx))]

    def _geometry(self, st: Strips) -> dict[str, Any]:
        """Where every (height, depth) hypothesis of every site puts its edges and bands.

        Row indices into the strips' cumulative sums, for all sites at once; they
        depend on the pose only, so they are kept with the strips (a fixed camera
        reuses them, and the occlusion rounds index them by site).
        """
        cfg = self.cfg
        g = self.g
        key = ("geometry", int(cfg["max_height"]), float(cfg["depth_step_mm"]),
               float(cfg["front_mm"]), float(cfg["band_margin_px"]),
               float(cfg["edge_window_px"]), float(cfg["edge_gap_px"]),
               float(cfg["base_window_px"]), tuple(float(x) for x in cfg["lateral_shifts"]),
               self.offsets, g.jitter_mm, g.footprint, g.storey)
        hit = st.cache.get(key)
        if hit is not None:
            return hit
        N = st.rows
        S = len(st.rho_c)
        sites = np.arange(S)
        J = g.jitter_mm + 0.5
        nd = max(3, int(round(2 * J / cfg["depth_step_mm"])) + 1)
        depths = np.linspace(-J, J, nd)
        heights = np.arange(0, int(cfg["max_height"]) + 1)
        lat = np.asarray(self.offsets, np.float64)
        c = len(lat) // 2  # the centre lateral
        half = g.footprint / 2
        v = st.v
        jit = g.jitter_mm
        spans = [footprint_span_axes(v, lat + o, half) for o in (0.0, -jit, jit)]
        near = spans[0][0][:, c]
        far = spans[0][1][:, c]
        near_in = np.max([sp[0].max(axis=1) for sp in spans], axis=0)  # (S,)
        far_in = np.min([sp[1].min(axis=1) for sp in spans], axis=0)
        far_in = np.maximum(far_in, near_in + 2.0)

        S3 = sites[:, None, None]
        D3 = depths[None, None, :]
        Z3 = (heights * g.storey)[None, :, None]

        def row(rho: FloatArray, z: FloatArray | float) -> FloatArray:
            return st.row_of(S3, rho[:, None, None] + D3, z)

        def idx(r: FloatArray) -> np.ndarray:
            return np.clip(np.round(r).astype(np.int64), 0, N)

        r_bn = row(near, 0.0)  # (S, 1, nd): rows that depend on the depth only
        r_front = row(near - cfg["front_mm"], 0.0)
        r_bn_in = row(near_in, 0.0)
        r_fp_in = row(far_in, 0.0)
        r_fp = row(far, 0.0)
        r_tn = row(near, Z3)  # (S, nh, nd)
        r_tn_in = row(near_in, Z3)
        r_tf_in = row(far_in, Z3)
        px_row = st.px_row
        m = (cfg["band_margin_px"] / px_row)[:, None, None]
        win = np.maximum(1.0, cfg["edge_window_px"] / px_row)
        out: dict[str, Any] = {}
        a = idx(r_tn_in + m)
        out["top_a"] = a
        out["top_b"] = np.maximum(a, idx(r_tf_in - m))
        shifts = []
        w3 = win[:, None, None]
        for shift in np.asarray(cfg["lateral_shifts"], np.float64) * jit:
            n_s, f_s, _, _ = footprint_span_axes(v, np.array([-shift]), half)
            tn = row(n_s[:, 0], Z3)
            tf = row(f_s[:, 0], Z3)
            bn = row(n_s[:, 0], 0.0)
            foot = (idx(bn + 0.5), idx(bn + 0.5 + w3), idx(bn + 0.5 + 2 * w3))
            shifts.append((idx(tf + 0.5), idx(tn + 0.5), idx(bn + 0.5), foot))
        out["shifts"] = shifts
        out["n_ref"] = np.maximum(np.median(r_fp - r_bn, axis=(1, 2)), 1.0)
        sa = np.broadcast_to(idx(r_bn + m), r_tn.shape)
        out["sa"] = idx(r_bn + m)
        out["sb"] = np.maximum(sa, idx(r_tn - m))
        out["fe"] = np.maximum(sa, np.minimum(idx(r_fp - m), idx(r_tn - m)))
        fa = idx(r_front)
        out["fa"] = fa
        out["fb"] = np.maximum(fa, idx(r_bn - m))
        ea = idx(r_bn_in[:, 0] + m[:, 0])
        out["ea"] = ea
        out["eb"] = np.maximum(ea, idx(r_fp_in[:, 0] - m[:, 0]))
        k = np.maximum(1.0, cfg["base_window_px"] / px_row)[:, None, None]
        out["b0"] = idx(r_bn + 0.5)
        out["bw0"] = idx(r_bn + 0.5 - k)
        out["bw1"] = idx(r_bn + 0.5 + k)
        out["t0"] = idx(r_tf_in + m)
        out["t1"] = idx(r_tf_in + m + k)
        # the top block's side face: the storey just below the near-top edge (the
        # foot to the top for one storey), half a band margin in from each end
        r_lo = np.concatenate([np.broadcast_to(r_bn, r_tn[:, :1].shape), r_tn[:, :-1]], axis=1)
        out["ta"] = idx(r_lo + 0.5 + m / 2)
        out["tb"] = np.maximum(out["ta"], idx(r_tn + 0.5 - m / 2))
        out["edge_idx"] = self._edge_index(N, cfg["edge_gap_px"] / px_row, win)
        st.keep(key, out)
        return out

    def _scored_heights(self, idx: np.ndarray, hmax: int) -> np.ndarray | None:
        """The heights worth scoring at the sites ``idx``: the empty site and every
        height the game record allows one of them (``read``'s ``height_range``);
        None for all of them.

        The others would score only to be ruled out in :meth:`_decide`: tracking
        a game, each site may grow by one block, so a board of low towers needs a
        few heights of the 33 (every hypothesis is scored alone, so the ones
        kept score exactly as among all).
        """
        if not self._range:
            return None
        keep = np.zeros(hmax + 1, bool)
        keep[0] = True
        for i in idx:
            lim = self._range.get(int(i))
            lo, hi = (0, -1) if lim is None else (max(int(lim[0]), 0), min(int(lim[1]), hmax))
            if lo > hi:
                # unlimited; or a range with no height in it, where _decide rules
                # nothing out: either way all heights count
                return None
            keep[lo:hi + 1] = True
        return None if keep.all() else np.flatnonzero(keep)

    def _rows_to_read(self, st: Strips) -> int | None:
        """The strip rows the heights to be scored look at, over all sites (None: all).

        Tracking a game, a board of low towers is scored on the first rows of
        each strip (:meth:`_scored_heights`, :func:`_rows_needed`): the rows
        past them need not be sampled either.
        """
        hmax = int(self.cfg["max_height"])
        sites = np.arange(len(st.rho_c))
        scored = self._scored_heights(sites, hmax) if self.cfg["ranged_heights_only"] else None
        if scored is None:
            return None
        geo = _heights_of(self._geometry(st), scored, hmax + 1)
        rows, _ = _rows_needed(geo, sites, st.rows,
                               _peak_reach(self.cfg["edge_peak_px"] / st.px_row))
        return rows

    @staticmethod
    def _edge_index(n: int, gap: FloatArray, win: FloatArray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The window bounds of :meth:`_edge_profile` for strips of ``n`` rows."""
        j = np.arange(n + 1)[None, :]
        gh = (np.asarray(gap) / 2)[:, None]
        wn = np.asarray(win)[:, None]
        ia = np.clip(np.round(j - gh - wn).astype(np.int64), 0, n)
        ib = np.clip(np.round(j - gh).astype(np.int64), 0, n)
        ja = np.clip(np.round(j + gh).astype(np.int64), 0, n)
        jb = np.clip(np.round(j + gh + wn).astype(np.int64), 0, n)
        return ia, ib, ja, jb

    def _features(self, idx: np.ndarray, st: Strips, sf: StripFeatures, vis: FloatArray,
                  model: ColourModel) -> tuple[FloatArray, dict[str, Any]]:
        """Evidence for every (height, depth) hypothesis of the sites ``idx`` at once.

        What the photo shows along the strips (:meth:`_photo_evidence`) judged with
        the colours in play: plastic or print likeness, colour fit.
        """
        cfg = self.cfg
        ev = self._photo_evidence(idx, st, sf, vis)
        geo, sel, L = ev.geo, ev.sel, ev.L
        rows, c, w = ev.rows, ev.c, ev.w
        depths, heights, J = ev.depths, ev.heights, ev.J
        D3 = depths[None, None, :]
        uniform, top_feat, vis_top, sig = ev.uniform, ev.top_feat, ev.vis_top, ev.sig
        P = sf.block[idx, :rows]
        cnb = _csum(_lsum(w * np.clip(1 - 2 * P, 0, 1)))
        cbl = _csum(_lsum(w * np.clip(2 * P - 1, 0, 1)))
        Q = sf.site_print[idx, :rows] if sf.site_print is not None else np.zeros_like(P)
        cpr = _csum(_lsum(w * Q))

        # --- top band interior: block-coloured
        # the top's distance to each colour, and (for its plastic likeness) as any face's
        d2, d2_face = model.distance2_both(top_feat.reshape(-1, 3), FACE_INTENSITY_SIGMA)
        d2 = d2.reshape(top_feat.shape[:-1] + (-1,))
        cls = np.argmin(d2, axis=-1)
        d2min = np.take_along_axis(d2, cls[..., None], axis=-1)[..., 0]
        colour = _colour_fit(d2min)
        if float(cfg["glare_log"]) > 0:
            colour, cls = self._glare_colour(top_feat, ev.m_sd * sig, ev.n_sd, uniform, colour,
                                             cls, model)
        # --- edges on the centre line, found exactly where predicted
        cpc = _csum(ev.wc * P[:, :, c])
        # the tower's sideways offset is unknown: seen diagonally it moves the centre
        # line's crossings off the corners, so try a few offsets and keep the best
        e_far: Any = None
        e_near: Any = None
        e_base: Any = None
        best: Any = None
        for ef, en, e_bn, foot in ev.shifts:
            # the foot: an edge into block plastic that looks like what stands above it
            eb = e_bn * foot.plastic(cpc)
            total = 1.5 * ef + 0.7 * en + 1.0 * eb
            if best is None:
                best, e_far, e_near, e_base = total, ef, en, np.broadcast_to(eb, ef.shape)
            else:
                better = total > best
                best = np.where(better, total, best)
                e_far = np.where(better, ef, e_far)
                e_near = np.where(better, en, e_near)
                e_base = np.where(better, eb, e_base)
        # --- side band: board-like where the tower should stand; block-like in front
        sa = ev.sa
        side_pen = _band(cnb, sa, geo["sb"][sel]) / ev.n_ref[:, None, None]
        # the foot: a tower covers its whole footprint, so board showing there (below
        # the top band) rules it out, however good a top some other tower offers
        fe, nfoot = ev.fe, ev.nfoot
        foot_pen = np.where(nfoot > 0.5 * L, _band(cnb, sa, fe) / np.maximum(nfoot, 1e-6), 0.0)
        foot_print = np.where(nfoot > 0.5 * L, _band(cpr, sa, fe) / np.maximum(nfoot, 1e-6),
                              0.0)
        fa, fb, nf = ev.fa, ev.fb, ev.nf
        front_pen = np.where(nf > 0.5, _band(cbl, fa, fb) / np.maximum(nf, 1e-6), 0.0)
        # --- empty site: the footprint shows board, nothing block-like
        ea, eb, ne = ev.ea, ev.eb, ev.ne
        fp_block = np.where(ne > 0.5, _band(cbl, ea, eb) / np.maximum(ne, 1e-6), 0.0)
        fp_print = np.where(ne > 0.5, _band(cpr, ea, eb) / np.maximum(ne, 1e-6), 0.0)
        fp_vis = ev.fp_vis
        p_top = block_probability(top_feat.reshape(-1, 3), model, self.board,
                                  cfg["block_t2"], cfg["block_soft"], d2_face
                                  ).reshape(uniform.shape)
        gate = np.clip(colour, 0, 1) * np.clip(uniform, 0, 1)
        shape = uniform.shape
        # feature-major storage: each term is one contiguous plane, and the scorer
        # sees the same memory layout (hence the same sums) as a gathered copy
        F = np.zeros((len(FEATURES),) + shape).transpose(1, 2, 3, 0)
        tower = np.ones(shape)
        tower[:, 0] = 0.0
        F[..., 0] = 1.0 - tower
        F[:, 0, :, 1] = fp_vis * (1.0 - 2.0 * fp_block)
        F[:, 0, :, 2] = 1.0 - fp_vis
        F[..., 3] = tower * vis_top * uniform
        F[..., 4] = tower * vis_top * colour
        F[..., 5] = tower * vis_top * (2.0 * p_top - 1.0)
        F[..., 6] = tower * gate * e_far
        F[..., 7] = tower * gate * e_near
        F[..., 8] = tower * gate * e_base
        F[..., 9] = tower * e_far
        F[..., 10] = tower * e_base
        F[..., 11] = tower * side_pen
        F[..., 12] = tower * foot_pen
        F[..., 13] = np.broadcast_to(front_pen, shape)
        F[..., 14] = tower * (D3 / J) ** 2
        F[..., 15] = tower * (1.0 - vis_top)
        F[..., 16] = tower * np.log(np.maximum(heights, 1))[None, :, None]
        F[..., 17] = tower * vis_top * uniform * colour
        F[:, 0, :, 18] = fp_vis * fp_print
        F[..., 19] = tower * foot_print
        # the foot, as a likelihood ratio: board just before the predicted base,
        # plastic just after it (a base one storey off fails one of the two)
        b0, bw0, bw1 = ev.base_rows
        n_before, n_after = ev.n_before, ev.n_after
        llr_b = np.where(n_before > 0.5, _band(cnb, bw0, b0) - _band(cbl, bw0, b0), 0.0) / (
            np.maximum(n_before, 1e-6))
        llr_a = np.where(n_after > 0.5, _band(cbl, b0, bw1) - _band(cnb, b0, bw1), 0.0) / (
            np.maximum(n_after, 1e-6))
        F[..., 20] = tower * np.broadcast_to(0.5 * (llr_b + llr_a), shape)
        # beyond the far edge: unlike the top (a same-coloured tower behind hides the edge)
        F[..., 21] = tower * ev.beyond
        vis_top = vis_top.copy()
        vis_top[:, 0] = fp_vis
        aux = {"uniform": uniform, "colour": colour, "e_far": e_far, "e_near": e_near,
               "e_base": e_base, "side": side_pen, "front": front_pen, "foot": foot_pen,
               "vis": vis_top, "cls": cls, "top_feat": top_feat, "depths": depths,
               "heights": heights, "side_colour": ev.side_colour,
               "side_step": np.where(
                   ev.n_sd >= float(cfg["bright_side_min_samples"]),
                   top_feat[..., 2] - ev.m_sd[..., 2] * sig[2], np.nan)}
        return F, aux

    def _photo_evidence(self, idx: np.ndarray, st: Strips, sf: StripFeatures,
                        vis: FloatArray) -> _Evidence:
        """:meth:`_evidence` of the sites ``idx`` with the samples ``vis`` weighs, or the
        same as made for an earlier read of this photo (another colour set, the toned
        colours: their first scoring weighs the same samples)."""
        scored = (self._scored_heights(idx, int(self.cfg["max_height"]))
                  if self.cfg["ranged_heights_only"] else None)
        for ev in self._evidence_made:
            if ev.shows(idx, st, sf.samples, vis, self.noise, scored):
                return ev
        ev = self._evidence(idx, st, sf, vis, scored)
        self._evidence_made = [ev, *self._evidence_made[:3]]
        return ev

    def _evidence(self, idx: np.ndarray, st: Strips, sf: StripFeatures, vis: FloatArray,
                  scored: np.ndarray | None) -> _Evidence:
        """What the photo shows for every (height, depth) hypothesis of the sites
        ``idx``, whatever the colours in play: the top band's mean colour and
        uniformity, the edges, how much of each band is in view, the colour beyond
        the top and on its side face.

        The lateral samples are first reduced to per-row signals: the centre
        line carries the edges, all laterals the band statistics.
        """
        cfg = self.cfg
        g = self.g
        G = len(idx)
        hmax = int(cfg["max_height"])
        J = g.jitter_mm + 0.5
        nd = max(3, int(round(2 * J / cfg["depth_step_mm"])) + 1)
        depths = np.linspace(-J, J, nd)
        heights = np.arange(0, hmax + 1)
        c = len(self.offsets) // 2  # the centre lateral
        geo = self._geometry(st)  # where each hypothesis' edges and bands fall
        if scored is not None:
            heights = heights[scored]
            geo = _heights_of(geo, scored, hmax + 1)
        px_row = st.px_row[idx]
        win = np.maximum(1.0, cfg["edge_window_px"] / px_row)
        sel = idx
        shape3 = (G, len(heights), nd)

        edge_idx = tuple(x[sel] for x in geo["edge_idx"])
        rows = st.rows
        if scored is not None:
            # a board of low towers: the rows past the tallest allowed top's far
            # edge (and the windows round it) are never looked at
            rows, last = _rows_needed(geo, sel, st.rows,
                                      _peak_reach(cfg["edge_peak_px"] / px_row))
            edge_idx = tuple(x[:, :last + 1] for x in edge_idx)
        sig = np.array([cfg["sigma_chroma"], cfg["sigma_chroma"], cfg["sigma_intensity"]])
        fl = sf.samples[idx, :rows] / sig  # (G, N, L, 3)
        vis = vis.copy()  # kept (to know it again), and the weights are views of it
        w = vis[:, :rows]  # (G, N, L)
        wr = _lsum(w)  # visible laterals per row
        cw = _csum(wr)
        wfl = w[..., None] * fl
        cf = _csum(_lsum(wfl))
        cf2 = _csum(_lsum(wfl * fl))  # per channel
        L = fl.shape[2]

        # --- top band interior: uniform
        a = geo["top_a"][sel]
        b = geo["top_b"][sel]
        n_top = _band(cw, a, b)
        vis_top = n_top / np.maximum((b - a) * L, 1)
        sum_f = _band(cf, a, b)
        mean_f = sum_f / np.maximum(n_top, 1e-6)[..., None]
        var = (_band(cf2, a, b) - sum_f * mean_f) / np.maximum(n_top, 1e-6)[..., None]
        top_feat = mean_f * sig
        # dark plastic is noisy in chroma and log brightness: widen the allowed
        # spread by the photo's pixel noise at the band's brightness
        lum = np.maximum(np.exp(top_feat[..., 2]) - LOG_EPS, 0.0)
        noise = self.noise

        def chroma_spread(lum: FloatArray) -> FloatArray:
            out: FloatArray = np.sqrt(
                sig[0] ** 2 + (1.5 * noise / (3 * lum + CHROMA_EPS)) ** 2) / sig[0]
            return out

        sc = chroma_spread(lum)
        sl = np.sqrt(sig[2] ** 2 + (noise / (lum + LOG_EPS)) ** 2) / sig[2]
        dev = (var[..., 0] + var[..., 1]) / sc ** 2 + var[..., 2] / sl ** 2
        uniform = 1.0 - np.minimum(dev, 4.0) / 2.0
        ta, tb = geo["ta"][sel], geo["tb"][sel]
        n_sd = _band(cw, ta, tb)
        m_sd = _band(cf, ta, tb) / np.maximum(n_sd, 1e-6)[..., None]
        # --- edges on the centre line, found exactly where predicted
        fc = fl[:, :, c, :]
        wc = w[:, :, c]
        cwc = _csum(wc)
        cfc = _csum(wc[..., None] * fc)
        prof = self._edge_profile(cfc, cwc, cfg["edge_gap_px"] / px_row, win,
                                  cfg["edge_peak_px"] / px_row,
                                  edge_idx)
        # each sideways offset of the tower: its far-top, near-top and base edges,
        # and what lies above the base
        shifts = []
        for i_tf, i_tn, i_bn, foot_idx in geo["shifts"]:
            # a boundary at fractional row r lies between samples, at cumsum index r + 0.5
            shifts.append((_take(prof, i_tf[sel]), _take(prof, i_tn[sel]),
                           _take(prof, i_bn[sel]),
                           _Foot.of(cfc, cwc, tuple(x[sel] for x in foot_idx))))
        # --- side band and foot: how much of each is in view
        n_ref = geo["n_ref"][sel] * L
        sa = np.broadcast_to(geo["sa"][sel], shape3)
        fe = geo["fe"][sel]
        nfoot = _band(cw, sa, fe)
        fa = geo["fa"][sel]
        fb = geo["fb"][sel]
        nf = _band(cw, fa, fb)
        # --- empty site: how much of the footprint is in view
        ea = geo["ea"][sel]
        eb = geo["eb"][sel]
        ne = _band(cw, ea, eb)
        fp_vis = ne / np.maximum((eb - ea) * L, 1)
        b0, bw0, bw1 = (geo[n][sel] for n in ("b0", "bw0", "bw1"))
        n_before = _band(cw, bw0, b0)
        n_after = _band(cw, b0, bw1)
        # beyond the far edge: unlike the top (a same-coloured tower behind hides the edge)
        t0 = geo["t0"][sel]
        t1 = geo["t1"][sel]
        nb = _band(cw, t0, t1)
        mb = _band(cf, t0, t1) / np.maximum(nb, 1e-6)[..., None]
        beyond = np.minimum(sum_last((mb - mean_f) ** 2), 9.0) / 9.0
        # the top block's side face shows the top's hue, only darker: a "top" above a
        # side of another colour is most often a farther tower's face seen past this
        # one. Chroma distance in the top band's units, widened by the pixel noise of
        # the darker of the two (``sc`` for the top, as for ``uniform``)
        lum_sd = np.maximum(np.exp(m_sd[..., 2] * sig[2]) - LOG_EPS, 0.0)
        d_sd = sum_last((m_sd[..., :2] - mean_f[..., :2]) ** 2) / np.maximum(
            sc, chroma_spread(lum_sd)) ** 2
        side_colour = np.where(n_sd >= float(cfg["side_colour_min_samples"]), d_sd, 0.0)
        side_colour[:, 0] = 0.0
        return _Evidence(
            idx=idx.copy(), strips=st, samples=sf.samples, vis=vis, noise=noise,
            scored=scored, geo=geo, sel=sel, L=L, rows=rows, c=c, w=w,
            wc=wc, depths=depths, heights=heights, J=J, sig=sig, uniform=uniform,
            top_feat=top_feat, vis_top=vis_top, n_sd=n_sd, m_sd=m_sd, shifts=shifts,
            n_ref=n_ref, sa=sa, fe=fe, nfoot=nfoot, fa=fa, fb=fb, nf=nf, ea=ea, eb=eb, ne=ne,
            fp_vis=fp_vis, base_rows=(b0, bw0, bw1), n_before=n_before, n_after=n_after,
            beyond=np.where(nb > 0.5, beyond, 0.0), side_colour=side_colour)

    def _glare_colour(self, top: FloatArray, side: FloatArray, n_side: FloatArray,
                      uniform: FloatArray, colour: FloatArray, cls: np.ndarray,
                      model: ColourModel) -> tuple[FloatArray, np.ndarray]:
        """A glossy top in a lamp's mirror image takes its colour from its side face.

        The lamp's reflection adds white to the top: it keeps its hue but turns
        pastel, as bright as the paper, and no block colour fits it. The top
        block's side face reflects the lamp elsewhere and keeps the colour. A
        uniform top much brighter than its side band (``glare_log``), whose
        chroma points the way the side's does, is scored with the side's colour.
        """
        cfg = self.cfg
        # the cheap tests first: most hypotheses are no bright flat top over a side
        cand = ((n_side >= float(cfg["side_colour_min_samples"]))
                & (top[..., 2] - side[..., 2] >= float(cfg["glare_log"]))
                & (uniform >= float(cfg["glare_uniform"])))
        cand[:, 0] = False  # the empty site has no top
        if not cand.any():
            return colour, cls
        cs, ct = side[cand][:, :2], top[cand][:, :2]
        ns = np.maximum(np.hypot(cs[:, 0], cs[:, 1]), 1e-6)
        along = (ct[:, 0] * cs[:, 0] + ct[:, 1] * cs[:, 1]) / ns
        across = np.abs(ct[:, 0] * cs[:, 1] - ct[:, 1] * cs[:, 0]) / ns
        d2s = model.distance2(side[cand], FACE_INTENSITY_SIGMA)
        ks = np.argmin(d2s, axis=-1)
        neutral = np.array([c.neutral for c in model.classes])
        alt = _colour_fit(d2s[np.arange(len(ks)), ks] + float(cfg["glare_cost"]))
        ok = (~neutral[ks] & (along > 0)
              & (across <= float(cfg["glare_across"]) * np.maximum(along, 0.02))
              & (alt > colour[cand]))
        use = np.zeros_like(cand)
        use[cand] = ok
        colour, cls = colour.copy(), cls.copy()
        colour[use] = alt[ok]
        cls[use] = ks[ok]
        return colour, cls

    def _decide(self, i: int, best: _Best, cls: np.ndarray, vis_top: FloatArray,
                uniform: FloatArray, top_feat: FloatArray, depths: FloatArray,
                heights: np.ndarray, model: ColourModel,
                colour: FloatArray | None = None,
                side_step: FloatArray | None = None) -> SiteResult:
        """Site ``i``'s reading from its best hypotheses (:meth:`_best`)."""
        bd, best_per_h, k, order = best.depth, best.score, best.won, best.order
        height = int(heights[k])
        names = model.names
        color = names[int(cls[k, bd[k]])] if height > 0 else None
        rivals = [(int(heights[j]), names[int(cls[j, bd[j]])] if j else None,
                   float(best_per_h[j])) for j in order[1:4] if np.isfinite(best_per_h[j])]
        margin = float(best_per_h[k] - rivals[0][2]) if rivals else float("inf")
        res = SiteResult(self.g.sites[i], height, color, float(best_per_h[k]), margin,
                         float(vis_top[k, bd[k]]), float(depths[bd[k]]),
                         float(uniform[k, bd[k]]), "", top_feat[k, bd[k]].copy(), rivals)
        res.foot_visible = float(vis_top[0, bd[0]])
        if side_step is not None:
            res.side_step = float(side_step[k, bd[k]])
        if len(heights) > 1:
            j = best.tower
            d = bd[j]
            if side_step is not None:
                res.tower_side_step = float(side_step[j, d])
            res.tower = (int(heights[j]), names[int(cls[j, d])], float(depths[d]),
                         float(vis_top[j, d]), float(uniform[j, d]),
                         float(colour[j, d]) if colour is not None else 0.0,
                         top_feat[j, d].copy())
        if res.visible < self.cfg["min_visible"] and not (
                height == 0 and res.visible >= float(self.cfg["empty_min_visible"])
                and margin >= float(self.cfg["empty_margin"])):
            # an empty site needs less of its footprint in view than a top does: a
            # tower covers its own footprint in every view, so a part of it that
            # clearly shows the board (and passes the print check) is enough
            res.reason = "hidden"
            res.hidden_best = (height, color)
            res.height, res.color = None, None
        elif height > 0 and self._foot_hidden(res):
            res.reason = "foot hidden"
            res.height, res.color = None, None
        return res

    def _foot_hidden(self, r: SiteResult) -> bool:
        """Whether the tower read at ``r`` is a top seen without the foot it stands on:
        along the line of sight a taller tower farther back, or a shorter one nearer,
        shows the same top (unless the placement prior leaves no rival close: a large
        margin; or the top fits so well that it is no other tower's top seen past a
        nearer one, whose phantoms score lower: ``foot_hidden_score``)."""
        cfg = self.cfg
        return (r.foot_visible < cfg["min_foot_visible"]
                and r.margin < float(cfg["foot_hidden_margin"])
                and r.score < float(cfg["foot_hidden_score"]))

    @staticmethod
    def _edge_profile(cf: FloatArray, cw: FloatArray, gap: FloatArray, win: FloatArray,
                      peak: FloatArray,
                      index: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
                      ) -> FloatArray:
        """(G, N + 1) edge strength at each row boundary, kept only near local maxima.

        Contrast between the ``win`` rows before and after a boundary (``gap``
        rows apart), clipped to 0..1, scaled down where a stronger edge lies
        within ``peak`` rows: an edge must be hit at its place, not near it.
        ``index``: the window bounds (:meth:`_edge_index`), when already known.
        """
        n = cw.shape[1] - 1
        ia, ib, ja, jb = index if index is not None else SiteReader._edge_index(n, gap, win)
        n1 = _band(cw, ia, ib)
        n2 = _band(cw, ja, jb)
        m1 = _band(cf, ia, ib) / np.maximum(n1, 1e-6)[..., None]
        m2 = _band(cf, ja, jb) / np.maximum(n2, 1e-6)[..., None]
        d = sum_last((m1 - m2) ** 2)
        full = (n1 > 0.5 * np.maximum(ib - ia, 1)) & (n2 > 0.5 * np.maximum(jb - ja, 1))
        d = np.where(full, d, 0.0)
        # keep only local maxima (an edge is where the contrast peaks), then let each
        # peak reach a predicted boundary with a weight falling off over ``peak`` rows
        r = _peak_reach(peak)
        pad = _pad_columns(d, 1)
        is_peak = (d >= pad[:, :-2]) & (d >= pad[:, 2:]) & (d > 0)
        e = np.where(is_peak, np.minimum(d, 9.0) / 9.0, 0.0)
        pk = np.asarray(peak, np.float64)[:, None]
        pad = _pad_columns(e, r)
        out = e.copy()
        m = e.shape[1]  # the boundaries given (n + 1, or the first ones only)
        for k in range(1, r + 1):
            wk = np.exp(-0.5 * (k / np.maximum(pk, 1e-3)) ** 2)
            out = np.maximum(out, np.maximum(pad[:, r - k:r - k + m],
                                             pad[:, r + k:r + k + m]) * wk)
        return out
