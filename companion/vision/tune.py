"""Fit the site scorer's weights from labelled photos (renders with ground truth).

The site reader scores each (height, depth) hypothesis with a weighted sum of
evidence terms (:data:`companion.vision.sites.FEATURES`). Rather than tune
those weights by hand, this fits them by multinomial logistic regression:
for every visible site of every labelled photo, the true height should win
among all hypotheses (the depth offset is marginalised). Train on photos from
more than one renderer so the weights do not learn one renderer's quirks.

``python -m companion.vision.tune --sim 60 --out weights.json`` writes weights
that can be pasted into ``companion/vision/config.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from companion.rules.board import Site
from companion.vision.colours import ColourModel, estimate_white_balance
from companion.vision.geometry import (
    BoardGeometry,
    FloatArray,
    Pose,
    board_geometry,
    fill_convex,
)
from companion.vision.sites import FEATURES, SiteReader, strip_features
from companion.vision.strips import project_fast


@dataclass
class LabelledPhoto:
    """A photo with what a perfect reader would know about it."""

    image: np.ndarray
    pose: Pose
    colors: list[str]
    heights: dict[Site, tuple[int, str]]  # occupied sites: (height, top colour)
    offsets: dict[Site, tuple[float, float]]  # tower centre offset from the site (mm)
    visible: dict[Site, float]  # visible fraction of the top face (floor when empty)


def true_occlusion(photo: LabelledPhoto, reader: SiteReader, strips: Any) -> np.ndarray:
    """(S, N, L) strip samples covered by a nearer tower, from the truth.

    The silhouettes are drawn with the photo's true pose; ``strips`` may come
    from another (estimated) pose: its sample positions are looked up as they are.
    """
    g = reader.g
    h, w = photo.image.shape[:2]
    n = len(g.sites)
    rank = np.empty(n, np.int64)
    C = photo.pose.camera_centre
    rank[np.argsort(np.linalg.norm(g.site_xy - C[None, :2], axis=1))] = np.arange(n)
    mask = np.full((h, w), n, np.int32)
    half = g.footprint / 2 + 0.5
    sq = np.array([[-half, half], [half, half], [half, -half], [-half, -half]])
    for i in np.argsort(-rank):
        site = g.sites[int(i)]
        if site not in photo.heights:
            continue
        c = g.site_xy[i] + np.asarray(photo.offsets.get(site, (0.0, 0.0)))
        z = photo.heights[site][0] * g.storey
        box = np.vstack([np.column_stack([sq + c, np.zeros(4)]),
                         np.column_stack([sq + c, np.full(4, z)])])
        fill_convex(mask, project_fast(photo.pose, box).astype(np.float32), int(rank[i]))
    pix = np.round(np.nan_to_num(strips.pix, nan=-1.0)).astype(np.int64)
    px = np.clip(pix[..., 0], 0, w - 1)
    py = np.clip(pix[..., 1], 0, h - 1)
    return mask[py, px] < rank[:, None, None]


def estimated_pose(photo: LabelledPhoto, geometry: BoardGeometry | None = None) -> Pose:
    """The pose the reader would use on this photo: markers, estimated intrinsics."""
    from companion.vision.pose import detect_markers, estimate_intrinsics, solve_pose

    g = geometry or board_geometry()
    markers = detect_markers(photo.image, g)
    h, w = photo.image.shape[:2]
    intr = estimate_intrinsics(markers, g, (w, h))
    return solve_pose(markers, intr, g).pose


def site_examples(photo: LabelledPhoto, geometry: BoardGeometry | None = None,
                  config: dict[str, Any] | None = None, min_visible: float = 0.5,
                  estimate: bool = False) -> list[tuple[FloatArray, int]]:
    """(features (H, D, F), true height) for every visible site of one photo.

    With ``estimate`` the evidence is gathered as the reader gathers it, through
    the pose and intrinsics estimated from the markers (their errors included);
    the occlusion still comes from the truth.
    """
    g = geometry or board_geometry()
    reader = SiteReader(g, config)
    pose = estimated_pose(photo, g) if estimate else photo.pose
    wb = estimate_white_balance(photo.image, pose, g)
    model = ColourModel.for_colours(g, photo.colors)
    strips = reader.strips(pose)
    reader.board = reader.board_model(photo.image, pose, wb)
    reader.noise = wb.noise
    reader.site_print = reader.print_model(photo.image, pose, wb, model)
    sf = strip_features(photo.image, strips, wb, model, reader.cfg, reader.board,
                        reader.site_print)
    occ = true_occlusion(photo, reader, strips)
    vis = (sf.inside & ~occ).astype(np.float64)
    idx = np.arange(len(g.sites))
    F, _ = reader._features(idx, strips, sf, vis, model)
    out = []
    for i, site in enumerate(g.sites):
        if photo.visible.get(site, 0.0) < min_visible:
            continue
        h = photo.heights.get(site, (0, ""))[0]
        if h >= F.shape[1]:
            continue
        out.append((F[i].astype(np.float32), int(h)))
    return out


def fit_weights(examples: Sequence[tuple[FloatArray, int]], l2: float = 1e-3,
                iters: int = 400, lr: float = 0.05, init: Mapping[str, float] | None = None,
                seed: int = 0) -> dict[str, float]:
    """Multinomial logistic regression over each site's hypotheses (Adam, numpy only)."""
    X = np.stack([e[0] for e in examples])  # (M, H, D, F)
    y = np.array([e[1] for e in examples])
    M, H, D, Fn = X.shape
    Xf = X.reshape(M, H * D, Fn)
    scale = np.maximum(np.abs(Xf).reshape(-1, Fn).max(axis=0), 1e-6)
    Xn = Xf / scale
    w = np.zeros(Fn)
    if init:
        w = np.array([init.get(n, 0.0) for n in FEATURES]) * scale
    mask_true: np.ndarray = np.zeros((M, H, D), bool)
    mask_true[np.arange(M), y] = True
    mask_true = mask_true.reshape(M, H * D)
    m = np.zeros(Fn)
    v = np.zeros(Fn)
    b1, b2 = 0.9, 0.999
    for t in range(1, iters + 1):
        s = Xn @ w
        s = s - s.max(axis=1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=1, keepdims=True)
        q = np.where(mask_true, np.exp(s), 0.0)
        q /= np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
        grad = np.einsum("mk,mkf->f", p - q, Xn) / M + l2 * w
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        w -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + 1e-8)
    w = w / scale
    return {n: float(round(x, 4)) for n, x in zip(FEATURES, w, strict=True)}


