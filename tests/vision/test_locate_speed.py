"""The locate stage's fast paths equal the plain computations they replace, to the bit.

Each reference below is the code as it was before the speed-up; the readings
must not move by a bit, so the comparisons are exact (seeded random inputs).
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.vision import sharpness
from companion.vision.colours import estimate_white_balance, sample_bilinear
from companion.vision.geometry import Intrinsics, Pose, board_geometry
from companion.vision.outline import _line_grid, _row_medians


def _plain_deblur(image: np.ndarray, sigma: float, noise_to_signal: float) -> np.ndarray:
    h, w = image.shape[:2]
    m = int(np.ceil(6 * sigma)) + 8
    ph, pw = cv2.getOptimalDFTSize(h + 2 * m), cv2.getOptimalDFTSize(w + 2 * m)
    otf = sharpness._otf(sigma, np.fft.fftfreq(ph)[:, None], np.fft.rfftfreq(pw)[None, :])
    gain = (otf / (otf ** 2 + noise_to_signal)).astype(np.float32)
    planes = image[..., None] if image.ndim == 2 else image
    out = np.empty_like(planes)
    for c in range(planes.shape[2]):
        x = cv2.copyMakeBorder(planes[..., c], m, ph - h - m, m, pw - w - m,
                               cv2.BORDER_REFLECT)
        f = np.fft.rfft2(x.astype(np.float32))
        y = np.fft.irfft2(f * gain, s=(ph, pw))[m:m + h, m:m + w]
        out[..., c] = np.clip(np.round(y), 0, 255).astype(np.uint8)
    return out.reshape(image.shape)


def _plain_noise_to_signal(sigma: float, max_noise_gain: float, least: float) -> float:
    f = np.fft.fftfreq(256)
    otf = sharpness._otf(sigma, f[:, None], f[None, :])
    lo, hi = np.log(least), np.log(1.0)
    if np.sqrt(np.mean((otf / (otf ** 2 + least)) ** 2)) <= max_noise_gain:
        return least
    for _ in range(30):
        mid = (lo + hi) / 2
        gain = float(np.sqrt(np.mean((otf / (otf ** 2 + np.exp(mid))) ** 2)))
        lo, hi = (mid, hi) if gain > max_noise_gain else (lo, mid)
    return float(np.exp(hi))


def _plain_erf(x: np.ndarray) -> np.ndarray:
    a = np.abs(x)
    k = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - k * (0.254829592 + k * (-0.284496736 + k * (1.421413741 + k * (
        -1.453152027 + k * 1.061405429)))) * np.exp(-a * a)
    out: np.ndarray = np.sign(x) * y
    return out


def _plain_fit_steps(t: np.ndarray, v: np.ndarray, min_contrast: float, grid: np.ndarray
                     ) -> np.ndarray:
    n = max(2, v.shape[1] // 8)
    lo = np.median(v[:, :n], axis=1)
    hi = np.median(v[:, -n:], axis=1)
    ok = hi - lo >= min_contrast
    half = (lo + hi) / 2
    above = v >= half[:, None]
    k = np.clip(np.argmax(above, axis=1), 1, v.shape[1] - 1)
    r = np.arange(len(v))
    v0, v1 = v[r, k - 1], v[r, k]
    f = np.clip((half - v0) / np.maximum(v1 - v0, 1e-6), 0.0, 1.0)
    c = t[r, k - 1] + f * (t[r, k] - t[r, k - 1])
    x = (t - c[:, None])[None] / (np.sqrt(2.0) * np.asarray(grid, np.float64)[:, None, None])
    b = 0.5 * (1.0 + _plain_erf(x))
    bc = b - b.mean(axis=2, keepdims=True)
    vc = (v - v.mean(axis=1, keepdims=True))[None]
    amp = (bc * vc).sum(axis=2) / np.maximum((bc ** 2).sum(axis=2), 1e-9)
    sse = ((vc - amp[..., None] * bc) ** 2).sum(axis=2)
    out = np.asarray(grid, np.float64)[np.argmin(sse, axis=0)]
    out[~ok] = np.nan
    return out


@pytest.mark.parametrize("shape, sigma", [((120, 170), 1.3), ((97, 131, 3), 2.2),
                                          ((200, 301), 2.6), ((360, 640), 1.6)])
def test_deblur_equals_the_plain_transforms(shape: tuple[int, ...], sigma: float) -> None:
    rng = np.random.default_rng(len(shape) * 100 + shape[0])
    image = cv2.GaussianBlur(rng.integers(0, 256, shape, np.uint8), (0, 0), 1.5)
    for k in (0.005, 0.02):
        assert np.array_equal(sharpness.deblur(image, sigma, k), _plain_deblur(image, sigma, k))


def test_noise_to_signal_equals_the_plain_bisection() -> None:
    for sigma in (1.0, 1.4, 2.2, 2.6, 3.5):
        for gain in (1.2, 1.6, 3.0):
            assert sharpness.noise_to_signal_for(sigma, gain, 0.005) == \
                _plain_noise_to_signal(sigma, gain, 0.005)


def test_erf_and_step_fit_equal_the_plain_formulas() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(scale=3.0, size=(37, 20, 56))
    x[0, 0, :4] = 0.0
    assert np.array_equal(sharpness._erf(x.copy()), _plain_erf(x))
    t = np.cumsum(rng.uniform(0.3, 0.6, (40, 56)), axis=1)
    step = 1.0 / (1.0 + np.exp(-(t - t[:, 28:29]) / rng.uniform(0.5, 2.0, (40, 1))))
    lo, hi = rng.uniform(10, 60, (40, 1)), rng.uniform(20, 230, (40, 1))
    v = (lo + (hi - lo) * step + rng.normal(0, 2, (40, 56))).astype(np.float32)
    grid = np.arange(0.3, 4.0, 0.1)
    fast, plain = sharpness._fit_steps(t, v, 30.0, grid), _plain_fit_steps(t, v, 30.0, grid)
    assert np.isnan(plain).any() and np.isfinite(plain).any()  # both kinds of profile
    assert np.array_equal(fast, plain, equal_nan=True)


def test_line_grid_equals_the_lines_made_per_edge() -> None:
    for m, search in ((87, 16.0), (40, 6.0), (13, 16.0)):
        step, slope_step = 0.5, 1.0
        ncols = len(np.arange(-search - 2, search + 2 + 1e-9, step))
        t, avals, bvals, ok, flat = _line_grid(m, search, step, slope_step, ncols)
        o = (np.arange(-search, search + 1e-9, step)[None, :, None]
             + np.arange(-search / 2, search / 2 + 1e-9, slope_step)[:, None, None]
             * np.linspace(-1.0, 1.0, m)[None, None, :])
        want_ok = np.abs(o).max(axis=2) <= search
        j = np.clip(np.round((search + 2) / step + o[want_ok] / step).astype(np.intp), 0,
                    ncols - 1)
        assert np.array_equal(ok, want_ok)
        grad = np.random.default_rng(m).random((m, ncols)).astype(np.float32)
        assert np.array_equal(grad.ravel()[flat], grad[np.arange(m)[None, :], j])


def test_row_medians_equal_numpys() -> None:
    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 8, 27, 58, 59, 82):
        for x in (rng.random((40, n)).astype(np.float32),
                  (np.round(rng.random((40, n)) * 4) / 4).astype(np.float32),  # ties
                  rng.normal(size=(40, n))):
            want = np.median(x, axis=1)
            got = _row_medians(x.copy())
            assert got.dtype == want.dtype and np.array_equal(got, want)


def _plain_white_balance(image: np.ndarray, pose: Pose, markers: list[int]
                         ) -> tuple[np.ndarray, np.ndarray, float]:
    g = board_geometry()
    half = g.marker_size / 2
    whites, blacks, noises = [], [], []
    h, w = image.shape[:2]
    for mid in markers:
        ring_w = pose.project(g.marker_ring(mid, half + 1.5, half + g.marker_quiet - 2.0))
        ring_b = pose.project(g.marker_ring(mid, half * 0.72, half * 0.93))
        inside = ((ring_w[:, 0] >= 0) & (ring_w[:, 0] < w - 1) & (ring_w[:, 1] >= 0)
                  & (ring_w[:, 1] < h - 1))
        if inside.mean() < 0.8:
            continue
        sw = sample_bilinear(image, ring_w[inside])
        sb = sample_bilinear(image, ring_b)
        lum = sw.sum(axis=1)
        top = sw[lum >= np.median(lum)]
        whites.append(np.median(top, axis=0))
        blacks.append(np.median(sb, axis=0))
        mad = np.median(np.abs(top - np.median(top, axis=0)), axis=0) * 1.4826
        noises.append(float(np.median(mad)))
    wv = np.asarray(whites)
    white = wv[int(np.argmax(wv.sum(axis=1)))]
    black = np.minimum(np.median(np.asarray(blacks), axis=0), white * 0.5)
    span = float(np.mean(np.maximum(white, 8.0)))
    return white, black, float(np.clip(np.median(noises) / span * 1.5, 0.003, 0.05))


def test_white_balance_equals_the_marker_by_marker_sampling() -> None:
    g = board_geometry()
    rng = np.random.default_rng(3)
    image = cv2.GaussianBlur(rng.integers(0, 256, (720, 1280, 3), np.uint8), (0, 0), 3)
    K = np.array([[900.0, 0, 640], [0, 900.0, 360], [0, 0, 1]])
    ids = sorted(g.marker_centres)
    for k in range(4):
        rvec = np.array([np.pi * 0.85 + 0.05 * k, 0.1 * k, 0.05])
        tvec = np.array([10.0 * k, -20.0, 900.0 + 40 * k])
        pose = Pose(rvec, tvec, Intrinsics(K, np.array([-0.05 * k, 0, 0, 0, 0]), (1280, 720)))
        wb = estimate_white_balance(image, pose, g, ids)
        white, black, noise = _plain_white_balance(image, pose, ids)
        assert np.array_equal(wb.white, white) and np.array_equal(wb.black, black)
        assert wb.noise == noise
