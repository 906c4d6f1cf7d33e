"""A fourth, independent renderer of the reference table: Mitsuba 3 path tracing.

The renderers the reader was built beside (``companion/sim``,
``tests/vision/synth.py`` and ``tests/vision/raycast.py``) share the project's
own idea of a table. This one is written from ../shared/spec/reference-board.md
alone, with a physically based path tracer: light bounces between blocks and
board (a red tower tints the print beside it), plastic is a rough dielectric
coat over a diffuse base (its highlights and Fresnel sheen are the renderer's,
not a formula of ours), storey grooves are real recesses, and the board art,
cards, table and lamps are drawn here, differently from the others. Photos are
written with truth files in the format ``companion evaluate --folder`` reads.

Not part of ``make test``: Mitsuba is a large download, and a photo takes
30-100 s at 32 samples a pixel on two cores (the ``scalar_rgb`` variant: the
vectorised ``llvm_ad_rgb`` wants LLVM 18 or newer, and Debian 12 has 14-16).
It runs in a virtual environment of its own::

    python3 -m venv /tmp/mts && /tmp/mts/bin/pip install mitsuba opencv-python-headless
    /tmp/mts/bin/python tests/vision/mitsuba_table.py OUT --kind mounted --n 24 --seed 100 --spp 32

It imports nothing from ``companion``: the truth's visibility (half a top in
view, as the other renderers judge it) is found with Mitsuba's own ray tests.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

import cv2
import numpy as np

# ----------------------------------------------------------------- the spec's numbers
BOARD_W, BOARD_H, BOARD_T = 520.0, 380.0, 3.0
CITY_X, CITY_Y = (-140.0, 0.0, 140.0), (70.0, -70.0)
PITCH, FOOT, STOREY = 34.0, 26.0, 12.0
MARKERS = {0: (-220.0, 150.0), 1: (220.0, 150.0), 2: (220.0, -150.0), 3: (-220.0, -150.0)}
MARKER_MM, QUIET_MM = 40.0, 8.0
SETS = {
    "classic": {"red": (190, 35, 40), "blue": (35, 75, 170), "green": (40, 140, 70),
                "black": (35, 35, 38)},
    "2017": {"orange": (235, 120, 30), "yellow": (240, 200, 40), "purple": (120, 60, 150),
             "blue": (40, 110, 200)},
}
SUPPLY = (4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2) + (1,) * 11  # storeys of one colour's blocks
CARD_W, CARD_H, CARD_CELL = 63.0, 88.0, 9.0
SEATS = ("S", "W", "N", "E")
SEAT_UP = {"S": (0.0, 1.0), "N": (0.0, -1.0), "W": (1.0, 0.0), "E": (-1.0, 0.0)}
PX_MM = 4.0  # texture pixels per millimetre


def site_centre(city: int, row: int, col: int) -> tuple[float, float]:
    return CITY_X[city % 3] + (col - 1) * PITCH, CITY_Y[city // 3] + (1 - row) * PITCH


def srgb_to_linear(c):
    c = np.asarray(c, float) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def kelvin_rgb(k: float) -> np.ndarray:
    """A blackbody's colour, normalised to its green (Tanner Helland's fit)."""
    t = k / 100.0
    r = 255.0 if t <= 66 else 329.7 * (t - 60) ** -0.1332
    g = 99.47 * math.log(t) - 161.1 if t <= 66 else 288.1 * (t - 60) ** -0.0755
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5 * math.log(t - 10) - 305.0)
    rgb = srgb_to_linear(np.clip([r, g, b], 1, 255))
    return rgb / rgb[1]


# ----------------------------------------------------------------- textures
def board_art(rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """The board's print (BGR, north at the top row): a style of its own."""
    w, h = int(BOARD_W * PX_MM), int(BOARD_H * PX_MM)
    style = rng.choice(["blueprint", "parchment", "mint", "slate", "sunset"])
    pal = {
        "blueprint": ((150, 95, 40), (175, 120, 60), (230, 210, 180), (120, 60, 20)),
        "parchment": ((170, 205, 225), (140, 180, 205), (90, 110, 130), (200, 225, 240)),
        "mint": ((190, 225, 195), (160, 200, 170), (70, 110, 80), (215, 240, 220)),
        "slate": ((80, 75, 70), (105, 100, 95), (190, 190, 185), (55, 50, 48)),
        "sunset": ((120, 170, 235), (95, 140, 215), (60, 60, 140), (170, 205, 245)),
    }[style]
    base, plate, ink, street = (np.array(c, float) for c in pal)
    img = np.empty((h, w, 3), np.uint8)
    img[:] = base

    def px(x: float, y: float) -> tuple[int, int]:
        return int(round((x + BOARD_W / 2) * PX_MM)), int(round((BOARD_H / 2 - y) * PX_MM))

    # a boulevard between the two rows of cities, and streets round every city
    a, b = px(-BOARD_W / 2, 12), px(BOARD_W / 2, -12)
    cv2.rectangle(img, a, b, street.tolist(), -1)
    for cx in CITY_X:
        for cy in CITY_Y:
            a, b = px(cx - 62, cy + 62), px(cx + 62, cy - 62)
            cv2.rectangle(img, a, b, street.tolist(), -1)
            a, b = px(cx - 55, cy + 55), px(cx + 55, cy - 55)
            cv2.rectangle(img, a, b, plate.tolist(), -1)
            for r in range(3):
                for c in range(3):
                    sx, sy = cx + (c - 1) * PITCH, cy + (1 - r) * PITCH
                    a, b = px(sx - 14, sy + 14), px(sx + 14, sy - 14)
                    fill = base + rng.normal(0, 10, 3)
                    cv2.rectangle(img, a, b, fill.tolist(), -1)
                    cv2.rectangle(img, a, b, ink.tolist(), 3)
                    if rng.random() < 0.5:  # a little house drawn on the site
                        q = px(sx - 5, sy + 5), px(sx + 5, sy - 5)
                        cv2.rectangle(img, q[0], q[1], (ink * 0.6 + fill * 0.4).tolist(), 2)
            # the city's name under it
            cv2.putText(img, ["MANHATTAN", "SYDNEY", "FRANKFURT", "HONG KONG", "SAO PAULO",
                              "CAIRO"][CITY_X.index(cx) + 3 * CITY_Y.index(cy)],
                        px(cx - 45, cy - 57), cv2.FONT_HERSHEY_SIMPLEX, 1.0, ink.tolist(), 2,
                        cv2.LINE_AA)
    # parks and dashes along the boulevard
    for x in np.arange(-240, 240, 18):
        a, b = px(x, 1), px(x + 9, -1)
        cv2.rectangle(img, a, b, (ink * 0.5 + street * 0.5).tolist(), -1)
    for _ in range(6):
        x, y = rng.uniform(-250, 250), rng.choice([rng.uniform(-185, -135), rng.uniform(135, 185)])
        cv2.circle(img, px(x, y), int(rng.uniform(4, 10) * PX_MM),
                   (plate * 0.7 + np.array([40, 90, 40]) * 0.3).tolist(), -1, cv2.LINE_AA)
    # a frame round the edge
    cv2.rectangle(img, px(-BOARD_W / 2 + 4, BOARD_H / 2 - 4), px(BOARD_W / 2 - 4, -BOARD_H / 2 + 4),
                  ink.tolist(), 6)
    # the markers: 40 mm, white quiet zone, top edge north
    dic = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    for mid, (mx, my) in MARKERS.items():
        q = int((MARKER_MM / 2 + QUIET_MM + 1) * PX_MM)
        c = px(mx, my)
        img[c[1] - q:c[1] + q, c[0] - q:c[0] + q] = 250
        side = int(MARKER_MM * PX_MM)
        m = cv2.aruco.generateImageMarker(dic, mid, side)
        y0, x0 = c[1] - side // 2, c[0] - side // 2
        img[y0:y0 + side, x0:x0 + side] = np.where(m[..., None] > 127, 250, 18)
    # paper grain and a soft mottling
    out = img.astype(np.float32) + rng.normal(0, 3.0, (h, w, 1)).astype(np.float32)
    out += cv2.resize(rng.normal(0, 6.0, (12, 16)).astype(np.float32), (w, h),
                      interpolation=cv2.INTER_CUBIC)[..., None]
    return np.clip(out, 0, 255).astype(np.uint8), str(style)


