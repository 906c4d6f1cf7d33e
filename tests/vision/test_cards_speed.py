"""The card stage's shortcuts compute exactly what the plain expressions did.

Each shortcut in companion/vision/cards.py is set against the computation it
replaced, on seeded random input, and must give the same bits: the colour
table against white balance and tone over the whole region, labelling and
cell finding within a box against the whole mask, the loose pair sieve
against the double loop, the window sums made once against the products over
every point, the tower test on the seat's footprint against the remap.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from companion.rules.topology import Seat
from companion.vision.cards import (
    _card_masks,
    _card_window,
    _cell_scores,
    _cells_in,
    _colour_lut,
    _components,
    _hidden,
    _near_pairs,
    _red_centres,
    _red_masks,
    _seat_maps,
)
from companion.vision.colours import WhiteBalance
from companion.vision.geometry import Intrinsics, Pose, board_geometry

RNG_SEEDS = range(6)


@pytest.mark.parametrize("tone", [1.0, 0.55, 0.75, 1.3])
def test_colour_table_equals_white_balance_and_tone(tone: float) -> None:
    rng = np.random.default_rng(int(tone * 100))
    img = rng.integers(0, 256, size=(67, 131, 3), dtype=np.uint8)
    wb = WhiteBalance(np.array([191.0, 203.5, 6.0]), np.zeros(3))  # one channel floored at 8
    x = wb.apply(img)
    if tone != 1.0:
        x = np.power(np.maximum(x, 0.0), np.float32(1.0 / tone))
    lut = _colour_lut(wb, tone)
    for i, ch in enumerate(cv2.split(img)):
        got = cv2.LUT(ch, lut[i])
        assert got.dtype == np.float32
        assert np.array_equal(got, x[..., i])


@pytest.mark.parametrize("k, grow", [(1.0, 0.7), (0.6, 0.7), (1.0, 1.0), (0.8, 1.2)])
def test_red_masks_equal_the_whole_region_arithmetic(k: float, grow: float) -> None:
    rng = np.random.default_rng(int(10 * k + grow))
    img = rng.integers(0, 256, size=(90, 150, 3), dtype=np.uint8)
    img[20:40, 30:60] = (40, 50, 200)  # red patches among the noise
    b, gch, r = (ch.astype(np.float32) / np.float32(v)
                 for ch, v in zip(cv2.split(img), (190.0, 201.0, 215.0), strict=True))
    inside = np.ones(b.shape, bool)
    inside[:, :25] = False
    threshold = k * 0.28
    ssum = r + gch + b + 0.12
    c1 = (r - gch) / ssum
    c2 = (gch - b) / ssum
    hue_ok = (c2 < k * 0.2) & (c2 > k * -0.25) & inside
    strong, weak = _red_masks(b, gch, r, inside, k, threshold, grow)
    assert np.array_equal(strong, (c1 > threshold) & hue_ok)
    assert strong.any()
    if grow < 1.0:
        assert weak is not None
        assert np.array_equal(weak, (c1 > grow * threshold) & hue_ok)
    else:
        assert weak is None


def _sparse_mask(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """A few blobs of various sizes, some touching, away from and at the edges."""
    m = np.zeros(shape, np.uint8)
    for _ in range(int(rng.integers(0, 9))):
        h, w = (int(v) for v in rng.integers(1, 30, size=2))
        y, x = int(rng.integers(-5, shape[0])), int(rng.integers(-5, shape[1]))
        m[max(0, y):y + h, max(0, x):x + w] = 1
    m[rng.random(shape) < 0.002] = 1  # specks, some diagonal neighbours
    return m


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_labelling_within_the_box_equals_the_whole_mask(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(20):
        m = _sparse_mask(rng, (252, 404))
        n, labels, stats, cent = cv2.connectedComponentsWithStats(m, connectivity=8)
        n2, lab2, stats2, cent2, (x, y, w, h) = _components(m)
        assert n2 == n
        assert np.array_equal(stats2[1:], stats[1:])
        assert np.array_equal(cent2[1:], cent[1:])  # to the bit
        if n > 1:
            assert np.array_equal(lab2, labels[y:y + h, x:x + w])
            assert not labels[m == 0].any() and (labels[y:y + h, x:x + w] > 0).sum() == m.sum()


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_cells_found_within_a_part_equal_the_whole(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    cell = 18.0
    for _ in range(10):
        m = np.zeros((252, 404), bool)
        # a large red region with cell-sized squares on it, anywhere (edges too)
        y, x = int(rng.integers(-20, 240)), int(rng.integers(-20, 390))
        m[max(0, y):y + 40, max(0, x):x + 70] = True
        for _ in range(3):
            cy, cx = int(rng.integers(0, 252)), int(rng.integers(0, 404))
            m[cy:cy + 18, cx:cx + 18] = True
        full = _cells_in(m, cell)
        ys, xs = np.nonzero(m)
        pad = 33
        y0, x0 = max(0, int(ys.min()) - pad), max(0, int(xs.min()) - pad)
        y1, x1 = int(ys.max()) + 1 + pad, int(xs.max()) + 1 + pad
        part = _cells_in(m[y0:y1, x0:x1], cell, (x0, y0))
        assert len(part) == len(full)
        assert all(np.array_equal(p, q) for p, q in zip(part, full, strict=True))


def _plain_red_centres(red: np.ndarray, s: float, cell: float) -> list[np.ndarray]:
    """_red_centres as first written: the whole mask labelled, cells looked for in it."""
    red = cv2.morphologyEx(red.astype(np.uint8), cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))
    n, labels, stats, cent = cv2.connectedComponentsWithStats(red, connectivity=8)
    area = (cell * s) ** 2
    small = [k for k in range(1, n)
             if 0.3 * area < stats[k, cv2.CC_STAT_AREA] < 1.6 * area
             and max(stats[k, cv2.CC_STAT_WIDTH], stats[k, cv2.CC_STAT_HEIGHT])
             < 1.9 * cell * s]
    large = [k for k in range(1, n) if k not in small and stats[k, cv2.CC_STAT_AREA] > 0.3 * area]
    return [cent[k] for k in small] + _cells_in(np.isin(labels, large), cell * s)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_red_centres_equal_the_plain_computation(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    g = board_geometry()
    for _ in range(10):
        m = _sparse_mask(rng, (252, 404)).astype(bool)
        for _ in range(int(rng.integers(0, 3))):  # cell-sized and larger red regions
            y, x = int(rng.integers(-10, 250)), int(rng.integers(-10, 400))
            h, w = int(rng.integers(14, 45)), int(rng.integers(14, 80))
            m[max(0, y):y + h, max(0, x):x + w] = True
        _, kept, got = _red_centres(m, 2.0, g, None)
        # (no tower cuts a cell: every one kept)
        assert len(kept) == len(got) and all(
            np.array_equal(p, q) for p, q in zip(kept, got, strict=True))
        ref = _plain_red_centres(m, 2.0, g.card.cell)
        assert len(got) == len(ref)
        assert all(np.array_equal(p, q) for p, q in zip(got, ref, strict=True))


def test_pair_sieve_keeps_every_pair_the_exact_test_passes() -> None:
    rng = np.random.default_rng(7)
    s, spacing = 2.0, 30.0
    for _ in range(200):
        k = int(rng.integers(0, 9))
        centres = [rng.uniform(0, 400, size=2) for _ in range(k)]
        if k > 2 and rng.random() < 0.7:  # pairs near a spacing apart, and on its bounds
            d = spacing * s * float(rng.choice([0.85, 0.851, 1.0, 1.149, 1.15]))
            a = float(rng.uniform(-0.5, 0.5))
            centres[1] = centres[0] + d * np.array([np.cos(a), -np.sin(a)])
        plain = [(i, j) for i, ci in enumerate(centres) for j, cj in enumerate(centres)
                 if j != i and 0.85 * spacing < np.hypot(*((cj - ci) / s)) < 1.15 * spacing
                 and ((cj - ci) / s)[0] > 0]
        sieved = [(i, j) for i, j in _near_pairs(centres, s, spacing)
                  if 0.85 * spacing < np.hypot(*((centres[j] - centres[i]) / s))
                  < 1.15 * spacing and ((centres[j] - centres[i]) / s)[0] > 0]
        assert sieved == plain


def _plain_cell_scores(lum: np.ndarray, origin: tuple[float, float], s: float, am: float,
                       bm: float, ang: float, g: Any, inside: np.ndarray | None,
                       hidden: np.ndarray | None, min_seen: float
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_cell_scores as first written: every sum a product over the clear points."""
    a0, b0 = origin
    u, w, _, _ = _card_window(g.card)
    ca, sa = np.cos(ang), np.sin(ang)
    H, W = lum.shape
    pa = am + u * ca + w * sa
    pb = bm + u * sa - w * ca
    x = ((pa - a0) * s).astype(np.float32)
    y = ((b0 - pb) * s).astype(np.float32)
    ok = (x >= 0) & (x <= W - 1) & (y >= 0) & (y <= H - 1)
    iy = np.clip(np.round(y).astype(np.int64), 0, H - 1)
    ix = np.clip(np.round(x).astype(np.int64), 0, W - 1)
    if inside is not None and not inside.all():
        ok &= inside[iy, ix]
    clear = ok & ~hidden[iy, ix] if hidden is not None and hidden.any() else ok
    v = cv2.remap(lum, x[None, :], y[None, :], cv2.INTER_LINEAR)[0].astype(np.float64)
    out = np.full(9, -np.inf)
    ncc = np.full(9, -np.inf)
    enough = np.zeros(9, bool)
    c = clear.astype(np.float64)
    n = float(c.sum())
    vc = v * c
    sst = float(vc @ v) - float(vc.sum()) ** 2 / max(n, 1.0)
    if n < 3 or sst <= 1e-12:
        return out.reshape(3, 3), ncc.reshape(3, 3), enough.reshape(3, 3)
    m, mp, mpp, flat = _card_masks(g.card)
    sse = np.zeros(9)
    for f in flat:
        nf = f @ c
        s1 = f @ vc
        sse += np.where(nf > 0, f @ (vc * v) - s1 * s1 / np.maximum(nf, 1.0), 0.0)
    n_pat = m.sum(axis=1)
    nm = m @ c
    s_v = m @ vc
    s_p = mp @ c
    svv = m @ (vc * v) - s_v * s_v / np.maximum(nm, 1.0)
    spp = mpp @ c - s_p * s_p / np.maximum(nm, 1.0)
    svp = mp @ vc - s_v * s_p / np.maximum(nm, 1.0)
    sse += svv - np.where(svp > 0, svp * svp / np.maximum(spp, 1e-12), 0.0)
    usable = nm >= 0.1 * n_pat
    out[usable] = np.sqrt(np.maximum(0.0, 1.0 - sse[usable] / sst))
    ncc[usable] = (svp / np.maximum(np.sqrt(np.maximum(svv * spp, 0.0)), 1e-9))[usable]
    in_photo = m @ ok.astype(np.float64)
    enough[:] = usable & (in_photo >= 0.7 * n_pat) & (nm >= min_seen * n_pat)
    return out.reshape(3, 3), ncc.reshape(3, 3), enough.reshape(3, 3)


