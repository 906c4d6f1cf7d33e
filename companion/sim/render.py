"""Render a photo of the table: board print, markers, towers, card stacks, hands, light.

Pipeline (all in linear light, BGR channel order as OpenCV images):
1. the table and the board print are warped onto an undistorted canvas (with a margin
   for the lens distortion) by plane homographies;
2. the lamp's shadow map gives cast shadows on the table (warped occupancy) and on the
   towers and hands (percentage-closer filtering);
3. towers, card stacks and hands are rasterized with a z-buffer, far to near;
4. the canvas is remapped through the lens distortion, vignetted, blurred, given sensor
   noise, white-balanced, gamma-encoded and optionally JPEG round-tripped.
The truth (what a perfect reader would report, and what it could not see) is counted
from the label buffer drawn alongside the colours.

Speed without changing a bit: a live table's frames share their camera, lamp, towers and
cards, so the objects (:func:`_kept`), their rasters and shading before shadows
(``raster.FACE_MEMO``), the shadow map's kept part and the ground are reused; full-frame
temporaries live in per-thread scratch arrays (:func:`_scratch`); blurs of sparse images
run only where they can be nonzero. Every value is still computed by the same float
operations in the same order as drawing from scratch.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from companion.rules.board import Site
from companion.rules.topology import Seat
from companion.sim.camera import CameraModel, undistort_points
from companion.sim.layout import Layout, default_layout
from companion.sim.raster import (
    ByteLRU,
    Canvas,
    Face,
    Light,
    Object3D,
    ShadowMap,
    View,
    array_key,
    blur_window,
    hull_area_px,
    polygon_area_px,
    rasterize,
    union_box,
)
from companion.sim.scene import TABLES, Hand, Lighting, Scene, random_lighting
from companion.sim.textures import (
    CARD_PPM,
    TABLE_HALF_MM,
    TABLE_PPM,
    board_textures,
    card_back,
    card_face,
    table_texture,
)

SEATS: tuple[Seat, ...] = (Seat.S, Seat.W, Seat.N, Seat.E)

# label buffer values
LABEL_FLOOR = 1  # + site index: the empty site square on the board
LABEL_TOP = 100  # + site index: top face of the tower
LABEL_SIDE = 200  # + site index: side faces of the tower
LABEL_MARKER = 300  # + marker id
LABEL_CARD = 400  # + seat index (S W N E): top card of the played stack
LABEL_CARD_SIDE = 410
LABEL_HAND = 500  # + hand index
LABEL_HELD = 600  # + hand index: a block in a hand
LABEL_CODES = {"floor": LABEL_FLOOR, "top": LABEL_TOP, "side": LABEL_SIDE,
               "marker": LABEL_MARKER, "card": LABEL_CARD, "card_side": LABEL_CARD_SIDE,
               "hand": LABEL_HAND, "held": LABEL_HELD}

UP = np.array([0.0, 0.0, 1.0])
HELD_TOP_ABOVE_TIP = 3.0  # a held block's top sits this far above the fingertips


# ---------------------------------------------------------------------------------------------
# colour helpers


def srgb_to_linear(v: np.ndarray | Sequence[float]) -> np.ndarray:
    a = np.asarray(v, np.float64) / 255.0
    return np.where(a <= 0.04045, a / 12.92, ((a + 0.055) / 1.055) ** 2.4)


def lin_bgr(rgb: Sequence[float]) -> np.ndarray:
    """sRGB (r, g, b) 0..255 -> linear (b, g, r) float32."""
    return srgb_to_linear(rgb)[::-1].astype(np.float32)


_SRGB_LUT = srgb_to_linear(np.arange(256)).astype(np.float32)


SQRT_RANGE = 1.25  # linear values up to SQRT_RANGE**2 keep detail in the highlight shoulder


def _sqrt_to_srgb_lut() -> np.ndarray:
    """8-bit square-root code -> sRGB code, with a soft highlight shoulder above 0.8."""
    x = (np.arange(256) / 255.0 * SQRT_RANGE) ** 2
    knee = 0.8
    y = np.where(x < knee, x, knee + (1 - knee) * np.tanh((x - knee) / (1 - knee)))
    enc = np.where(y <= 0.0031308, 12.92 * y, 1.055 * np.power(y, 1 / 2.4) - 0.055)
    return np.clip(np.round(enc * 255), 0, 255).astype(np.uint8)


_SQRT_LUT = _sqrt_to_srgb_lut()


def encode_srgb(lin: np.ndarray) -> np.ndarray:
    """Linear float -> sRGB uint8 through an 8-bit square-root code (fast, ~1 code error)."""
    r = cv2.sqrt(lin)  # the canvas is never negative
    return cv2.LUT(cv2.convertScaleAbs(r, alpha=255 / SQRT_RANGE), _SQRT_LUT)


@lru_cache(maxsize=16)
def _tint_lut(rgb: tuple[int, int, int]) -> np.ndarray:
    """Grey table luminance (uint8) -> tinted BGR (uint8) for a table colour."""
    t = lin_bgr(rgb) / np.float32(0.45)
    lin = _SRGB_LUT[:, None] * t[None, :]
    enc = np.where(lin <= 0.0031308, 12.92 * lin, 1.055 * np.power(lin, 1 / 2.4) - 0.055)
    return np.clip(np.round(enc * 255), 0, 255).astype(np.uint8).reshape(1, 256, 3)


def _vignette(w: int, h: int, cx: float, cy: float, strength: float) -> np.ndarray:
    """The lens's corner darkening, three channels, in this thread's scratch arrays (made
    again only when the camera or the strength changes: the frames of a live table)."""
    key = (w, h, cx, cy, strength)
    vig3 = _scratch("vignette", (h, w, 3), np.float32)
    buf = _SCRATCH.bufs["vignette"]
    had = getattr(_SCRATCH, "vignette", None)
    if had is not None and had[0] == key and had[1] is buf:
        return vig3
    f32 = np.float32
    # the squared offsets of a column and of a row, summed by broadcasting: the same
    # float32 operations, element by element, as on full coordinate grids; then
    # vig = 1 - strength * r2 * (0.6 + 0.4 * r2), step by step in place
    dx2 = (np.arange(w, dtype=f32) - f32(cx)) ** 2
    dy2 = (np.arange(h, dtype=f32) - f32(cy)) ** 2
    r2 = np.add(dx2[None, :], dy2[:, None], out=_scratch("plane0", (h, w), f32))
    np.divide(r2, f32((w / 2) ** 2 + (h / 2) ** 2), out=r2)
    a = np.multiply(f32(strength), r2, out=_scratch("plane1", (h, w), f32))
    b = np.multiply(f32(0.4), r2, out=r2)
    np.add(f32(0.6), b, out=b)
    np.multiply(a, b, out=a)
    vig = np.subtract(1, a, out=a)
    _into(cv2.merge([vig, vig, vig], dst=vig3), vig3)
    _SCRATCH.vignette = (key, buf)
    return vig3


@lru_cache(maxsize=4)
def _noise_field(w: int, h: int) -> np.ndarray:
    """A fixed field of unit Gaussian noise; each render takes a random band of rows."""
    rng = np.random.default_rng(4242)
    return rng.standard_normal((h + 97, w, 3), dtype=np.float32)


@lru_cache(maxsize=64)
def _noise_sigma_lut(noise: float) -> np.ndarray:
    """Noise std in sRGB code values per code value: shot + read noise in linear light."""
    v = np.arange(256) / 255.0
    lin = _SRGB_LUT.astype(np.float64)
    sig_lin = noise * np.sqrt(0.02 + 4.0 * lin)
    slope = np.gradient(v, lin + 1e-9 * np.arange(256))
    slope = np.minimum(slope, 6.0)
    out = (sig_lin * slope * 255).astype(np.float32)
    out.flags.writeable = False
    return out


def _add_noise(img: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    field = _noise_field(w, h)
    oy = int(rng.integers(0, 97))
    sign = 1.0 if rng.random() < 0.5 else -1.0
    sig = cv2.LUT(img, _noise_sigma_lut(noise), dst=_scratch("gl3", img.shape, np.float32))
    grain = cv2.multiply(sig, field[oy:oy + h], dst=sig, scale=sign)
    grain16 = _scratch("irr3", img.shape, np.int16)
    np.copyto(grain16, grain, casting="unsafe")  # = grain.astype(np.int16): truncation
    return cv2.add(img, grain16, dtype=cv2.CV_8U)  # saturates at 0 and 255


_SCRATCH = threading.local()


def _into(result: np.ndarray, dst: np.ndarray) -> None:
    """Make sure an OpenCV result given ``dst`` landed in it (OpenCV writes there unless
    it had to allocate anew)."""
    if result is not dst and not np.may_share_memory(result, dst):
        np.copyto(dst, result)

SHADOW_SIZE = 1536  # the shadow map's side (ShadowMap's default)


def _take_dirty(name: str) -> tuple[int, int, int, int] | None:
    """The box outside which scratch array ``name`` still holds its clean value (as
    :func:`_set_dirty` recorded it for this very buffer), or None; forgotten until set
    again, so a render that fails half way leaves it unknown."""
    rec: dict[str, tuple[np.ndarray, tuple[int, int, int, int]]] = _SCRATCH.__dict__.setdefault(
        "dirty", {})
    had = rec.pop(name, None)
    if had is None or had[0] is not _SCRATCH.bufs.get(name):
        return None
    return had[1]


def _set_dirty(name: str, box: tuple[int, int, int, int]) -> None:
    """Record that scratch array ``name`` holds its clean value outside ``box``."""
    _SCRATCH.__dict__.setdefault("dirty", {})[name] = (_SCRATCH.bufs[name], box)


def _scratch(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """This thread's reusable array ``name`` (its contents left over from the last frame).
    A frame's full-size temporaries are reused: fresh pages cost more than the arithmetic
    done on them.

    A name is one buffer, viewed with any shape and type: stages whose arrays are done
    with lend them on. A render's order: "shadow_depth" and "occ" (own, see
    :func:`_take_dirty`); a new ground borrows "ao", "direct", "lit", "plane0".."plane2",
    "zbuf", "gl3"; the "ground_*" planes (own, see :func:`_ground_planes`); "labels",
    "lit", "ao", "direct", "plane0".."plane2", "gl3", "irr3" (the canvas colour) and "zbuf"
    for the table's light and the objects; then the truth takes "lit" and "gl3", the lens
    "gl3", the vignette "plane0", "plane1" and its own "vignette", the encoding "ao",
    the blur "direct", the noise "gl3" and "irr3". A stage that kept an array past its
    turn would read a later stage's numbers, alike every run: tests/sim/test_kept.py
    draws frames again with every array fresh and wants them the same to the byte."""
    bufs: dict[str, np.ndarray] | None = getattr(_SCRATCH, "bufs", None)
    if bufs is None:
        bufs = _SCRATCH.bufs = {}
    dt = np.dtype(dtype)
    n = math.prod(shape) * dt.itemsize
    buf = bufs.get(name)
    if buf is None or buf.nbytes < n:  # grows only: cameras of two sizes do not churn
        buf = bufs[name] = np.empty(max(n, 64), np.uint8)
    return buf[:n].view(dt).reshape(shape)


# ---------------------------------------------------------------------------------------------
# kept objects: the frames of a live table rebuild the same towers and cards


# at most 256 entries: their faces' rasters and shading are what FACE_MEMO bounds by bytes
_KEPT = ByteLRU(1 << 62, 256)


def _numbers_key(*values: float) -> bytes:
    """Numbers as exact bits (0.0 and -0.0 apart, unlike ==)."""
    return array_key(np.asarray(values, np.float64))


def _kept(key: tuple[Any, ...], build: Callable[[], list[Object3D]]) -> list[Object3D]:
    """The objects built for ``key`` (every input of ``build``, by value or by a kept
    reference), made once and reused while recently used. They are marked persistent:
    nobody changes them once built, so their faces' rasters and shading can be kept."""
    hit: list[Object3D] | None = _KEPT.get(key)
    if hit is None:
        hit = build()
        for o in hit:
            o.persistent = True
        _KEPT.put(key, hit, 0)  # (two threads may both build one: either is right)
    return list(hit)


