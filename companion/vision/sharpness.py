"""How blurred a photo is, measured on the markers, and taking a blur back out.

The markers' black border against their white quiet zone is a printed step
edge at a place the pose knows: across it the photo shows the camera's
point spread. In a photo blurrier than the renderers the reader was fitted
on, the markers' corners are found off their place and the pose with them
(towers one storey off at steep views); a mild Wiener deconvolution of the
excess lets the markers be found where they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from companion.vision.colours import sample_bilinear
from companion.vision.geometry import BoardGeometry, FloatArray, Pose

#: the four outer edges of a marker: (direction along the edge, outward normal)
_SIDES = (((1.0, 0.0), (0.0, 1.0)), ((1.0, 0.0), (0.0, -1.0)),
          ((0.0, 1.0), (1.0, 0.0)), ((0.0, 1.0), (-1.0, 0.0)))


def estimate_blur(gray: np.ndarray, pose: Pose, g: BoardGeometry,
                  markers: Sequence[int] | None, cfg: Mapping[str, Any]) -> float | None:
    """The photo's blur (Gaussian sigma, pixels) across the markers' outer edges.

    Each edge is sampled across at a few places along its middle, in board
    millimetres projected into the photo (so perspective is exact), and a
    blurred step is fitted to each profile (:func:`_fit_steps`). The median
    over all profiles of all markers; None if too few were clean.
    """
    ids = list(markers) if markers is not None else list(g.marker_centres)
    half = g.marker_size / 2
    inward = float(cfg["inward_mm"])
    outward = float(cfg["outward_mm"])
    offs = np.arange(-inward, outward + 1e-9, float(cfg["step_mm"]))
    along = np.linspace(-0.5, 0.5, int(cfg["profiles_per_edge"])) * half
    h, w = gray.shape[:2]
    edges = [(g.marker_centres[mid], u, nrm) for mid in ids for u, nrm in _SIDES]
    if not edges:
        return None
    pts = np.zeros((len(edges), len(along), len(offs), 3))
    for e, ((cx, cy), (ux, uy), (nx, ny)) in enumerate(edges):
        ex, ey = cx + nx * half, cy + ny * half  # the edge's midpoint
        pts[e, ..., 0] = ex + along[:, None] * ux + offs[None, :] * nx
        pts[e, ..., 1] = ey + along[:, None] * uy + offs[None, :] * ny
    pix = pose.project(pts.reshape(-1, 3)).reshape(len(edges), len(along), len(offs), 2)
    # whole edges only, inside the photo
    keep = ((pix[..., 0].min(axis=(1, 2)) >= 1) & (pix[..., 1].min(axis=(1, 2)) >= 1)
            & (pix[..., 0].max(axis=(1, 2)) <= w - 2) & (pix[..., 1].max(axis=(1, 2)) <= h - 2))
    if not keep.any():
        return None
    pix = pix[keep].reshape(-1, len(offs), 2)
    # sampled in float from the part of the photo the profiles span (cheaper than all)
    x0, y0 = (int(v) - 1 for v in np.floor(pix.reshape(-1, 2).min(axis=0)))
    x1, y1 = (int(v) + 2 for v in np.ceil(pix.reshape(-1, 2).max(axis=0)))
    part = gray[y0:y1 + 1, x0:x1 + 1].astype(np.float32)
    vals = sample_bilinear(part, pix.reshape(-1, 2) - (x0, y0))[:, 0].reshape(
        len(pix), len(offs))
    # pixel distance along each profile, from its inner end
    t = np.concatenate([np.zeros((len(pix), 1)), np.cumsum(
        np.hypot(*np.diff(pix, axis=1).transpose(2, 0, 1)), axis=1)], axis=1)
    fitted = _fit_steps(t, vals, float(cfg["min_contrast"]),
                        np.arange(*(float(x) for x in cfg["sigmas"])))
    sigmas = fitted[np.isfinite(fitted)]
    if len(sigmas) < int(cfg["min_profiles"]):
        return None
    return round(float(np.median(sigmas)), 3)


def _fit_steps(t: FloatArray, v: FloatArray, min_contrast: float, grid: FloatArray
               ) -> FloatArray:
    """Per profile (rows of ``t``, ``v``), the sigma of the blurred step that fits it best.

    The step's place is the profile's half-way crossing; its two levels are
    fitted by least squares at each sigma of ``grid``. A fit, not the
    derivative's spread: a window a few sigmas wide cuts the spread short.
    NaN where the profile has too little contrast.
    """
    n = max(2, v.shape[1] // 8)
    lo = np.median(v[:, :n], axis=1)
    hi = np.median(v[:, -n:], axis=1)
    ok = hi - lo >= min_contrast
    half = (lo + hi) / 2
    # the first crossing of the half level, interpolated
    above = v >= half[:, None]
    k = np.clip(np.argmax(above, axis=1), 1, v.shape[1] - 1)
    r = np.arange(len(v))
    v0, v1 = v[r, k - 1], v[r, k]
    f = np.clip((half - v0) / np.maximum(v1 - v0, 1e-6), 0.0, 1.0)
    c = t[r, k - 1] + f * (t[r, k] - t[r, k - 1])
    out = np.full(len(v), np.nan)
    if not ok.any():
        return out
    # each profile is fitted on its own: only those with the contrast are
    t, v, c = t[ok], v[ok], c[ok]
    x = (t - c[:, None])[None] / (np.sqrt(2.0) * np.asarray(grid, np.float64)[:, None, None])
    b = _erf(x)  # (S, P, T): the unit step, blurred by each sigma, 0.5 * (1 + erf)
    b += 1.0
    b *= 0.5
    # levels by least squares, each sigma and profile: v ~ lo + (hi - lo) * b
    b -= b.mean(axis=2, keepdims=True)
    bc = b
    vc = (v - v.mean(axis=1, keepdims=True))[None]
    tmp = np.multiply(bc, vc, out=x)  # x is spent: its room holds each product in turn
    num = tmp.sum(axis=2)
    amp = num / np.maximum(np.square(bc, out=tmp).sum(axis=2), 1e-9)
    np.multiply(amp[..., None], bc, out=tmp)
    np.subtract(vc, tmp, out=tmp)
    sse = np.square(tmp, out=tmp).sum(axis=2)  # (S, P)
    out[ok] = np.asarray(grid, np.float64)[np.argmin(sse, axis=0)]
    return out


def _erf(x: FloatArray) -> FloatArray:
    """The error function (Abramowitz and Stegun 7.1.26, within 1.5e-7).

    Evaluated in place, operation for operation as the formula reads (a
    hundred thousand values a photo: the temporaries cost as much as the sums).
    """
    a = np.abs(x)
    e = np.multiply(a, a)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-a * a)
    k = np.multiply(a, 0.3275911, out=a)
    k += 1.0
    np.divide(1.0, k, out=k)  # 1 / (1 + 0.3275911 a)
    y = k * 1.061405429
    for coef in (-1.453152027, 1.421413741, -0.284496736):
        y += coef
        y *= k
    y += 0.254829592
    y *= k
    y *= e
    np.subtract(1.0, y, out=y)
    out: FloatArray = np.sign(x, out=e)
    out *= y
    return out


def _otf(sigma: float, fy: FloatArray, fx: FloatArray) -> FloatArray:
    out: FloatArray = np.exp(-2.0 * np.pi ** 2 * sigma ** 2 * (fx ** 2 + fy ** 2))
    return out


def noise_to_signal_for(sigma: float, max_noise_gain: float, least: float) -> float:
    """The Wiener regularisation that amplifies white noise by at most ``max_noise_gain``.

    A deconvolution sharp enough to undo a wide blur multiplies the photo's
    grain several times over, and the markers' corners are then found in it.
    """
    f = np.fft.fftfreq(256)
    fy, fx = f[:, None], f[None, :]
    otf = _otf(sigma, fy, fx)
    otf2 = otf ** 2  # the same each step of the bisection
    room = np.empty_like(otf)

    def noise_gain(k: float) -> float:
        # sqrt(mean((otf / (otf ** 2 + k)) ** 2)), in one array's room
        np.add(otf2, k, out=room)
        np.divide(otf, room, out=room)
        return float(np.sqrt(np.mean(np.square(room, out=room))))

    lo, hi = np.log(least), np.log(1.0)
    if noise_gain(least) <= max_noise_gain:
        return least
    for _ in range(30):  # bisection on log k: the noise gain falls as k grows
        mid = (lo + hi) / 2
        gain = noise_gain(np.exp(mid))
        lo, hi = (mid, hi) if gain > max_noise_gain else (lo, mid)
    return float(np.exp(hi))


def _wiener_gain(sigma: float, noise_to_signal: float, ph: int, pw: int) -> np.ndarray:
    """The Wiener filter for a (ph, pw) real transform, transposed: (pw // 2 + 1, ph).

    Frequencies k and ph - k along the first axis are the same but for sign, and
    the filter depends on their square: half is computed and mirrored.
    """
    fy = np.fft.fftfreq(ph)[:ph // 2 + 1]
    otf = _otf(sigma, np.fft.rfftfreq(pw)[:, None], fy[None, :])
    gain = (otf / (otf ** 2 + noise_to_signal)).astype(np.float32)
    return np.concatenate([gain, gain[:, 1:(ph + 1) // 2][:, ::-1]], axis=1)


def deblur(image: np.ndarray, sigma: float, noise_to_signal: float) -> np.ndarray:
    """Wiener deconvolution of a Gaussian blur of ``sigma`` pixels (grey or colour).

    ``noise_to_signal`` keeps the frequencies the blur all but erased from
    being amplified into ringing and noise.

    The result is ``irfft2(rfft2(x) * gain)`` of the float32 photo to the bit,
    computed an axis at a time: numpy takes a forward transform of float32
    data in double precision (its unit scale factor picks the double loop) and
    rounds the result to single, slowly and, down columns, strided; here the
    same is done explicitly on contiguous rows (the columns as rows of the
    transposed array; each 1-D transform is the same wherever it lies), and
    only the rows kept are transformed back.
    """
    h, w = image.shape[:2]
    # mirrored margins all round: the transform's wrap-around joins two margins, far
    # enough from the photo for its ringing to die out there
    m = int(np.ceil(6 * sigma)) + 8
    ph, pw = cv2.getOptimalDFTSize(h + 2 * m), cv2.getOptimalDFTSize(w + 2 * m)
    gain_t = _wiener_gain(sigma, noise_to_signal, ph, pw)
    planes = image[..., None] if image.ndim == 2 else image
    out = np.empty_like(planes)
    for c in range(planes.shape[2]):
        x = cv2.copyMakeBorder(planes[..., c], m, ph - h - m, m, pw - w - m,
                               cv2.BORDER_REFLECT)
        # np.fft.rfft2(x.astype(np.float32)), transposed: rows, then columns
        rows = np.fft.rfft(x.astype(np.float64), axis=1).astype(np.complex64)
        f_t = np.fft.fft(np.ascontiguousarray(rows.T, dtype=np.complex128),
                         axis=1).astype(np.complex64)
        f_t *= gain_t
        # np.fft.irfft2(f * gain, s=(ph, pw)) (single precision), the rows kept
        back = np.fft.ifft(f_t, axis=1).T[m:m + h]
        y = np.fft.irfft(np.ascontiguousarray(back), n=pw, axis=1)[:, m:m + w]
        np.round(y, out=y)
        np.clip(y, 0, 255, out=y)
        out[..., c] = y.astype(np.uint8)
    return out.reshape(image.shape)