@pytest.mark.parametrize("seed", RNG_SEEDS)
def test_cell_scores_equal_the_plain_sums(seed: int) -> None:
    rng = np.random.default_rng(300 + seed)
    g = board_geometry()
    H, W = 252, 404
    a0, b0, s = -100.0, 3.0, 2.0
    lum = cv2.GaussianBlur(rng.uniform(0.2, 1.3, size=(H, W)).astype(np.float32), (0, 0), 1.5)
    inside = np.ones((H, W), bool)
    inside[:, :int(rng.integers(40, 200))] = False  # the photo's edge through the seat
    hidden = np.zeros((H, W), bool)
    hidden[int(rng.integers(0, 150)):, int(rng.integers(150, 350)):][:60, :50] = True
    for _ in range(12):
        # the card anywhere: wholly in the region, running off it, over the edge and tower
        am = float(rng.uniform(a0 + 20, a0 + W / s - 20))
        bm = float(rng.uniform(b0 - H / s + 10, b0 - 10))
        ang = float(rng.uniform(-0.26, 0.26))
        for ins, hid in ((None, None), (inside, None), (None, hidden), (inside, hidden)):
            got = _cell_scores(lum, (a0, b0), s, am, bm, ang, g, ins, hid, 0.3)
            ref = _plain_cell_scores(lum, (a0, b0), s, am, bm, ang, g, ins, hid, 0.3)
            for p, q in zip(got, ref, strict=True):
                assert np.array_equal(p, q)


def test_tower_test_on_the_footprint_equals_the_remap() -> None:
    g = board_geometry()
    K = np.array([[1000.0, 0, 640], [0, 1000.0, 360], [0, 0, 1]])
    intr = Intrinsics(K, np.array([0.05, -0.02, 0.0, 0.0, 0.0]), (1280, 720))
    pose = Pose(np.array([2.4, 0.0, 0.0]), np.array([0.0, 60.0, 700.0]), intr)
    rng = np.random.default_rng(8)
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        sm = _seat_maps(pose, g, seat, 2.0, 14.0, (720, 1280))
        for _ in range(10):
            cov = np.zeros((720, 1280), np.uint8)
            y, x = int(rng.integers(0, 720)), int(rng.integers(0, 1280))
            cov[y:y + int(rng.integers(1, 200)), x:x + int(rng.integers(1, 200))] = 1
            ref = cv2.remap(cov, sm.mx, sm.my, cv2.INTER_NEAREST,
                            borderMode=cv2.BORDER_CONSTANT) > 0
            got = _hidden(sm, cov)
            assert np.array_equal(np.zeros_like(ref) if got is None else got, ref)
            assert (got is None) == (not ref.any())