# ---------------------------------------------------------------------------------------------
# geometry builders


def _box_faces(centre: np.ndarray, ex: np.ndarray, ey: np.ndarray, sx: float, sy: float,
               z0: float, z1: float) -> tuple[Face, list[Face], Face]:
    """Top, four sides (s along the face, t up from z0) and bottom of an oriented box."""
    c0 = np.array([centre[0], centre[1], z0])
    hx, hy = sx / 2 * np.r_[ex, 0.0], sy / 2 * np.r_[ey, 0.0]
    exx, eyy = np.r_[ex, 0.0], np.r_[ey, 0.0]
    top_o = c0 - hx - hy + UP * (z1 - z0)
    top = Face(np.array([top_o, top_o + 2 * hx, top_o + 2 * hx + 2 * hy, top_o + 2 * hy]),
               top_o, exx, eyy, UP.copy(), np.zeros(3))
    bot_o = c0 - hx - hy
    bottom = Face(np.array([bot_o, bot_o + 2 * hy, bot_o + 2 * hx + 2 * hy, bot_o + 2 * hx]),
                  bot_o, exx, eyy, -UP, np.zeros(3))
    sides = []
    for n, half_n, width in ((-eyy, hy, sx), (exx, hx, sy), (eyy, hy, sx), (-exx, hx, sy)):
        e1 = np.cross(-n, UP)
        o = c0 + n * np.linalg.norm(half_n) - e1 * width / 2
        h = z1 - z0
        sides.append(Face(np.array([o, o + e1 * width, o + e1 * width + UP * h, o + UP * h]),
                          o, e1, UP.copy(), n.copy(), np.zeros(3)))
    return top, sides, bottom


PROFILE_RES = 20.0  # samples per mm of the 1D albedo profiles


def _bevel_lut(width: float, gain: float, sigma: float) -> np.ndarray:
    """1D factor across a face: 1 + gain at both edges, fading over ``sigma`` mm."""
    x = np.arange(int(width * PROFILE_RES) + 2, dtype=np.float64) / PROFILE_RES
    e = np.minimum(x, width - x).clip(0)
    return (1 + gain * np.exp(-(e / sigma) ** 2)).astype(np.float32)


def _lookup(lut: np.ndarray, x: np.ndarray) -> np.ndarray:
    # clipped before the cast: a face seen almost edge-on puts a pixel's local
    # coordinate at 1e12 mm or so, which no int32 holds
    pos = np.clip(x * np.float32(PROFILE_RES) + np.float32(0.5), 0, len(lut) - 1)
    return lut[pos.astype(np.int32)]


def _side_albedo(tops: np.ndarray, cols: np.ndarray, storey: float, width: float):
    """Side of a tower: block colours by height, storey grooves, block seams, bevelled
    vertical edges, contact darkening at the foot. Precomputed as 1D profiles."""
    n = int(tops[-1] * PROFILE_RES) + 2
    t = np.arange(n, dtype=np.float64) / PROFILE_RES
    idx = np.clip(np.searchsorted(tops[:-1], t, side="right"), 0, len(cols) - 1)
    n_storeys = int(round(tops[-1] / storey))
    boundary = np.zeros(n_storeys + 1, bool)
    boundary[np.round(tops / storey).astype(int)] = True
    boundary[0] = True
    line = np.clip(np.rint(t / storey), 0, n_storeys).astype(int)
    d = np.abs(t - line * storey)
    depth = np.where(boundary[line], 0.6, 0.42)
    f = (1 - depth * np.exp(-(d / 0.55) ** 2)) * (1 - 0.3 * np.exp(-t / 5.0))
    profile = (cols[idx] * f[:, None]).astype(np.float32)
    bevel = _bevel_lut(width, 0.12, 0.6)

    def fn(s: np.ndarray, t: np.ndarray) -> np.ndarray:
        return _lookup(profile, t) * _lookup(bevel, s)[..., None]

    return fn


