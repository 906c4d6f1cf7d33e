"""What the renderer keeps from frame to frame (objects, face rasters and shading, the
ground, scratch arrays) must never show in a frame: a frame drawn among other tables'
frames is the frame drawn with nothing kept, to the byte, and a frame handed out is
never written over by a later one."""

from __future__ import annotations

import hashlib
import sys

import numpy as np

from companion.rules.board import Block, Board, Site
from companion.sim import Lighting, Scene, random_camera, render
from companion.sim.layout import default_layout
from companion.sim.raster import FACE_MEMO
from companion.sim.render import tower_objects
from companion.sim.scene import Thing
from companion.simtable import SimTable

_render = sys.modules["companion.sim.render"]
NEUTRAL = Lighting(kelvin=6000, ambient_kelvin=6000, ambient=0.4, direct=0.6,
                   light_pos=(100.0, -200.0, 1500.0), softness_mm=4.0, specular=0.0, awb=1.0)


def _forget_everything() -> None:
    FACE_MEMO.clear()
    _render._KEPT.clear()
    _render._GROUND_CACHE.clear()
    _render._SCRATCH.__dict__.clear()


def _digest(image: object) -> str:
    return hashlib.sha256(memoryview(image)).hexdigest()  # type: ignore[arg-type]


def test_frames_drawn_among_other_tables_frames_are_the_frames_drawn_afresh() -> None:
    frames = 16
    table = SimTable(seed=4, hand_frames=1, still_frames=1)
    other = SimTable(seed=9, players=3, edition="2017", hand_frames=1, still_frames=1,
                     kind="phone")
    kept, handed = [], []
    for _ in range(frames):
        frame = table.read()
        kept.append(_digest(frame.image))
        handed.append(frame)
        other.read()  # another camera, lamp and board between this table's frames
    fresh = SimTable(seed=4, hand_frames=1, still_frames=1)
    afresh = []
    for _ in range(frames):
        _forget_everything()
        afresh.append(_digest(fresh.read().image))
    assert table.moves == fresh.moves and len(table.moves) >= 4
    assert kept == afresh
    # the frames handed out earlier are as they were drawn
    assert [_digest(f.image) for f in handed] == kept


def test_a_tower_kept_from_one_frame_is_drawn_at_its_own_site_in_the_next() -> None:
    """Two equal towers at two sites, and a frame first drawn with one of them: each
    must be drawn where it stands (a kept tower is the tower at its site, not any
    tower of those blocks)."""
    rng = np.random.default_rng(3)
    camera = random_camera(rng, "mounted")
    palette = default_layout().colour_set("classic")
    tower = (Block("red", 2), Block("blue", 3))
    one = Board.from_towers({Site(1, 1, 1): tower})
    two = Board.from_towers({Site(1, 1, 1): tower, Site(4, 0, 2): tower})

    def draw(board: Board) -> str:
        scene = Scene(board, palette, {}, {}, layout_seed=5)
        image = render(scene, camera, NEUTRAL, rng=np.random.default_rng(1)).image
        return _digest(image)

    _forget_everything()
    afresh = draw(two)
    draw(one)
    assert draw(two) == afresh
    # each site's kept tower stands at that site, and a kept one is the one built anew
    scene = Scene(two, palette, {}, {}, layout_seed=5)
    kept = {site: tower_objects(scene, site, NEUTRAL) for site in two.occupied()}
    _forget_everything()
    for site, objects in kept.items():
        x, y = default_layout().site_xy[site.index]
        for obj in objects:
            centre = np.mean([f.verts.mean(0) for f in obj.faces], 0)
            assert abs(centre[0] - x) < 10 and abs(centre[1] - y) < 10
        built = tower_objects(scene, site, NEUTRAL)
        assert [f.verts.tobytes() for o in built for f in o.faces] == \
            [f.verts.tobytes() for o in objects for f in o.faces]


def test_no_stage_uses_a_scratch_array_after_another_stage_took_it(monkeypatch) -> None:
    """The renderer's stages lend one another its scratch arrays by name, in an order
    only `_scratch`'s docstring records: a stage that kept one after a later stage took
    the same name would read that stage's numbers, the same wrong ones every run (so
    comparing runs cannot tell). Drawn again with every array taken fresh and filled
    with a byte pattern (no two stages share memory, nothing is left over from an
    earlier frame), each frame must be the same to the byte: hands, a thing set down,
    both camera kinds, a new ground and a kept one."""
    cup = Thing(40.0, -60.0, (30.0, 30.0, 45.0), (200, 200, 190))

    def film(frames: int) -> list[str]:
        _forget_everything()
        mounted = SimTable(seed=4, hand_frames=1, still_frames=1, put=(1, cup))
        phone = SimTable(seed=9, players=3, edition="2017", hand_frames=1, still_frames=1,
                         kind="phone")
        out = []
        for _ in range(frames):
            out.append(_digest(mounted.read().image))
            out.append(_digest(phone.read().image))
        return out

    shared = film(5)
    taken: dict[str, np.ndarray] = {}

    def fresh(name: str, shape: tuple[int, ...], dtype: object) -> np.ndarray:
        dt = np.dtype(dtype)
        n = int(np.prod(shape)) * dt.itemsize
        buf = np.full(max(n, 64), 0xA5 ^ len(taken) % 251, np.uint8)
        bufs = getattr(_render._SCRATCH, "bufs", None)
        if bufs is None:
            bufs = _render._SCRATCH.bufs = {}
        bufs[name] = taken[name] = buf  # what the dirty boxes and the vignette compare
        return buf[:n].view(dt).reshape(shape)

    monkeypatch.setattr(_render, "_scratch", fresh)
    assert film(5) == shared

    # the check fails when two arrays in use share memory: here the vignette's two
    # temporaries, so its falloff is worked out from numbers already overwritten
    def lent_twice(name: str, shape: tuple[int, ...], dtype: object) -> np.ndarray:
        if name == "plane1" and np.dtype(dtype) == np.float32 and "plane0" in taken:
            n = int(np.prod(shape))
            return taken["plane0"][:4 * n].view(np.float32).reshape(shape)
        return fresh(name, shape, dtype)

    monkeypatch.setattr(_render, "_scratch", lent_twice)
    assert film(1) != shared[:2]