def fit_scorer(examples: Sequence[tuple[FloatArray, int]], hidden: int = 16,
               iters: int = 1200, lr: float = 0.02, l2: float = 1e-4, batch: int = 512,
               seed: int = 0) -> dict[str, Any]:
    """A small network over the evidence terms: a linear part plus ``hidden`` tanh units.

    Evidence combines conditionally (a strong foot edge matters more when the
    far edge is weak); a linear score cannot say that. Same softmax-over-
    hypotheses objective as :func:`fit_weights`; returns the JSON-ready
    ``scorer`` section of the config.
    """
    X = np.stack([e[0] for e in examples]).astype(np.float64)
    y = np.array([e[1] for e in examples])
    M, H, D, Fn = X.shape
    Xf = X.reshape(M, H * D, Fn)
    scale = np.maximum(np.abs(Xf).reshape(-1, Fn).max(axis=0), 1e-6)
    Xn = Xf / scale
    mask: np.ndarray = np.zeros((M, H, D), bool)
    mask[np.arange(M), y] = True
    mask = mask.reshape(M, H * D)
    rng = np.random.default_rng(seed)
    W1 = rng.normal(0, 0.3, (Fn, hidden))
    b1 = np.zeros(hidden)
    w2 = rng.normal(0, 0.3, hidden)
    wl = np.zeros(Fn)
    params = [W1, b1, w2, wl]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    for t in range(1, iters + 1):
        idx = rng.choice(M, min(batch, M), replace=False)
        xb, mb = Xn[idx], mask[idx]
        Hh = np.tanh(xb @ W1 + b1)
        s = Hh @ w2 + xb @ wl
        s = s - s.max(axis=1, keepdims=True)
        p = np.exp(s)
        p /= p.sum(axis=1, keepdims=True)
        q = np.where(mb, np.exp(s), 0.0)
        q /= np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
        g = (p - q) / len(idx)
        gH = g[..., None] * w2 * (1 - Hh ** 2)
        grads = [np.einsum("mkh,mkf->fh", gH, xb) + l2 * W1, gH.sum(axis=(0, 1)),
                 np.einsum("mk,mkh->h", g, Hh) + l2 * w2,
                 np.einsum("mk,mkf->f", g, xb) + l2 * wl]
        for i, (prm, gr) in enumerate(zip(params, grads, strict=True)):
            m1[i] = 0.9 * m1[i] + 0.1 * gr
            m2[i] = 0.999 * m2[i] + 0.001 * gr * gr
            prm -= lr * (m1[i] / (1 - 0.9 ** t)) / (np.sqrt(m2[i] / (1 - 0.999 ** t)) + 1e-8)
    return {"features": list(FEATURES), "scale": [float(v) for v in scale],
            "W1": np.round(W1, 5).tolist(), "b1": np.round(b1, 5).tolist(),
            "w2": np.round(w2, 5).tolist(), "wl": np.round(wl, 5).tolist()}