def _top_albedo(col: np.ndarray, size: float):
    c = col.astype(np.float32)
    edge = _bevel_lut(size, -0.3, 0.7)

    def fn(s: np.ndarray, t: np.ndarray) -> np.ndarray:
        return c * np.minimum(_lookup(edge, s), _lookup(edge, t))[..., None]

    return fn


def _texture_albedo(tex_lin: np.ndarray, ppm: float, height_mm: float):
    """Card-like texture: s to the right from the left edge, t up from the bottom edge."""

    def fn(s: np.ndarray, t: np.ndarray) -> np.ndarray:
        mx = (s * np.float32(ppm) - 0.5).astype(np.float32)
        my = ((np.float32(height_mm) - t) * np.float32(ppm) - 0.5).astype(np.float32)
        return cv2.remap(tex_lin, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)

    return fn


@lru_cache(maxsize=64)
def _linear_texture(key: tuple[str, int, int]) -> np.ndarray:
    kind, r, c = key
    img = card_back() if kind == "back" else card_face(r, c)
    return cv2.LUT(img, _SRGB_LUT)


def tower_object(scene: Scene, site: Site, lighting: Lighting) -> Object3D:
    """One tower: a prism of stacked blocks with per-block colours on its sides."""
    lay = scene.layout
    x, y, ang = scene.tower_pose(site)
    a = math.radians(ang)
    ex, ey = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
    tower = scene.board.tower(site)
    tops = np.cumsum([b.storeys * lay.storey for b in tower]).astype(np.float64)
    cols = np.array([lin_bgr(scene.colors[b.color]) for b in tower])
    rng = np.random.default_rng([scene.layout_seed, 31, site.index])
    cols = cols * rng.uniform(0.97, 1.03, (len(tower), 1))
    fp = lay.footprint
    top, sides, bottom = _box_faces(np.array([x, y]), ex, ey, fp, fp, 0.0, float(tops[-1]))
    top.albedo = _top_albedo(cols[-1], fp)
    top.label = LABEL_TOP + site.index
    top.specular, top.shininess = lighting.specular, lighting.shininess
    side_fn = _side_albedo(tops, cols, lay.storey, fp)
    for f in sides:
        f.albedo = side_fn
        f.label = LABEL_SIDE + site.index
        f.specular, f.shininess = lighting.specular * 0.6, lighting.shininess * 0.7
    return Object3D([top, *sides], "solid", shadow_faces=[top, *sides, bottom],
                    anchor=np.array([x, y, tops[-1] / 2]))


def tower_objects(scene: Scene, site: Site, lighting: Lighting) -> list[Object3D]:
    """The tower at ``site``: one prism, or with the scene's ``block_jitter`` a box per
    block at the block's own pose (the z-buffer sorts out overhangs and ledges).

    Kept for later renders (see :func:`_kept`): a still table redraws the same towers."""
    tower = scene.board.tower(site)
    key = ("tower", scene.layout, scene.layout_seed, site.index, tower,
           _numbers_key(*(v for b in tower for v in scene.colors[b.color]), *scene.block_jitter,
                    lighting.specular, lighting.shininess))
    return _kept(key, lambda: _tower_objects(scene, site, lighting))


def _tower_objects(scene: Scene, site: Site, lighting: Lighting) -> list[Object3D]:
    if scene.block_jitter[0] <= 0 and scene.block_jitter[1] <= 0:
        return [tower_object(scene, site, lighting)]
    lay = scene.layout
    tower = scene.board.tower(site)
    rng = np.random.default_rng([scene.layout_seed, 31, site.index])
    tint = rng.uniform(0.97, 1.03, (len(tower), 1))
    fp = lay.footprint
    out = []
    z0 = 0.0
    for k, (block, (x, y, ang)) in enumerate(zip(tower, scene.block_poses(site), strict=True)):
        a = math.radians(ang)
        ex, ey = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
        z1 = z0 + block.storeys * lay.storey
        col = np.array([lin_bgr(scene.colors[block.color])]) * tint[k]
        top, sides, bottom = _box_faces(np.array([x, y]), ex, ey, fp, fp, z0, z1)
        top.albedo = _top_albedo(col[0], fp)
        # only the top block's top face is the tower's top; lower ones are ledges
        top.label = (LABEL_TOP if k == len(tower) - 1 else LABEL_SIDE) + site.index
        top.specular, top.shininess = lighting.specular, lighting.shininess
        side_fn = _side_albedo(np.array([z1 - z0]), col, lay.storey, fp)
        for f in sides:
            f.albedo = side_fn
            f.label = LABEL_SIDE + site.index
            f.specular, f.shininess = lighting.specular * 0.6, lighting.shininess * 0.7
        out.append(Object3D([top, *sides], "solid", shadow_faces=[top, *sides, bottom],
                            anchor=np.array([x, y, (z0 + z1) / 2])))
        z0 = z1
    return out


def _board_thickness(lay: Layout) -> float:
    return float(lay.profile.get("board", {}).get("thickness_mm", 2.0))


def _card_thickness(lay: Layout) -> float:
    return float(lay.profile.get("cards", {}).get("thickness_mm", 0.35))


def _card_box(lay: Layout, centre: np.ndarray, right: np.ndarray, fwd: np.ndarray, z0: float,
              z1: float, tex_key: tuple[str, int, int], label: int, side_label: int,
              lighting: Lighting) -> Object3D:
    cw, ch = lay.card_size
    top, sides, bottom = _box_faces(centre, right, fwd, cw, ch, z0, z1)
    top.albedo = _texture_albedo(_linear_texture(tex_key), CARD_PPM, ch)
    top.label = label
    top.specular, top.shininess = lighting.specular * 0.3, 12.0
    paper = lin_bgr((214, 208, 194))
    for f in sides:
        f.albedo = paper
        f.label = side_label
    return Object3D([top, *sides], "solid", shadow_faces=[top, *sides, bottom],
                    anchor=np.array([centre[0], centre[1], z1]))


def thing_objects(scene: Scene) -> list[Object3D]:
    """The loose things (:class:`companion.sim.scene.Thing`): plain boxes of their colour
    standing on the board's surface, casting shadows."""
    if not scene.things:
        return []
    key = ("things", _numbers_key(*(v for t in scene.things
                                for v in (t.x, t.y, *t.size, *t.rgb, t.angle_deg))))
    return _kept(key, lambda: _thing_objects(scene))


def _thing_objects(scene: Scene) -> list[Object3D]:
    out: list[Object3D] = []
    for thing in scene.things:
        a = math.radians(thing.angle_deg)
        ex, ey = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
        sx, sy, sz = thing.size
        top, sides, bottom = _box_faces(np.array([thing.x, thing.y]), ex, ey, sx, sy, 0.0, sz)
        colour = lin_bgr(thing.rgb)
        for face in (top, *sides):
            face.albedo = colour
        out.append(Object3D([top, *sides], "solid", shadow_faces=[top, *sides, bottom],
                            anchor=np.array([thing.x, thing.y, sz / 2])))
    return out


def card_objects(scene: Scene, lighting: Lighting) -> list[Object3D]:
    """Each seat's played stack (top card face up, edges of cards below) and the draw pile."""
    stacks: list[tuple[int, int, int] | None] = []
    for seat in SEATS:
        cell = scene.cards.get(seat)
        if cell is not None:
            stacks.append((int(cell[0]), int(cell[1]),
                           max(1, int(scene.stack_counts.get(seat, 1)))))
        else:
            stacks.append(None)
    key = ("cards", scene.layout, scene.layout_seed, tuple(stacks), bool(scene.deck),
           _numbers_key(lighting.specular))
    return _kept(key, lambda: _card_objects(scene, lighting))


