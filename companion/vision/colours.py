"""Calibrated colour models: white balance from the markers, a Gaussian per colour.

Lamps of any colour, shade and exposure move colours a long way, so nothing
here is a fixed HSV range. The markers' white quiet zone and black border
give a per-photo white and black point; colours are then compared in a
shading-tolerant chroma space (two opponent chromaticities plus intensity)
where each block colour is a Gaussian, seeded from the profile's sRGB values
and refined from labelled samples (``fit``) or from the photo itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from companion.vision.geometry import BoardGeometry, FloatArray, Pose
from companion.vision.reductions import max_last, min_last

CHROMA_EPS = 0.12
LOG_EPS = 0.06


@dataclass(frozen=True)
class WhiteBalance:
    """Per-channel white and black points (BGR, 0..255) measured on the markers."""

    white: FloatArray
    black: FloatArray
    noise: float = 0.01  # pixel noise, in units of the white-black span

    def apply(self, bgr: np.ndarray) -> FloatArray:
        """(..., 3) BGR -> white-balanced float32 where the marker paper is 1.0.

        Only gains: the marker's black ink reflects light like any dark
        surface, and subtracting it as an offset would clip the dark side
        faces of blocks to a false hue.
        """
        x = np.asarray(bgr, np.float32)
        return x / np.maximum(self.white, 8.0).astype(np.float32)

    @classmethod
    def identity(cls) -> WhiteBalance:
        return cls(np.full(3, 255.0), np.zeros(3))


#: the longest map side cv2.remap takes (its maps' sides must be under SHRT_MAX)
_REMAP_SIDE = 32766


def sample_bilinear(image: np.ndarray, pts: FloatArray) -> FloatArray:
    """Bilinear samples (N, C) of an image at float pixel positions (N, 2)."""
    pts = np.asarray(pts, np.float32).reshape(-1, 1, 2)
    if pts.shape[0] == 0:
        return np.zeros((0, image.shape[2] if image.ndim == 3 else 1), np.float32)
    # remap refuses a map side of 32767 or more: that many points at a time
    out = np.concatenate([cv2.remap(image, part[..., 0], part[..., 1], cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=0)
                          for part in np.split(pts, range(_REMAP_SIDE, len(pts), _REMAP_SIDE))])
    return np.asarray(out, np.float32).reshape(pts.shape[0], -1)


def estimate_white_balance(image: np.ndarray, pose: Pose, geometry: BoardGeometry,
                           markers: Sequence[int] | None = None) -> WhiteBalance:
    """White from the markers' quiet zones, black from their outer black border.

    The brighter half of the quiet-zone samples is used so a shadow or a
    finger across part of a marker does not darken the white point.
    """
    ids = list(markers) if markers is not None else list(geometry.marker_centres)
    half = geometry.marker_size / 2
    whites, blacks, noises = [], [], []
    h, w = image.shape[:2]
    if not ids:
        return WhiteBalance.identity()
    # every ring of every marker projected, and sampled, at once (a point's
    # projection and sample do not depend on the others')
    rings = [(_ring(geometry, mid, half + 1.5, half + geometry.marker_quiet - 2.0),
              _ring(geometry, mid, half * 0.72, half * 0.93)) for mid in ids]
    pix = pose.project(np.vstack([r for pair in rings for r in pair]))
    cuts = np.cumsum([len(r) for pair in rings for r in pair])[:-1]
    parts = np.split(pix, cuts)
    ring_ws, ring_bs = parts[0::2], parts[1::2]
    use = []
    for ring_w in ring_ws:
        inside = ((ring_w[:, 0] >= 0) & (ring_w[:, 0] < w - 1) & (ring_w[:, 1] >= 0)
                  & (ring_w[:, 1] < h - 1))
        use.append(inside if inside.mean() >= 0.8 else None)
    pts = [p for ring_w, ring_b, inside in zip(ring_ws, ring_bs, use, strict=True)
           if inside is not None
           for p in (ring_w[inside], ring_b)]
    if not pts:
        return WhiteBalance.identity()
    samples = np.split(sample_bilinear(image, np.vstack(pts)),
                       np.cumsum([len(p) for p in pts])[:-1])
    for sw, sb in zip(samples[0::2], samples[1::2], strict=True):
        lum = sw.sum(axis=1)
        top = sw[lum >= np.median(lum)]
        white = np.median(top, axis=0)
        whites.append(white)
        blacks.append(np.median(sb, axis=0))
        # robust spread of the paper: noise and JPEG ringing, not shading
        mad = np.median(np.abs(top - white), axis=0) * 1.4826
        noises.append(float(np.median(mad)))
    if not whites:
        return WhiteBalance.identity()
    wv = np.asarray(whites)
    white = wv[int(np.argmax(wv.sum(axis=1)))]
    black = np.median(np.asarray(blacks), axis=0)
    black = np.minimum(black, white * 0.5)
    span = float(np.mean(np.maximum(white, 8.0)))
    noise = float(np.clip(np.median(noises) / span * 1.5, 0.003, 0.05))
    return WhiteBalance(white.astype(np.float64), black.astype(np.float64), noise)


#: marker rings by (centre x, centre y, inner, outer): the same for every photo
_RINGS: dict[tuple[float, float, float, float], FloatArray] = {}


def _ring(geometry: BoardGeometry, mid: int, inner: float, outer: float) -> FloatArray:
    """``geometry.marker_ring``, made once per marker place and ring (a few hundred
    points built in Python cost more than projecting and sampling them)."""
    cx, cy = geometry.marker_centres[mid]
    key = (float(cx), float(cy), float(inner), float(outer))
    pts = _RINGS.get(key)
    if pts is None:
        if len(_RINGS) > 4096:  # many boards' worth: start again rather than grow
            _RINGS.clear()
        pts = geometry.marker_ring(mid, inner, outer)
        pts.setflags(write=False)
        _RINGS[key] = pts
    return pts


def features(wb_bgr: FloatArray) -> FloatArray:
    """Shading-tolerant colour features (N, 3): two opponent chromaticities, log intensity.

    Scaling all channels (shade, exposure) leaves the chromaticities nearly
    unchanged and shifts the log intensity by a constant; the epsilon pulls
    dark pixels toward grey so black plastic and dim shadows have no
    spurious hue. Black plastic (about 5 % of the marker paper) and a board
    in a lamp's shadow (20 % and up) stay apart on the log scale.
    """
    x = np.asarray(wb_bgr, np.float32).reshape(-1, 3)
    b, g, r = np.maximum(x[:, 0], 0), np.maximum(x[:, 1], 0), np.maximum(x[:, 2], 0)
    s = r + g + b + CHROMA_EPS
    lum = np.log((r + g + b) / 3.0 + LOG_EPS)
    return np.column_stack([(r - g) / s, (g - b) / s, lum]).astype(np.float32)


#: The nominal white paper and printed black of a marker in a daylight photo.
REFERENCE_WHITE = 245.0
REFERENCE_BLACK = 0.0


def srgb_to_feature(rgb: Sequence[float]) -> FloatArray:
    """Feature of a nominal sRGB colour as it would come out of :meth:`WhiteBalance.apply`."""
    bgr = np.array([[rgb[2], rgb[1], rgb[0]]], np.float32)
    bgr = np.maximum(bgr - REFERENCE_BLACK, 0) / (REFERENCE_WHITE - REFERENCE_BLACK)
    return features(bgr)[0]


@dataclass
class ColourClass:
    name: str
    mean: FloatArray
    cov: FloatArray
    icov: FloatArray = field(init=False)
    logdet: float = field(init=False)

    def __post_init__(self) -> None:
        self.mean = np.asarray(self.mean, np.float64)
        self.cov = np.asarray(self.cov, np.float64)
        self.icov = np.linalg.inv(self.cov)
        self.logdet = float(np.linalg.slogdet(self.cov)[1])

    def mahalanobis2(self, feats: FloatArray) -> FloatArray:
        d = np.asarray(feats, np.float64) - self.mean
        # (icov.T @ d.T).T: the products of d @ icov, but a BLAS call for many rows
        dm = (self.icov.T @ d.reshape(-1, 3).T).T.reshape(d.shape)
        p = dm * d
        return p[..., 0] + p[..., 1] + p[..., 2]  # np.sum's order over three, faster


#: Default spreads of a block colour class (feature units of :func:`features`).
TANGENT_SIGMA = 0.055  # chroma distance across the hue direction
SAT_BAND = (0.5, 1.5)  # allowed saturation, as a fraction of the nominal one
SAT_SIGMA = 0.05  # softness outside that band
INTENSITY_SIGMA = 0.5  # log intensity of a lit top face
FACE_INTENSITY_SIGMA = 1.2  # any face, shaded sides included
NEUTRAL_SAT = 0.12  # black plastic: chroma below this
NEUTRAL_INTENSITY_SIGMA = 0.45
#: a nominal colour with less chroma than this is grey (black plastic): a neutral class
NEUTRAL_NOMINAL_SAT = 0.15
#: the least saturation a chromatic colour's class keeps under a curve and a cast
MIN_TONED_SAT = 0.05


def is_grey(rgb: Sequence[float]) -> bool:
    """Whether a nominal sRGB colour is grey plastic (black), whose class is neutral."""
    m = srgb_to_feature(rgb)
    return bool(np.hypot(m[0], m[1]) < NEUTRAL_NOMINAL_SAT)


@dataclass
class BlockColour:
    """One block colour: a hue ray in the chroma plane (or grey, for black).

    Lamps, glare and shade change saturation and brightness far more than
    hue: a class accepts any saturation in a wide band around its own and
    measures hue error as chroma distance across its hue direction, so a
    pale, sheened green top is still green. Black is the neutral class:
    low chroma, dark.
    """

    name: str
    hue: FloatArray  # unit vector in the chroma plane (zeros for neutral)
    sat: float  # nominal saturation (0 for neutral)
    lum: float  # nominal log intensity
    tangent: float = TANGENT_SIGMA
    lum_sigma: float = INTENSITY_SIGMA

    @property
    def neutral(self) -> bool:
        return self.sat <= 0.0

    @property
    def mean(self) -> FloatArray:
        return np.array([*(self.hue * self.sat), self.lum])

    def distance2(self, feats: FloatArray, lum_sigma: float | None = None) -> FloatArray:
        """Squared distance; ``lum_sigma`` widens brightness (shaded side faces)."""
        f = np.asarray(feats, np.float64)
        dlum = f[..., 2] - self.lum
        dl = (dlum / self.lum_sigma) ** 2
        if lum_sigma is not None:
            dl = self._widened(dlum, dl, lum_sigma)
        out: FloatArray = self._chroma2(f) + dl
        return out

    def distance2_both(self, feats: FloatArray, lum_sigma: float
                       ) -> tuple[FloatArray, FloatArray]:
        """``distance2(feats)`` and ``distance2(feats, lum_sigma)``: the chroma part,
        most of the work, made once for both."""
        f = np.asarray(feats, np.float64)
        dlum = f[..., 2] - self.lum
        dl = (dlum / self.lum_sigma) ** 2
        chroma = self._chroma2(f)
        return chroma + dl, chroma + self._widened(dlum, dl, lum_sigma)

    def _widened(self, dlum: FloatArray, dl: FloatArray, lum_sigma: float) -> FloatArray:
        """The brightness term with ``lum_sigma``: side faces are darker than the top,
        never brighter (black's darker faces cost nothing)."""
        out: FloatArray = np.where(dlum < 0, (dlum / max(lum_sigma, self.lum_sigma)) ** 2, dl)
        if self.neutral:
            out = np.where(dlum < 0, 0.0, out)
        return out

    def hue_parts(self, c: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Chromaticities ``c`` (..., 2) along this colour's hue direction, and across
        it (signed)."""
        along: FloatArray = c @ self.hue
        across: FloatArray = c[..., 0] * self.hue[1] - c[..., 1] * self.hue[0]
        return along, across

    def _chroma2(self, f: FloatArray) -> FloatArray:
        """The squared distance's chroma part (the brightness term is added to it)."""
        c = f[..., :2]
        if self.neutral:
            s = np.sqrt(c[..., 0] * c[..., 0] + c[..., 1] * c[..., 1])  # np.sum's order, faster
            over = np.maximum(s - NEUTRAL_SAT, 0.0) / SAT_SIGMA
            neutral: FloatArray = over ** 2 + (s / (2 * NEUTRAL_SAT)) ** 2
            return neutral
        r, t = self.hue_parts(c)
        lo, hi = SAT_BAND[0] * self.sat, SAT_BAND[1] * self.sat
        out = (np.maximum(lo - r, 0.0) + np.maximum(r - hi, 0.0)) / SAT_SIGMA
        chroma: FloatArray = (t / self.tangent) ** 2 + out ** 2
        return chroma

    def refit(self, feats: FloatArray, prior: float) -> BlockColour:
        """Move toward the mean of some confidently labelled samples."""
        x = np.asarray(feats, np.float64).reshape(-1, 3)
        n = len(x)
        lum = float((x[:, 2].sum() + prior * self.lum) / (n + prior))
        if self.neutral:
            return BlockColour(self.name, self.hue, self.sat, lum, self.tangent, self.lum_sigma)
        c = (x[:, :2].sum(axis=0) + prior * self.hue * self.sat) / (n + prior)
        s = float(np.hypot(c[0], c[1]))
        if s < 1e-6:
            return self
        sat = float(np.median(np.hypot(x[:, 0], x[:, 1])) * n + prior * self.sat) / (n + prior)
        return BlockColour(self.name, c / s, max(sat, 0.05), lum, self.tangent,
                           self.lum_sigma)


class ColourModel:
    """The block colours in play (feature space of :func:`features`)."""

    def __init__(self, classes: Sequence[BlockColour]) -> None:
        self.classes = list(classes)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.classes]

    @classmethod
    def from_rgb(cls, colours: Mapping[str, Sequence[float]],
                 nominal: Mapping[str, Sequence[float]] | None = None) -> ColourModel:
        """Seed a model from sRGB values (the profile's colours, or as a tone curve and
        a cast show them: then ``nominal``, the profile's own, says which are grey).

        Whether a colour is grey is the plastic's, not the curve's: a flat curve
        and a cast can leave a green top with a black block's little chroma, and a
        green class made grey then takes every washed top of the photo
        (docs/vision-errors.md, fifty-third session).
        """
        out = []
        for name, rgb in colours.items():
            m = srgb_to_feature(rgb)
            sat = float(np.hypot(m[0], m[1]))
            if is_grey(rgb if nominal is None else nominal[name]):
                out.append(BlockColour(name, np.zeros(2), 0.0, float(m[2]),
                                       lum_sigma=NEUTRAL_INTENSITY_SIGMA))
            else:
                # (a cast leaves a chromatic colour some chroma: none at all would take
                # r = g = b to the last bit)
                out.append(BlockColour(name, m[:2] / max(sat, 1e-12), max(sat, MIN_TONED_SAT),
                                       float(m[2])))
        return cls(out)

    @classmethod
    def for_colours(cls, geometry: BoardGeometry, names: Sequence[str]) -> ColourModel:
        """The default model for colour names in play (e.g. 2017's "blue" -> blue2017)."""
        return cls.from_rgb({n: geometry.colours[resolve_colour(geometry, names, n)]
                             for n in names})

    def distance2(self, feats: FloatArray, lum_sigma: float | None = None) -> FloatArray:
        """(N, K) squared distances (Mahalanobis-like) to each colour."""
        feats = np.asarray(feats, np.float64).reshape(-1, 3)
        return np.column_stack([c.distance2(feats, lum_sigma) for c in self.classes])

    def distance2_both(self, feats: FloatArray, lum_sigma: float
                       ) -> tuple[FloatArray, FloatArray]:
        """``distance2(feats)`` and ``distance2(feats, lum_sigma)`` at once (each
        colour's chroma part made once: :meth:`BlockColour.distance2_both`)."""
        feats = np.asarray(feats, np.float64).reshape(-1, 3)
        pairs = [c.distance2_both(feats, lum_sigma) for c in self.classes]
        return (np.column_stack([p[0] for p in pairs]), np.column_stack([p[1] for p in pairs]))

    def loglik(self, feats: FloatArray, lum_sigma: float | None = None) -> FloatArray:
        """(N, K) log-likelihoods up to a shared constant."""
        return -0.5 * self.distance2(feats, lum_sigma)

    def fit(self, samples: Mapping[str, FloatArray], prior_weight: float = 5.0,
            min_samples: int = 1) -> ColourModel:
        """Move each colour toward labelled feature samples (N, 3), shrunk to the prior."""
        out = []
        for c in self.classes:
            x = np.asarray(samples.get(c.name, np.zeros((0, 3))), np.float64).reshape(-1, 3)
            out.append(c.refit(x, prior_weight) if len(x) >= min_samples else c)
        return ColourModel(out)

    def fit_pixels(self, wb: WhiteBalance, samples: Mapping[str, np.ndarray],
                   prior_weight: float = 5.0) -> ColourModel:
        """Calibrate from labelled raw BGR sample pixels (colour name -> (N, 3))."""
        feats = {k: features(wb.apply(np.asarray(v).reshape(-1, 3))) for k, v in samples.items()}
        return self.fit(feats, prior_weight=prior_weight)


def toned_rgb(rgb: Sequence[float], exponent: float, lift: float = 0.0,
              gains: tuple[float, float] = (1.0, 1.0)) -> list[float]:
    """A nominal colour as a photo whose tone curve is ``exponent`` steeper shows it.

    Cameras and renderers differ in their tone curve: relative to the marker
    paper, a colour of reflectance x comes out near x ** exponent. The white
    balance fixes the paper at 1.0 and the lamp's colour, not the curve.
    ``lift``: flare or a raised black level, a share of the paper added to
    everything (a hazy lens, a camera's low-contrast rendering).
    ``gains``: red and blue relative to green, a white balance the markers'
    paper left off the plastic (the paper lit by another mix of lamp and room
    light than the tops; 1, 1: none).
    """
    out = [REFERENCE_WHITE * (lift + (1.0 - lift) * (max(float(c), 0.0) / REFERENCE_WHITE)
                              ** exponent) for c in rgb]
    if gains != (1.0, 1.0):
        out = [out[0] * gains[0], out[1], out[2] * gains[1]]
    return out


def fit_tone(samples: Sequence[tuple[str, FloatArray]], colours: Mapping[str, Sequence[float]],
             cfg: Mapping[str, Any]) -> tuple[float, float, float, float]:
    """The tone curve under which the photo's surest tops fit their colours best.

    ``samples``: (colour name, top feature) of the tops read surely. Returns
    (exponent, lift, its cost, the cost at the nominal curve). One curve for all
    colours: the few tops of one colour cannot drag it, as refitting each
    colour alone would (and a steeper curve saturates blue and darkens black
    at once). The cost is each top's distance to its colour, capped, plus a
    small pull toward the colour's centre that settles ties inside the
    colours' wide saturation bands. The lift is searched only over
    ``cfg["lifts"]`` (from, to, step; beside none), with exponents up to
    ``cfg["lift_max_exponent"]``: flare flattens a photo, and a steeper curve
    with a lift is a sheen on black plastic, not haze. With
    ``cfg["lifts_only"]`` the curves without a lift are not scored (a caller
    that has just scored them; the cost at the nominal curve is then inf).
    """
    lo, hi, step = (float(x) for x in cfg["exponents"])
    grid = np.round(np.arange(lo, hi + step / 2, step), 6)
    lifts = [] if cfg.get("lifts_only") and cfg.get("lifts") else [0.0]
    if cfg.get("lifts"):
        a, b, st = (float(x) for x in cfg["lifts"])
        lifts += [float(x) for x in np.round(np.arange(a, b + st / 2, st), 6) if x > 0]
    X = np.asarray([f for _, f in samples], np.float64).reshape(-1, 3)
    cap = float(cfg["cap_d2"])
    pull = float(cfg["centre_weight"])
    pull_cap = float(cfg["centre_cap"])
    spread = np.array([*([float(cfg["centre_sigma"][0])] * 2), float(cfg["centre_sigma"][1])])
    labels = np.array([n for n, _ in samples])
    # each colour's tops, gathered once for the whole grid
    groups = [(j, X[labels == n]) for j, n in enumerate(colours)]
    groups = [(j, x) for j, x in groups if len(x)]
    key = _colours_key(colours)
    best = (np.inf, 1.0, 0.0)
    at_one = np.inf
    steepest = float(cfg.get("lift_max_exponent", np.inf))
    for lift in lifts:
        ps = tuple(float(p) for p in grid if not (lift > 0 and p > steepest))
        if not ps:
            continue
        # every exponent at once, per colour (the classes' terms as in BlockColour)
        totals = np.zeros(len(ps))
        for j, x in groups:
            stack = _toned_stack(key, ps, lift, j)
            totals += (np.minimum(stack.distance2(x), cap).sum(axis=1)
                       + pull * np.minimum(stack.centre2(x, spread), pull_cap).sum(axis=1))
        for p, total in zip(ps, totals.tolist(), strict=True):
            if total < best[0]:
                best = (total, p, lift)
            if lift == 0.0 and abs(p - 1.0) < step / 2:
                at_one = total
    return best[1], best[2], best[0], at_one


@dataclass(frozen=True)
class _ClassStack:
    """One colour's class at many tone curves, as arrays: its distances to a colour's
    tops for a whole grid of curves at once (rows: curves), the terms of
    :meth:`BlockColour.distance2` and the pull to the centre of :func:`fit_tone`."""

    hue: FloatArray  # (P, 2)
    sat: FloatArray
    lum: FloatArray
    lum_sigma: FloatArray
    tangent: FloatArray
    neutral: np.ndarray
    mean: FloatArray  # (P, 3)

    def distance2(self, x: FloatArray) -> FloatArray:
        c0, c1 = x[:, 0], x[:, 1]
        dlum = x[None, :, 2] - self.lum[:, None]
        dl = (dlum / self.lum_sigma[:, None]) ** 2
        h0, h1 = self.hue[:, :1], self.hue[:, 1:]
        # one product per curve: BLAS's dot rounds otherwise than c0 * h0 + c1 * h1,
        # and the fit must choose what BlockColour.distance2 would
        c = x[:, :2]
        r = np.array([c @ h for h in self.hue]).reshape(len(self.hue), len(x))
        t = c0 * h1 - c1 * h0
        lo, hi = (SAT_BAND[0] * self.sat)[:, None], (SAT_BAND[1] * self.sat)[:, None]
        out = (np.maximum(lo - r, 0.0) + np.maximum(r - hi, 0.0)) / SAT_SIGMA
        chroma = (t / self.tangent[:, None]) ** 2 + out ** 2
        if self.neutral.any():
            s = np.sqrt(c0 * c0 + c1 * c1)
            over = np.maximum(s - NEUTRAL_SAT, 0.0) / SAT_SIGMA
            grey = over ** 2 + (s / (2 * NEUTRAL_SAT)) ** 2
            chroma = np.where(self.neutral[:, None], grey[None, :], chroma)
        out2: FloatArray = chroma + dl
        return out2

    def centre2(self, x: FloatArray, spread: FloatArray) -> FloatArray:
        d = (x[None, :, :] - self.mean[:, None, :]) / spread
        d2 = d * d
        out: FloatArray = d2[..., 0] + d2[..., 1] + d2[..., 2]
        return out


@lru_cache(maxsize=256)
def _toned_stack(colours: tuple[tuple[str, tuple[float, ...]], ...], exponents: tuple[float, ...],
                 lift: float, j: int) -> _ClassStack:
    """Colour ``j``'s classes (:func:`_toned_classes`) at each exponent, stacked."""
    cls = [_toned_classes(colours, p, lift)[j] for p in exponents]
    return _ClassStack(np.array([c.hue for c in cls], np.float64).reshape(-1, 2),
                       np.array([c.sat for c in cls]), np.array([c.lum for c in cls]),
                       np.array([c.lum_sigma for c in cls]),
                       np.array([c.tangent for c in cls]),
                       np.array([c.neutral for c in cls]),
                       np.array([c.mean for c in cls], np.float64).reshape(-1, 3))


def fit_gains(samples: Sequence[FloatArray], colours: Mapping[str, Sequence[float]],
              exponent: float, lift: float, cfg: Mapping[str, Any]
              ) -> tuple[tuple[float, float], float, float]:
    """The red and blue gains (relative to green) under which the photo's surest
    tops fit the colours in play best, each top by the colour it fits best.

    The markers' paper sets the white balance; plastic lit by another mix of
    lamp and room light than the paper (a lamp's cone, a window) keeps a cast,
    and a cast turns orange toward yellow, blue toward purple. Each top counts
    at the colour it fits best, not the one it was read as: a cast reads tops
    as the wrong colour surely, and those would vote for no cast. Costs as in
    :func:`fit_tone` (capped distance plus a small pull to the centre). Returns
    the gains, their cost and the cost without gains.
    """
    lo, hi, step = (float(x) for x in cfg["gains"])
    grid = np.round(np.arange(lo, hi + step / 2, step), 6)
    gr, gb = (x.ravel() for x in np.meshgrid(grid, grid, indexing="ij"))
    at = np.flatnonzero((gr == 1.0) & (gb == 1.0))
    if len(at) == 0:  # the grid misses 1, 1: add it (the cost without gains)
        gr, gb = np.append(gr, 1.0), np.append(gb, 1.0)
        at = np.array([len(gr) - 1])
    costs = gains_costs(samples, colours, exponent, lift, gr, gb, cfg)
    k = int(at[0]) if costs[at[0]] <= costs.min() else int(np.argmin(costs))
    return (float(gr[k]), float(gb[k])), float(costs[k]), float(costs[at[0]])


def gains_costs(samples: Sequence[FloatArray], colours: Mapping[str, Sequence[float]],
                exponent: float, lift: float, gr: FloatArray, gb: FloatArray,
                cfg: Mapping[str, Any]) -> FloatArray:
    """:func:`fit_gains`' cost at each of the gains ``gr``, ``gb`` (P,): the classes
    :meth:`ColourModel.from_rgb` makes of the toned colours, all at once."""
    X = np.asarray(samples, np.float64).reshape(-1, 3)
    cap = float(cfg["cap_d2"])
    pull = float(cfg["centre_weight"])
    pull_cap = float(cfg["centre_cap"])
    spread = np.array([*([float(cfg["centre_sigma"][0])] * 2), float(cfg["centre_sigma"][1])])
    rgb = np.array([toned_rgb(c, exponent, lift) for c in colours.values()])  # (K, 3)
    P, K = len(gr), len(rgb)
    bgr = np.empty((P, K, 3))
    bgr[..., 0] = rgb[None, :, 2] * gb[:, None]
    bgr[..., 1] = rgb[None, :, 1]
    bgr[..., 2] = rgb[None, :, 0] * gr[:, None]
    m = features(np.maximum(bgr - REFERENCE_BLACK, 0) / (REFERENCE_WHITE - REFERENCE_BLACK)
                 ).astype(np.float64).reshape(P, K, 1, 3)
    sat = np.hypot(m[..., 0], m[..., 1])  # (P, K, 1)
    # grey or not as the plastic is (ColourModel.from_rgb), whatever the cast
    neutral = np.broadcast_to(np.array([is_grey(c) for c in colours.values()])[None, :, None],
                              sat.shape)
    safe = np.where(neutral, 1.0, np.maximum(sat, 1e-12))
    h0, h1 = m[..., 0] / safe, m[..., 1] / safe
    sat = np.where(neutral, sat, np.maximum(sat, MIN_TONED_SAT))
    c0, c1 = X[None, None, :, 0], X[None, None, :, 1]
    r = c0 * h0 + c1 * h1
    t = c0 * h1 - c1 * h0
    over = (np.maximum(SAT_BAND[0] * sat - r, 0.0) + np.maximum(r - SAT_BAND[1] * sat, 0.0)
           ) / SAT_SIGMA
    s = np.sqrt(c0 * c0 + c1 * c1)
    chroma = np.where(neutral,
                      (np.maximum(s - NEUTRAL_SAT, 0.0) / SAT_SIGMA) ** 2
                      + (s / (2 * NEUTRAL_SAT)) ** 2,
                      (t / TANGENT_SIGMA) ** 2 + over ** 2)
    dlum = X[None, None, :, 2] - m[..., 2]
    d2 = chroma + (dlum / np.where(neutral, NEUTRAL_INTENSITY_SIGMA, INTENSITY_SIGMA)) ** 2
    mean0 = np.where(neutral, 0.0, h0 * sat)
    mean1 = np.where(neutral, 0.0, h1 * sat)
    e2 = (((c0 - mean0) / spread[0]) ** 2 + ((c1 - mean1) / spread[1]) ** 2
          + (dlum / spread[2]) ** 2)
    each = np.minimum(d2, cap) + pull * np.minimum(e2, pull_cap)  # (P, K, N)
    out_cost: FloatArray = each.min(axis=1).sum(axis=1)
    return out_cost


def toned_model(colours: Mapping[str, Sequence[float]], exponent: float,
                lift: float = 0.0, gains: tuple[float, float] = (1.0, 1.0)) -> ColourModel:
    """The model of nominal ``colours`` (name -> sRGB) under a tone ``exponent``
    (and a flare ``lift``, a cast's ``gains``: :func:`toned_rgb`)."""
    return ColourModel(list(_toned_classes(_colours_key(colours), exponent, lift, gains)))


def _colours_key(colours: Mapping[str, Sequence[float]]
                 ) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """Nominal colours as :func:`_toned_classes` caches them."""
    return tuple((n, tuple(float(v) for v in c)) for n, c in colours.items())


@lru_cache(maxsize=4096)
def _toned_classes(colours: tuple[tuple[str, tuple[float, ...]], ...], exponent: float,
                   lift: float = 0.0, gains: tuple[float, float] = (1.0, 1.0)
                   ) -> tuple[BlockColour, ...]:
    """The colour classes at one curve (the same few for every photo of a game)."""
    return tuple(ColourModel.from_rgb({n: toned_rgb(c, exponent, lift, gains)
                                       for n, c in colours}, dict(colours)).classes)


def resolve_colour(geometry: BoardGeometry, names: Sequence[str], name: str) -> str:
    """Profile colour key for a colour name in play (colour sets may rename)."""
    for mapping in geometry.colour_sets.values():
        if set(names) <= set(mapping) and name in mapping:
            return mapping[name]
    if name in geometry.colours:
        return name
    for mapping in geometry.colour_sets.values():
        if name in mapping:
            return mapping[name]
    raise ValueError(f"unknown colour {name!r} (profile colours: "
                     f"{', '.join(sorted(geometry.colours))})")


def colour_sets(geometry: BoardGeometry) -> dict[str, list[str]]:
    """Colour names in play for each colour set of the profile."""
    return {k: list(v) for k, v in geometry.colour_sets.items()}


@dataclass
class BoardModel:
    """What the board print looks like in this photo: a few Gaussian clusters.

    Fitted per photo from samples of the board plane; clusters that look like
    a block colour are dropped (those samples were probably towers), so the
    rest say "this is print, not plastic" whatever the board's art.
    """

    classes: list[ColourClass]

    def distance2(self, feats: FloatArray) -> FloatArray:
        feats = np.asarray(feats, np.float64).reshape(-1, 3)
        if not self.classes:
            return np.full((len(feats), 1), np.inf)
        return np.column_stack([c.mahalanobis2(feats) for c in self.classes])


def fit_board_model(feats: FloatArray, blocks: ColourModel | None = None, k: int = 4,
                    min_block_d2: float | None = None, seed: int = 0) -> BoardModel:
    """Cluster samples known to be board or table into a few Gaussians.

    With ``blocks`` and ``min_block_d2``, clusters that look like a block
    colour are dropped (for samples that may include towers).
    """
    x = np.asarray(feats, np.float32).reshape(-1, 3)
    x = x[np.all(np.isfinite(x), axis=1)]
    k = int(min(k, len(x) // 12))
    if k < 1:
        return BoardModel([])
    scale = np.array([1.0, 1.0, 0.25], np.float32)  # cluster mostly on chroma
    cv2.setRNGSeed(seed)
    _, labels, _ = cv2.kmeans(x * scale, k, None,  # type: ignore[call-overload]
                              (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1e-3),
                              1, cv2.KMEANS_PP_CENTERS)
    labels = labels.ravel()
    out = []
    for j in range(k):
        pts = x[labels == j].astype(np.float64)
        if len(pts) < max(8, len(x) // 100):
            continue
        mu = pts.mean(axis=0)
        cov = np.cov(pts.T) + np.diag([0.03 ** 2, 0.03 ** 2, 0.2 ** 2])
        if (blocks is not None and min_block_d2 is not None
                and float(blocks.distance2(mu[None])[0].min()) < min_block_d2):
            continue
        out.append(ColourClass(f"board{j}", mu, cov))
    return BoardModel(out)


def block_probability(feats: FloatArray, blocks: ColourModel, board: BoardModel | None,
                      outlier_d2: float = 14.0, temperature: float = 2.0,
                      face_d2: FloatArray | None = None) -> FloatArray:
    """P(block plastic) per sample: the best block class against board print or outlier.

    ``face_d2``: ``blocks.distance2(feats, FACE_INTENSITY_SIGMA)``, when the caller
    has it already."""
    if face_d2 is None:
        face_d2 = blocks.distance2(feats, FACE_INTENSITY_SIGMA)
    ll_b = max_last(-0.5 * face_d2)  # the best block's log-likelihood (loglik's)
    ll_o = np.full_like(ll_b, -0.5 * outlier_d2)
    if board is not None and board.classes:
        ll_o = np.maximum(ll_o, -0.5 * min_last(board.distance2(feats)))
    z = np.clip((ll_b - ll_o) / temperature, -30, 30)
    return 1.0 / (1.0 + np.exp(-z))
