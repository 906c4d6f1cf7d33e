"""Independent ray-casting renderer of Manhattan table photos (test fixture).

Written only from shared/spec/reference-board.md and formats.md, deliberately
sharing no code with the companion or the project's other renderers, so that
its photos are *made differently* and expose where the reader is fragile.

One ray per sub-pixel (2 x 2 per pixel) leaves a camera with real lens
distortion (each output pixel is undistorted to find its ray), and is
intersected with the floor, a finite table, the 520 x 380 mm board slab, every
block (an oriented box, slab test in its own frame), a coffee mug, spare blocks
beside the board and the played cards.  Shading is Lambert + normalised
Blinn-Phong + a Fresnel environment term, lit by a lamp (point or small area
light, optional shade cone) with a colour temperature, ambient sky light with
cheap ambient occlusion, and sometimes a second light (window or lamp); shadows
come from shadow rays (several samples over the lamp's area).  A camera model
then adds vignetting, blur, white balance, auto exposure, shot/read noise, a
tone curve and (phones) JPEG.

    shoot(seed, kind="mounted"|"phone") -> (bgr uint8 image, truth dict)
    python -m tests.vision.raycast OUTDIR --kind phone --n 24 --seed 0
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

import cv2
import numpy as np

# ---------------------------------------------------------------- spec numbers
BOARD_W, BOARD_H = 520.0, 380.0  # x, y extent (mm)
BOARD_T = 2.5  # board thickness: table plane at z = -2.5
CITY_X = (-140.0, 0.0, 140.0)
CITY_Y = (70.0, -70.0)  # north row (cities 0..2), south row (3..5)
PITCH = 34.0
FOOT = 26.0
STOREY = 12.0
SUPPLY = {4: 3, 3: 4, 2: 6, 1: 11}
MARKERS = {0: (-220.0, 150.0), 1: (220.0, 150.0), 2: (220.0, -150.0), 3: (-220.0, -150.0)}
MARKER_MM = 40.0
PALETTES = {
    "classic": {
        "red": (190, 35, 40),
        "blue": (35, 75, 170),
        "green": (40, 140, 70),
        "black": (35, 35, 38),
    },
    "2017": {
        "orange": (235, 120, 30),
        "yellow": (240, 200, 40),
        "purple": (120, 60, 150),
        "blue": (40, 110, 200),
    },
}
CARD_W, CARD_H = 63.0, 88.0
CARD_RED = (210, 30, 40)
SEATS = "SWNE"
# inward unit vector (seat -> board) and the board edge midpoint of each seat
SEAT_IN = {"S": (0.0, 1.0), "N": (0.0, -1.0), "W": (1.0, 0.0), "E": (-1.0, 0.0)}
SEAT_EDGE = {"S": (0.0, -190.0), "N": (0.0, 190.0), "W": (-260.0, 0.0), "E": (260.0, 0.0)}
SIDE_AZ = {"E": 0.0, "N": 90.0, "W": 180.0, "S": 270.0}  # camera azimuth of each side

TABLE_Z = -BOARD_T
FLOOR_Z = TABLE_Z - 26.0 - 720.0
SS = 2  # sub-samples per pixel and axis

ID_BG, ID_FLOOR, ID_TABLE, ID_BOARD = -1, 0, 1, 2
OBJ0 = 3  # object i has id OBJ0 + i


def city_centre(city):
    return CITY_X[city % 3], CITY_Y[city // 3]


def site_centre(city, row, col):
    cx, cy = city_centre(city)
    return cx + (col - 1) * PITCH, cy + (1 - row) * PITCH


# ---------------------------------------------------------------- colour helpers
def srgb2lin(c):
    if isinstance(c, np.ndarray) and c.dtype == np.uint8:
        return _SRGB_LUT[c]  # the same numbers, by table look-up
    c = np.asarray(c, np.float32) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4).astype(np.float32)


_SRGB_LUT = srgb2lin(np.arange(256))  # srgb2lin of each uint8 value


def lin2srgb(x):
    x = np.clip(x, 0.0, 1.0)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def kelvin_rgb(k):
    """Linear RGB of a black body (Tanner Helland's fit), luminance 1."""
    t = k / 100.0
    if t <= 66:
        r = 255.0
        g = 99.4708025861 * math.log(t) - 161.1195681661
        b = 0.0 if t <= 19 else 138.5177312231 * math.log(t - 10) - 305.0447927307
    else:
        r = 329.698727446 * (t - 60) ** -0.1332047592
        g = 288.1221695283 * (t - 60) ** -0.0755148492
        b = 255.0
    rgb = srgb2lin(np.clip([r, g, b], 1, 255))
    return rgb / float(rgb @ np.array([0.2126, 0.7152, 0.0722], np.float32))


def _rot_z(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], np.float64)


def _rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]], np.float64)