def _card_objects(scene: Scene, lighting: Lighting) -> list[Object3D]:
    lay = scene.layout
    z_table = -_board_thickness(lay)
    th = _card_thickness(lay)
    out: list[Object3D] = []
    for k, seat in enumerate(SEATS):
        cell = scene.cards.get(seat)
        if cell is None:
            continue
        count = max(1, int(scene.stack_counts.get(seat, 1)))
        along, ang = scene.stack_pose(seat)
        rng = np.random.default_rng([scene.layout_seed, 41, k, count])
        for j in range(min(count - 1, 2)):
            da = float(rng.uniform(-3.5, 3.5))
            dang = float(rng.uniform(-5, 5))
            c, r, f = lay.card_frame(seat, along + da, ang + dang,
                                     lay.card_edge_gap + float(rng.uniform(-2, 3)))
            kind = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
            out.append(_card_box(lay, c, r, f, z_table, z_table + (count - 1 - j) * th,
                                 ("face", *kind), 0, 0, lighting))
        c, r, f = lay.card_frame(seat, along, ang)
        out.append(_card_box(lay, c, r, f, z_table, z_table + count * th,
                             ("face", int(cell[0]), int(cell[1])), LABEL_CARD + k,
                             LABEL_CARD_SIDE + k, lighting))
    if scene.deck:
        rng = np.random.default_rng([scene.layout_seed, 43])
        sx, sy = rng.choice([-1, 1], 2)
        bw, bh = lay.board_size
        centre = np.array([sx * (bw / 2 + 70 + rng.uniform(0, 30)),
                           sy * (bh / 2 + 60 + rng.uniform(0, 30))])
        a = math.radians(float(rng.uniform(0, 360)))
        right, fwd = np.array([math.cos(a), math.sin(a)]), np.array([-math.sin(a), math.cos(a)])
        out.append(_card_box(lay, centre, right, fwd, z_table,
                             z_table + int(rng.integers(8, 30)) * th, ("back", 0, 0), 0, 0,
                             lighting))
    return out


def board_edge_object(scene: Scene) -> Object3D:
    return _kept(("edge", scene.layout), lambda: [_board_edge_object(scene)])[0]


def _board_edge_object(scene: Scene) -> Object3D:
    lay = scene.layout
    bw, bh = lay.board_size
    _, sides, _ = _box_faces(np.zeros(2), np.array([1.0, 0.0]), np.array([0.0, 1.0]), bw, bh,
                             -_board_thickness(lay), 0.0)
    for f in sides:
        f.albedo = lin_bgr((40, 42, 48))
    return Object3D(sides, "solid", casts_shadow=False, anchor=np.zeros(3))


def _capsule(u0: float, v0: float, u1: float, v1: float, w: float, n_arc: int = 5
             ) -> tuple[np.ndarray, tuple[float, float], tuple[float, float]]:
    """A finger-like polygon from (u0, v0) to a rounded end at (u1, v1); plus its axis."""
    d = np.array([u1 - u0, v1 - v0], np.float64)
    ln = float(np.linalg.norm(d))
    d /= ln
    perp = np.array([-d[1], d[0]])
    r = w / 2
    end = np.array([u1, v1]) - d * r
    pts = [np.array([u0, v0]) - perp * r]
    for k in range(n_arc + 1):
        th = -math.pi / 2 + math.pi * k / n_arc
        pts.append(end + r * (math.cos(th) * d + math.sin(th) * perp))
    pts.append(np.array([u0, v0]) + perp * r)
    return np.array(pts), (u0, v0), (float(d[0]), float(d[1]))


def hand_object(hand: Hand, index: int, lighting: Lighting,
                colors: dict[str, tuple[int, int, int]] | None = None,
                layout: Layout | None = None) -> list[Object3D]:
    """An arm, palm, thumb and four fingers as shaded planar pieces, plus a held block."""
    sc = hand.scale
    tip, fwd, left = hand.frame()
    tilt = math.tan(math.radians(hand.tilt_deg))
    eu = fwd + np.array([0.0, 0.0, -tilt])
    eu_n = eu / np.linalg.norm(eu)
    ev = left
    normal = np.cross(eu_n, ev)
    normal /= np.linalg.norm(normal)
    mirror = 1.0 if hand.right_handed else -1.0
    skin = lin_bgr(hand.skin)
    label = LABEL_HAND + index
    faces: list[Face] = []

    def piece(poly_uv: np.ndarray, axis_o: tuple[float, float], axis_d: tuple[float, float],
              albedo: np.ndarray, half_w: float, bend: float, lift: float = 0.0) -> None:
        uv = poly_uv * sc
        verts = np.array([tip + u * eu + mirror * v * ev + normal * lift for u, v in uv])
        ou, ov = axis_o[0] * sc, axis_o[1] * sc
        origin = tip + ou * eu + mirror * ov * ev + normal * lift
        du, dv = axis_d
        e1 = du * eu_n + mirror * dv * ev
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(normal, e1)
        faces.append(Face(verts, origin, e1, e2, normal.copy(), albedo, label, specular=0.06,
                          shininess=8.0, bend=bend, half_width=half_w * sc, two_sided=True))

    wrist = -175.0
    arm_len = 720.0
    arm = np.array([[wrist + 30, -31], [wrist - arm_len, -42], [wrist - arm_len, 42],
                    [wrist + 30, 31]])
    piece(arm, (wrist, 0.0), (-1.0, 0.0), skin * np.float32(0.97), 36, 1.0)
    if hand.sleeve is not None:
        s0 = wrist - 90 - 60 * ((index * 37) % 10) / 10
        sl = np.array([[s0, -47], [wrist - arm_len, -55], [wrist - arm_len, 55], [s0, 47]])
        piece(sl, (s0, 0.0), (-1.0, 0.0), lin_bgr(hand.sleeve), 50, 1.1, lift=2.0)
    thumb, o, d = _capsule(-150, 34, -92, 66, 22)
    piece(thumb, o, d, skin, 11, 1.0, lift=-1.0)
    palm = np.array([[-70, -40], [-95, -45], [-150, -41], [-180, -31], [-180, 31], [-150, 41],
                     [-95, 45], [-70, 40]], np.float64)
    piece(palm, (-125.0, 0.0), (1.0, 0.0), skin, 46, 0.5, lift=0.5)
    for v, ln, w in ((27, 72, 17.5), (9, 80, 18.5), (-9, 76, 17.5), (-26, 62, 15.5)):
        base_u = -80.0
        fin, o, d = _capsule(base_u, v, base_u + ln, v * 0.85, w)
        piece(fin, o, d, skin * np.float32(1.02), w / 2, 1.1, lift=1.0)
        nail, o2, d2 = _capsule(base_u + ln - 15, v * 0.86, base_u + ln - 1.5, v * 0.85, w - 7)
        piece(nail, o2, d2, np.clip(skin * np.float32(1.25) + np.float32(0.03), 0, 1),
              (w - 7) / 2, 0.9, lift=1.4)
    out = [Object3D(faces, "layered", shadow_bias=4.0,
                    anchor=tip + (-150 * sc) * eu)]
    if hand.holding is not None:
        lay = layout or default_layout()
        storey, fp = lay.storey, lay.footprint
        h = hand.holding.storeys * storey
        c = hand.point(-35 * sc, 0.0)
        ang = math.atan2(fwd[1], fwd[0])
        ex = np.array([math.cos(ang), math.sin(ang)])
        ey = np.array([-math.sin(ang), math.cos(ang)])
        z1 = hand.tip_height + HELD_TOP_ABOVE_TIP
        top, sides, bottom = _box_faces(c[:2], ex, ey, fp, fp, z1 - h, z1)
        rgb = hand.holding_color or (colors or {}).get(hand.holding.color, (128, 128, 128))
        col = lin_bgr(rgb)
        top.albedo = col
        tops = np.array([h])
        fn = _side_albedo(tops, col[None, :], storey, fp)
        for f in sides:
            f.albedo = fn
            f.label = LABEL_HELD + index
            f.specular, f.shininess = lighting.specular * 0.6, lighting.shininess
        top.label = LABEL_HELD + index
        bottom.albedo = col * np.float32(0.6)
        bottom.label = LABEL_HELD + index
        out.append(Object3D([top, bottom, *sides], "solid",
                            shadow_faces=[top, bottom, *sides], anchor=c))
    return out


