"""Videos of a game: a fixed (slightly vibrating) camera watches moves being made.

Between two states a hand enters from the mover's edge holding the new block, lowers it
onto the site, lets go and leaves; the played card appears on the mover's stack when the
block lands. This is what the live tracker sees at 15 frames per second.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from companion.rules.board import Board, Site
from companion.rules.topology import Seat
from companion.sim.camera import CameraModel, random_camera
from companion.sim.layout import SEAT_FORWARD, default_layout
from companion.sim.render import HELD_TOP_ABOVE_TIP, Rendered, render
from companion.sim.scene import (
    Hand,
    Lighting,
    Scene,
    random_hand,
    random_lighting,
    tilt_to_clear,
)

Cards = Mapping[Seat, tuple[int, int] | None]


@dataclass(frozen=True)
class GameState:
    """What lies on the table between two moves."""

    board: Board
    cards: Cards
    stack_counts: Mapping[Seat, int] | None = None


@dataclass(eq=False)
class Frame:
    """One video frame and where it sits in the game."""

    index: int
    time_s: float
    state: int  # index of the state shown on the board
    phase: str  # "still", "enter", "place", "leave"
    rendered: Rendered


def _diff(a: Board, b: Board) -> Site | None:
    """The site whose tower changed between two boards (the move's site)."""
    for i, (ta, tb) in enumerate(zip(a.towers, b.towers, strict=True)):
        if ta != tb:
            return Site.from_index(i)
    return None


def _mover(a: Cards, b: Cards) -> Seat | None:
    for seat, cell in b.items():
        if cell is not None and a.get(seat) != cell:
            return seat
    return None


def _ease(x: float) -> float:
    x = min(1.0, max(0.0, x))
    return x * x * (3 - 2 * x)


def _shaken(cam: CameraModel, rng: np.random.Generator, amount: float) -> CameraModel:
    """The camera after a tiny vibration (a fraction of a pixel to a pixel)."""
    if amount <= 0:
        return cam
    rv = np.asarray(cam.rvec) + rng.normal(0, 0.0004 * amount, 3)
    tv = np.asarray(cam.tvec) + rng.normal(0, 0.25 * amount, 3)
    return CameraModel(cam.K, cam.dist, rv, tv, cam.width, cam.height)


def render_sequence(states: Sequence[GameState], *, seed: int = 0,
                    camera: CameraModel | None = None, lighting: Lighting | None = None,
                    colors: str = "classic", fps: float = 15.0, still_s: float = 0.4,
                    move_s: float = 2.0, vibration: float = 1.0, noise: float = 0.008,
                    blur: float = 0.7) -> Iterator[Frame]:
    """Frames of the moves from ``states[0]`` to ``states[-1]`` (one block per step)."""
    if not states:
        return
    lay = default_layout()
    rng = np.random.default_rng([seed, 77])
    palette = lay.colour_set(colors)
    cam = camera or random_camera(rng, "mounted")
    light = lighting or random_lighting(rng)
    layout_seed = int(rng.integers(0, 2**31))
    hand_look = random_hand(rng)
    dt = 1.0 / fps
    index = 0

    def scene_for(st: GameState) -> Scene:
        counts = dict(st.stack_counts) if st.stack_counts is not None else {
            s: 1 for s, c in st.cards.items() if c is not None}
        return Scene(st.board, palette, dict(st.cards), counts, layout_seed=layout_seed,
                     table="oak")

    def frame(scene: Scene, hands: list[Hand], state: int, phase: str) -> Frame:
        nonlocal index
        r = render(scene, _shaken(cam, rng, vibration), light, rng=rng, hands=hands,
                   noise=noise, blur=blur, vignetting=0.2)
        f = Frame(index, index * dt, state, phase, r)
        index += 1
        return f

    for _ in range(max(1, int(round(still_s * fps)))):
        yield frame(scene_for(states[0]), [], 0, "still")
    for k in range(1, len(states)):
        before, after = states[k - 1], states[k]
        site = _diff(before.board, after.board)
        mover = _mover(before.cards, after.cards) or Seat.S
        if site is None:
            for _ in range(max(1, int(round(still_s * fps)))):
                yield frame(scene_for(after), [], k, "still")
            continue
        block = after.board.tower(site)[-1]
        x, y = lay.site_xy[site.index]
        fx, fy = SEAT_FORWARD[mover]
        bw, bh = lay.board_size
        reach = (bw if fx else bh) / 2 + 260
        start = np.array([x - fx * reach, y - fy * reach])
        end = np.array([x, y]) + np.array([fx, fy]) * 0.0
        top = before.board.height(site) * lay.storey
        high = max((before.board.height(s) for s in before.board.occupied()), default=0)
        cruise = high * lay.storey + block.storeys * lay.storey + 50
        land = top + block.storeys * lay.storey - HELD_TOP_ABOVE_TIP
        n_move = max(2, int(round(move_s * fps / 2)))
        base = dataclasses.replace(hand_look, seat=mover, yaw_deg=0.0, tilt_deg=12.0,
                                   holding=block, holding_color=palette[block.color])
        grip = 35 * base.scale  # the block hangs this far behind the fingertips
        # enter: travel in high, then come down onto the site
        for j in range(n_move):
            u = _ease((j + 1) / n_move)
            xy = start + (end - start) * u + np.array([fx, fy]) * grip * u
            h = cruise + (land - cruise) * _ease((u - 0.6) / 0.4)
            hand = dataclasses.replace(base, tip_xy=(float(xy[0]), float(xy[1])),
                                       tip_height=float(h))
            hand = dataclasses.replace(hand, tilt_deg=tilt_to_clear(before.board, hand))
            yield frame(scene_for(before), [hand], k - 1, "enter" if u < 1 else "place")
        # leave: the block now stands on the board, the card lies on the stack
        empty = dataclasses.replace(base, holding=None, holding_color=None)
        for j in range(n_move):
            u = _ease((j + 1) / n_move)
            xy = end + np.array([fx, fy]) * grip + (start - end) * u
            h = land + 20 + (cruise - land) * min(1.0, u * 2.5)
            hand = dataclasses.replace(empty, tip_xy=(float(xy[0]), float(xy[1])),
                                       tip_height=float(h))
            hand = dataclasses.replace(hand, tilt_deg=tilt_to_clear(after.board, hand))
            yield frame(scene_for(after), [hand] if u < 1 else [], k, "leave")
        for _ in range(max(1, int(round(still_s * fps)))):
            yield frame(scene_for(after), [], k, "still")


def write_video(frames: Sequence[Frame] | Iterator[Frame], path: str, fps: float = 15.0) -> int:
    """Write frames to a video file (MJPG in .avi works everywhere); returns the count."""
    writer: cv2.VideoWriter | None = None
    n = 0
    for f in frames:
        img = f.rendered.image
        if writer is None:
            writer = cv2.VideoWriter(path, cv2.VideoWriter.fourcc(*"MJPG"), fps,
                                     (img.shape[1], img.shape[0]))
        writer.write(img)
        n += 1
    if writer is not None:
        writer.release()
    return n

