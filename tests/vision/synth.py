"""A small independent renderer of the reference board for the vision tests.

Deliberately different from companion.sim (painter's algorithm, procedural
board print with random colours, per-block jitter, coloured lamps with soft
or hard shadows, lens distortion, noise and JPEG) so the reader is not tuned
to one renderer. Ground truth includes each site's top-face visibility.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.rules.board import Site
from companion.rules.topology import Seat
from companion.vision.geometry import (
    SEAT_FORWARD,
    BoardGeometry,
    Intrinsics,
    Pose,
    board_geometry,
    intrinsics_for_fov,
    look_at_pose,
)
from tests.shots import shared

JITTER = os.environ.get("SYNTH_JITTER", "block")  # "block": each block; "tower": one offset
SEAT_AZIMUTH = {Seat.S: 0.0, Seat.E: 90.0, Seat.N: 180.0, Seat.W: 270.0}


@dataclass
class BlockSpec:
    color: str
    storeys: int
    dx: float = 0.0
    dy: float = 0.0
    rot: float = 0.0


@dataclass
class Scene:
    towers: dict[Site, list[BlockSpec]]
    colors: list[str]  # names in play (keys of the colour set)
    rgb: dict[str, tuple[int, int, int]]
    cards: dict[Seat, tuple[int, int]]  # red cell per seat with a stack
    card_place: dict[Seat, tuple[float, float, float]] = field(default_factory=dict)
    seed: int = 0

    def heights(self) -> dict[Site, tuple[int, str]]:
        return {s: (sum(b.storeys for b in t), t[-1].color) for s, t in self.towers.items() if t}


@dataclass
class Shot:
    image: np.ndarray
    pose: Pose
    scene: Scene
    visible: dict[Site, float]  # fraction of top face (or footprint) visible
    card_visible: dict[Seat, float]
    kind: str


def random_scene(rng: np.random.Generator, colour_set: str = "classic", fill: float = 0.55,
                 tall: int = 2, geom: BoardGeometry | None = None) -> Scene:
    g = geom or board_geometry()
    cmap = g.colour_sets[colour_set]
    names = list(cmap)
    rgb = {n: g.colours[cmap[n]] for n in names}
    towers: dict[Site, list[BlockSpec]] = {}
    tall_sites = set(rng.choice(len(g.sites), size=tall, replace=False).tolist()) if tall else set()
    for i, site in enumerate(g.sites):
        if i not in tall_sites and rng.random() > fill:
            continue
        target = int(rng.integers(15, 27)) if i in tall_sites else int(
            rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 10, 12]))
        blocks = []
        h = 0
        base = rng.uniform(-2.5, 2.5, 2)
        while h < target:
            s = int(min(rng.choice([1, 2, 3, 4]), target - h))
            off = (rng.uniform(-2.5, 2.5, 2) if JITTER == "block"
                   else base + rng.uniform(-0.5, 0.5, 2))
            blocks.append(BlockSpec(str(rng.choice(names)), s, *off,
                                    float(rng.uniform(-4, 4))))
            h += s
        towers[site] = blocks
    cards = {}
    for seat in Seat:
        if rng.random() < 0.8:
            cards[seat] = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
    place = {seat: (float(rng.uniform(-38, 38)), float(rng.uniform(-9, 9)),
                    float(rng.uniform(9, 16))) for seat in Seat}
    return Scene(towers, names, rgb, cards, place, int(rng.integers(1 << 30)))


def random_camera(rng: np.random.Generator, kind: str = "mounted", side: Seat | None = None,
                  elevation: float | None = None) -> tuple[Pose, dict]:
    if kind == "mounted":
        size = (1280, 720)
        intr = intrinsics_for_fov(size, float(rng.uniform(58, 72)))
        dist = float(rng.uniform(750, 1050))
        el = float(rng.uniform(50, 82)) if elevation is None else elevation
        seat = side if side is not None else Seat(str(rng.choice(["S", "W", "N", "E"])))
        az = SEAT_AZIMUTH[seat] + float(rng.uniform(-25, 25))
    else:
        size = (1600, 1200)
        k1 = float(rng.uniform(-0.12, 0.04))
        intr = intrinsics_for_fov(size, float(rng.uniform(60, 75)), (k1, 0.0, 0, 0, 0))
        dist = float(rng.uniform(650, 1000))
        el = float(rng.uniform(40, 80)) if elevation is None else elevation
        az = float(rng.uniform(0, 360)) if side is None else SEAT_AZIMUTH[side] + float(
            rng.uniform(-30, 30))
    target = (float(rng.uniform(-25, 25)), float(rng.uniform(-20, 20)), 0.0)
    pose = look_at_pose(intr, dist, el, az, target, float(rng.uniform(-4, 4)))
    return pose, {"distance": dist, "elevation": el, "azimuth": az}


# -- ground texture -----------------------------------------------------------

PX_PER_MM = 2.5
GROUND = (-480.0, 480.0, -420.0, 420.0)  # x0, x1, y0, y1


def _g2t(xy: np.ndarray) -> np.ndarray:
    x0, _, _, y1 = GROUND
    out = np.empty_like(np.asarray(xy, np.float64))
    out[..., 0] = (xy[..., 0] - x0) * PX_PER_MM
    out[..., 1] = (y1 - xy[..., 1]) * PX_PER_MM
    return out


def _poly(img: np.ndarray, xy: np.ndarray, color: tuple[float, ...]) -> None:
    pts = np.round(_g2t(np.asarray(xy, np.float64)) * 16).astype(np.int32)
    cv2.fillPoly(img, [pts], color, cv2.LINE_AA, shift=4)


def _rect(cx: float, cy: float, w: float, h: float, ang: float = 0.0) -> np.ndarray:
    c, s = np.cos(np.deg2rad(ang)), np.sin(np.deg2rad(ang))
    loc = np.array([[-w / 2, h / 2], [w / 2, h / 2], [w / 2, -h / 2], [-w / 2, -h / 2]])
    return np.column_stack([cx + loc[:, 0] * c - loc[:, 1] * s, cy + loc[:, 0] * s + loc[:, 1] * c])


def ground_texture(scene: Scene, rng: np.random.Generator, g: BoardGeometry) -> np.ndarray:
    x0, x1, y0, y1 = GROUND
    W, H = int((x1 - x0) * PX_PER_MM), int((y1 - y0) * PX_PER_MM)
    wood = np.array(rng.choice([[60, 95, 140], [90, 120, 150], [70, 70, 75], [150, 160, 170],
                                [40, 60, 90]]), np.float64)
    img = np.empty((H, W, 3), np.float32)
    img[:] = wood
    stripes = np.sin(np.linspace(0, rng.uniform(30, 80), H))[:, None, None] * 12
    img += stripes + rng.normal(0, 4, (H, 1, 3))
    bw, bh = g.board_size
    base = rng.uniform([150, 170, 180], [215, 225, 230])  # BGR
    _poly(img, _rect(0, 0, bw, bh), tuple(base.tolist()))
    tint = rng.uniform(-35, 35, 3)
    city_col = np.clip(base + tint - 20, 40, 255)
    site_col = np.clip(rng.uniform([170, 170, 170], [235, 235, 235]), 0, 255)
    line_col = (base * rng.uniform(0.3, 0.6)).tolist()
    for cx, cy in ((-140, 70), (0, 70), (140, 70), (-140, -70), (0, -70), (140, -70)):
        _poly(img, _rect(cx, cy, 112, 112), tuple(city_col.tolist()))
    for xy in g.site_xy:
        _poly(img, _rect(xy[0], xy[1], 30, 30), tuple(line_col))
        _poly(img, _rect(xy[0], xy[1], 27, 27), tuple(site_col.tolist()))
        if rng.random() < 0.5:  # a printed window motif on some sites
            _poly(img, _rect(xy[0], xy[1], 8, 8), tuple((site_col * 0.8).tolist()))
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for mid, (cx, cy) in g.marker_centres.items():
        _poly(img, _rect(cx, cy, g.marker_size + 2 * g.marker_quiet + 4,
                         g.marker_size + 2 * g.marker_quiet + 4), (245, 245, 245))
        n = int(round(g.marker_size * PX_PER_MM))
        m = cv2.aruco.generateImageMarker(d, mid, n).astype(np.float32)
        tl = _g2t(np.array([[cx - g.marker_size / 2, cy + g.marker_size / 2]]))[0]
        ix, iy = int(round(tl[0])), int(round(tl[1]))
        img[iy:iy + n, ix:ix + n] = np.where(m[..., None] > 127, 245.0, 25.0)
    for seat, cell in scene.cards.items():
        along, ang, gap = scene.card_place[seat]
        for k in range(int(rng.integers(0, 4)), -1, -1):  # cards under the top one
            _draw_card(img, g, seat, along + rng.normal(0, 2) * (k > 0),
                       ang + rng.normal(0, 3) * (k > 0), gap, cell if k == 0 else None, rng)
    return np.clip(img, 0, 255)


def _draw_card(img: np.ndarray, g: BoardGeometry, seat: Seat, along: float, ang: float,
               gap: float, cell: tuple[int, int] | None, rng: np.random.Generator) -> None:
    centre = g.card_centre(seat, along, gap)
    w, h = g.card.size

    def loc(pts: np.ndarray) -> np.ndarray:
        return g.card_to_board(seat, centre, ang, pts)

    def rect(a: float, b: float, rw: float, rh: float) -> np.ndarray:
        return loc(np.array([[a - rw / 2, b + rh / 2], [a + rw / 2, b + rh / 2],
                             [a + rw / 2, b - rh / 2], [a - rw / 2, b - rh / 2]]))

    _poly(img, rect(0, 0, w, h), (40, 45, 50))
    _poly(img, rect(0, 0, w - 3, h - 3), (228, 236, 240))
    if cell is None:
        return
    # artwork in the lower part
    for _ in range(6):
        a, b = rng.uniform(-25, 25), rng.uniform(-40, 0)
        _poly(img, rect(a, b, rng.uniform(5, 20), rng.uniform(5, 25)),
              tuple(rng.uniform(20, 230, 3).tolist()))
    for gi in range(2):
        a0, b0 = g.card_cell_local(gi, 1, 1)
        _poly(img, rect(a0, b0, 3 * g.card.cell + 1, 3 * g.card.cell + 1), (60, 60, 60))
        for r in range(3):
            for c in range(3):
                a, b = g.card_cell_local(gi, r, c)
                col = (40, 30, 210) if (r, c) == cell else (215, 215, 212)
                _poly(img, rect(a, b, g.card.cell - 1, g.card.cell - 1), col)


# -- rendering ------------------------------------------------------------------

def _lamp(rng: np.random.Generator, light: str) -> dict:
    if light == "warm":
        col = np.array([0.55, 0.8, 1.15])
    elif light == "cold":
        col = np.array([1.2, 1.0, 0.8])
    elif light == "any":
        col = rng.uniform(0.5, 1.2, 3)
    else:
        col = np.array([1.0, 1.0, 1.0])
    pos = np.array([rng.uniform(-700, 700), rng.uniform(-700, 700), rng.uniform(700, 1600)])
    return {"pos": pos, "col": col / col.max(), "ambient": float(rng.uniform(0.25, 0.5)),
            "soft": float(rng.choice([0.0, 2.0, 6.0])), "amb_col": rng.uniform(0.8, 1.0, 3)}


def _shade(normal: np.ndarray, point: np.ndarray, lamp: dict) -> np.ndarray:
    ldir = lamp["pos"] - point
    ldir = ldir / np.linalg.norm(ldir)
    diff = max(0.0, float(normal @ ldir))
    return lamp["ambient"] * lamp["amb_col"] + (1 - lamp["ambient"]) * diff * lamp["col"] * 1.15


def _block_corners(g: BoardGeometry, xy: np.ndarray, b: BlockSpec, z0: float) -> np.ndarray:
    sq = _rect(xy[0] + b.dx, xy[1] + b.dy, g.footprint, g.footprint, b.rot)
    z1 = z0 + b.storeys * g.storey
    return np.vstack([np.column_stack([sq, np.full(4, z0)]), np.column_stack([sq, np.full(4, z1)])])


def render(scene: Scene, pose: Pose, rng: np.random.Generator, light: str = "white",
           noise: float = 2.0, jpeg: int | None = 85, ss: int = 2,
           geom: BoardGeometry | None = None) -> Shot:
    g = geom or board_geometry()
    intr = pose.intrinsics
    W, H = intr.size
    margin = 0.12 if intr.has_distortion else 0.0
    mw, mh = int(W * margin), int(H * margin)
    K = intr.K.copy()
    K[0, 2] += mw
    K[1, 2] += mh
    K[:2] *= ss
    CW, CH = (W + 2 * mw) * ss, (H + 2 * mh) * ss
    pin = Pose(pose.rvec, pose.tvec, Intrinsics(K, np.zeros(5), (CW, CH)))
    lamp = _lamp(rng, light)
    tex = ground_texture(scene, rng, g)
    # ground: texture warped by the plane homography, then lit
    x0, _, _, y1 = GROUND
    T = np.array([[1 / PX_PER_MM, 0, x0], [0, -1 / PX_PER_MM, y1], [0, 0, 1]])
    Hg = pin.plane_homography(0.0) @ T
    img = cv2.warpPerspective(tex, Hg, (CW, CH), flags=cv2.INTER_LINEAR,
                              borderValue=(80, 90, 100))
    ys, xs = np.mgrid[0:CH:4, 0:CW:4].astype(np.float32)
    inv = np.linalg.inv(pin.plane_homography(0.0))
    pts = cv2.perspectiveTransform(np.dstack([xs, ys]).reshape(-1, 1, 2), inv).reshape(
        xs.shape + (2,))
    ground3 = np.dstack([pts, np.zeros(xs.shape)])
    ld = lamp["pos"][None, None, :] - ground3
    dist = np.linalg.norm(ld, axis=2)
    cosl = np.clip(ld[..., 2] / dist, 0, 1)
    irr = (1 - lamp["ambient"]) * cosl * (1000.0 / dist) ** 0.5 * 1.2
    irr = cv2.resize(irr.astype(np.float32), (CW, CH))
    # shadows of towers on the ground
    shadow = np.zeros((CH, CW), np.float32)
    Lp = lamp["pos"]
    for site, blocks in scene.towers.items():
        xy = g.site_xy[site.index]
        z = 0.0
        for b in blocks:
            c = _block_corners(g, xy, b, z)
            z += b.storeys * g.storey
            t = Lp[2] / (Lp[2] - c[:, 2])
            sp = Lp[None, :2] + (c[:, :2] - Lp[None, :2]) * t[:, None]
            hull = cv2.convexHull(sp.astype(np.float32)).reshape(-1, 2)
            ip = pin.project(np.column_stack([hull, np.zeros(len(hull))]))
            cv2.fillPoly(shadow, [np.round(ip * 16).astype(np.int32)], 1.0, cv2.LINE_AA, shift=4)
    if lamp["soft"] > 0:
        k = lamp["soft"] * ss * float(K[0, 0]) / (ss * 1000.0)
        shadow = cv2.GaussianBlur(shadow, (0, 0), max(0.5, k))
    # in place where it can be: a fresh full-size array costs more than its arithmetic
    light_map = (irr * (1 - shadow))[..., None] * lamp["col"][None, None, :]
    light_map += lamp["ambient"] * lamp["amb_col"][None, None, :]
    img = np.multiply(light_map, img, out=light_map)
    ids = np.zeros((CH, CW), np.int32)  # which site's top face is seen (1 + index)
    top_area = np.zeros(len(g.sites))
    # towers, far to near
    C = pose.camera_centre
    order = sorted(scene.towers, key=lambda s: -np.linalg.norm(
        np.array([*g.site_xy[s.index], 20.0]) - C))
    for site in order:
        xy = g.site_xy[site.index]
        z = 0.0
        blocks = scene.towers[site]
        for bi, b in enumerate(blocks):
            c = _block_corners(g, xy, b, z)
            z1 = z + b.storeys * g.storey
            albedo = np.array(scene.rgb[b.color][::-1], np.float64)
            ip = pin.project(c)
            for k in range(4):
                a0, a1 = k, (k + 1) % 4
                quad = [a0, a1, a1 + 4, a0 + 4]
                e = c[a1, :2] - c[a0, :2]
                n = np.array([-e[1], e[0], 0.0])
                n /= np.linalg.norm(n)
                centre = c[quad].mean(axis=0)
                if n @ (C - centre) <= 0:
                    continue
                col = albedo * _shade(n, centre, lamp)
                pq = np.round(ip[quad] * 16).astype(np.int32)
                cv2.fillPoly(img, [pq], col.tolist(), cv2.LINE_AA, shift=4)
                cv2.fillPoly(ids, [pq // 16], -1)
                for s in range(1, b.storeys + 1):  # grooves and the joint above
                    zz = z + s * g.storey - (0.0 if s < b.storeys else 0.4)
                    p0 = pin.project(np.array([[*c[a0, :2], zz], [*c[a1, :2], zz]]))
                    cv2.line(img, tuple(np.round(p0[0] * 16).astype(int)),
                             tuple(np.round(p0[1] * 16).astype(int)), (col * 0.6).tolist(),
                             max(1, int(round(0.6 * K[0, 0] / np.linalg.norm(C - centre)))),
                             cv2.LINE_AA, shift=4)
            top = albedo * _shade(np.array([0, 0, 1.0]), c[4:].mean(axis=0), lamp)
            if rng.random() < 0.25:  # a specular sheen
                k = float(rng.uniform(0.03, 0.12))
                top = top * (1 - k) + k * 255 * lamp["col"][::-1]
            pt = np.round(ip[4:] * 16).astype(np.int32)
            cv2.fillPoly(img, [pt], top.tolist(), cv2.LINE_AA, shift=4)
            cv2.fillPoly(ids, [pt // 16], -1)
            if bi == len(blocks) - 1:
                cv2.fillPoly(ids, [pt // 16], site.index + 1)
                top_area[site.index] = max(1.0, abs(cv2.contourArea(
                    (pt // 16).astype(np.float32))))
            z = z1
    frame = np.zeros((CH, CW), bool)
    frame[mh * ss:(mh + H) * ss, mw * ss:(mw + W) * ss] = True
    ids[~frame] = -2
    visible: dict[Site, float] = {}
    # each site's top pixels counted at once (labels 1..54; -1 faces, -2 out of frame)
    seen_tops = np.bincount(ids[ids > 0], minlength=len(g.sites) + 1)
    for site in g.sites:
        if site in scene.towers:
            visible[site] = float(seen_tops[site.index + 1]) / top_area[site.index]
        else:
            fp = np.round(pin.project(g.top_face(site, 0))).astype(np.int32)
            m, win = _polygon_mask(fp, CW, CH)
            visible[site] = float((m & (ids[win] == 0)).sum()) / max(1, int(m.sum()))
    # cards: fraction of each stack's grid region not covered by towers
    card_vis: dict[Seat, float] = {}
    for seat in scene.cards:
        along, ang, gap = scene.card_place[seat]
        centre = g.card_centre(seat, along, gap)
        quad = g.card_to_board(seat, centre, ang, np.array(
            [[-30, 40], [30, 40], [30, 8], [-30, 8]]))
        ip = pin.project(np.column_stack([quad, np.zeros(4)]))
        inside, win = _polygon_mask(np.round(ip).astype(np.int32), CW, CH)
        full = _quad_area(ip)
        card_vis[seat] = float((inside & (ids[win] == 0)).sum()) / max(1.0, full)
    # lens distortion, downsample, noise, JPEG
    img = np.clip(img, 0, 255, out=img).astype(np.float32)
    small = cv2.resize(img, (W + 2 * mw, H + 2 * mh), interpolation=cv2.INTER_AREA)
    if intr.has_distortion:
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        und = cv2.undistortPoints(np.dstack([xx, yy]).reshape(-1, 1, 2), intr.K, intr.dist,
                                  P=intr.K).reshape(H, W, 2)
        small = cv2.remap(small, und[..., 0] + mw, und[..., 1] + mh, cv2.INTER_LINEAR)
    out = small
    if rng.random() < 0.5:
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.3, 0.8)))
    out = out + rng.normal(0, noise, out.shape) * np.sqrt(np.maximum(out, 1) / 128)
    out8 = np.clip(out, 0, 255).astype(np.uint8)
    if jpeg:
        ok, buf = cv2.imencode(".jpg", out8, [cv2.IMWRITE_JPEG_QUALITY, jpeg])
        out8 = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return Shot(out8, pose, scene, visible, card_vis, "synth")


def _polygon_mask(pts: np.ndarray, width: int, height: int,
                  ) -> tuple[np.ndarray, tuple[slice, slice]]:
    """The polygon ``pts`` filled as a boolean mask over its bounding box within the
    ``width`` x ``height`` image, and that box: the pixels a full-frame mask would
    set, without filling and scanning the whole frame once per site."""
    x0, y0 = np.clip(pts.min(axis=0), 0, [width, height])
    x1, y1 = np.clip(pts.max(axis=0) + 1, 0, [width, height])
    mask = np.zeros((max(0, y1 - y0), max(0, x1 - x0)), np.uint8)
    if mask.size:
        cv2.fillPoly(mask, [pts - [x0, y0]], 1)
    return mask.astype(bool), (slice(y0, y1), slice(x0, x1))


def _quad_area(p: np.ndarray) -> float:
    return float(abs(cv2.contourArea(p.astype(np.float32))))


def shoot(seed: int, kind: str = "mounted", side: Seat | None = None,
          elevation: float | None = None, light: str = "white", colour_set: str = "classic",
          tall: int = 2, fill: float = 0.55) -> Shot:
    """One reproducible rendered photo with its truth."""
    key = ("synth", seed, kind, side, elevation, light, colour_set, tall, fill)
    return shared(key, lambda: _shoot(seed, kind, side, elevation, light, colour_set, tall,
                                      fill))


def _shoot(seed: int, kind: str, side: Seat | None, elevation: float | None, light: str,
           colour_set: str, tall: int, fill: float) -> Shot:
    rng = np.random.default_rng(seed)
    scene = random_scene(rng, colour_set, fill, tall)
    pose, _ = random_camera(rng, kind, side, elevation)
    shot = render(scene, pose, rng, light, noise=float(rng.uniform(1, 4)),
                  jpeg=int(rng.integers(70, 95)) if kind == "phone" or rng.random() < 0.5
                  else None)
    shot.kind = kind
    return shot


def truth_json(shot: Shot, min_visible: float = 0.5, min_grid: float = 0.9) -> dict:
    """The shot's truth in the shape companion.sim gives it, for ``evaluate.compare``:
    a site whose top face (or empty footprint) is less than half in view is hidden, a
    card is expected when its grids are 90% in view."""
    def entry(site: Site, h: int, owner: str) -> dict:
        return {"city": site.city, "row": site.row, "col": site.col, "height": h,
                "owner": owner}

    heights = shot.scene.heights()
    board = [entry(s, h, o) for s, (h, o) in sorted(heights.items())]
    seen = [s for s, v in shot.visible.items() if v >= min_visible]
    hidden = [s for s, v in shot.visible.items() if v < min_visible]
    return {
        "board": {"sites": board},
        "expected": {
            "colors": list(shot.scene.colors),
            "sites": [entry(s, *heights[s]) for s in sorted(seen) if s in heights],
            "unseen": [{"city": s.city, "row": s.row, "col": s.col} for s in sorted(hidden)],
            "cards": {seat.value: {"cell": list(rc)} for seat, rc in shot.scene.cards.items()
                      if shot.card_visible.get(seat, 0.0) >= min_grid},
        },
        "card_stacks": {seat.value: {"cell": list(rc), "grid_visible": shot.card_visible[seat]}
                        for seat, rc in shot.scene.cards.items()},
    }


__all__ = ["SEAT_FORWARD", "Scene", "Shot", "random_camera", "random_scene", "render", "shoot",
           "truth_json"]