# ---------------------------------------------------------------------------------------------
# lens


@lru_cache(maxsize=16)
def _lens_maps(key: bytes, w: int, h: int) -> tuple[np.ndarray, np.ndarray, int, int, int, int,
                                                    np.ndarray]:
    """Remap tables: distorted output pixel -> undistorted canvas pixel, and the margins."""
    arr = np.frombuffer(key, np.float64)
    K, dist = arr[:9].reshape(3, 3), arr[9:14]
    crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 60, 1e-12)
    n = 160
    border = np.concatenate([
        np.stack([np.linspace(-0.5, w - 0.5, n), np.full(n, -0.5)], 1),
        np.stack([np.full(n, w - 0.5), np.linspace(-0.5, h - 0.5, n)], 1),
        np.stack([np.linspace(w - 0.5, -0.5, n), np.full(n, h - 0.5)], 1),
        np.stack([np.full(n, -0.5), np.linspace(h - 0.5, -0.5, n)], 1)])
    und = undistort_points(border.reshape(-1, 1, 2), K, dist, crit)
    und = np.asarray(und, np.float64).reshape(-1, 2)
    ml = int(math.ceil(max(0.0, -und[:, 0].min()))) + 4
    mt = int(math.ceil(max(0.0, -und[:, 1].min()))) + 4
    mr = int(math.ceil(max(0.0, und[:, 0].max() - (w - 1)))) + 4
    mb = int(math.ceil(max(0.0, und[:, 1].max() - (h - 1)))) + 4
    step = 8
    gw, gh = -(-w // step), -(-h // step)
    gx = step * (np.arange(gw + 2) - 1) + (step - 1) / 2
    gy = step * (np.arange(gh + 2) - 1) + (step - 1) / 2
    X, Y = np.meshgrid(gx, gy)
    pts = np.stack([X.ravel(), Y.ravel()], 1).reshape(-1, 1, 2)
    u = np.asarray(undistort_points(pts, K, dist, crit), np.float64)
    u = u.reshape(gh + 2, gw + 2, 2)
    fw, fh = step * (gw + 2), step * (gh + 2)
    full = cv2.resize(u.astype(np.float32), (fw, fh), dst=_scratch("gl3", (fh, fw, 2), np.float32),
                      interpolation=cv2.INTER_LINEAR)  # a scratch array: only slices are kept
    full = full[step:step + h, step:step + w]
    mx = np.ascontiguousarray(full[..., 0] + ml)
    my = np.ascontiguousarray(full[..., 1] + mt)
    frame_poly = (und + np.array([ml, mt])).astype(np.float32)
    return mx, my, ml, mt, mr, mb, frame_poly


@lru_cache(maxsize=4)
def _frame_mask(key: bytes, w: int, h: int) -> np.ndarray:
    """The canvas pixels that the distorted frame shows (read-only)."""
    *_, ml, mt, mr, mb, frame_poly = _lens_maps(key, w, h)
    in_frame = np.zeros((h + mt + mb, w + ml + mr), np.uint8)
    cv2.fillPoly(in_frame, [np.round(frame_poly * 16).astype(np.int32)], 1, cv2.LINE_8, 4)
    inside = in_frame.astype(bool)
    inside.flags.writeable = False
    return inside


# ---------------------------------------------------------------------------------------------
# result


@dataclass(eq=False)
class Rendered:
    """A rendered photo: BGR image, truth dict, and the per-pixel label image.

    ``truth`` (JSON-ready) holds:

    - ``camera``: the formats.md intrinsics JSON; ``pose``: rvec/tvec (board mm -> camera)
      and the camera centre in board mm;
    - ``board``: the full ``manhattan-board/1`` board (no blocks) with its colours;
    - ``expected``: what a perfect reader prints for this photo: ``board`` minus the
      unseen sites, plus ``unseen`` and ``cards``;
    - ``visibility``: 54 entries ``{city, row, col, top, site}``: the visible fraction of
      the site's top face (the floor square when empty) and of its whole silhouette;
    - ``unseen``: sites whose top is under 50% visible (hidden, covered or out of frame);
    - ``cards``: ``{"S": {"cell": [r, c]}}`` for stacks whose top card shows >= 90% of its
      two grids (the part that is read);
      ``card_stacks``: every stack with ``cell``, ``count``, ``visible``, ``grid_visible``,
      ``inside``;
    - ``markers_visible``: marker ids fully in frame and >= 97% unoccluded;
    - ``hands``: ``[{seat, pixels, box: [x0, y0, x1, y1] | None}]`` in image pixels;
    - ``lighting``, ``colors``, ``jpeg_quality``, ``label_codes``.

    ``labels`` (int16, image size) tells what each pixel shows: see ``label_codes``.
    """

    image: np.ndarray
    truth: dict[str, Any]
    labels: np.ndarray
    camera: CameraModel
    scene: Scene
    lighting: Lighting
    jpeg: bytes | None = None  # the exact JPEG file when the photo was compressed

    def save(self, path_stem: str) -> tuple[str, str]:
        """Write the photo (.jpg bytes as compressed, else .png) and its truth (.json)."""
        import json

        if self.jpeg is not None:
            img_path = f"{path_stem}.jpg"
            with open(img_path, "wb") as fh:
                fh.write(self.jpeg)
        else:
            img_path = f"{path_stem}.png"
            cv2.imwrite(img_path, self.image)
        json_path = f"{path_stem}.json"
        with open(json_path, "w", encoding="utf-8") as fh:
            json.dump(self.truth, fh, indent=1)
        return img_path, json_path


@dataclass(frozen=True)
class _Ground:
    """What a render draws before any tower: the same in every frame of a fixed camera."""

    colour8: np.ndarray  # table and board print, sRGB codes (read-only)
    labels: np.ndarray  # the empty sites' squares and the markers (copy before drawing)
    # the lamp's irradiance and broad gloss on the ground, on a coarse grid of ``step``
    # pixels (:func:`_ground_planes` makes the full planes)
    coarse: np.ndarray
    step: int
    # projected areas (pixels) of the floor squares and the markers, for the truth
    floor_areas: dict[int, float]
    marker_areas: dict[int, float]


def _ground_planes(layers: _Ground) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ground's colour in linear light, and the lamp's irradiance and gloss on it, in
    this thread's scratch arrays: made once for a ground and kept while its frames follow
    (a live table), and a new camera's go into warm pages instead of fresh ones."""
    Hc, Wc = layers.labels.shape
    f32 = np.float32
    colour = _scratch("ground_colour", (Hc, Wc, 3), f32)
    irradiance = _scratch("ground_irradiance", (Hc, Wc), f32)
    gloss = _scratch("ground_gloss", (Hc, Wc), f32)
    bufs = _SCRATCH.bufs
    # what the arrays hold: these layers, in these very buffers (none is written elsewhere)
    made = (layers, bufs["ground_colour"], bufs["ground_irradiance"], bufs["ground_gloss"])
    had = getattr(_SCRATCH, "ground", None)
    if had is None or any(a is not b for a, b in zip(had, made, strict=True)):
        _into(cv2.LUT(layers.colour8, _SRGB_LUT, dst=colour), colour)
        step = layers.step
        gh, gw = layers.coarse.shape[:2]
        fsize = (step * gw, step * gh)
        fine = cv2.resize(layers.coarse, fsize, dst=_scratch("gl3", (fsize[1], fsize[0], 2), f32),
                          interpolation=cv2.INTER_LINEAR)
        off = step // 2
        fine = fine[off:off + Hc, off:off + Wc]
        np.copyto(irradiance, fine[..., 0])
        np.copyto(gloss, fine[..., 1])
        _SCRATCH.ground = made
    return colour, irradiance, gloss


# the last two cameras' grounds (a ByteLRU bounded by entries, as the kept objects)
_GROUND_CACHE = ByteLRU(1 << 62, 2)


def _ground(scene: Scene, view: View, px_per_mm: float, lighting: Lighting,
            lpos: np.ndarray) -> _Ground:
    """The ground layers, kept for the last two cameras: a live table's frames share
    them, and drawing them is a sixth of a frame's render."""
    lay = scene.layout
    key = (lay, scene.table, scene.layout_seed, view.K.tobytes(), view.R.tobytes(),
           view.t.tobytes(), view.width, view.height, px_per_mm, lpos.tobytes(),
           float(lighting.specular))
    hit: _Ground | None = _GROUND_CACHE.get(key)
    if hit is not None:
        return hit
    Wc, Hc = view.width, view.height
    cam_pos = view.centre
    z_table = -_board_thickness(lay)
    trng = np.random.default_rng([scene.layout_seed, 3])
    th_t = float(trng.uniform(0, 2 * math.pi))
    shift = trng.uniform(-300, 300, 2)
    T = np.array([[math.cos(th_t), -math.sin(th_t), shift[0]],
                  [math.sin(th_t), math.cos(th_t), shift[1]], [0, 0, 1]])
    A_t = np.array([[1 / TABLE_PPM, 0, -TABLE_HALF_MM + 0.5 / TABLE_PPM],
                    [0, -1 / TABLE_PPM, TABLE_HALF_MM - 0.5 / TABLE_PPM], [0, 0, 1]])
    Hg_table = view.plane_homography(z_table)
    # the steps before the kept layers work in the render's scratch arrays (borrowed
    # by name: the render fills them only after this): fresh pages cost more than these
    u8, f32 = np.uint8, np.float32
    lum = cv2.warpPerspective(table_texture(), Hg_table @ T @ A_t, (Wc, Hc),
                              dst=_scratch("ao", (Hc, Wc), u8), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REFLECT)
    ground8 = cv2.LUT(cv2.cvtColor(lum, cv2.COLOR_GRAY2BGR,
                                   dst=_scratch("direct", (Hc, Wc, 3), u8)),
                      _tint_lut(TABLES.get(scene.table, TABLES["oak"])),
                      dst=_scratch("lit", (Hc, Wc, 3), u8))

    Hg = view.plane_homography(0.0)
    levels = board_textures(lay)
    tex = levels[0]
    for lv in levels:
        if lv.ppm >= px_per_mm * 1.2:
            tex = lv
    warped = cv2.warpPerspective(tex.bgra, Hg @ tex.px_to_mm, (Wc, Hc),
                                 dst=_scratch("plane0", (Hc, Wc, 4), u8), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    # wa = alpha.astype(np.float32) * np.float32(1 / 255), and 1 - wa
    alpha = cv2.extractChannel(warped, 3, dst=_scratch("plane1", (Hc, Wc), u8))
    wa = _scratch("plane2", (Hc, Wc), f32)
    np.copyto(wa, alpha)
    np.multiply(wa, f32(1 / 255), out=wa)
    wb = np.subtract(1, wa, out=_scratch("zbuf", (Hc, Wc), f32))
    ground8 = cv2.blendLinear(cv2.cvtColor(warped, cv2.COLOR_BGRA2BGR,
                                           dst=_scratch("plane1", (Hc, Wc, 3), u8)),
                              ground8, wa, wb)  # kept

    labels = np.zeros((Hc, Wc), np.int16)
    full_box = (0, 0, Wc, Hc)
    fp = lay.footprint
    floor_faces = {}
    for i in range(lay.site_count):
        x, y = lay.site_xy[i]
        f = _flat_square(x, y, fp / 2, fp / 2)
        floor_faces[i] = f
        _stamp(labels, view, f, LABEL_FLOOR + i, full_box)
    marker_faces = {}
    for mid in lay.marker_centres:
        c = lay.marker_corners(mid)
        f = Face(c[[3, 2, 1, 0]], c[3], np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), UP,
                 np.zeros(3))
        marker_faces[mid] = f
        _stamp(labels, view, f, LABEL_MARKER + mid, full_box)

    # lamp on the ground: irradiance and a broad gloss, on a coarse grid
    step = 8
    gx = np.arange(0, Wc + step, step, dtype=np.float64)
    gy = np.arange(0, Hc + step, step, dtype=np.float64)
    GX, GY = np.meshgrid(gx, gy)
    Hi = np.linalg.inv(Hg)
    q = Hi @ np.stack([GX.ravel(), GY.ravel(), np.ones(GX.size)])
    PX, PY = q[0] / q[2], q[1] / q[2]
    Lx, Ly, Lz = lpos[0] - PX, lpos[1] - PY, lpos[2] - 0.0
    d2 = Lx * Lx + Ly * Ly + Lz * Lz
    dl = np.sqrt(d2)
    irr = float(lpos @ lpos) / d2 * (Lz / dl)
    Vx, Vy, Vz = cam_pos[0] - PX, cam_pos[1] - PY, cam_pos[2]
    dv = np.sqrt(Vx * Vx + Vy * Vy + Vz * Vz)
    Hz = Lz / dl + Vz / dv
    Hn = np.sqrt((Lx / dl + Vx / dv) ** 2 + (Ly / dl + Vy / dv) ** 2 + Hz ** 2)
    gloss = 0.25 * lighting.specular * (Hz / Hn) ** 14 * float(lpos @ lpos) / d2
    coarse = np.stack([irr, gloss], -1).reshape(len(gy), len(gx), 2).astype(np.float32)
    for a in (ground8, labels, coarse):
        a.flags.writeable = False
    floor_areas = {i: polygon_area_px(view, f.verts) for i, f in floor_faces.items()}
    marker_areas = {mid: polygon_area_px(view, f.verts) for mid, f in marker_faces.items()}
    layers = _Ground(ground8, labels, coarse, step, floor_areas, marker_areas)
    _GROUND_CACHE.put(key, layers, 0)
    return layers


# ---------------------------------------------------------------------------------------------
# main entry


def render(scene: Scene, camera: CameraModel, lighting: Lighting | None = None, *,
           rng: np.random.Generator, hands: Sequence[Hand] = (), noise: float = 0.006,
           blur: float = 0.6, jpeg_quality: int | None = None, vignetting: float = 0.25,
           distortion: bool = True) -> Rendered:
    """Render ``scene`` through ``camera``; all randomness comes from ``rng``.

    ``noise`` is the sensor noise (linear units at mid grey), ``blur`` the optical blur
    sigma in pixels, ``vignetting`` the corner darkening (0..1). With ``distortion=False``
    the lens is ideal and the truth camera says so.
    """
    lay = scene.layout
    if lighting is None:
        lighting = random_lighting(rng)
    cam = camera if distortion else camera.without_distortion()
    w, h = cam.width, cam.height
    R = cam.R
    tvec = np.asarray(cam.tvec, np.float64)
    K = np.asarray(cam.K, np.float64)
    has_dist = bool(np.any(np.abs(cam.dist) > 1e-12))
    if has_dist:
        key = np.concatenate([K.ravel(), np.asarray(cam.dist, np.float64)]).tobytes()
        map_x, map_y, ml, mt, mr, mb, _ = _lens_maps(key, w, h)
    else:
        ml = mt = mr = mb = 0
    Wc, Hc = w + ml + mr, h + mt + mb
    Kc = K.copy()
    Kc[0, 2] += ml
    Kc[1, 2] += mt
    view = View(Kc, R, tvec, Wc, Hc)
    cam_pos = view.centre

    # --- objects --------------------------------------------------------------------------
    objects: list[Object3D] = [board_edge_object(scene)]
    occupied = list(scene.board.occupied())
    for site in occupied:
        objects.extend(tower_objects(scene, site, lighting))
    objects.extend(card_objects(scene, lighting))
    objects.extend(thing_objects(scene))
    colors = {k: tuple(v) for k, v in scene.colors.items()}
    for k, hand in enumerate(hands):
        objects.extend(hand_object(hand, k, lighting, colors, lay))  # type: ignore[arg-type]

    bw, bh = lay.board_size
    # --- light ------------------------------------------------------------------------------
    lpos = np.asarray(lighting.light_pos, np.float64)
    # the map covers the board, the card stacks and the towers (arms reach far outside)
    ext = np.array([bw / 2 + 160, bh / 2 + 160])
    fit = [np.array([[sx * ext[0], sy * ext[1], 0.0] for sx in (-1, 1) for sy in (-1, 1)])]
    fit += [f.verts for o in objects[:1 + len(occupied)] for f in o.faces]
    depth_buf = _scratch("shadow_depth", (SHADOW_SIZE, SHADOW_SIZE), np.float32)
    shadow = ShadowMap(lpos, objects, lighting.softness_mm, size=SHADOW_SIZE,
                       fit_points=np.vstack(fit), depth=depth_buf,
                       dirty=_take_dirty("shadow_depth"))
    _set_dirty("shadow_depth", shadow.box or (0, 0, 0, 0))
    gain = _exposure(lighting, lpos) * lighting.white_balance[::-1]
    light = Light(pos=lpos, ref_dist2=float(lpos @ lpos),
                  lamp=(lighting.lamp_rgb[::-1] * lighting.direct * gain).astype(np.float32),
                  ambient=(lighting.ambient_rgb[::-1] * lighting.ambient * gain
                           ).astype(np.float32),
                  shadow=shadow)

    # --- ground: table and board print, and the lamp on them --------------------------------
    Hg = view.plane_homography(0.0)
    dist_c = float(np.linalg.norm(cam_pos))
    px_per_mm = float(K[0, 0]) / max(dist_c, 1.0)
    layers = _ground(scene, view, px_per_mm, lighting, lpos)
    ground, irradiance, gloss = _ground_planes(layers)
    f32 = np.float32
    if has_dist:
        # the canvas labels are remapped into the returned ones: a scratch copy will do
        labels = _scratch("labels", layers.labels.shape, np.int16)
        np.copyto(labels, layers.labels)
    else:
        labels = layers.labels.copy()
    fp = lay.footprint
    # cast shadows: the lamp's occupancy warped onto the table; contact darkening at bases
    occ = shadow.occupancy(out=_scratch("occ", shadow.depth.shape, f32),
                           dirty=_take_dirty("occ"))
    _set_dirty("occ", shadow.occupancy_reach())
    lit = cv2.warpPerspective(occ, Hg @ np.linalg.inv(shadow.ground_homography()), (Wc, Hc),
                              dst=_scratch("lit", (Hc, Wc), f32), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    np.subtract(1, lit, out=lit)
    ao = _scratch("ao", (Hc, Wc), f32)
    ao.fill(0)
    ao_box: tuple[int, int, int, int] | None = None
    for site in occupied:
        x, y, ang = scene.tower_pose(site)
        p = view.project(_square_pts(x, y, ang, fp / 2 + 1.5))
        cv2.fillConvexPoly(ao, np.round(p * 16).astype(np.int32), 1.0, cv2.LINE_AA, 4)
        # anti-aliased edges reach a pixel past the polygon
        ao_box = union_box(ao_box, (int(math.floor(p[:, 0].min())) - 3,
                                     int(math.floor(p[:, 1].min())) - 3,
                                     int(math.ceil(p[:, 0].max())) + 4,
                                     int(math.ceil(p[:, 1].max())) + 4))
    if ao_box is not None:
        # blurred only around the towers: the rest stays exactly zero
        sigma_ao = max(1.0, 2.5 * px_per_mm)
        y0, y1, x0, x1 = blur_window(ao.shape, ao_box, sigma_ao)
        ao[y0:y1, x0:x1] = cv2.GaussianBlur(np.ascontiguousarray(ao[y0:y1, x0:x1]), (0, 0),
                                            sigma_ao)
    # ao = 1 - 0.45 * ao, in place
    np.multiply(f32(0.45), ao, out=ao)
    np.subtract(1, ao, out=ao)
    direct = cv2.multiply(irradiance, lit, dst=_scratch("direct", (Hc, Wc), f32))
    glossy = cv2.multiply(gloss, lit, dst=lit)  # lit is done with
    direct = cv2.multiply(direct, ao, dst=direct)
    amb, lamp = light.ambient, light.lamp
    planes = [cv2.addWeighted(ao, float(amb[c]), direct, float(lamp[c]), 0.0,
                              dst=_scratch(f"plane{c}", (Hc, Wc), f32)) for c in range(3)]
    irr3 = cv2.merge(planes, dst=_scratch("irr3", (Hc, Wc, 3), f32))
    planes = [np.multiply(glossy, f32(lamp[c]), out=planes[c]) for c in range(3)]
    gl3 = cv2.merge(planes, dst=_scratch("gl3", (Hc, Wc, 3), f32))
    color = cv2.multiply(ground, irr3, dst=irr3)
    color = cv2.add(color, gl3, dst=color)

    # --- objects, far to near, with the z-buffer -------------------------------------------
    canvas = Canvas(view, np.ascontiguousarray(color, dtype=np.float32), labels,
                    zbuf=_scratch("zbuf", (Hc, Wc), f32))
    order = sorted(objects, key=lambda o: -float(np.linalg.norm(o.anchor - cam_pos)))
    for obj in order:
        canvas.draw(obj, light)

    # --- truth: what a perfect reader sees -------------------------------------------------
    seen = _scratch("lit", (Hc, Wc), np.int16)  # the labels inside the frame, else 0
    if has_dist:
        np.multiply(canvas.labels, _frame_mask(key, w, h), out=seen)
    else:
        np.copyto(seen, canvas.labels)
    codes = _scratch("gl3", (Hc, Wc), np.intp)
    np.copyto(codes, seen)
    # label 0 also counts the pixels out of frame here: the truth never reads it
    counts = np.bincount(codes.ravel(), minlength=1024)
    truth = _truth(scene, cam, view, counts, lighting, hands, seen, layers.floor_areas,
                   layers.marker_areas)

    # --- camera: lens, vignetting, blur, noise, white balance, gamma -----------------------
    # (the float stages work in place on this thread's scratch arrays)
    img = canvas.color
    lab = canvas.labels
    if has_dist:
        img = cv2.remap(img, map_x, map_y, cv2.INTER_LINEAR, dst=_scratch("gl3", (h, w, 3), f32),
                        borderMode=cv2.BORDER_REPLICATE)
        lab = cv2.remap(lab, map_x, map_y, cv2.INTER_NEAREST, borderMode=cv2.BORDER_REPLICATE)
    if vignetting > 0:
        img = cv2.multiply(img, _vignette(w, h, float(K[0, 2]), float(K[1, 2]),
                                          float(vignetting)), dst=img)
    r = cv2.sqrt(img, dst=img)  # the canvas is never negative
    out = cv2.convertScaleAbs(r, dst=_scratch("ao", (h, w, 3), np.uint8),
                              alpha=255 / SQRT_RANGE)
    out = cv2.LUT(out, _SQRT_LUT, dst=out)  # = encode_srgb(img)
    if blur > 0:
        out = cv2.GaussianBlur(out, (0, 0), blur, dst=_scratch("direct", (h, w, 3), np.uint8))
    if noise > 0:
        out = _add_noise(out, noise, rng)  # a new array
    else:
        out = out.copy()
    jpeg: bytes | None = None
    if jpeg_quality is not None:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg_quality)])
        if ok:
            jpeg = np.asarray(buf).tobytes()
            out = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR))
    hand_info = []
    for k, hand in enumerate(hands):
        m = (lab == LABEL_HAND + k).view(np.uint8)  # 0 or 1
        x, y, bw_, bh_ = cv2.boundingRect(m)
        hand_info.append({"seat": hand.seat.value, "pixels": int(cv2.countNonZero(m)),
                          "box": [int(x), int(y), int(x + bw_), int(y + bh_)] if bw_ else None})
    truth["hands"] = hand_info
    truth["jpeg_quality"] = jpeg_quality
    return Rendered(out, truth, np.ascontiguousarray(lab), cam, scene, lighting, jpeg)