def accuracy(examples: Sequence[tuple[FloatArray, int]],
             scorer: Mapping[str, Any]) -> float:
    """Fraction of sites whose best hypothesis has the true height."""
    from companion.vision.sites import Scorer

    sc = Scorer.from_config(scorer)
    ok = 0
    for F, h in examples:
        s = sc(F[None])[0]
        ok += int(np.unravel_index(int(np.argmax(s)), s.shape)[0] == h)
    return ok / max(1, len(examples))


def sim_photos(n: int, seed: int = 0, kinds: Iterable[str] = ("mounted", "phone")
               ) -> list[LabelledPhoto]:
    """Labelled photos from :mod:`companion.sim` (true camera and pose)."""
    from companion.sim import sample_photo

    out = []
    kinds = list(kinds)
    for k in range(n):
        kind = kinds[k % len(kinds)]
        colors = "2017" if k % 3 == 2 else "classic"
        r = sample_photo([seed, k], kind, colors=colors, tall=k % 2 == 1)
        out.append(labelled_from_sim(r))
    return out


def labelled_from_sim(r: Any) -> LabelledPhoto:
    from companion.vision.geometry import Intrinsics

    t = r.truth
    intr = Intrinsics.from_json(t["camera"])
    pose = Pose(np.array(t["pose"]["rvec"]), np.array(t["pose"]["tvec"]), intr)
    g = board_geometry()
    heights = {Site.from_json(e): (int(e["height"]), str(e["owner"]))
               for e in t["board"]["sites"]}
    offsets = {}
    for site in heights:
        x, y, _ = r.scene.tower_pose(site)
        offsets[site] = (x - g.site_xy[site.index][0], y - g.site_xy[site.index][1])
    visible = {Site.from_json(e): float(e["top"]) for e in t["visibility"]}
    return LabelledPhoto(r.image, pose, list(t["expected"]["colors"]), heights, offsets,
                         visible)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m companion.vision.tune")
    ap.add_argument("--sim", type=int, default=40, help="number of simulated photos")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="-")
    args = ap.parse_args(argv)
    photos = sim_photos(args.sim, args.seed)
    ex = [e for p in photos for e in site_examples(p)]
    w = fit_scorer(ex)
    text = json.dumps(w)
    if args.out == "-":
        print(text)
    else:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    print(f"train accuracy {accuracy(ex, w):.4f} on {len(ex)} sites", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