# ---------------------------------------------------------------- textures
class Tex:
    """Mip-mapped linear-RGB texture addressed in millimetres.

    Column = (x - x_left) * ppm, row = (y_top - y) * ppm (north / card top up).
    """

    def __init__(self, rgb_u8, ppm, x_left, y_top, wrap=False, scale=0.88):
        if rgb_u8.dtype == np.uint8:  # srgb2lin(rgb_u8) * scale, by table look-up
            lin = (_SRGB_LUT * np.float32(scale))[rgb_u8]
        else:
            lin = srgb2lin(rgb_u8) * np.float32(scale)
        self.levels = [np.ascontiguousarray(lin)]
        while min(self.levels[-1].shape[:2]) > 24 and len(self.levels) < 7:
            self.levels.append(cv2.pyrDown(self.levels[-1]))
        self.ppm, self.x_left, self.y_top, self.wrap = ppm, x_left, y_top, wrap

    def _at(self, lev, col, row):
        s = float(2**lev)
        mx = ((col + 0.5) / s - 0.5).astype(np.float32)
        my = ((row + 0.5) / s - 0.5).astype(np.float32)
        n = mx.size
        width = 4096
        rows = max(1, -(-n // width))
        pad = rows * width - n
        mx = np.concatenate([mx, np.zeros(pad, np.float32)]).reshape(rows, width)
        my = np.concatenate([my, np.zeros(pad, np.float32)]).reshape(rows, width)
        border = cv2.BORDER_WRAP if self.wrap else cv2.BORDER_REPLICATE
        out = cv2.remap(self.levels[lev], mx, my, cv2.INTER_LINEAR, borderMode=border)
        return out.reshape(-1, self.levels[lev].shape[2])[:n]

    def sample(self, x, y, fp_mm):
        col = (x - self.x_left) * self.ppm - 0.5
        row = (self.y_top - y) * self.ppm - 0.5
        nlev = len(self.levels)
        lod = np.clip(np.log2(np.maximum(fp_mm * self.ppm, 1e-3)), 0.0, nlev - 1.001)
        l0 = np.floor(lod).astype(np.int32)
        fr = (lod - l0).astype(np.float32)[:, None]
        out = np.empty((x.size, 3), np.float32)
        if not x.size:
            return out
        # the points of each level, in order (as the mask l0 == lev lists them), from a
        # stable sort by level (int8: numpy's radix sort)
        order = np.argsort(l0.astype(np.int8), kind="stable")
        ls = l0[order]
        cuts = np.concatenate([[0], np.flatnonzero(ls[1:] != ls[:-1]) + 1, [ls.size]])
        for i0, i1 in zip(cuts[:-1], cuts[1:], strict=True):
            lev = int(ls[i0])
            sel = order[i0:i1]
            c, r = col.take(sel), row.take(sel)
            a = self._at(lev, c, r)
            if lev + 1 < nlev:
                b = self._at(lev + 1, c, r)
                b -= a
                b *= fr.take(sel, 0)
                b += a  # a + (b - a) * fr
                out[sel] = b
            else:
                out[sel] = a
        return out


def _pnoise(rng, n, sx, sy=None):
    """Periodic (tileable) Gaussian-filtered noise, unit std; sigma in pixels."""
    sy = sx if sy is None else sy
    w = rng.standard_normal((n, n)).astype(np.float32)
    f = np.fft.rfft2(w)
    fy = np.fft.fftfreq(n)[:, None]
    fx = np.fft.rfftfreq(n)[None, :]
    g = np.exp(-2.0 * np.pi**2 * ((fx * sx) ** 2 + (fy * sy) ** 2))
    out = np.fft.irfft2(f * g, s=(n, n)).astype(np.float32)
    return out / (out.std() + 1e-9)


def _noise_img(rng, h, w, sigma):
    a = rng.standard_normal((h, w)).astype(np.float32)
    a = cv2.GaussianBlur(a, (0, 0), sigma)
    return a / (a.std() + 1e-9)


def _jit(rng, rgb, s=6):
    return tuple(int(np.clip(v + rng.normal(0, s), 0, 255)) for v in rgb)


def _mix(a, b, t):
    return tuple(int(round(x * (1 - t) + y * t)) for x, y in zip(a, b, strict=True))


BOARD_PPM = 4.0
BOARD_STYLES = {
    "map": dict(
        bg=(206, 200, 182),
        street=(122, 120, 114),
        dash=(236, 226, 168),
        lot=(236, 232, 220),
        line=(62, 60, 58),
        river=(104, 150, 190),
        park=(118, 160, 96),
        text=(40, 40, 52),
        frame=(80, 52, 38),
        track=(232, 224, 200),
        edge=(40, 32, 28),
    ),
    "night": dict(
        bg=(38, 52, 76),
        street=(22, 26, 40),
        dash=(200, 180, 92),
        lot=(156, 168, 188),
        line=(18, 20, 30),
        river=(30, 72, 112),
        park=(40, 88, 62),
        text=(232, 212, 150),
        frame=(16, 22, 34),
        track=(60, 76, 104),
        edge=(14, 16, 22),
    ),
    "vintage": dict(
        bg=(222, 206, 164),
        street=(142, 112, 82),
        dash=(240, 230, 200),
        lot=(238, 226, 192),
        line=(92, 62, 40),
        river=(122, 160, 170),
        park=(150, 170, 100),
        text=(84, 52, 30),
        frame=(104, 62, 40),
        track=(236, 220, 180),
        edge=(60, 40, 26),
    ),
    "pastel": dict(
        bg=(228, 228, 222),
        street=(168, 170, 176),
        dash=(250, 250, 250),
        lot=(246, 244, 238),
        line=(90, 90, 102),
        river=(150, 198, 230),
        park=(160, 208, 140),
        text=(60, 60, 82),
        frame=(80, 82, 102),
        track=(240, 240, 236),
        edge=(50, 50, 60),
    ),
}
CITY_TINTS = [
    (236, 150, 150),
    (150, 200, 236),
    (170, 220, 170),
    (240, 220, 140),
    (200, 170, 230),
    (245, 190, 150),
    (150, 220, 215),
    (220, 160, 200),
]
CITY_NAMES = ["MANHATTAN", "SYDNEY", "FRANKFURT", "HONG KONG", "SAO PAULO", "CAIRO"]


def make_board_texture(rng):
    """Board top art (RGB uint8, 4 px/mm, north up) + a dict describing it."""
    ppm = BOARD_PPM
    H, W = int(BOARD_H * ppm), int(BOARD_W * ppm)
    name = str(rng.choice(list(BOARD_STYLES)))
    st = {k: _jit(rng, v, 5) for k, v in BOARD_STYLES[name].items()}
    img = np.zeros((H, W, 3), np.uint8)
    img[:] = st["bg"]
    AA = cv2.LINE_AA
    SH = 4  # fixed-point shift for sub-pixel drawing

    def P(x, y):
        return (int(round((x + 260.0) * ppm * 16)), int(round((190.0 - y) * ppm * 16)))

    def rect(x0, y0, x1, y1, col, th=-1):
        cv2.rectangle(
            img, P(x0, y1), P(x1, y0), col, th if th < 0 else max(1, int(th * ppm)), AA, SH
        )

    def line(x0, y0, x1, y1, col, th):
        cv2.line(img, P(x0, y0), P(x1, y1), col, max(1, int(round(th * ppm))), AA, SH)

    def rrect(x0, y0, x1, y1, r, col):
        rect(x0 + r, y0, x1 - r, y1, col)
        rect(x0, y0 + r, x1, y1 - r, col)
        for cx, cy in ((x0 + r, y0 + r), (x1 - r, y0 + r), (x0 + r, y1 - r), (x1 - r, y1 - r)):
            cv2.circle(img, P(cx, cy), int(r * ppm * 16), col, -1, AA, SH)

    def text(s, x, y, height_mm, col, font=cv2.FONT_HERSHEY_DUPLEX, th=1.0, angle=0):
        scale = height_mm * ppm / 22.0
        thick = max(1, int(round(th * ppm * 0.35)))
        (tw, tht), _ = cv2.getTextSize(s, font, scale, thick)
        if angle == 0:
            org = (int((x + 260) * ppm - tw / 2), int((190 - y) * ppm + tht / 2))
            cv2.putText(img, s, org, font, scale, col, thick, AA)
        else:  # draw on a patch and rotate it in (used for side labels)
            patch = np.zeros((tht * 2 + 8, tw + 8), np.uint8)
            cv2.putText(patch, s, (4, tht + 4), font, scale, 255, thick, AA)
            patch = np.rot90(patch, angle // 90)
            ph, pw = patch.shape
            c0 = int((x + 260) * ppm - pw / 2)
            r0 = int((190 - y) * ppm - ph / 2)
            sub = img[r0 : r0 + ph, c0 : c0 + pw]
            a = (patch[: sub.shape[0], : sub.shape[1]].astype(np.float32) / 255.0)[..., None]
            sub[:] = (sub * (1 - a) + np.array(col, np.float32) * a).astype(np.uint8)

    # outer frame + score track
    rect(-260, -190, 260, 190, st["frame"])
    rect(-251, -181, 251, 181, st["bg"])
    n = 0
    for side in range(4):
        length = 520 if side % 2 == 0 else 380
        cells = int(length // 10)
        for i in range(cells):
            a = -length / 2 + (length - cells * 10) / 2 + i * 10
            if side == 0:
                box = (a + 0.6, -189.2, a + 9.4, -182.0)
            elif side == 1:
                box = (251.8, a + 0.6, 259.2, a + 9.4)
            elif side == 2:
                box = (-a - 9.4, 182.0, -a - 0.6, 189.2)
            else:
                box = (-259.2, -a - 9.4, -251.8, -a - 0.6)
            rect(*box, st["track"])
            if n % 5 == 0:
                text(
                    str(n % 100),
                    (box[0] + box[2]) / 2,
                    (box[1] + box[3]) / 2,
                    3.2,
                    st["frame"],
                    cv2.FONT_HERSHEY_SIMPLEX,
                    0.8,
                )
            n += 1
    # river through the middle, with the title
    xs = np.linspace(-251, 251, 200)
    wob = rng.uniform(2, 5) * np.sin(xs / rng.uniform(40, 80) + rng.uniform(0, 6))
    top = [P(x, 9 + w) for x, w in zip(xs, wob, strict=True)]
    bot = [P(x, -9 + w) for x, w in zip(xs[::-1], wob[::-1], strict=True)]
    cv2.fillPoly(img, [np.array(top + bot, np.int32)], st["river"], AA, SH)
    for _ in range(int(rng.integers(6, 14))):  # little waves
        x = rng.uniform(-240, 240)
        y = rng.uniform(-5, 5)
        line(x, y, x + rng.uniform(4, 9), y, _mix(st["river"], (255, 255, 255), 0.35), 0.4)
    title_font = int(
        rng.choice([cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX])
    )
    text(
        "MANHATTAN",
        rng.uniform(-20, 20),
        0.0,
        rng.uniform(8, 11),
        _mix(st["river"], (255, 255, 255), 0.8),
        title_font,
        2.2,
    )
    # parks / building clusters in the gaps between cities and at the sides
    gaps = [
        (-70, 70),
        (70, 70),
        (-70, -70),
        (70, -70),
        (-228, 40),
        (228, 40),
        (-228, -40),
        (228, -40),
    ]
    for gx, gy in gaps:
        kind = rng.choice(["park", "park", "blocks", "plain"])
        if kind == "park":
            w = rng.uniform(16, 26) / 2
            hgt = rng.uniform(60, 100) / 2 if abs(gx) < 100 else rng.uniform(40, 60) / 2
            rrect(gx - w, gy - hgt, gx + w, gy + hgt, 3, st["park"])
            for _ in range(int(rng.integers(8, 22))):
                cv2.circle(
                    img,
                    P(gx + rng.uniform(-w + 2, w - 2), gy + rng.uniform(-hgt + 2, hgt - 2)),
                    int(rng.uniform(1.2, 2.6) * ppm * 16),
                    _mix(st["park"], (20, 60, 20), 0.4),
                    -1,
                    AA,
                    SH,
                )
        elif kind == "blocks":
            for _ in range(int(rng.integers(4, 9))):
                x = gx + rng.uniform(-10, 10)
                y = gy + rng.uniform(-35, 35) if abs(gx) < 100 else gy + rng.uniform(-20, 20)
                s = rng.uniform(3, 8)
                rect(
                    x - s,
                    y - s * 0.7,
                    x + s,
                    y + s * 0.7,
                    _mix(st["lot"], st["line"], rng.uniform(0.1, 0.4)),
                )
    # cities
    tints = [CITY_TINTS[i] for i in rng.permutation(len(CITY_TINTS))[:6]]
    lot_mode = rng.choice(["mixed", "inset", "number", "roof"])
    name_font = int(
        rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX])
    )
    for city in range(6):
        cx, cy = city_centre(city)
        area = _mix(st["street"], tints[city], rng.uniform(0.0, 0.25))
        m = rng.uniform(52, 57)
        rrect(cx - m, cy - m, cx + m, cy + m, rng.uniform(2, 8), area)
        for k in (-17, 17):  # dashed centre lines of the streets
            for s0 in np.arange(-m + 2, m - 2, 6.0):
                line(cx + k, cy + s0, cx + k, cy + s0 + 3, st["dash"], 0.5)
                line(cx + s0, cy + k, cx + s0 + 3, cy + k, st["dash"], 0.5)
        lot_base = _mix(st["lot"], tints[city], rng.uniform(0.1, 0.45))
        lot_size = rng.uniform(26, 29.5) / 2
        for row in range(3):
            for col in range(3):
                x, y = site_centre(city, row, col)
                fill = _jit(rng, lot_base, 4)
                rect(x - lot_size, y - lot_size, x + lot_size, y + lot_size, fill)
                rect(x - lot_size, y - lot_size, x + lot_size, y + lot_size, st["line"], 0.5)
                mode = (
                    rng.choice(["inset", "hatch", "number", "roof", "plain"])
                    if lot_mode == "mixed"
                    else lot_mode
                )
                dark = _mix(fill, st["line"], 0.35)
                if mode == "inset":
                    i = rng.uniform(2.5, 4.5)
                    rect(
                        x - lot_size + i,
                        y - lot_size + i,
                        x + lot_size - i,
                        y + lot_size - i,
                        dark,
                        0.35,
                    )
                elif mode == "hatch":
                    for d in np.arange(-2 * lot_size, 2 * lot_size, 3.2):
                        a0 = max(-lot_size, d - lot_size)
                        a1 = min(lot_size, d + lot_size)
                        line(
                            x + a0,
                            y + a0 - d,
                            x + a1,
                            y + a1 - d,
                            _mix(fill, st["line"], 0.15),
                            0.3,
                        )
                elif mode == "number":
                    text(str(row * 3 + col + 1), x, y, 7.0, dark, name_font, 1.0)
                elif mode == "roof":
                    for _ in range(int(rng.integers(2, 5))):
                        w = rng.uniform(2, 7)
                        hh = rng.uniform(2, 7)
                        px = x + rng.uniform(-lot_size + w + 1, lot_size - w - 1)
                        py = y + rng.uniform(-lot_size + hh + 1, lot_size - hh - 1)
                        rect(
                            px - w,
                            py - hh,
                            px + w,
                            py + hh,
                            _mix(fill, st["line"], rng.uniform(0.1, 0.3)),
                        )
        ny = cy + (m + 5.0) if city < 3 else cy - (m + 5.0)
        text(CITY_NAMES[city], cx, ny, 4.2, st["text"], name_font, 1.0)
    # paper mottling and print grain
    f = img.astype(np.float32)
    mottle = cv2.resize(
        _noise_img(rng, H // 16, W // 16, 4.0), (W, H), interpolation=cv2.INTER_CUBIC
    )
    f *= 1.0 + 0.012 * mottle[..., None]
    f += rng.normal(0, 2.0, f.shape).astype(np.float32)
    img = np.clip(f, 0, 255).astype(np.uint8)
    # ArUco stickers: white quiet zone >= 8 mm, marker top edge north
    dic = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    sticker_mm = float(rng.uniform(57, 62))
    white = _jit(rng, (246, 245, 240), 3)
    ink = int(rng.integers(12, 30))
    for mid, (mx, my) in MARKERS.items():
        s2 = sticker_mm / 2
        rect(mx - s2, my - s2, mx + s2, my + s2, white)
        rect(mx - s2, my - s2, mx + s2, my + s2, _mix(white, (120, 120, 120), 0.5), 0.25)
        big = cv2.aruco.generateImageMarker(dic, mid, 600)
        n_px = int(round(MARKER_MM * ppm))
        mk = cv2.resize(big, (n_px, n_px), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
        c0 = int(round((mx - 20 + 260) * ppm))
        r0 = int(round((190 - (my + 20)) * ppm))
        sub = img[r0 : r0 + n_px, c0 : c0 + n_px].astype(np.float32)
        col = mk[..., None] * np.array(white, np.float32) + (1 - mk[..., None]) * ink
        img[r0 : r0 + n_px, c0 : c0 + n_px] = np.clip(col, 0, 255).astype(np.uint8)
        del sub
    return img, {"style": name, "edge": st["edge"]}


CARD_PPM = 8.0


def make_card_texture(rng, cell, style):
    """One card face (RGB uint8, 8 px/mm, card top edge up, holder's view)."""
    ppm = CARD_PPM
    H, W = int(CARD_H * ppm), int(CARD_W * ppm)
    img = np.zeros((H, W, 3), np.uint8)
    img[:] = style["paper"]
    AA = cv2.LINE_AA

    def P(u, v):
        return (int(round((u + 31.5) * ppm * 16)), int(round((44.0 - v) * ppm * 16)))

    def rect(u0, v0, u1, v1, col, th=-1):
        cv2.rectangle(
            img, P(u0, v1), P(u1, v0), col, th if th < 0 else max(1, int(round(th * ppm))), AA, 4
        )

    fw = style["frame_w"]
    rect(-31.5, -44, 31.5, 44, style["frame"])
    rect(-31.5 + fw, -44 + fw, 31.5 - fw, 44 - fw, style["paper"])
    rect(-31.5 + fw + 0.8, -44 + fw + 0.8, 31.5 - fw - 0.8, 44 - fw - 0.8, style["frame"], 0.25)
    # the two identical 3x3 grids: 9 mm cells, 6 mm below the top edge, centred at u = -15 and +15
    for g in (-15.0, 15.0):
        for r in range(3):
            for c in range(3):
                u0 = g - 13.5 + 9 * c
                v1 = 38.0 - 9 * r
                col = CARD_RED if (r, c) == tuple(cell) else style["cell"]
                rect(u0, v1 - 9, u0 + 9, v1, _jit(rng, col, 2))
        for k in range(4):
            rect(g - 13.5 + 9 * k - 0.3, 11.0, g - 13.5 + 9 * k + 0.3, 38.0, style["grid"])
            rect(g - 13.5, 38.0 - 9 * k - 0.3, g + 13.5, 38.0 - 9 * k + 0.3, style["grid"])
    # artwork: a little skyline scene in the lower part
    u0, u1, v0, v1 = -28.0, 28.0, -40.5, 7.5
    c0, r0 = P(u0, v1)
    c1, r1 = P(u1, v0)
    c0, r0, c1, r1 = c0 // 16, r0 // 16, c1 // 16, r1 // 16
    ah, aw = r1 - r0, c1 - c0
    sky_top = np.array(style["sky"][0], np.float32)
    sky_bot = np.array(style["sky"][1], np.float32)
    t = np.linspace(0, 1, ah, dtype=np.float32)[:, None, None]
    art = (sky_top * (1 - t) + sky_bot * t) * np.ones((1, aw, 1), np.float32)
    art = art.astype(np.uint8).copy()
    sun = (int(rng.uniform(0.15, 0.85) * aw), int(rng.uniform(0.12, 0.4) * ah))
    cv2.circle(art, sun, int(rng.uniform(0.06, 0.12) * aw), style["sun"], -1, AA)
    x = int(rng.uniform(-0.05, 0.05) * aw)
    ground = int(ah * rng.uniform(0.80, 0.9))
    while x < aw:
        bw = int(rng.uniform(0.08, 0.2) * aw)
        bh = int(rng.uniform(0.25, 0.75) * ah)
        col = style["buildings"][int(rng.integers(len(style["buildings"])))]
        col = _jit(rng, col, 10)
        cv2.rectangle(art, (x, ground - bh), (x + bw, ground), col, -1)
        if rng.random() < 0.4:  # antenna / spire
            cv2.line(
                art, (x + bw // 2, ground - bh), (x + bw // 2, ground - bh - int(0.08 * ah)), col, 2
            )
        win = _mix(col, style["window"], 0.7)
        for wy in range(ground - bh + 6, ground - 6, 14):
            for wx in range(x + 4, x + bw - 6, 10):
                if rng.random() < 0.7:
                    cv2.rectangle(art, (wx, wy), (wx + 4, wy + 6), win, -1)
        x += bw + int(rng.uniform(0, 0.03) * aw)
    cv2.rectangle(art, (0, ground), (aw, ah), style["ground"], -1)
    img[r0:r1, c0:c1] = art
    cv2.rectangle(img, (c0, r0), (c1, r1), style["frame"], 2, AA)
    f = img.astype(np.float32) + rng.normal(0, 1.5, img.shape).astype(np.float32)
    return np.clip(f, 0, 255).astype(np.uint8)


def card_style(rng):
    skies = [
        ((70, 130, 210), (190, 220, 245)),
        ((240, 120, 60), (250, 210, 140)),
        ((40, 30, 90), (200, 90, 120)),
        ((120, 180, 230), (240, 240, 220)),
    ]
    bpal = [
        (200, 50, 45),
        (90, 90, 100),
        (160, 110, 70),
        (60, 90, 150),
        (230, 190, 60),
        (50, 120, 90),
        (170, 170, 180),
        (120, 60, 140),
    ]
    if rng.random() < 0.5:  # no red buildings on these cards
        bpal = [c for c in bpal if c != (200, 50, 45)]
    return {
        "paper": _jit(rng, (240, 236, 224), 4),
        "frame": _jit(rng, [(28, 34, 62), (26, 26, 28), (62, 40, 30)][int(rng.integers(3))], 4),
        "frame_w": float(rng.uniform(1.8, 2.8)),
        "cell": _jit(rng, (206, 206, 204), 4),
        "grid": _jit(rng, (45, 45, 50), 4),
        "sky": skies[int(rng.integers(len(skies)))],
        "sun": (250, 225, 120) if rng.random() < 0.6 else (235, 70, 50),
        "buildings": bpal,
        "window": (255, 235, 150),
        "ground": (70, 80, 70),
    }


TABLE_PPM = 1.0
TABLE_N = 2048


def make_table_texture(rng):
    n = TABLE_N
    kind = str(rng.choice(["wood", "wood", "wood", "felt", "linen", "gingham"]))
    # row and column coordinates, broadcast against each other where both are used
    yy = np.arange(n, dtype=np.float32)[:, None]
    xx = np.arange(n, dtype=np.float32)[None, :]
    if kind == "wood":
        woods = [(172, 122, 74), (104, 70, 46), (204, 170, 128), (150, 142, 130), (186, 140, 96)]
        base = np.array(woods[int(rng.integers(len(woods)))], np.float32)
        nplank = int(rng.integers(12, 24))
        pw = n / nplank
        plank = np.floor(yy / pw)
        low = _pnoise(rng, n, 160, 25)
        streak = _pnoise(rng, n, 40, 0.8)
        period = rng.uniform(5, 12)
        phase = rng.uniform(0, 100, nplank).astype(np.float32)
        shade = (1 + rng.normal(0, 0.07, nplank)).astype(np.float32)
        pid = plank.astype(np.int32)
        grain = np.sin(2 * np.pi * ((yy - pid * pw) * 1.0 + phase[pid] + 14 * low) / period)
        grain = np.sign(grain) * np.abs(grain) ** 0.6
        v = 1 + 0.09 * grain + 0.07 * streak + 0.05 * low
        v *= shade[pid]
        dist = np.minimum(yy - pid * pw, (pid + 1) * pw - yy)
        v *= np.where(dist < 1.0, 0.55, 1.0)
        # butt joints at random x per plank
        joint = rng.uniform(0, n, nplank).astype(np.float32)
        v *= np.where(np.abs(((xx - joint[pid]) + n / 2) % n - n / 2) < 0.8, 0.6, 1.0)
        img = base[None, None, :] * v[..., None]
        if rng.random() < 0.5:
            img = img.transpose(1, 0, 2)
        spec = (0.035, 30.0)
    elif kind == "felt":
        cols = [(40, 90, 60), (60, 64, 72), (40, 58, 100), (110, 36, 40)]
        base = np.array(cols[int(rng.integers(len(cols)))], np.float32)
        v = 1 + 0.05 * _pnoise(rng, n, 0.7) + 0.04 * _pnoise(rng, n, 60)
        img = base * v[..., None]
        spec = (0.0, 4.0)
    elif kind == "linen":
        cols = [(200, 190, 170), (170, 176, 182), (214, 204, 190), (130, 140, 120)]
        base = np.array(cols[int(rng.integers(len(cols)))], np.float32)
        th = 0.03 * _pnoise(rng, n, 3, 0.5) + 0.03 * _pnoise(rng, n, 0.5, 3)
        v = 1 + th + 0.04 * np.sin(np.pi * xx) * np.sin(np.pi * yy) + 0.04 * _pnoise(rng, n, 80)
        img = base * v[..., None]
        spec = (0.0, 4.0)
    else:
        c = [(190, 40, 45), (40, 70, 160), (40, 120, 70)][int(rng.integers(3))]
        per = n / int(rng.integers(80, 160))
        a = ((xx % per) < per / 2).astype(np.float32)
        b = ((yy % per) < per / 2).astype(np.float32)
        white = np.array((236, 232, 226), np.float32)
        col = np.array(c, np.float32)
        mid = 0.55 * white + 0.45 * col
        k = (a + b)[..., None]
        img = np.stack([white, mid, col])[k[..., 0].astype(np.intp)]  # k = 0, 1, 2
        img = img * (1 + 0.05 * _pnoise(rng, n, 0.6) + 0.03 * _pnoise(rng, n, 60))[..., None]
        spec = (0.0, 4.0)
    img = np.clip(img, 0, 255).astype(np.uint8)
    return img, {"kind": kind, "f0": spec[0], "shin": spec[1]}


# ---------------------------------------------------------------- ray / shape tests
def _slab(o, d, h):
    """Entry / exit parameters of rays o + t d against the box |p| <= h."""
    with np.errstate(divide="ignore"):
        inv = [1.0 / d[..., a] for a in range(3)]
    return _slab_inv(o, inv, h)


def _slab_inv(o, inv, h):
    """_slab(o, d, h) given inv[a] = 1.0 / d[..., a] (worked out once for rays that
    share their directions)."""
    tn = tf = None
    with np.errstate(invalid="ignore", over="ignore"):
        for a in range(3):
            oa = o[..., a]
            t1 = (-h[a] - oa) * inv[a]
            t2 = (h[a] - oa) * inv[a]
            lo = np.minimum(t1, t2)
            hi = np.maximum(t1, t2)
            if tn is None:
                tn, tf = lo, hi
            else:
                np.maximum(tn, lo, out=tn)
                np.minimum(tf, hi, out=tf)
    return tn, tf


def box_interval(org, D, c, R, h):
    return _slab((org - c) @ R, D @ R, h)


def cyl_interval(org, D, cx, cy, r, z0, z1):
    ox = org[..., 0] - cx
    oy = org[..., 1] - cy
    dx, dy = D[..., 0], D[..., 1]
    a = dx * dx + dy * dy
    b = ox * dx + oy * dy
    c = ox * ox + oy * oy - r * r
    disc = b * b - a * c
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sq = np.sqrt(np.maximum(disc, 0))
        t0 = (-b - sq) / a
        t1 = (-b + sq) / a
        tz0 = (z0 - org[..., 2]) / D[..., 2]
        tz1 = (z1 - org[..., 2]) / D[..., 2]
    tn = np.maximum(t0, np.minimum(tz0, tz1))
    tf = np.minimum(t1, np.maximum(tz0, tz1))
    tf = np.where(disc < 0, -np.inf, tf)
    return tn, tf


def obj_interval(obj, org, D):
    if obj["type"] == "box":
        return box_interval(org, D, obj["c"], obj["R"], obj["h"])
    if obj["type"] == "cyl":
        return cyl_interval(org, D, obj["c"][0], obj["c"][1], obj["r"], obj["z0"], obj["z1"])
    raise ValueError(obj["type"])


def card_hit(card, org, D):
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (card["z"] - org[..., 2]) / D[..., 2]
    px = org[..., 0] + t * D[..., 0] - card["c"][0]
    py = org[..., 1] + t * D[..., 1] - card["c"][1]
    u = np.abs(px * card["u"][0] + py * card["u"][1])
    v = np.abs(px * card["v"][0] + py * card["v"][1])
    r = 3.0
    hw, hh = CARD_W / 2, CARD_H / 2
    inside = (u <= hw) & (v <= hh)
    corner = (u > hw - r) & (v > hh - r)
    inside &= ~corner | ((u - (hw - r)) ** 2 + (v - (hh - r)) ** 2 <= r * r)
    return np.where(inside & (t > 1e-3), t, np.inf)


# ---------------------------------------------------------------- camera
class Camera:
    def __init__(self, K, dist, size, R, C):
        self.K = np.asarray(K, np.float64)
        self.dist = np.asarray(dist, np.float64)
        self.w, self.h = size
        self.R = np.asarray(
            R, np.float64
        )  # world -> camera rotation (rows: x right, y down, z fwd)
        self.C = np.asarray(C, np.float64)  # camera centre, world mm
        self.rvec = cv2.Rodrigues(self.R)[0].ravel()
        self.tvec = -self.R @ self.C
        corners = np.array(
            [
                [0, 0],
                [self.w - 1, 0],
                [0, self.h - 1],
                [self.w - 1, self.h - 1],
                [self.w / 2, 0],
                [0, self.h / 2],
                [self.w - 1, self.h / 2],
                [self.w / 2, self.h - 1],
            ],
            np.float64,
        )
        und = cv2.undistortPoints(corners.reshape(-1, 1, 2), self.K, self.dist).reshape(-1, 2)
        self.rmax2 = float((np.hypot(und[:, 0], und[:, 1]).max() * 1.15) ** 2)

    def project(self, P):
        """Distorted pixel coords (N, 2); NaN where the point is behind / far outside the view."""
        P = np.asarray(P, np.float64).reshape(-1, 3)
        pc = (P - self.C) @ self.R.T
        ok = pc[:, 2] > 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            xn = pc[:, :2] / pc[:, 2:3]
        ok &= (xn**2).sum(1) < self.rmax2
        uv, _ = cv2.projectPoints(
            np.where(ok[:, None], P, 0.0).reshape(-1, 1, 3), self.rvec, self.tvec, self.K, self.dist
        )
        out = np.full((P.shape[0], 2), np.nan)
        out[ok] = uv.reshape(-1, 2)[ok]
        return out

    def inside(self, uv):
        return (
            (uv[:, 0] >= 0) & (uv[:, 0] <= self.w - 1) & (uv[:, 1] >= 0) & (uv[:, 1] <= self.h - 1)
        )

    def json(self):
        return {
            "camera_matrix": self.K.tolist(),
            "dist_coeffs": [float(v) for v in self.dist],
            "image_size": [int(self.w), int(self.h)],
        }


def _look_at(C, T, roll_deg):
    f = T - C
    f = f / np.linalg.norm(f)
    r = np.cross(f, [0.0, 0.0, 1.0])
    r /= np.linalg.norm(r)
    d = np.cross(f, r)
    a = math.radians(roll_deg)
    r2 = math.cos(a) * r + math.sin(a) * d
    d2 = -math.sin(a) * r + math.cos(a) * d
    return np.stack([r2, d2, f])


def make_camera(rng, kind):
    best = None
    for _attempt in range(60):
        if kind == "mounted":
            w, h = 1280, 720
            side = SEATS[int(rng.integers(4))]
            az = SIDE_AZ[side] + rng.uniform(-25, 25)
            el = rng.uniform(50, 82)
            dist = rng.uniform(750, 1050)
            hfov = rng.uniform(58, 72)
            k1, k2 = rng.uniform(-0.06, 0.02), rng.uniform(-0.02, 0.03)
            p1, p2 = rng.normal(0, 0.0004, 2)
            roll = rng.normal(0, 1.0)
            off = rng.normal(0, 25, 2)
            pp = rng.normal(0, 6, 2)
        else:
            w, h = 1600, 1200
            az = rng.uniform(0, 360)
            side = min(SIDE_AZ, key=lambda s: abs((az - SIDE_AZ[s] + 180) % 360 - 180))
            el = rng.uniform(40, 80)
            dist = rng.uniform(650, 1000)
            hfov = rng.uniform(56, 72)
            k1 = rng.uniform(-0.12, 0.05)
            k2 = rng.uniform(-0.02, 0.06) if k1 < -0.04 else rng.uniform(-0.03, 0.03)
            p1, p2 = rng.normal(0, 0.0008, 2)
            roll = rng.normal(0, 3.0)
            off = rng.normal(0, 40, 2)
            pp = rng.normal(0, 12, 2)
        fx = (w / 2) / math.tan(math.radians(hfov) / 2)
        K = [[fx, 0, w / 2 - 0.5 + pp[0]], [0, fx, h / 2 - 0.5 + pp[1]], [0, 0, 1]]
        ea, aa = math.radians(el), math.radians(az)
        C = dist * np.array(
            [math.cos(ea) * math.cos(aa), math.cos(ea) * math.sin(aa), math.sin(ea)]
        )
        T = np.array([off[0], off[1], 0.0])
        cam = Camera(K, [k1, k2, p1, p2, 0.0], (w, h), _look_at(C, T, roll), C)
        # distortion must stay monotonic over the frame
        r = np.linspace(0, math.sqrt(cam.rmax2), 200)
        rd = r * (1 + k1 * r**2 + k2 * r**4)
        if np.any(np.diff(rd) <= 0):
            continue
        # keep the board mostly in frame: marker centres inside, board corners nearly so
        mk = cam.project(np.array([[x, y, 0.0] for x, y in MARKERS.values()]))
        bc = cam.project(np.array([[x, y, 0.0] for x in (-260, 260) for y in (-190, 190)]))
        m = 0.04
        ok_m = np.all(np.isfinite(mk)) and np.all(cam.inside(mk))
        inside_loose = (
            np.isfinite(bc[:, 0])
            & (bc[:, 0] > -m * w)
            & (bc[:, 0] < (1 + m) * w)
            & (bc[:, 1] > -m * h)
            & (bc[:, 1] < (1 + m) * h)
        )
        score = int(ok_m) * 10 + int(inside_loose.sum())
        meta = {
            "elevation_deg": round(el, 3),
            "distance_mm": round(dist, 2),
            "azimuth_deg": round(az % 360, 3),
            "fov_deg": round(hfov, 3),
            "side": side,
            "roll_deg": round(float(roll), 3),
            "look_at_mm": [round(float(off[0]), 2), round(float(off[1]), 2), 0.0],
        }
        if best is None or score > best[0]:
            best = (score, cam, meta)
        if score == 14:
            break
    return best[1], best[2]


# ---------------------------------------------------------------- scene
def block_placement(rng, first=None):
    """A block's offset (dx, dy) mm and turn (degrees) off its site: the bottom
    block's own, a block above it about half of ``first`` (the bottom's) plus its own."""
    if first is None:
        bx, by = np.clip(rng.normal(0, 1.0, 2), -2.5, 2.5)
        return bx, by, float(np.clip(rng.normal(0, 1.8), -5, 5))
    bx, by, ba = first
    dx, dy = np.clip(0.5 * np.array([bx, by]) + rng.normal(0, 0.8, 2), -2.5, 2.5)
    return dx, dy, float(np.clip(0.5 * ba + rng.normal(0, 1.2), -5, 5))


def card_frame(seat, mid, a):
    """A card lying in front of ``seat``, its top edge's middle at ``mid``, turned ``a``
    radians: its centre and its right (u) and up (v, toward the board) directions."""
    vin = np.array(SEAT_IN[seat])
    ca, sa = math.cos(a), math.sin(a)
    v = np.array([ca * vin[0] - sa * vin[1], sa * vin[0] + ca * vin[1]])
    u = np.array([v[1], -v[0]])
    return mid - v * (CARD_H / 2), u, v


def make_position(rng, colours):
    """A game-like board: {(city,row,col): [(colour, storeys), ...bottom..top]}."""
    supply = {c: dict(SUPPLY) for c in colours}
    nsites = int(rng.integers(5, 41))
    sites = [divmod(int(s), 9) for s in rng.choice(54, nsites, replace=False)]
    sites = [(c, rc // 3, rc % 3) for c, rc in sites]
    targets = []
    n_tall = int(rng.choice([0, 1, 2, 3], p=[0.2, 0.4, 0.3, 0.1]))
    for i in range(nsites):
        if i < n_tall:
            targets.append(int(rng.integers(10, 29)))
        else:
            targets.append(
                int(
                    rng.choice(
                        [1, 2, 3, 4, 5, 6, 7, 8, 9],
                        p=[0.2, 0.2, 0.17, 0.15, 0.1, 0.07, 0.05, 0.03, 0.03],
                    )
                )
            )
    order = rng.permutation(nsites)
    # tall towers are built first so that supply shortages trim the small ones
    order = sorted(order, key=lambda i: targets[i] < 10)
    board = {}
    for i in order:
        target = targets[i]
        stack = []
        hgt = 0
        while hgt < target:
            avail = [c for c in colours if any(supply[c].values())]
            if not avail:
                break
            c = avail[int(rng.integers(len(avail)))]
            sizes = [s for s in (1, 2, 3, 4) if supply[c][s] > 0 and s <= max(1, target - hgt)]
            if not sizes:
                sizes = [s for s in (1, 2, 3, 4) if supply[c][s] > 0]
            s = sizes[int(rng.integers(len(sizes)))]
            supply[c][s] -= 1
            stack.append((c, s))
            hgt += s
        if stack:
            board[sites[i]] = stack
    return board, supply


def _box(c, R, h, colour_name, colour_lin, storeys, base_z, role, site=None):
    return {
        "type": "box",
        "c": np.asarray(c, np.float64),
        "R": np.asarray(R, np.float64),
        "h": np.asarray(h, np.float64),
        "name": colour_name,
        "col": colour_lin,
        "storeys": storeys,
        "base_z": base_z,
        "role": role,
        "site": site,
    }


def make_scene(rng, kind):
    edition = "classic" if kind == "mounted" else "2017"
    if rng.random() < 0.2:
        edition = "2017" if edition == "classic" else "classic"
    pal = PALETTES[edition]
    names = list(pal)
    ncol = int(rng.choice([2, 3, 4], p=[0.25, 0.35, 0.4]))
    colours = [names[i] for i in sorted(rng.choice(4, ncol, replace=False))]
    # per-photo colour drift of the plastic
    plastic = {
        n: srgb2lin(np.clip(np.array(pal[n]) + rng.normal(0, 6, 3), 0, 255)) * 0.92 for n in names
    }
    board, supply = make_position(rng, colours)
    objs = []
    tops = {}
    for (city, row, col), stack in sorted(board.items()):
        sx, sy = site_centre(city, row, col)
        first = block_placement(rng)
        z = 0.0
        for j, (cname, k) in enumerate(stack):
            dx, dy, da = first if j == 0 else block_placement(rng, first)
            hz = STOREY * k / 2
            col_lin = plastic[cname] * np.float32(1 + rng.normal(0, 0.025))
            objs.append(
                _box(
                    [sx + dx, sy + dy, z + hz],
                    _rot_z(math.radians(da)),
                    [FOOT / 2, FOOT / 2, hz],
                    cname,
                    col_lin,
                    k,
                    0.0,
                    "site",
                    (city, row, col),
                )
            )
            z += STOREY * k
        tops[(city, row, col)] = len(objs) - 1
    # spare blocks in one or two table corners, standing or lying
    extra = {"spare_blocks": 0, "mug": False}
    corners = [(sx, sy) for sx in (-1, 1) for sy in (-1, 1)]
    corner_order = [corners[i] for i in rng.permutation(4)]
    used = []
    if rng.random() < 0.5:
        for ci in range(int(rng.integers(1, 3))):
            sxg, syg = corner_order[ci]
            ccx = sxg * rng.uniform(320, 370)
            ccy = syg * rng.uniform(245, 290)
            for _ in range(int(rng.integers(2, 8))):
                cname = (
                    names[int(rng.integers(4))]
                    if rng.random() < 0.3
                    else colours[int(rng.integers(ncol))]
                )
                k = int(rng.choice([1, 2, 3, 4], p=[0.4, 0.3, 0.2, 0.1]))
                lying = k > 1 and rng.random() < 0.35
                rad = math.hypot(13, 6 * k) if lying else 18.4
                for _try in range(30):
                    x = ccx + rng.uniform(-45, 45)
                    y = ccy + rng.uniform(-40, 40)
                    if abs(x) < 260 + rad + 15 and abs(y) < 190 + rad + 15:
                        continue
                    if abs(x) < 100 + rad or abs(y) < 100 + rad:  # keep clear of the card stacks
                        continue
                    if all(math.hypot(x - ux, y - uy) > rad + ur + 2 for ux, uy, ur in used):
                        break
                else:
                    continue
                used.append((x, y, rad))
                a = rng.uniform(0, 2 * math.pi)
                col_lin = plastic[cname] * np.float32(1 + rng.normal(0, 0.025))
                if lying:
                    R = _rot_z(a) @ _rot_x(math.pi / 2)
                    objs.append(
                        _box(
                            [x, y, TABLE_Z + 13],
                            R,
                            [13, 13, 6 * k],
                            cname,
                            col_lin,
                            k,
                            TABLE_Z,
                            "spare",
                        )
                    )
                else:
                    objs.append(
                        _box(
                            [x, y, TABLE_Z + 6 * k],
                            _rot_z(a),
                            [13, 13, 6 * k],
                            cname,
                            col_lin,
                            k,
                            TABLE_Z,
                            "spare",
                        )
                    )
                extra["spare_blocks"] += 1
    if rng.random() < 0.3:
        sxg, syg = corner_order[3]
        r = rng.uniform(38, 44)
        x, y = sxg * rng.uniform(340, 400), syg * rng.uniform(270, 320)
        mugs = [(235, 232, 225), (180, 40, 40), (40, 60, 110), (60, 60, 62), (230, 190, 60)]
        objs.append(
            {
                "type": "cyl",
                "c": np.array([x, y]),
                "r": r,
                "z0": TABLE_Z,
                "z1": TABLE_Z + rng.uniform(85, 100),
                "col": srgb2lin(mugs[int(rng.integers(len(mugs)))]) * 0.9,
                "role": "mug",
            }
        )
        extra["mug"] = True
    # played cards
    cstyle = card_style(rng)
    cards = []
    stacks = {}
    for seat in SEATS:
        if rng.random() < 0.15:
            continue
        n = int(rng.choice([1, 2, 3, 4, 5, 6], p=[0.2, 0.25, 0.2, 0.15, 0.1, 0.1]))
        vin = np.array(SEAT_IN[seat])
        uin = np.array([vin[1], -vin[0]])  # holder's right
        edge = np.array(SEAT_EDGE[seat])
        along = rng.uniform(-40, 40)
        gap = rng.uniform(10, 14)
        ang = math.radians(rng.uniform(-10, 10))
        top_mid = edge + uin * along - vin * gap
        layout = []
        for i in range(n):  # i = n-1 is the top card
            if i == n - 1:
                a, mid = ang, top_mid
            else:
                a = ang + math.radians(rng.uniform(-5, 5))
                mid = top_mid + uin * rng.uniform(-6, 6) - vin * rng.uniform(0, 6)
            # keep the top edge at least ~5 mm off the board edge
            c, u, v = card_frame(seat, mid, a)
            cell = (int(rng.integers(3)), int(rng.integers(3)))
            layout.append((c, u, v, cell))
        for i, (c, u, v, cell) in enumerate(layout):
            tex = Tex(
                make_card_texture(rng, cell, cstyle), CARD_PPM, -CARD_W / 2, CARD_H / 2, scale=0.86
            )
            cards.append(
                {
                    "type": "card",
                    "c": c,
                    "u": u,
                    "v": v,
                    "z": TABLE_Z + 0.3 * (i + 1),
                    "tex": tex,
                    "seat": seat,
                    "cell": cell,
                    "top": i == n - 1,
                    "role": "card",
                }
            )
        stacks[seat] = layout[-1][3]
    objs.extend(cards)
    return {
        "edition": edition,
        "colours": colours,
        "board": board,
        "objs": objs,
        "tops": tops,
        "stacks": stacks,
        "extra": extra,
    }


# ---------------------------------------------------------------- lights
def make_lights(rng, kind):
    lights = []
    desc = []
    az = rng.uniform(0, 2 * math.pi)
    hd = rng.uniform(0, 900)
    hz = rng.uniform(650, 1600)
    S0 = np.array([hd * math.cos(az), hd * math.sin(az), hz])
    kelvin = rng.uniform(2700, 6500)
    col = kelvin_rgb(kelvin)
    tint = 0.0
    if rng.random() < 0.25:
        tint = rng.uniform(-0.08, 0.08)
        col = col * np.array([1, 1 + tint, 1], np.float32)
    hard = rng.random() < 0.25
    rad = 0.0 if hard else rng.uniform(20, 150)
    nsamp = 1 if hard else (8 if kind == "mounted" else 6)
    cone = None
    if rng.random() < 0.5:
        aim = np.array([rng.uniform(-150, 150), rng.uniform(-120, 120), 0.0])
        axis = aim - S0
        axis /= np.linalg.norm(axis)
        outer = rng.uniform(35, 70)
        cone = (
            axis,
            math.cos(math.radians(outer)),
            math.cos(math.radians(outer * rng.uniform(0.45, 0.8))),
        )
    d0 = np.linalg.norm(S0)
    inten = d0**2 / max(S0[2] / d0, 0.3)
    lights.append(
        {"kind": "point", "S": S0, "rad": rad, "col": col, "I": inten, "K": nsamp, "cone": cone}
    )
    desc.append(
        f"lamp {'point' if hard else f'area r={rad:.0f}mm'} {kelvin:.0f}K"
        f"{f' tint{tint:+.2f}' if tint else ''} at ({S0[0]:.0f},{S0[1]:.0f},{S0[2]:.0f})"
        f"{' shade' if cone else ''}"
    )
    # sky / bounce light: the lamp's colour or somewhat cooler (daylight from a window)
    amb_k = kelvin if rng.random() < 0.4 else min(9000.0, kelvin * rng.uniform(1.0, 1.7))
    amb = {"col": kelvin_rgb(amb_k), "E": rng.uniform(0.12, 0.5)}
    desc.append(f"ambient {amb['E']:.2f} {amb_k:.0f}K")
    if rng.random() < 0.4:
        if rng.random() < 0.6:  # window: soft directional daylight
            a2 = rng.uniform(0, 2 * math.pi)
            e2 = math.radians(rng.uniform(20, 60))
            d = np.array([math.cos(e2) * math.cos(a2), math.cos(e2) * math.sin(a2), math.sin(e2)])
            k2 = rng.uniform(5500, 7500)
            E2 = rng.uniform(0.2, 0.6)
            spread = math.radians(rng.uniform(4, 12))
            lights.append(
                {
                    "kind": "dir",
                    "S": d * 5000.0,
                    "dir": d,
                    "rad": 5000.0 * math.tan(spread),
                    "col": kelvin_rgb(k2),
                    "I": E2,
                    "K": 4,
                    "cone": None,
                }
            )
            desc.append(
                f"window {k2:.0f}K E={E2:.2f} from az {math.degrees(a2):.0f}"
                f" el {math.degrees(e2):.0f}"
            )
        else:
            a2 = rng.uniform(0, 2 * math.pi)
            S2 = np.array(
                [
                    rng.uniform(300, 1000) * math.cos(a2),
                    rng.uniform(300, 1000) * math.sin(a2),
                    rng.uniform(600, 1400),
                ]
            )
            k2 = rng.uniform(2700, 4500)
            E2 = rng.uniform(0.15, 0.4)
            d2 = np.linalg.norm(S2)
            lights.append(
                {
                    "kind": "point",
                    "S": S2,
                    "rad": rng.uniform(10, 60),
                    "col": kelvin_rgb(k2),
                    "I": E2 * d2**2 / max(S2[2] / d2, 0.3),
                    "K": 3,
                    "cone": None,
                }
            )
            desc.append(f"lamp2 {k2:.0f}K E={E2:.2f} at ({S2[0]:.0f},{S2[1]:.0f},{S2[2]:.0f})")
    return lights, amb, "; ".join(desc)


# ---------------------------------------------------------------- renderer
CELL = 8.0
GRID_N = 250
GRID_X0 = -1000.0


def _occluders(scene):
    occ = [o for o in scene["objs"] if o["type"] in ("box", "cyl")]
    board = {
        "type": "box",
        "c": np.array([0.0, 0.0, -BOARD_T / 2]),
        "R": np.eye(3),
        "h": np.array([BOARD_W / 2, BOARD_H / 2, BOARD_T / 2]),
        "role": "board",
    }
    out = []
    for o in occ + [board]:
        if o["type"] == "box":
            s = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], np.float64)
            corners = o["c"] + (s * o["h"]) @ o["R"].T
        else:
            s = np.array([[i, j] for i in (-1, 1) for j in (-1, 1)], np.float64) * o["r"]
            corners = np.array(
                [[o["c"][0] + a, o["c"][1] + b, z] for a, b in s for z in (o["z0"], o["z1"])]
            )
        out.append((o, corners))
    return out


def _shadow_candidates(Ps, zlow, rim, occ):
    """(occluder, points whose shadow rays may meet it) for each occluder: the points
    in the grid cells under the occluder's shadow on the plane z = zlow (grown by a
    cell), below its top.  Points are listed by cell, then in their own order."""
    if not occ:
        return []
    cx = np.clip(((Ps[:, 0] - GRID_X0) / CELL).astype(np.int32), 0, GRID_N - 1)
    cy = np.clip(((Ps[:, 1] - GRID_X0) / CELL).astype(np.int32), 0, GRID_N - 1)
    cell = cy * GRID_N + cx
    # the cells fit 16 bits, for which numpy's stable sort is a (faster) radix sort
    order = np.argsort(cell.astype(np.uint16), kind="stable")
    counts = np.bincount(cell, minlength=GRID_N * GRID_N)
    starts = np.cumsum(counts) - counts
    mask = np.zeros((GRID_N, GRID_N), np.uint8)  # zero outside the window in use
    kernel = np.ones((3, 3), np.uint8)
    Psz = np.ascontiguousarray(Ps[:, 2])
    # every occluder's 8 corners projected from the light's rim onto z = zlow, and the
    # corners themselves, in 1/16 grid cells: the same numbers occluder by occluder
    corners = np.array([c for _, c in occ])  # (occluders, 8, 3)
    zmaxs = corners[:, :, 2].max(1)
    lam = (rim[None, :, None, 2] - zlow) / np.maximum(
        rim[None, :, None, 2] - corners[:, None, :, 2], 1e-6
    )
    proj = rim[None, :, None, :2] * (1 - lam[..., None]) + corners[:, None, :, :2] * lam[..., None]
    pts = np.concatenate([proj.reshape(len(occ), -1, 2), corners[:, :, :2]], 1)
    gs = ((pts - GRID_X0) / CELL * 16).astype(np.int64)
    gs = np.clip(gs, -1_000_000, 1_000_000).astype(np.int32)
    out = []
    for (o, _), zmax, g in zip(occ, zmaxs, gs, strict=True):
        if zmax <= zlow:
            continue
        hull = cv2.convexHull(g.reshape(-1, 1, 2))
        # fill and dilate only a window around the hull (in 1/16 cells), with a margin
        # for the rounding of the fill and the dilation
        x, y, w, h = cv2.boundingRect(hull)
        x0, x1 = (min(max(v, 0), GRID_N) for v in (x // 16 - 3, (x + w - 1) // 16 + 4))
        y0, y1 = (min(max(v, 0), GRID_N) for v in (y // 16 - 3, (y + h - 1) // 16 + 4))
        if x1 <= x0 or y1 <= y0:
            continue
        cv2.fillConvexPoly(mask, hull, 1, cv2.LINE_8, 4)
        win = mask[y0:y1, x0:x1]
        r, c = np.nonzero(cv2.dilate(win, kernel))
        win[:] = 0
        cells = (r + y0) * GRID_N + (c + x0)
        cnt = counts[cells]
        keep = cnt > 0
        if not keep.any():
            continue
        cells, cnt = cells[keep], cnt[keep]
        st = starts[cells]
        tot = int(cnt.sum())
        rep = np.repeat(st - np.concatenate([[0], np.cumsum(cnt)[:-1]]), cnt)
        idx = order[rep + np.arange(tot)]
        idx = idx[Psz.take(idx) < zmax]
        if idx.size:
            out.append((o, idx))
    return out


def _shadow_vis(Ps, light, occ, rng):
    """Fraction of the light's samples each point sees (Ps already offset along its normal).

    A shadow ray hits an occluder where its slab / cylinder interval (tn, tf) has
    tn <= tf, tf > 1e-6 and tn < 1 (before the light)."""
    n = Ps.shape[0]
    K = light["K"]
    if n == 0:
        return np.ones(0, np.float32)
    S0 = light["S"]
    rad = light["rad"]
    zlow = float(Ps[:, 2].min()) - 0.01
    if rad > 0:
        ring = np.array(
            [
                [math.cos(a), math.sin(a), 0.0]
                for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)
            ]
        )
        rim = S0 + ring * rad / math.cos(math.pi / 8)
    else:
        rim = S0[None, :]
    # per-point sample rotation turns penumbra banding into fine noise
    phi = rng.uniform(0, 2 * math.pi, n).astype(np.float32)
    radial = np.sqrt((np.arange(K) + 0.5) / K)
    golden = np.arange(K) * 2.39996323
    occl = np.zeros((K, n), bool)
    work = _shadow_candidates(Ps, zlow, rim, occ)
    if rad > 0 and work:
        # sample k of point i lies at (Sx[k, pos[i]], Sy[k, pos[i]], S0[2]) whatever the
        # occluder: computed once for every point that is a candidate of any occluder
        need = np.zeros(n, bool)
        for _, idx in work:
            need[idx] = True
        u = np.flatnonzero(need)
        pos = np.zeros(n, np.intp)
        pos[u] = np.arange(u.size)
        phu = phi[u]
        Sx = np.empty((K, u.size))
        Sy = np.empty((K, u.size))
        for k in range(K):
            a = golden[k] + phu
            Sx[k] = S0[0] + rad * radial[k] * np.cos(a)
            Sy[k] = S0[1] + rad * radial[k] * np.sin(a)
    Psx, Psy, Psz = (np.ascontiguousarray(Ps[:, a]) for a in range(3))
    # with tn raised to at least L and tf lowered to at most U, the tests tn <= tf,
    # tf > 1e-6 and tn < 1 are the one test tn <= tf (NaN still fails it)
    U = np.nextafter(1.0, 0.0)
    L = np.nextafter(1e-6, 1.0)
    for o, idx in work:
        m = idx.size
        px, py, pz = Psx.take(idx), Psy.take(idx), Psz.take(idx)
        # D = S - P, sample by sample; only its x, y change with the sample
        D = np.empty((m, 3))
        D[:, 2] = S0[2] - pz
        if rad > 0:
            pk = pos[idx]
        else:
            D[:, 0] = S0[0] - px
            D[:, 1] = S0[1] - py
        if o["type"] != "box":
            P = Ps[idx]
            for k in range(K):
                if rad > 0:
                    np.subtract(Sx[k].take(pk), px, out=D[:, 0])
                    np.subtract(Sy[k].take(pk), py, out=D[:, 1])
                tn, tf = obj_interval(o, P, D)
                hit = (tn <= tf) & (tf > 1e-6) & (tn < 1.0)
                occl[k, idx[hit]] = True
            continue
        # box_interval(P, D, c, R, h) for each sample, with the origin transform and the
        # slab offsets (h - o, -h - o) hoisted out of the sample loop; both matrix
        # products keep box_interval's operands and shapes
        c, R, h = o["c"], o["R"], o["h"]
        Pc = np.empty((m, 3))  # P - c
        for a, pa in enumerate((px, py, pz)):
            np.subtract(pa, c[a], out=Pc[:, a])
        oloc = Pc @ R
        tn0, tf0 = L, U
        axes = (0, 1, 2)
        if R[0, 2] == 0 and R[1, 2] == 0 and R[2, 2] == 1 and np.all(D[:, 2] != 0):
            # an upright box: (D @ R)[:, 2] is exactly D[:, 2], the same for every
            # sample, and so is the slab along the box's z axis
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                inv = 1.0 / D[:, 2]
                t1 = (-h[2] - oloc[:, 2]) * inv
                t2 = (h[2] - oloc[:, 2]) * inv
            tn0 = np.maximum(np.minimum(t1, t2), L)
            tf0 = np.minimum(np.maximum(t1, t2), U)
            axes = (0, 1)
        lo_b = [-h[a] - oloc[:, a] for a in axes]
        hi_b = [h[a] - oloc[:, a] for a in axes]
        for k in range(K):
            if rad > 0:
                np.subtract(Sx[k].take(pk), px, out=D[:, 0])
                np.subtract(Sy[k].take(pk), py, out=D[:, 1])
            dd = D @ R
            tn, tf = tn0, tf0
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                for j, a in enumerate(axes):
                    inv = 1.0 / dd[:, a]
                    t1 = lo_b[j] * inv
                    t2 = hi_b[j] * inv
                    tn = np.maximum(tn, np.minimum(t1, t2))
                    tf = np.minimum(tf, np.maximum(t1, t2))
            occl[k, idx[tn <= tf]] = True
    return 1.0 - occl.mean(0).astype(np.float32)


def _rects(cam, objs, w2, h2):
    """Sub-sample-grid rectangle (r0, r1, c0, c1) that can contain each object."""
    rects = []
    for o in objs:
        if o["type"] == "box":
            s = np.array(
                [[i, j, k] for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, -0.5, 0, 0.5, 1)]
            )
            pts = o["c"] + (s * o["h"]) @ o["R"].T
        elif o["type"] == "cyl":
            a = np.linspace(0, 2 * math.pi, 16, endpoint=False)
            pts = (
                np.array(
                    [
                        [o["c"][0] + o["r"] * math.cos(t), o["c"][1] + o["r"] * math.sin(t), z]
                        for t in a
                        for z in (o["z0"], o["z1"])
                    ]
                )
                * 1.0
            )
            pts[:, :2] = o["c"] + (pts[:, :2] - o["c"]) / math.cos(math.pi / 16)
        else:
            s = np.array([[i, j] for i in (-1, -0.5, 0, 0.5, 1) for j in (-1, -0.5, 0, 0.5, 1)])
            xy = o["c"] + s[:, :1] * o["u"] * CARD_W / 2 + s[:, 1:] * o["v"] * CARD_H / 2
            pts = np.concatenate([xy, np.full((len(xy), 1), o["z"])], 1)
        uv = cam.project(pts)
        if not np.all(np.isfinite(uv)):
            pc = (pts - cam.C) @ cam.R.T
            if np.all(pc[:, 2] <= 1.0):
                rects.append(None)
            else:
                rects.append((0, h2, 0, w2))
            continue
        span = uv.max(0) - uv.min(0)
        pad = 3.0 + 0.04 * span
        x0, y0 = uv.min(0) - pad
        x1, y1 = uv.max(0) + pad
        c0 = max(0, int(math.floor(SS * (x0 + 0.25))))
        c1 = min(w2, int(math.ceil(SS * (x1 + 0.25))) + 1)
        r0 = max(0, int(math.floor(SS * (y0 + 0.25))))
        r1 = min(h2, int(math.ceil(SS * (y1 + 0.25))) + 1)
        rects.append((r0, r1, c0, c1) if (c1 > c0 and r1 > r0) else None)
    return rects


def _ao_maps(scene):
    """Ambient occlusion on the table / board plane and a tower-top height map (1 px/mm)."""
    X0, Y1 = -640.0, 520.0
    W, H = 1280, 1040
    fp = np.zeros((H, W), np.float32)
    tall = np.zeros((H, W), np.float32)
    topz = np.full((H, W), -1e3, np.float32)

    def px(xy):
        return np.round(np.stack([(xy[:, 0] - X0) * 16, (Y1 - xy[:, 1]) * 16], -1)).astype(np.int32)

    sites = {}
    for o in scene["objs"]:
        if o["type"] == "box":
            s = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], np.float64)
            pts = o["c"] + (s * o["h"]) @ o["R"].T
            hull = cv2.convexHull(px(pts[:, :2]).reshape(-1, 1, 2))
            top = float(pts[:, 2].max())
            if o["role"] == "site":
                key = o["site"]
                sites[key] = max(sites.get(key, 0.0), top)
            if abs(pts[:, 2].min() - o["base_z"]) < 0.5:
                cv2.fillConvexPoly(fp, hull, 1.0, cv2.LINE_AA, 4)
            cv2.fillConvexPoly(topz, hull, top, cv2.LINE_8, 4)
            cv2.fillConvexPoly(tall, hull, min(top / 100.0, 1.5), cv2.LINE_AA, 4)
        elif o["type"] == "cyl":
            c = px(np.array([o["c"]]))[0]
            cv2.circle(fp, tuple(int(v) for v in c), int(o["r"] * 16), 1.0, -1, cv2.LINE_AA, 4)
            cv2.circle(tall, tuple(int(v) for v in c), int(o["r"] * 16), 0.9, -1, cv2.LINE_AA, 4)
    ao = 1.0 - 0.45 * cv2.GaussianBlur(fp, (0, 0), 3.0) - 0.3 * cv2.GaussianBlur(tall, (0, 0), 14.0)
    ao = np.clip(ao, 0.35, 1.0).astype(np.float32)
    return {"ao": ao, "topz": topz, "X0": X0, "Y1": Y1}


def _map_sample(img, X0, Y1, x, y, nearest=False):
    mx = (x - X0 - 0.5).astype(np.float32)
    my = (Y1 - y - 0.5).astype(np.float32)
    n = mx.size
    width = 4096
    rows = max(1, -(-n // width))
    pad = rows * width - n
    mx = np.pad(mx, (0, pad)).reshape(rows, width)
    my = np.pad(my, (0, pad)).reshape(rows, width)
    out = cv2.remap(
        img,
        mx,
        my,
        cv2.INTER_NEAREST if nearest else cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    )
    return out.reshape(-1)[:n]


def _argmax3(a):
    """np.argmax(a, 1) for an (n, 3) array without NaN (the first of equal maxima)."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    face = (a1 > a0).astype(np.intp)
    face[(a2 > a0) & (a2 > a1)] = 2
    return face


def _dot3(a, b):
    """(a * b).sum(-1) for 3-vectors, bit for bit: numpy adds a length-3 last axis in
    order, ((x + y) + z); this skips the (n, 3) product and the slow small-axis reduction.
    np.sqrt(_dot3(v, v)) is likewise np.linalg.norm(v, axis=-1)."""
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]


def render_linear(scene, cam, lights, amb, rng, textures):
    w2, h2 = cam.w * SS, cam.h * SS
    xs = (np.arange(w2, dtype=np.float64) + 0.5) / SS - 0.5
    ys = (np.arange(h2, dtype=np.float64) + 0.5) / SS - 0.5
    img = np.empty((cam.h, cam.w, 3), np.float32)
    objs = scene["objs"]
    rects = _rects(cam, objs, w2, h2)
    occ = _occluders(scene)
    aom = _ao_maps(scene)
    board_tex, table_tex, table_mat = textures["board"], textures["table"], textures["table_mat"]
    board_edge = srgb2lin(textures["board_edge"]) * 0.9
    boxes = [i for i, o in enumerate(objs) if o["type"] == "box"]
    box_c = np.array([objs[i]["c"] for i in boxes]) if boxes else np.zeros((0, 3))
    box_R = np.array([objs[i]["R"] for i in boxes]) if boxes else np.zeros((0, 3, 3))
    box_h = np.array([objs[i]["h"] for i in boxes]) if boxes else np.zeros((0, 3))
    box_col = (
        np.array([objs[i]["col"] for i in boxes], np.float32)
        if boxes
        else np.zeros((0, 3), np.float32)
    )
    box_base = np.array([objs[i]["base_z"] for i in boxes]) if boxes else np.zeros(0)
    box_lut = np.full(len(objs) + OBJ0, -1, np.int64)
    for j, i in enumerate(boxes):
        box_lut[OBJ0 + i] = j
    shin_plastic = float(textures["plastic_shin"])
    C = cam.C.astype(np.float64)
    pix_ang = 1.0 / (cam.K[0, 0] * SS)
    table_box = textures["table_box"]
    rows_per = max(8, int(600_000 // w2))
    # sub-sample rows: a chunk's, after the (< SS) rows left over from the last chunk
    buf = np.empty((rows_per + SS, w2, 3), np.float32)
    carry = 0
    for s0 in range(0, h2, rows_per):
        s1 = min(h2, s0 + rows_per)
        gx, gy = np.meshgrid(xs, ys[s0:s1])
        und = cv2.undistortPoints(
            np.stack([gx, gy], -1).reshape(-1, 1, 2), cam.K, cam.dist
        ).reshape(s1 - s0, w2, 2)
        dc = np.empty((s1 - s0, w2, 3))
        dc[..., :2] = und
        dc[..., 2] = 1.0
        D = dc @ cam.R
        D /= np.sqrt(_dot3(D, D))[..., None]
        t = np.full((s1 - s0, w2), np.inf)
        oid = np.full((s1 - s0, w2), ID_BG, np.int32)
        with np.errstate(divide="ignore", invalid="ignore"):
            tf_ = (FLOOR_Z - C[2]) / D[..., 2]
        m = tf_ > 0
        np.copyto(t, tf_, where=m)
        np.copyto(oid, ID_FLOOR, where=m)
        with np.errstate(divide="ignore"):
            invD = [1.0 / D[..., a] for a in range(3)]  # shared by the table's and board's slabs
        for ident, (c, h) in (
            (ID_TABLE, table_box),
            (
                ID_BOARD,
                (np.array([0, 0, -BOARD_T / 2]), np.array([BOARD_W / 2, BOARD_H / 2, BOARD_T / 2])),
            ),
        ):
            tn, tfar = _slab_inv(C - c, invD, h)
            m = (tn <= tfar) & (tn > 1e-3) & (tn < t)
            np.copyto(t, tn, where=m)
            np.copyto(oid, ident, where=m)
        for i, o in enumerate(objs):
            rc = rects[i]
            if rc is None:
                continue
            r0, r1 = max(rc[0], s0) - s0, min(rc[1], s1) - s0
            if r1 <= r0:
                continue
            c0, c1 = rc[2], rc[3]
            Dsub = D[r0:r1, c0:c1]
            if o["type"] == "card":
                th = card_hit(o, C, Dsub)
            else:
                tn, tfar = obj_interval(o, C, Dsub)
                th = np.where((tn <= tfar) & (tn > 1e-3), tn, np.inf)
            tsub = t[r0:r1, c0:c1]
            m = th < tsub
            np.copyto(tsub, th, where=m)
            np.copyto(oid[r0:r1, c0:c1], OBJ0 + i, where=m)
        # ---------------------------------------------------------- surfaces
        n = t.size
        t = t.reshape(-1)
        oid = oid.reshape(-1)
        D = D.reshape(-1, 3)
        P = np.where(np.isfinite(t), t, 0.0)[:, None] * D
        P += C  # C + t D
        Nrm = np.zeros((n, 3), np.float32)  # (float32 for the lighting: stored values round alike)
        Nrm[:, 2] = 1.0
        alb = np.zeros((n, 3), np.float32)
        f0 = np.zeros(n, np.float32)
        shin = np.full(n, 10.0, np.float32)
        ao = np.ones(n, np.float32)
        shadowed = np.zeros(n, bool)  # gets shadow rays
        fp = (t * pix_ang).astype(np.float32)

        sel = np.flatnonzero(oid == ID_BG)
        alb[sel] = srgb2lin((110, 108, 104)) * 0.6
        sel = np.flatnonzero(oid == ID_FLOOR)
        alb[sel] = srgb2lin((70, 62, 56)) * 0.7  # (Nrm is already up)
        Px, Py, Dz = P[:, 0], P[:, 1], D[:, 2]
        sel = np.flatnonzero(oid == ID_TABLE)
        if sel.size:
            c, h = table_box
            pl = P.take(sel, 0) - c
            face = _argmax3(np.abs(pl) - h)
            top = face == 2
            tsel = sel[top]
            cosi = np.abs(Dz.take(tsel))
            tx, ty = Px.take(tsel), Py.take(tsel)
            alb[tsel] = table_tex.sample(tx, ty, fp.take(tsel) / np.sqrt(np.maximum(cosi, 0.05)))
            f0[tsel] = table_mat["f0"]
            shin[tsel] = table_mat["shin"]
            ao[tsel] = _map_sample(aom["ao"], aom["X0"], aom["Y1"], tx, ty)
            shadowed[tsel] = True
            ssel = sel[~top]
            nn = np.zeros((ssel.size, 3))
            nn[np.arange(ssel.size), face[~top]] = np.sign(
                pl[~top][np.arange(ssel.size), face[~top]]
            )
            Nrm[ssel] = nn
            alb[ssel] = (
                table_tex.sample(P[ssel, 0] + P[ssel, 1], P[ssel, 2] * 8, np.full(ssel.size, 4.0))
                * 0.6
            )
        sel = np.flatnonzero(oid == ID_BOARD)
        if sel.size:
            h = np.array([BOARD_W / 2, BOARD_H / 2, BOARD_T / 2])
            pl = P.take(sel, 0) - np.array([0, 0, -BOARD_T / 2])
            face = _argmax3(np.abs(pl) - h)
            top = face == 2
            tsel = sel[top]
            cosi = np.abs(Dz.take(tsel))
            tx, ty = Px.take(tsel), Py.take(tsel)
            alb[tsel] = board_tex.sample(tx, ty, fp.take(tsel) / np.sqrt(np.maximum(cosi, 0.05)))
            f0[tsel] = textures["board_f0"]
            shin[tsel] = 14.0
            ao[tsel] = _map_sample(aom["ao"], aom["X0"], aom["Y1"], tx, ty)
            ssel = sel[~top]
            nn = np.zeros((ssel.size, 3))
            nn[np.arange(ssel.size), face[~top]] = np.sign(
                pl[~top][np.arange(ssel.size), face[~top]]
            )
            Nrm[ssel] = nn
            alb[ssel] = board_edge
            f0[ssel] = 0.02
            shadowed[sel] = True
        # blocks
        bj = box_lut[np.clip(oid, 0, None)] if len(boxes) else np.full(n, -1)
        bj = np.where(oid >= OBJ0, bj, -1)
        sel = np.flatnonzero(bj >= 0)
        if sel.size:
            j = bj[sel]
            pl = np.einsum("ni,nij->nj", P[sel] - box_c[j], box_R[j])
            hh = box_h[j]
            face = np.argmax(np.abs(pl) - hh, 1)
            ar = np.arange(sel.size)
            sgn = np.sign(pl[ar, face])
            nl = np.zeros((sel.size, 3))
            nl[ar, face] = sgn
            bev = 0.9
            for ax in range(3):
                other = face != ax
                s = np.clip((np.abs(pl[:, ax]) - (hh[:, ax] - bev)) / bev, 0, 1) * other
                nl[:, ax] += np.tan(s * math.pi / 4) * np.sign(pl[:, ax])
            a_o = np.ones(sel.size, np.float32)
            side = face != 2
            zl = pl[:, 2] + hh[:, 2]  # height above the block's own bottom
            storeys = np.round(2 * hh[:, 2] / STOREY)
            gw = 0.45
            for g in (1, 2, 3):
                has = side & (storeys > g)
                dz = zl - g * STOREY
                inn = has & (np.abs(dz) < gw)
                nl[inn, 2] += -np.sign(dz[inn]) * 0.9
                a_o[inn] *= 0.55 + 0.45 * np.abs(dz[inn]) / gw
            a_o *= np.where(side & (zl < 2.0), 0.8 + 0.1 * zl, 1.0).astype(np.float32)
            nl /= np.linalg.norm(nl, axis=1, keepdims=True)
            Nw = np.einsum("nij,nj->ni", box_R[j], nl)
            Nrm[sel] = Nw
            # ambient occlusion: tower base and neighbouring towers
            zbase = P[sel, 2] - box_base[j]
            a_o *= (1 - 0.35 * np.exp(-np.maximum(zbase, 0) / 5.0) * side).astype(np.float32)
            nbr = np.zeros(sel.size, np.float32)
            for dist in (6.0, 10.0, 14.0):
                qx = P[sel, 0] + Nw[:, 0] * dist
                qy = P[sel, 1] + Nw[:, 1] * dist
                tz = _map_sample(aom["topz"], aom["X0"], aom["Y1"], qx, qy, nearest=True)
                nbr += (tz > P[sel, 2]).astype(np.float32)
            a_o *= 1 - 0.12 * nbr * side
            ao[sel] = a_o
            alb[sel] = box_col[j]
            f0[sel] = 0.045
            shin[sel] = shin_plastic
            shadowed[sel] = True
        # mugs and cards
        for i, o in enumerate(objs):
            if o["type"] == "box":
                continue
            sel = np.flatnonzero(oid == OBJ0 + i)
            if not sel.size:
                continue
            if o["type"] == "cyl":
                d = P[sel, :2] - o["c"]
                r = np.hypot(d[:, 0], d[:, 1])
                top = P[sel, 2] > o["z1"] - 1e-3
                nn = np.zeros((sel.size, 3))
                nn[:, :2] = d / np.maximum(r, 1e-6)[:, None]
                nn[top] = (0, 0, 1)
                Nrm[sel] = nn
                coffee = top & (r < o["r"] - 4)
                alb[sel] = o["col"]
                alb[sel[coffee]] = srgb2lin((48, 28, 16)) * 0.8
                f0[sel] = 0.05
                shin[sel] = 120.0
                shadowed[sel] = True
            else:
                d = P[sel, :2] - o["c"]
                u = d @ o["u"]
                v = d @ o["v"]
                cosi = np.abs(D[sel, 2])
                alb[sel] = o["tex"].sample(u, v, fp[sel] / np.sqrt(np.maximum(cosi, 0.05)))
                Nrm[sel] = (0, 0, 1)
                f0[sel] = 0.03
                shin[sel] = 9.0
                shadowed[sel] = True
        # ---------------------------------------------------------- lighting
        V = -D
        NdV = np.clip(_dot3(Nrm, V), 0, 1).astype(np.float32)
        # the radiance accumulates straight in this chunk's rows of buf
        rad = buf[carry : carry + s1 - s0].reshape(n, 3)
        np.multiply(
            alb * (amb["col"] * amb["E"])[None, :],
            (ao * (0.55 + 0.45 * Nrm[:, 2]))[:, None],
            out=rad,
        )
        Rv_z = 2 * NdV * Nrm[:, 2] - V[:, 2]  # z of the mirrored view ray
        env = (amb["col"] * amb["E"] * 1.6)[None, :] * (0.25 + 0.75 * np.clip(Rv_z, 0, 1))[:, None]
        fres_v = f0 + (1 - f0) * (1 - NdV) ** 5 * (f0 > 0)
        rad += env * (fres_v * ao)[:, None] * 0.8
        for L in lights:
            if L["kind"] == "dir":
                ldir = np.broadcast_to(L["dir"], P.shape)
                E = np.full(n, L["I"], np.float32)
                dl = np.full(n, 5000.0)
            else:
                Lv = L["S"] - P
                d2 = _dot3(Lv, Lv)
                dl = np.sqrt(d2)
                ldir = Lv / dl[:, None]
                E = (L["I"] / d2).astype(np.float32)
            if L["cone"] is not None:
                axis, co, ci = L["cone"]
                ca = -(ldir @ axis)
                x = np.clip((ca - co) / (ci - co), 0, 1)
                E = E * (x * x * (3 - 2 * x)).astype(np.float32)
            NdL = _dot3(Nrm, ldir).astype(np.float32)
            lit = (NdL > 0) & (E > 0)
            vis = np.zeros(n, np.float32)
            vis[lit & ~shadowed] = 1.0
            tsel = np.flatnonzero(lit & shadowed)
            Ps = P.take(tsel, 0) + Nrm.take(tsel, 0) * 0.03
            vis[tsel] = _shadow_vis(Ps, L, occ, rng)
            Ee = E * np.clip(NdL, 0, None) * vis
            rad += alb * L["col"][None, :] * Ee[:, None]
            Hh = ldir + V
            Hh /= np.sqrt(_dot3(Hh, Hh))[:, None]
            NdH = np.clip(_dot3(Nrm, Hh), 0, 1)
            alpha = L["rad"] / dl
            sh = 1.0 / (1.0 / shin + alpha**2 / 2.0)
            LdH = np.clip(_dot3(ldir, Hh), 0, 1)
            fres = f0 + (1 - f0) * (1 - LdH) ** 5 * (f0 > 0)
            spec = ((sh + 8) / 8) * NdH**sh * fres
            rad += L["col"][None, :] * (Ee * spec).astype(np.float32)[:, None]
        # box filter the complete pixel rows into img, as the whole sub-sample image's
        # .reshape(h, SS, w, SS, 3).mean((1, 3)) would: numpy adds the (0,0), (0,1), (1,0),
        # (1,1) sub-samples in turn, then divides
        rows = carry + s1 - s0
        done = rows // SS * SS
        sub = buf[:done].reshape(done // SS, SS, cam.w, SS, 3)
        acc = img[(s0 - carry) // SS : (s0 - carry + done) // SS]
        acc[:] = sub[:, 0, :, 0]
        for i in range(SS):
            for j in range(SS):
                if i or j:
                    acc += sub[:, i, :, j]
        acc /= SS * SS
        carry = rows - done
        buf[:carry] = buf[done:rows]
    return img


# ---------------------------------------------------------------- camera pipeline
def develop(lin, rng, kind, cam, lights, amb):
    h, w = lin.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xx - cam.K[0, 2]) ** 2 + (yy - cam.K[1, 2]) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    vig = rng.uniform(0.08, 0.35) if kind == "mounted" else rng.uniform(0.05, 0.25)
    lin = lin * (1 - vig * r2)[..., None]
    sig = rng.uniform(0.3, 1.2)
    lin = cv2.GaussianBlur(lin, (0, 0), sig)
    # white balance: a partial, slightly wrong correction of the scene light
    ill = lights[0]["col"] * 1.0 + amb["col"] * amb["E"]
    ill = ill / ill[1]
    alpha = rng.uniform(0.45, 1.0)
    gains = (1.0 / ill) ** alpha * (1 + rng.normal(0, 0.025, 3))
    gains = gains / gains[1]
    lin = lin * gains.astype(np.float32)
    # auto exposure
    lum = lin @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    ref = np.percentile(lum[::4, ::4], 97)
    lin = lin * np.float32(rng.uniform(0.62, 0.85) / max(ref, 1e-6))
    # sensor noise (shot + read)
    a = rng.uniform(0.0001, 0.0010)
    b = rng.uniform(0.0008, 0.003)
    noise = rng.standard_normal(lin.shape).astype(np.float32)
    lin = lin + noise * np.sqrt(np.maximum(lin, 0) * a + b * b)
    if kind == "phone":
        lin = cv2.GaussianBlur(lin, (0, 0), rng.uniform(0.4, 0.8))  # demosaic / noise reduction
    # highlight knee + tone curve
    knee = 0.85
    hi = lin > knee  # (lin is this function's own array)
    lin[hi] = knee + (1 - knee) * np.tanh((lin[hi] - knee) / (1 - knee))
    y = lin2srgb(lin).astype(np.float32)
    k = rng.uniform(0.0, 0.35) if kind == "mounted" else rng.uniform(0.15, 0.45)
    y = (1 - k) * y + k * (y * y * (3 - 2 * y))
    if kind == "phone":
        g = y @ np.array([0.299, 0.587, 0.114], np.float32)
        y = g[..., None] + (y - g[..., None]) * rng.uniform(1.02, 1.25)
        blur = cv2.GaussianBlur(y, (0, 0), rng.uniform(1.0, 1.8))
        y = y + rng.uniform(0.3, 0.9) * (y - blur)
    y = np.clip(y * 255 + rng.uniform(-0.5, 0.5, y.shape), 0, 255).astype(np.uint8)
    bgr = np.ascontiguousarray(y[..., ::-1])
    info = {
        "blur_px": round(float(sig), 3),
        "vignette": round(float(vig), 3),
        "noise": [round(a, 5), round(b, 4)],
        "wb_alpha": round(float(alpha), 3),
    }
    if kind == "phone":
        q = int(rng.integers(70, 96))
        ok, enc = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, q])
        bgr = cv2.imdecode(enc, cv2.IMREAD_COLOR)
        info["jpeg_quality"] = q
        return bgr, enc.tobytes(), ".jpg", info
    if rng.random() < 0.5:  # webcam MJPEG stream
        q = int(rng.integers(82, 97))
        ok, enc = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, q])
        bgr = cv2.imdecode(enc, cv2.IMREAD_COLOR)
        info["mjpeg_quality"] = q
    ok, enc = cv2.imencode(".png", bgr)
    return bgr, enc.tobytes(), ".png", info


# ---------------------------------------------------------------- truth
def _hidden(points, cam, occ):
    """True where the segment point -> camera is blocked by any solid."""
    P = np.asarray(points, np.float64)
    D = cam.C[None, :] - P
    blocked = np.zeros(len(P), bool)
    for o, _ in occ:
        tn, tf = obj_interval(o, P, D)
        blocked |= (tn <= tf) & (tf > 1e-6) & (tn < 1.0)
    return blocked


def _visible_fraction(points, cam, occ):
    uv = cam.project(points)
    ok = np.isfinite(uv[:, 0])
    ok[ok] = cam.inside(uv[ok])
    ok &= ~_hidden(points, cam, occ)
    return ok


def make_truth(scene, cam, meta):
    objs = scene["objs"]
    occ = _occluders(scene)
    g = (np.arange(7) + 0.5) / 7 - 0.5
    gu, gv = np.meshgrid(g, g)
    grid = np.stack([gu.ravel(), gv.ravel()], 1) * FOOT
    board_sites, exp_sites, unseen = [], [], []
    for city in range(6):
        for row in range(3):
            for col in range(3):
                key = (city, row, col)
                if key in scene["tops"]:
                    o = objs[scene["tops"][key]]
                    pl = np.concatenate([grid, np.full((len(grid), 1), o["h"][2])], 1)
                    pts = o["c"] + pl @ o["R"].T
                else:
                    sx, sy = site_centre(city, row, col)
                    pts = np.concatenate([grid + [sx, sy], np.zeros((len(grid), 1))], 1)
                pts = pts + [0, 0, 0.02]
                frac = float(_visible_fraction(pts, cam, occ).mean())
                entry = None
                if key in scene["board"]:
                    stack = scene["board"][key]
                    entry = {
                        "city": city,
                        "row": row,
                        "col": col,
                        "height": int(sum(k for _, k in stack)),
                        "owner": stack[-1][0],
                    }
                    board_sites.append(entry)
                if frac >= 0.5:
                    if entry is not None:
                        exp_sites.append(dict(entry))
                else:
                    unseen.append({"city": city, "row": row, "col": col})
    cards_exp, stacks = {}, {}
    gg = (np.arange(9) + 0.5) * 3.0
    for o in objs:
        if o["type"] != "card" or not o["top"]:
            continue
        pts = []
        for gc in (-15.0, 15.0):
            for a in gg:
                for b in gg:
                    u = gc - 13.5 + a
                    v = 38.0 - b
                    xy = o["c"] + u * o["u"] + v * o["v"]
                    pts.append([xy[0], xy[1], o["z"] + 0.02])
        frac = float(_visible_fraction(np.array(pts), cam, occ).mean())
        cell = [int(o["cell"][0]), int(o["cell"][1])]
        stacks[o["seat"]] = {"cell": cell, "grid_visible": round(frac, 4)}
        if frac >= 0.9:
            cards_exp[o["seat"]] = {"cell": cell}
    return {
        "board": {"sites": board_sites},
        "expected": {
            "colors": list(scene["colours"]),
            "sites": exp_sites,
            "unseen": unseen,
            "cards": cards_exp,
        },
        "card_stacks": stacks,
        "camera": cam.json(),
        "meta": meta,
    }


# ---------------------------------------------------------------- entry points
def make_textures(rng):
    """The board's art, the table (its cloth or wood and its extent) and the gloss:
    the textures render_linear takes, and the board's and table's descriptions."""
    board_img, binfo = make_board_texture(rng)
    table_img, tinfo = make_table_texture(rng)
    hx, hy = rng.uniform(560, 900), rng.uniform(440, 700)
    ox, oy = rng.uniform(-80, 80, 2)
    table_box = (np.array([ox, oy, TABLE_Z - 13.0]), np.array([hx, hy, 13.0]))
    textures = {
        "board": Tex(board_img, BOARD_PPM, -BOARD_W / 2, BOARD_H / 2, scale=0.86),
        "board_edge": binfo["edge"],
        "board_f0": float(rng.uniform(0.02, 0.05)),
        "table": Tex(table_img, TABLE_PPM, 0.0, 0.0, wrap=True, scale=0.8),
        "table_mat": tinfo,
        "table_box": table_box,
        "plastic_shin": float(rng.uniform(40, 150)),
    }
    return textures, binfo, tinfo


def _shoot(seed, kind="mounted"):
    if kind not in ("mounted", "phone"):
        raise ValueError(f"kind must be 'mounted' or 'phone', not {kind!r}")
    rng = np.random.default_rng(seed)
    cam, cmeta = make_camera(rng, kind)
    scene = make_scene(rng, kind)
    lights, amb, ldesc = make_lights(rng, kind)
    textures, binfo, tinfo = make_textures(rng)
    lin = render_linear(scene, cam, lights, amb, rng, textures)
    img, data, ext, dev = develop(lin, rng, kind, cam, lights, amb)
    meta = dict(cmeta)
    meta.update(
        {
            "light": ldesc,
            "kind": kind,
            "seed": int(seed),
            "edition": scene["edition"],
            "rvec": [float(v) for v in cam.rvec],
            "tvec": [float(v) for v in cam.tvec],
            "camera_position_mm": [round(float(v), 3) for v in cam.C],
            "board_style": binfo["style"],
            "table": tinfo["kind"],
            "spare_blocks": scene["extra"]["spare_blocks"],
            "mug": scene["extra"]["mug"],
            "develop": dev,
            "site_blocks": [
                {
                    "city": c,
                    "row": r,
                    "col": k,
                    "blocks": [{"color": n, "storeys": s} for n, s in st],
                }
                for (c, r, k), st in sorted(scene["board"].items())
            ],
        }
    )
    truth = make_truth(scene, cam, meta)
    return img, truth, data, ext


def shoot(seed: int, kind: str = "mounted"):
    """A rendered photo (BGR uint8) and its truth dict, fully determined by (seed, kind)."""
    # (imported here: the renderer itself imports nothing of the project's)
    from tests.shots import shared

    return shared(("raycast", seed, kind), lambda: _shoot(seed, kind)[:2])


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m tests.vision.raycast", description=__doc__.splitlines()[0]
    )
    ap.add_argument("outdir")
    ap.add_argument("--kind", choices=["mounted", "phone"], default="mounted")
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    os.makedirs(a.outdir, exist_ok=True)
    for seed in range(a.seed, a.seed + a.n):
        t0 = time.time()
        img, truth, data, ext = _shoot(seed, a.kind)
        stem = os.path.join(a.outdir, f"{a.kind}_{seed}")
        with open(stem + ext, "wb") as f:
            f.write(data)
        with open(stem + ".json", "w") as f:
            json.dump(truth, f, indent=1)
        print(
            f"{stem}{ext}  {time.time() - t0:.1f}s  sites={len(truth['board']['sites'])} "
            f"visible={len(truth['expected']['sites'])} unseen={len(truth['expected']['unseen'])} "
            f"cards={sorted(truth['expected']['cards'])}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