def _exposure(lighting: Lighting, lpos: np.ndarray) -> np.float32:
    cos_c = lpos[2] / max(float(np.linalg.norm(lpos)), 1.0)
    return np.float32(lighting.exposure * 0.9 / (lighting.ambient + lighting.direct * cos_c))


def _square_pts(x: float, y: float, ang_deg: float, half: float) -> np.ndarray:
    a = math.radians(ang_deg)
    ex = np.array([math.cos(a), math.sin(a), 0.0]) * half
    ey = np.array([-math.sin(a), math.cos(a), 0.0]) * half
    c = np.array([x, y, 0.0])
    return np.array([c - ex - ey, c + ex - ey, c + ex + ey, c - ex + ey])


def _flat_square(x: float, y: float, hx: float, hy: float, z: float = 0.0) -> Face:
    o = np.array([x - hx, y - hy, z])
    v = np.array([o, o + [2 * hx, 0, 0], o + [2 * hx, 2 * hy, 0], o + [0, 2 * hy, 0]])
    return Face(v, o, np.array([1.0, 0, 0]), np.array([0, 1.0, 0]), UP.copy(), np.zeros(3))


def _stamp(labels: np.ndarray, view: View, face: Face, value: int,
           box: tuple[int, int, int, int]) -> None:
    """Write a label where a ground polygon covers at least half a pixel."""
    for r in rasterize(view, face, box, coords=False):  # coverage is all it needs
        hh, ww = r.cov.shape
        roi = labels[r.y0:r.y0 + hh, r.x0:r.x0 + ww]
        np.copyto(roi, np.int16(value), where=r.cov >= 0.5)