def card_face(cell: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A card (BGR, its top edge at the top row): frame, two grids, artwork."""
    w, h = int(CARD_W * PX_MM * 2), int(CARD_H * PX_MM * 2)
    s = PX_MM * 2
    img = np.full((h, w, 3), (228, 238, 242), np.uint8)
    cv2.rectangle(img, (4, 4), (w - 5, h - 5), (40, 40, 45), int(1.5 * s))
    # artwork below the grids
    art = (int(3 * s), int(40 * s), w - int(3 * s), h - int(4 * s))
    cv2.rectangle(img, art[:2], art[2:], tuple(int(v) for v in rng.integers(60, 200, 3)), -1)
    for _ in range(12):
        p = (int(rng.uniform(art[0], art[2])), int(rng.uniform(art[1], art[3])))
        cv2.circle(img, p, int(rng.uniform(3, 10) * s),
                   tuple(int(v) for v in rng.integers(0, 255, 3)), -1, cv2.LINE_AA)
    for gx in (-15.0, 15.0):
        x0 = CARD_W / 2 + gx - 1.5 * CARD_CELL
        y0 = 6.0
        for r in range(3):
            for c in range(3):
                a = (int((x0 + c * CARD_CELL) * s), int((y0 + r * CARD_CELL) * s))
                b = (int((x0 + (c + 1) * CARD_CELL) * s), int((y0 + (r + 1) * CARD_CELL) * s))
                fill = (40, 30, 210) if (r, c) == cell else (212, 212, 208)
                cv2.rectangle(img, a, b, fill, -1)
                cv2.rectangle(img, a, b, (70, 70, 70), 2)
    return img


def table_art(rng: np.random.Generator) -> tuple[np.ndarray, str]:
    kind = rng.choice(["oak", "walnut", "felt", "linen", "checks"])
    n = 1024
    if kind in ("oak", "walnut"):
        base = np.array((70, 120, 170) if kind == "oak" else (40, 60, 95), float)
        y = np.linspace(0, 1, n)[:, None]
        x = np.linspace(0, 1, n)[None, :]
        warp = cv2.resize(rng.normal(0, 1, (8, 8)).astype(np.float32), (n, n),
                          interpolation=cv2.INTER_CUBIC)
        grain = np.sin((y * 60 + warp * 2.0 + x * 0.3) * 2 * math.pi) * 0.5 + 0.5
        img = base * (0.8 + 0.3 * grain[..., None])
    elif kind == "checks":
        c1 = rng.integers(60, 220, 3).astype(float)
        yy, xx = np.mgrid[0:n, 0:n]
        chk = ((xx // 48 + yy // 48) % 2)[..., None]
        img = np.where(chk, c1, 235.0)
    else:
        base = rng.integers(30, 200, 3).astype(float)
        img = base + rng.normal(0, 8, (n, n, 1))
    return np.clip(img, 0, 255).astype(np.uint8), str(kind)


# ----------------------------------------------------------------- the board's state
def random_board(rng: np.random.Generator, colours: list[str]) -> dict:
    """Towers as stacks of blocks, each colour taken from its supply (a late-ish game)."""
    supply = {c: list(SUPPLY) for c in colours}
    for c in colours:
        rng.shuffle(supply[c])
    stacks: dict[tuple[int, int, int], list[tuple[str, int]]] = {}
    sites = [(ci, r, c) for ci in range(6) for r in range(3) for c in range(3)]
    n_moves = int(rng.integers(15, 20 * len(colours)))
    hot = [sites[i] for i in rng.choice(54, size=int(rng.integers(2, 8)), replace=False)]
    for _ in range(n_moves):
        col = colours[int(rng.integers(len(colours)))]
        if not supply[col]:
            continue
        site = hot[int(rng.integers(len(hot)))] if rng.random() < 0.35 else \
            sites[int(rng.integers(54))]
        stacks.setdefault(site, []).append((col, supply[col].pop()))
    return stacks


# ----------------------------------------------------------------- the scene
def _T():
    import mitsuba as mi
    return mi.ScalarTransform4f()


def build_scene(rng: np.random.Generator, kind: str, folder: str):
    edition = "classic" if rng.random() < 0.5 else "2017"
    palette = SETS[edition]
    n_players = int(rng.integers(2, 5))
    colours = list(rng.permutation(list(palette)))[:n_players]
    stacks = random_board(rng, colours)
    art, style = board_art(rng)
    tab, table = table_art(rng)
    # a rectangle's uv (0, 0) is its (-1, -1) corner, a bitmap's the image's top row
    cv2.imwrite(os.path.join(folder, "board.png"), art[::-1])
    cv2.imwrite(os.path.join(folder, "table.png"), tab)
    shapes: dict = {}
    gloss = float(rng.uniform(0.05, 0.3))
    shapes["board_top"] = {
        "type": "rectangle",
        "to_world": _T().scale([BOARD_W / 2, BOARD_H / 2, 1.0]),
        "bsdf": {"type": "roughplastic", "alpha": 0.35, "int_ior": 1.5,
                 "specular_reflectance": float(rng.uniform(0.1, 0.6)),
                 "diffuse_reflectance": {"type": "bitmap",
                                         "filename": os.path.join(folder, "board.png"),
                                         "filter_type": "bilinear"}},
    }
    shapes["board_body"] = {
        "type": "cube",
        "to_world": _T().translate([0, 0, -BOARD_T / 2 - 0.01]).scale(
            [BOARD_W / 2, BOARD_H / 2, BOARD_T / 2]),
        "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.35, 0.33, 0.3]}},
    }
    tx, ty = rng.uniform(700, 1100), rng.uniform(550, 900)
    shapes["table"] = {
        "type": "rectangle",
        "to_world": _T().translate([rng.uniform(-60, 60), rng.uniform(-60, 60), -BOARD_T])
        .scale([tx, ty, 1.0]),
        "bsdf": {"type": "roughplastic", "alpha": 0.5, "int_ior": 1.5,
                 "diffuse_reflectance": {"type": "bitmap",
                                         "filename": os.path.join(folder, "table.png"),
                                         "filter_type": "bilinear"}},
    }
    tops: dict[tuple[int, int, int], dict] = {}
    boxes: list[tuple[np.ndarray, np.ndarray, float]] = []  # centre, half sizes, yaw (deg)
    n = 0

    def plastic(rgb) -> dict:
        return {"type": "roughplastic", "alpha": gloss, "int_ior": 1.49,
                "diffuse_reflectance": {"type": "rgb",
                                                "value": (srgb_to_linear(rgb) * 0.92).tolist()}}

    for site, stack in stacks.items():
        sx, sy = site_centre(*site)
        z = 0.0
        for col, k in stack:
            jx, jy = np.clip(rng.normal(0, 1.0, 2), -2.5, 2.5)
            yaw = float(np.clip(rng.normal(0, 2.0), -5, 5))
            rgb = palette[col]
            for _ in range(k):
                hz = (STOREY - 0.6) / 2
                c = np.array([sx + jx, sy + jy, z + 0.6 + hz])
                shapes[f"b{n}"] = {
                    "type": "cube",
                    "to_world": _T().translate(c.tolist()).rotate([0, 0, 1], yaw)
                    .scale([FOOT / 2, FOOT / 2, hz]),
                    "bsdf": plastic(rgb)}
                n += 1
                # the groove under each storey: a recessed core
                shapes[f"g{n}"] = {
                    "type": "cube",
                    "to_world": _T().translate([sx + jx, sy + jy, z + 0.3]).rotate([0, 0, 1], yaw)
                    .scale([FOOT / 2 - 0.7, FOOT / 2 - 0.7, 0.3]),
                    "bsdf": plastic(rgb)}
                n += 1
                z += STOREY
            boxes.append((np.array([sx + jx, sy + jy, z - k * STOREY / 2]),
                          np.array([FOOT / 2, FOOT / 2, k * STOREY / 2]), yaw))
        tops[site] = {"centre": (sx + float(jx), sy + float(jy)), "z": z, "yaw": yaw,
                      "height": int(sum(k for _, k in stack)), "owner": stack[-1][0]}
    # spare blocks on the table
    for _ in range(int(rng.integers(0, 7))):
        ang = rng.uniform(0, 2 * math.pi)
        r = rng.uniform(300, 420)
        x, y = r * math.cos(ang) * 1.0, r * math.sin(ang) * 0.8
        if abs(x) < BOARD_W / 2 + 100 and abs(y) < BOARD_H / 2 + 100:
            continue
        k = int(rng.integers(1, 3))
        shapes[f"spare{n}"] = {
            "type": "cube",
            "to_world": _T().translate([x, y, -BOARD_T + k * STOREY / 2])
            .rotate([0, 0, 1], float(rng.uniform(0, 90)))
            .scale([FOOT / 2, FOOT / 2, k * STOREY / 2]),
            "bsdf": plastic(palette[colours[int(rng.integers(len(colours)))]])}
        n += 1
    # card stacks
    cards: dict[str, dict] = {}
    for seat in SEATS:
        if rng.random() < 0.2:
            continue
        cell = (int(rng.integers(3)), int(rng.integers(3)))
        up = np.array(SEAT_UP[seat])
        right = np.array([up[1], -up[0]])
        along = rng.uniform(-40, 40)
        edge = (BOARD_H / 2 if seat in "SN" else BOARD_W / 2)
        centre = -up * (edge + 12 + CARD_H / 2) + right * along
        ang = math.degrees(math.atan2(up[1], up[0])) - 90 + rng.uniform(-10, 10)
        count = int(rng.integers(1, 8))
        thick = 0.35 * count
        face = card_face(cell, rng)
        path = os.path.join(folder, f"card_{seat}.png")
        cv2.imwrite(path, face[::-1])
        shapes[f"cardbody_{seat}"] = {
            "type": "cube",
            "to_world": _T().translate([centre[0], centre[1], -BOARD_T + thick / 2])
            .rotate([0, 0, 1], ang).scale([CARD_W / 2, CARD_H / 2, thick / 2]),
            "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": [0.7, 0.7, 0.68]}}}
        shapes[f"card_{seat}"] = {
            "type": "rectangle",
            "to_world": _T().translate([centre[0], centre[1], -BOARD_T + thick + 0.02])
            .rotate([0, 0, 1], ang).scale([CARD_W / 2, CARD_H / 2, 1]),
            "bsdf": {"type": "roughplastic", "alpha": 0.3, "int_ior": 1.5,
                     "diffuse_reflectance": {"type": "bitmap", "filename": path,
                                             "filter_type": "bilinear"}}}
        cards[seat] = {"cell": cell, "centre": centre.tolist(), "angle": ang,
                       "z": -BOARD_T + thick + 0.02}
    # lights
    kelvin = float(rng.uniform(2600, 6800))
    col = kelvin_rgb(kelvin)
    tint = ""
    if rng.random() < 0.2:  # a coloured lamp
        hue = rng.uniform(0, 2 * math.pi)
        col = col * (1 + 0.35 * np.array([math.cos(hue), math.cos(hue - 2.1),
                                          math.cos(hue + 2.1)]))
        tint = f" tinted {math.degrees(hue):.0f}"
    az = rng.uniform(0, 2 * math.pi)
    hd, hz = rng.uniform(0, 800), rng.uniform(700, 1600)
    L = np.array([hd * math.cos(az), hd * math.sin(az), hz])
    rad = float(rng.choice([rng.uniform(3, 15), rng.uniform(30, 140)]))
    power = np.dot(L, L) / (rad * rad) * 0.35
    emitters = {"lamp": {"type": "sphere", "radius": rad,
                         "to_world": _T().translate(L.tolist()),
                         "emitter": {"type": "area",
                                     "radiance": {"type": "rgb",
                                                  "value": (col * power).tolist()}}}}
    amb_k = kelvin * rng.uniform(1.0, 1.6)
    amb = float(rng.uniform(0.08, 0.45))
    emitters["sky"] = {"type": "constant",
                       "radiance": {"type": "rgb",
                                    "value": (kelvin_rgb(min(amb_k, 9000)) * amb * 0.35).tolist()}}
    desc = (f"lamp r={rad:.0f}mm {kelvin:.0f}K{tint} at ({L[0]:.0f},{L[1]:.0f},{L[2]:.0f});"
            f" sky {amb:.2f}")
    if rng.random() < 0.35:
        a2, e2 = rng.uniform(0, 2 * math.pi), math.radians(rng.uniform(20, 60))
        d = np.array([math.cos(e2) * math.cos(a2), math.cos(e2) * math.sin(a2), math.sin(e2)])
        E2 = float(rng.uniform(0.15, 0.5))
        emitters["window"] = {"type": "directional", "direction": (-d).tolist(),
                              "irradiance": {"type": "rgb",
                                             "value": (kelvin_rgb(6500) * E2 * 0.35).tolist()}}
        desc += f"; window E={E2:.2f} az {math.degrees(a2):.0f} el {math.degrees(e2):.0f}"
    scene = {"type": "scene", "integrator": {"type": "path", "max_depth": 5}}
    scene.update(shapes)
    scene.update(emitters)
    meta = {"edition": edition, "colours": colours, "board_style": style, "table": table,
            "light": desc, "gloss": gloss}
    return scene, stacks, tops, boxes, cards, meta


def camera_for(rng: np.random.Generator, kind: str) -> dict:
    """Where the camera is and what it is (spec ranges), and its lens."""
    side = SEATS[int(rng.integers(4))]
    base = {"S": -90.0, "W": 180.0, "N": 90.0, "E": 0.0}[side]
    if kind == "mounted":
        dist, elev = rng.uniform(750, 1050), rng.uniform(50, 82)
        azim = base + rng.uniform(-25, 25)
        hfov = rng.uniform(58, 72)
        size = (1280, 720) if rng.random() < 0.7 else (1920, 1080)
        k1 = rng.uniform(-0.12, 0.02)
    else:
        dist, elev = rng.uniform(650, 1000), rng.uniform(40, 80)
        azim = base + rng.uniform(-45, 45)
        hfov = rng.uniform(55, 70)
        size = (1600, 1200) if rng.random() < 0.6 else (2000, 1500)
        k1 = rng.uniform(-0.08, 0.04)
    look = np.array([rng.uniform(-40, 40), rng.uniform(-30, 30), 0.0])
    e, a = math.radians(elev), math.radians(azim)
    pos = look + dist * np.array([math.cos(e) * math.cos(a), math.cos(e) * math.sin(a),
                                  math.sin(e)])
    roll = rng.uniform(-4, 4)
    w, h = size
    f = (w / 2) / math.tan(math.radians(hfov) / 2)
    K = np.array([[f, 0, w / 2 + rng.uniform(-8, 8)], [0, f, h / 2 + rng.uniform(-8, 8)],
                  [0, 0, 1]])
    D = np.array([k1, rng.uniform(-0.02, 0.05) * abs(k1) * 5, 0, 0, 0])
    return {"side": side, "distance_mm": dist, "elevation_deg": elev, "azimuth_deg": azim,
            "hfov_deg": hfov, "size": size, "look": look, "pos": pos, "roll": roll, "K": K, "D": D}


def cv_pose(cam: dict) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's rvec, tvec for the camera (x right, y down, z forward)."""
    fwd = cam["look"] - cam["pos"]
    fwd /= np.linalg.norm(fwd)
    right = np.cross(fwd, [0, 0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    r = math.radians(cam["roll"])
    right, down = (math.cos(r) * right + math.sin(r) * down,
                   -math.sin(r) * right + math.cos(r) * down)
    R = np.stack([right, down, fwd])
    t = -R @ cam["pos"]
    return cv2.Rodrigues(R)[0].reshape(3), t


# ----------------------------------------------------------------- rendering
def render(scene_dict: dict, cam: dict, spp: int, pad: float) -> np.ndarray:
    """The linear RGB picture a pinhole camera sees, ``pad`` wider on every side."""
    import mitsuba as mi

    w, h = cam["size"]
    W, H = int(round(w * (1 + 2 * pad))), int(round(h * (1 + 2 * pad)))
    K = cam["K"]
    f = K[0, 0]
    rvec, tvec = cv_pose(cam)
    R = cv2.Rodrigues(rvec)[0]
    # Mitsuba's camera looks along its +z with +y up and +x to the left
    origin = cam["pos"]
    target = origin + R[2]
    up = -R[1]
    fov = 2 * math.degrees(math.atan((W / 2) / f))
    # the principal point off centre: Mitsuba's principal_point_offset_x/y (fractions)
    # (a film's pixel k spans [k, k+1), OpenCV's is centred on k: half a pixel more)
    cx = K[0, 2] + (W - w) / 2 + 0.5
    cy = K[1, 2] + (H - h) / 2 + 0.5
    sensor = {
        "type": "perspective", "fov": fov, "fov_axis": "x",
        "principal_point_offset_x": -(cx - W / 2) / W,  # Mitsuba counts it the other way
        "principal_point_offset_y": -(cy - H / 2) / H,
        "near_clip": 10.0, "far_clip": 10000.0,
        "to_world": mi.ScalarTransform4f().look_at(origin=origin.tolist(), target=target.tolist(),
                                                   up=up.tolist()),
        "film": {"type": "hdrfilm", "width": W, "height": H, "rfilter": {"type": "gaussian"},
                 "pixel_format": "rgb"},
        "sampler": {"type": "independent", "sample_count": spp},
    }
    d = dict(scene_dict)
    d["sensor"] = sensor
    scene = mi.load_dict(d)
    img = np.array(mi.render(scene, spp=spp))
    return img, scene


def distort(img: np.ndarray, cam: dict, pad: float) -> np.ndarray:
    """The lens's distortion: each output pixel fetched from where the pinhole put it."""
    w, h = cam["size"]
    K, D = cam["K"], cam["D"]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    pts = np.stack([xs.ravel(), ys.ravel()], 1).reshape(-1, 1, 2)
    und = cv2.undistortPoints(pts, K, D, P=K).reshape(h, w, 2)
    H, W = img.shape[:2]
    mx = und[..., 0] + (W - w) / 2
    my = und[..., 1] + (H - h) / 2
    return cv2.remap(img, mx.astype(np.float32), my.astype(np.float32), cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_REFLECT)


def develop(lin: np.ndarray, rng: np.random.Generator, kind: str) -> tuple[np.ndarray, dict]:
    """Exposure, a partial auto white balance, sensor noise, tone curve, blur, vignetting."""
    h, w = lin.shape[:2]
    lum = lin.mean(axis=2)
    expo = 0.72 / max(float(np.percentile(lum, 98.5)), 1e-6)
    lin = lin * expo
    wb_alpha = float(rng.uniform(0.2, 0.9))
    means = lin.reshape(-1, 3).mean(0)
    gains = (means.mean() / np.maximum(means, 1e-6)) ** wb_alpha
    lin = lin * gains
    yy, xx = np.mgrid[0:h, 0:w]
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    vig = float(rng.uniform(0.05, 0.35))
    lin = lin * (1 - vig * r2)[..., None]
    shot, read = float(rng.uniform(0.0003, 0.003)), float(rng.uniform(0.001, 0.006))
    lin = lin + rng.normal(0, 1, lin.shape) * np.sqrt(np.clip(lin, 0, None) * shot + read ** 2)
    lin = np.clip(lin, 0, 1)
    srgb = np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055)
    out = (srgb * 255 + 0.5).astype(np.uint8)[..., ::-1]  # BGR
    blur = float(rng.uniform(0.4, 1.1))
    out = cv2.GaussianBlur(out, (0, 0), blur)
    return out, {"exposure": round(expo, 4), "wb_alpha": round(wb_alpha, 3),
                 "vignette": round(vig, 3), "noise": [round(shot, 5), round(read, 4)],
                 "blur_px": round(blur, 2)}


# ----------------------------------------------------------------- truth
def _visible(scene, points: np.ndarray, cam: dict) -> np.ndarray:
    """Each board-frame point in the frame and not hidden from the camera."""
    import mitsuba as mi

    rvec, tvec = cv_pose(cam)
    uv = cv2.projectPoints(points.astype(np.float64), rvec, tvec, cam["K"],
                           cam["D"])[0].reshape(-1, 2)
    w, h = cam["size"]
    inside = (uv[:, 0] >= 0) & (uv[:, 0] < w) & (uv[:, 1] >= 0) & (uv[:, 1] < h)
    R = cv2.Rodrigues(rvec)[0]
    zc = (points @ R.T + tvec)[:, 2]
    inside &= zc > 0
    o = cam["pos"][None, :]
    d = points - o
    dist = np.linalg.norm(d, axis=1)
    d = d / dist[:, None]
    hit = np.zeros(len(points), bool)
    for i in np.flatnonzero(inside):
        ray = mi.Ray3f(mi.Point3f(*o[0].tolist()), mi.Vector3f(*d[i].tolist()))
        ray.maxt = float(dist[i] - 0.5)
        hit[i] = bool(scene.ray_test(ray))
    return inside & ~hit


def _top_points(centre: tuple[float, float], yaw_deg: float, z: float,
                size: float = FOOT) -> np.ndarray:
    """A block's top (or an empty site's square) sampled 7 x 7, a hair above it."""
    k = (np.arange(7) + 0.5) / 7 - 0.5
    uv = np.array([(a, b) for a in k for b in k]) * size
    c, s = math.cos(math.radians(yaw_deg)), math.sin(math.radians(yaw_deg))
    xy = uv @ np.array([[c, s], [-s, c]]) + centre
    return np.column_stack([xy, np.full(len(xy), z + 0.05)])


def truth_for(scene, stacks, tops, cards, cam, meta) -> dict:
    board_sites, exp_sites, unseen = [], [], []
    for key in [(c, r, k) for c in range(6) for r in range(3) for k in range(3)]:
        name = dict(zip(("city", "row", "col"), key, strict=True))
        top = tops.get(key)
        if top is not None:
            board_sites.append({**name, "height": top["height"], "owner": top["owner"]})
            pts = _top_points(top["centre"], top["yaw"], top["z"], 0.97 * FOOT)
        else:
            pts = _top_points(site_centre(*key), 0.0, 0.0)
        # the other renderers' rule: a site is in view when half its top is
        if float(_visible(scene, pts, cam).mean()) >= 0.5:
            if top is not None:
                exp_sites.append(dict(board_sites[-1]))
        else:
            unseen.append(name)
    cards_exp, card_stacks = {}, {}
    for seat, c in cards.items():
        a = math.radians(c["angle"])
        u = np.array([math.cos(a), math.sin(a)])
        v = np.array([-math.sin(a), math.cos(a)])
        pts = []
        for gx in (-15.0, 15.0):
            for i in range(9):
                for j in range(9):
                    x = gx - 13.5 + (i + 0.5) * 3.0
                    y = CARD_H / 2 - 6.0 - (j + 0.5) * 3.0
                    p = np.array(c["centre"]) + x * u + y * v
                    pts.append([p[0], p[1], c["z"] + 0.05])
        frac = float(_visible(scene, np.array(pts), cam).mean())
        card_stacks[seat] = {"cell": list(c["cell"]), "grid_visible": round(frac, 4)}
        if frac >= 0.9:
            cards_exp[seat] = {"cell": list(c["cell"])}
    rvec, tvec = cv_pose(cam)
    w, h = cam["size"]
    return {
        "board": {"sites": board_sites},
        "expected": {"colors": list(meta["colours"]), "sites": exp_sites, "unseen": unseen,
                     "cards": cards_exp},
        "card_stacks": card_stacks,
        "camera": {"camera_matrix": cam["K"].tolist(), "dist_coeffs": cam["D"].tolist(),
                   "image_size": [w, h]},
        "meta": {**{k: v for k, v in meta.items()},
                 "renderer": "mitsuba " + __import__("mitsuba").__version__,
                 "side": cam["side"], "distance_mm": round(cam["distance_mm"], 1),
                 "elevation_deg": round(cam["elevation_deg"], 2),
                 "azimuth_deg": round(cam["azimuth_deg"], 2), "hfov_deg": round(cam["hfov_deg"], 2),
                 "roll_deg": round(cam["roll"], 2), "rvec": rvec.tolist(), "tvec": tvec.tolist(),
                 "site_blocks": [{"city": k[0], "row": k[1], "col": k[2],
                                  "blocks": [{"color": c, "storeys": s} for c, s in v]}
                                 for k, v in sorted(stacks.items())]},
    }


def make_photo(folder: str, kind: str, seed: int, spp: int) -> str:
    rng = np.random.default_rng([seed, 77])
    with tempfile.TemporaryDirectory() as tmp:
        scene_dict, stacks, tops, boxes, cards, meta = build_scene(rng, kind, tmp)
        cam = camera_for(rng, kind)
        pad = 0.08
        lin, scene = render(scene_dict, cam, spp, pad)
        lin = distort(lin.astype(np.float32), cam, pad)
        out, dev = develop(lin, rng, kind)
        meta["develop"] = dev
        meta["kind"] = kind
        meta["seed"] = seed
        truth = truth_for(scene, stacks, tops, cards, cam, meta)
    name = f"{kind}_{seed}"
    if kind == "phone":
        path = os.path.join(folder, name + ".jpg")
        cv2.imwrite(path, out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(82, 95))])
    else:
        path = os.path.join(folder, name + ".png")
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 90])
        cv2.imwrite(path, cv2.imdecode(buf, cv2.IMREAD_COLOR))  # a video frame's compression
    with open(os.path.join(folder, name + ".json"), "w") as fh:
        json.dump(truth, fh)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--kind", choices=["mounted", "phone"], default="mounted")
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--spp", type=int, default=48)
    ap.add_argument("--variant", default="scalar_rgb")  # llvm_ad_rgb wants LLVM 18+
    a = ap.parse_args(argv)
    import mitsuba as mi

    mi.set_variant(a.variant)
    os.makedirs(a.folder, exist_ok=True)
    for k in range(a.n):
        t = time.time()
        path = make_photo(a.folder, a.kind, a.seed + k, a.spp)
        truth = json.load(open(path.rsplit(".", 1)[0] + ".json"))
        print(f"{path}  {time.time() - t:.1f}s  towers={len(truth['board']['sites'])} "
              f"visible_towers={len(truth['expected']['sites'])} "
              f"unseen={len(truth['expected']['unseen'])} "
              f"cards={sorted(truth['expected']['cards'])}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
