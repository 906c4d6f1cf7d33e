"""Procedural textures: the printed board, the table top, the card faces.

The board art is the same physical print in every photo, so it is made once (cached)
from the profile geometry; per-photo variety comes from light, camera and table.
Textures are sRGB uint8 (BGR order, as OpenCV draws) except the table, which is a
luminance pattern tinted per render.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from companion.sim.layout import Layout, default_layout

BOARD_PPM = 4  # texture pixels per millimetre of the finest board level
CARD_PPM = 5
TABLE_PPM = 1.0
TABLE_HALF_MM = 1024.0


def bgr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return (int(rgb[2]), int(rgb[1]), int(rgb[0]))


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: tuple[int, int],
                  ) -> np.ndarray:
    """Zero-mean, unit-ish noise, smooth over ``shape / cells`` pixels."""
    small = rng.standard_normal((max(2, cells[0]), max(2, cells[1]))).astype(np.float32)
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_CUBIC)


class BoardTexture:
    """Board print at one resolution: image (BGR uint8) and its px <-> mm mapping."""

    def __init__(self, image: np.ndarray, ppm: float, layout: Layout) -> None:
        self.image = image
        self.bgra = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
        self.ppm = ppm
        w, h = layout.board_size
        # texture pixel (i, j) centre -> board mm: x = -w/2 + (i + .5)/ppm, y = h/2 - (j + .5)/ppm
        self.px_to_mm = np.array([[1 / ppm, 0, -w / 2 + 0.5 / ppm],
                                  [0, -1 / ppm, h / 2 - 0.5 / ppm],
                                  [0, 0, 1]], np.float64)


def _board_art(layout: Layout, ppm: int) -> np.ndarray:
    """Draw the board print at ``ppm`` pixels per mm (BGR uint8)."""
    rng = np.random.default_rng(1994)
    bw, bh = layout.board_size
    W, H = int(round(bw * ppm)), int(round(bh * ppm))

    def X(x: float) -> int:
        return int(round((x + bw / 2) * ppm))

    def Y(y: float) -> int:
        return int(round((bh / 2 - y) * ppm))

    img = np.empty((H, W, 3), np.float32)
    img[:] = bgr((50, 60, 80))
    img += _smooth_noise(rng, (H, W), (H // 60, W // 60))[..., None] * 7
    img += _smooth_noise(rng, (H, W), (H // 6, W // 6))[..., None] * 3
    img = np.clip(img, 0, 255).astype(np.uint8)
    # faint street map under everything: random thin lines
    for _ in range(90):
        x0, y0 = rng.uniform(-bw / 2, bw / 2), rng.uniform(-bh / 2, bh / 2)
        ang = rng.choice([0.0, np.pi / 2]) + rng.normal(0, 0.05)
        ln = rng.uniform(30, 160)
        p0 = (X(x0), Y(y0))
        p1 = (X(x0 + ln * np.cos(ang)), Y(y0 + ln * np.sin(ang)))
        cv2.line(img, p0, p1, (92, 78, 66), max(1, int(0.8 * ppm)), cv2.LINE_AA)
    # skyline art in the band between the city rows
    x = -bw / 2 + 30
    while x < bw / 2 - 30:
        wdt = rng.uniform(6, 16)
        hgt = rng.uniform(5, 26)
        tone = rng.uniform(64, 84)
        cv2.rectangle(img, (X(x), Y(-14 + hgt)), (X(x + wdt), Y(-14)),
                      (tone + 22, tone + 8, tone), -1)
        for wy in np.arange(-12, -14 + hgt - 2, 3.0):
            for wx in np.arange(x + 1.5, x + wdt - 1.5, 3.0):
                if rng.random() < 0.5:
                    cv2.rectangle(img, (X(wx), Y(wy + 1)), (X(wx + 1), Y(wy)),
                                  (tone + 40, tone + 36, tone + 28), -1)
        x += wdt + rng.uniform(0.5, 4)
    # score track around the edge and a frame line inside it
    tw, gap = 8.0, 1.0
    inset = 2.0
    for horizontal in (True, False):
        length = bw if horizontal else bh
        n = int((length - 2 * inset) // (tw + gap))
        start = -(n * (tw + gap) - gap) / 2
        for k in range(n):
            a = start + k * (tw + gap)
            for sgn in (1, -1):
                if horizontal:
                    x0, x1 = a, a + tw
                    y1 = sgn * (bh / 2 - inset)
                    y0 = y1 - sgn * tw
                else:
                    y0, y1 = a, a + tw
                    x1 = sgn * (bw / 2 - inset)
                    x0 = x1 - sgn * tw
                col = (150, 170, 180) if k % 5 else (90, 150, 200)
                cv2.rectangle(img, (X(min(x0, x1)), Y(max(y0, y1))),
                              (X(max(x0, x1)) - 1, Y(min(y0, y1)) - 1), col, -1)
                if k % 10 == 0:
                    cv2.putText(img, str(k), (X(min(x0, x1) + 1), Y(min(y0, y1) + 2)),
                                cv2.FONT_HERSHEY_PLAIN, 0.13 * ppm, (40, 40, 50),
                                max(1, ppm // 3), cv2.LINE_AA)
    fi = inset + tw + 2.0
    cv2.rectangle(img, (X(-bw / 2 + fi), Y(bh / 2 - fi)), (X(bw / 2 - fi), Y(-bh / 2 + fi)),
                  (80, 130, 150), max(1, int(1.2 * ppm)), cv2.LINE_AA)
    # city plates, site squares with printed grid lines, city names
    half = (layout.rows / 2) * layout.pitch + 1.5
    sq = layout.pitch - 4.0
    for ci, (cx, cy) in enumerate(layout.city_centres):
        plate = np.array([[X(cx - half), Y(cy + half)], [X(cx + half), Y(cy + half)],
                          [X(cx + half), Y(cy - half)], [X(cx - half), Y(cy - half)]], np.int32)
        cv2.fillConvexPoly(img, plate, (112, 120, 126), cv2.LINE_AA)
        cv2.polylines(img, [plate], True, (40, 44, 48), max(1, int(0.8 * ppm)), cv2.LINE_AA)
        for r in range(layout.rows):
            for c in range(layout.cols):
                sx, sy = layout.site_xy[ci * layout.rows * layout.cols + r * layout.cols + c]
                x0, x1 = X(sx - sq / 2), X(sx + sq / 2)
                y0, y1 = Y(sy + sq / 2), Y(sy - sq / 2)
                base = np.array(bgr((176, 170, 158)), np.float32)
                img[y0:y1, x0:x1] = np.clip(base + rng.normal(0, 3, 3), 0, 255)
                # low-contrast plot artwork
                for _ in range(int(rng.integers(2, 6))):
                    px0, py0 = rng.uniform(x0, x1 - 8), rng.uniform(y0, y1 - 8)
                    pw, ph = rng.uniform(6, (x1 - x0) / 2), rng.uniform(6, (y1 - y0) / 2)
                    d = rng.uniform(-14, 10)
                    cv2.rectangle(img, (int(px0), int(py0)),
                                  (int(min(px0 + pw, x1 - 1)), int(min(py0 + ph, y1 - 1))),
                                  tuple(float(np.clip(v + d, 0, 255)) for v in base), -1)
                cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), (58, 58, 62),
                              max(1, int(0.6 * ppm)), cv2.LINE_AA)
        name = layout.city_names[ci]
        scale = 0.2 * ppm
        (tw_px, th_px), _ = cv2.getTextSize(name, cv2.FONT_HERSHEY_DUPLEX, scale, 1)
        ny = cy + half + 7 if cy > 0 else cy - half - 2.5 - th_px / ppm
        cv2.putText(img, name, (X(cx) - tw_px // 2, Y(ny)), cv2.FONT_HERSHEY_DUPLEX, scale,
                    (200, 215, 225), max(1, ppm // 2), cv2.LINE_AA)
    img = img.astype(np.float32) + rng.normal(0, 2.0, img.shape).astype(np.float32)
    # the fiducials with their white quiet zone
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.marker_dictionary))
    side_px = int(round(layout.marker_size * ppm))
    q = layout.marker_size / 2 + layout.marker_quiet
    for mid, (mx, my) in layout.marker_centres.items():
        img[Y(my + q):Y(my - q), X(mx - q):X(mx + q)] = bgr((236, 236, 230))
        mark = cv2.aruco.generateImageMarker(dictionary, mid, side_px).astype(np.float32)
        mark = np.float32(22) + mark * np.float32((236 - 22) / 255)
        s = layout.marker_size / 2
        img[Y(my + s):Y(my + s) + side_px, X(mx - s):X(mx - s) + side_px] = mark[..., None]
    return np.clip(img, 0, 255).astype(np.uint8)


@lru_cache(maxsize=2)
def board_textures(layout: Layout | None = None) -> tuple[BoardTexture, ...]:
    """The board print as a small mip chain: 4, 2 and 1 px/mm (cached)."""
    lay = layout or default_layout()
    fine = _board_art(lay, BOARD_PPM)
    out = [BoardTexture(fine, BOARD_PPM, lay)]
    img = fine
    ppm = BOARD_PPM
    while ppm > 1:
        img = cv2.resize(img, (img.shape[1] // 2, img.shape[0] // 2),
                         interpolation=cv2.INTER_AREA)
        ppm //= 2
        out.append(BoardTexture(img, ppm, lay))
    return tuple(out)


@lru_cache(maxsize=1)
def table_texture() -> np.ndarray:
    """Wood-plank luminance (uint8, 1 px/mm, 2048 mm square); tinted per render."""
    rng = np.random.default_rng(2700)
    n = int(2 * TABLE_HALF_MM * TABLE_PPM)
    lum = np.empty((n, n), np.float32)
    y = 0
    while y < n:
        pw = int(rng.uniform(90, 170) * TABLE_PPM)
        ys = slice(y, min(n, y + pw))
        hh = ys.stop - ys.start
        warp = _smooth_noise(rng, (hh, n), (3, n // 250)) * 18
        period = rng.uniform(6, 12)
        yy = np.arange(hh, dtype=np.float32)[:, None]
        grain = np.sin(2 * np.pi * (yy + warp) / period)
        grain2 = _smooth_noise(rng, (hh, n), (max(2, hh // 6), n // 50))
        base = rng.uniform(150, 205)
        band = _smooth_noise(rng, (hh, n), (2, n // 300)) * 10
        lum[ys] = base + 9 * grain * (0.6 + 0.4 * grain2) + band + 6 * grain2
        # butt joints between plank pieces
        for _ in range(int(rng.integers(0, 3))):
            jx = int(rng.integers(0, n))
            lum[ys, jx:jx + 2] *= 0.55
        lum[ys.start:ys.start + 2] *= 0.5
        y += pw
    for _ in range(12):  # knots
        kx, ky = rng.integers(0, n, 2)
        a, b = rng.uniform(6, 16), rng.uniform(3, 7)
        cv2.ellipse(lum, (int(kx), int(ky)), (int(a), int(b)), 0, 0, 360, 110, -1, cv2.LINE_AA)
        cv2.ellipse(lum, (int(kx), int(ky)), (int(a * 1.8), int(b * 2.0)), 0, 0, 360, 140, 2,
                    cv2.LINE_AA)
    lum += rng.normal(0, 2.5, lum.shape).astype(np.float32)
    lum = np.asarray(cv2.GaussianBlur(lum, (0, 0), 0.7))
    return np.clip(lum, 0, 255).astype(np.uint8)


@lru_cache(maxsize=32)
def card_face(row: int, col: int, art_seed: int = 0, layout: Layout | None = None) -> np.ndarray:
    """A building card of kind (row, col): frame, two identical 3 x 3 grids, artwork (BGR)."""
    lay = layout or default_layout()
    ppm = CARD_PPM
    cw, ch = lay.card_size
    W, H = int(round(cw * ppm)), int(round(ch * ppm))
    rng = np.random.default_rng([7, row, col, art_seed])
    img = np.empty((H, W, 3), np.float32)
    img[:] = bgr((236, 230, 214))
    img += rng.normal(0, 2.0, img.shape).astype(np.float32)
    fr = int(2.5 * ppm)
    img[:fr] = img[-fr:] = bgr((46, 50, 66))
    img[:, :fr] = img[:, -fr:] = bgr((46, 50, 66))

    def X(a: float) -> int:  # card-local mm, a to the right of the centre line
        return int(round((a + cw / 2) * ppm))

    def Yt(b: float) -> int:  # mm below the top edge
        return int(round(b * ppm))

    # artwork in the lower part: sky, skyline, street
    art_top = lay.card_top_offset + 3 * lay.card_cell + 5
    y0, y1, x0, x1 = Yt(art_top), H - fr - int(1.5 * ppm), fr + int(1.5 * ppm), W - fr - int(
        1.5 * ppm)
    sky = np.linspace(0, 1, y1 - y0, dtype=np.float32)[:, None, None]
    top_c = np.array(bgr(tuple(rng.integers(150, 230, 3))), np.float32)  # type: ignore[arg-type]
    bot_c = np.array(bgr((225, 215, 190)), np.float32)
    img[y0:y1, x0:x1] = top_c * (1 - sky) + bot_c * sky
    xb = x0
    while xb < x1:
        bwid = int(rng.uniform(5, 13) * ppm)
        bh = int(rng.uniform(0.25, 0.85) * (y1 - y0))
        bc = np.array(bgr(tuple(rng.integers(60, 160, 3))), np.float32)  # type: ignore[arg-type]
        img[y1 - bh:y1, xb:min(xb + bwid, x1)] = bc
        for wy in range(y1 - bh + 4, y1 - 4, 8):
            for wx in range(xb + 3, min(xb + bwid, x1) - 4, 7):
                if rng.random() < 0.6:
                    img[wy:wy + 4, wx:wx + 3] = bc * 0.6 + 90
        xb += bwid + int(rng.uniform(0, 2) * ppm)
    cv2.rectangle(img, (x0, y0), (x1 - 1, y1 - 1), bgr((60, 60, 70)), 2, cv2.LINE_AA)
    # the two identical grids
    cell = lay.card_cell
    for gx in lay.card_grid_offsets:
        for r in range(3):
            for c in range(3):
                a0 = gx + (c - 1.5) * cell
                b0 = lay.card_top_offset + r * cell
                colr = bgr(lay.card_marked_rgb) if (r, c) == (row, col) else bgr((205, 205, 200))
                cv2.rectangle(img, (X(a0), Yt(b0)), (X(a0 + cell) - 1, Yt(b0 + cell) - 1),
                              colr, -1)
        for k in range(4):
            a = gx + (k - 1.5) * cell
            cv2.line(img, (X(a), Yt(lay.card_top_offset)),
                     (X(a), Yt(lay.card_top_offset + 3 * cell)), (40, 40, 40), 2, cv2.LINE_AA)
            b = lay.card_top_offset + k * cell
            cv2.line(img, (X(gx - 1.5 * cell), Yt(b)), (X(gx + 1.5 * cell), Yt(b)),
                     (40, 40, 40), 2, cv2.LINE_AA)
    return np.clip(img, 0, 255).astype(np.uint8)


@lru_cache(maxsize=1)
def card_back(layout: Layout | None = None) -> np.ndarray:
    """The back of a card (for face-down piles lying around)."""
    lay = layout or default_layout()
    W, H = int(round(lay.card_size[0] * CARD_PPM)), int(round(lay.card_size[1] * CARD_PPM))
    img = np.empty((H, W, 3), np.uint8)
    img[:] = bgr((40, 70, 120))
    for k in range(-H, W, 12):
        cv2.line(img, (k, 0), (k + H, H), bgr((60, 95, 150)), 3, cv2.LINE_AA)
    cv2.rectangle(img, (8, 8), (W - 9, H - 9), bgr((220, 200, 120)), 4, cv2.LINE_AA)
    return img