def _grid_visible(lay: Layout, view: View, labels: np.ndarray, label: int, centre: np.ndarray,
                  right: np.ndarray, fwd: np.ndarray, z: float) -> float:
    """Visible fraction of the top card's two grids (the part a reader reads)."""
    cell = lay.card_cell
    half = max(abs(o) for o in lay.card_grid_offsets) + 1.5 * cell
    b1 = lay.card_size[1] / 2 - lay.card_top_offset  # fwd points to the top edge
    b0 = b1 - 3 * cell
    quad = np.array([np.r_[centre + a * right + b * fwd, z]
                     for a, b in ((-half, b0), (half, b0), (half, b1), (-half, b1))])
    area = polygon_area_px(view, quad)
    if area < 1.0:
        return 0.0
    pts = np.round(view.project(quad) * 16).astype(np.int32)
    # the polygon's pixels lie within its corners' box (a pixel of slack): drawn and
    # counted there alone (moved by whole pixels, it fills the same pixels)
    H, W = labels.shape
    x0, y0 = max(0, int(pts[:, 0].min()) // 16 - 2), max(0, int(pts[:, 1].min()) // 16 - 2)
    x1, y1 = min(W, int(pts[:, 0].max()) // 16 + 3), min(H, int(pts[:, 1].max()) // 16 + 3)
    if x1 <= x0 or y1 <= y0:
        return 0.0
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [pts - np.int32(16) * np.array([x0, y0], np.int32)], 1, cv2.LINE_8, 4)
    seen = int(np.count_nonzero((labels[y0:y1, x0:x1] == label) & mask.astype(bool)))
    return float(min(1.0, seen / area))


def _truth(scene: Scene, cam: CameraModel, view: View, counts: np.ndarray, lighting: Lighting,
           hands: Sequence[Hand], labels: np.ndarray, floor_areas: dict[int, float],
           marker_areas: dict[int, float]) -> dict[str, Any]:
    """``floor_areas``, ``marker_areas``: the empty sites' squares and the markers as the
    ground projected them (pixels)."""
    lay = scene.layout
    board = scene.board
    colors = list(scene.colors)
    vis = []
    unseen = []
    for i in range(lay.site_count):
        site = Site.from_index(i)
        hgt = board.height(site)
        if hgt:
            x, y, ang = scene.top_pose(site)
            z = hgt * lay.storey
            top = _square_pts(x, y, ang, lay.footprint / 2) + np.array([0, 0, z])
            top_area = polygon_area_px(view, top)
            x, y, ang = scene.tower_pose(site)
            base = _square_pts(x, y, ang, lay.footprint / 2)
            site_area = hull_area_px(view, np.vstack([base, top]))
            top_f = counts[LABEL_TOP + i] / max(top_area, 1e-6)
            site_f = (counts[LABEL_TOP + i] + counts[LABEL_SIDE + i]) / max(site_area, 1e-6)
        else:
            area = floor_areas[i]
            top_f = site_f = counts[LABEL_FLOOR + i] / max(area, 1e-6)
        top_f, site_f = float(min(1.0, top_f)), float(min(1.0, site_f))
        entry = {**site.to_json(), "top": round(top_f, 4), "site": round(site_f, 4)}
        vis.append(entry)
        if top_f < 0.5:
            unseen.append(site.to_json())
    markers = []
    for mid, area in marker_areas.items():
        frac = counts[LABEL_MARKER + mid] / max(area, 1e-6)
        corners = cam.project(lay.marker_corners(mid))
        inside = bool(np.all((corners >= 2) & (corners <= np.array([cam.width - 3,
                                                                     cam.height - 3]))))
        if frac >= 0.97 and inside:
            markers.append(mid)
    stacks: dict[str, Any] = {}
    cards: dict[str, Any] = {}
    for k, seat in enumerate(SEATS):
        cell = scene.cards.get(seat)
        if cell is None:
            continue
        along, ang = scene.stack_pose(seat)
        c, right, fwd = lay.card_frame(seat, along, ang)
        count = max(1, int(scene.stack_counts.get(seat, 1)))
        z = -_board_thickness(lay) + count * _card_thickness(lay)
        cw, ch = lay.card_size
        card = np.array([np.r_[c + a * right + b * fwd, z] for a, b in
                         ((-cw / 2, -ch / 2), (cw / 2, -ch / 2), (cw / 2, ch / 2),
                          (-cw / 2, ch / 2))])
        frac = counts[LABEL_CARD + k] / max(polygon_area_px(view, card), 1e-6)
        grid_frac = _grid_visible(lay, view, labels, LABEL_CARD + k, c, right, fwd, z)
        in_img = cam.project(card)
        inside = bool(np.all((in_img >= 0) & (in_img <= np.array([cam.width - 1,
                                                                   cam.height - 1]))))
        stack: dict[str, Any] = {"cell": [int(cell[0]), int(cell[1])], "count": count,
                                 "visible": round(float(min(1.0, frac)), 4),
                                 "grid_visible": round(grid_frac, 4), "inside": inside}
        stacks[seat.value] = stack
        if grid_frac >= 0.9:
            cards[seat.value] = {"cell": [int(cell[0]), int(cell[1])]}
    board_json = board.to_json(colors, blocks=False)
    expected = dict(board_json)
    unseen_set = {(u["city"], u["row"], u["col"]) for u in unseen}
    expected["sites"] = [s for s in board_json["sites"]
                         if (s["city"], s["row"], s["col"]) not in unseen_set]
    expected["unseen"] = unseen
    expected["cards"] = cards
    return {
        "format": "manhattan-sim-truth/1",
        "camera": cam.to_json(),
        "pose": cam.pose_json(),
        "board": board_json,
        "expected": expected,
        "visibility": vis,
        "unseen": unseen,
        "cards": cards,
        "card_stacks": stacks,
        "markers_visible": sorted(markers),
        "lighting": lighting.to_json(),
        "colors": {k: list(v) for k, v in scene.colors.items()},
        "label_codes": LABEL_CODES,
    }
