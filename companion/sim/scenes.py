"""Random but realistic games on the table, and the one-call photo generator.

``sample_photo(seed, ...)`` is what the vision tests and ``companion evaluate`` use: the
same seed always gives the same image bytes and the same truth.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from companion.rules.board import Block, Board, Site
from companion.rules.topology import Seat
from companion.sim.camera import random_camera
from companion.sim.layout import Layout, default_layout
from companion.sim.render import Rendered, render
from companion.sim.scene import TABLES, Scene, random_hand, random_lighting

SeedLike = int | Sequence[int]


def _supply(layout: Layout) -> dict[int, int]:
    return {int(k): int(v) for k, v in layout.profile["supply"].items()}


def random_board(rng: np.random.Generator, n_buildings: int, colors: Sequence[str],
                 max_height: int = 10, *, tall: int = 0,
                 layout: Layout | None = None) -> Board:
    """``n_buildings`` towers of legal blocks (1-4 storeys) from each colour's supply.

    Heights are mostly 1-8 storeys; ``tall`` towers of 15-25 storeys (capped by
    ``max_height``) stand for the late game of a four-player match.
    """
    lay = layout or default_layout()
    supply = {c: dict(_supply(lay)) for c in colors}
    n = int(min(max(n_buildings, 0), lay.site_count))
    sites = [Site.from_index(int(i)) for i in rng.choice(lay.site_count, n, replace=False)]
    board = Board.empty()
    for k, site in enumerate(sites):
        if k < tall:
            target = int(rng.integers(15, 26))
        else:
            target = int(np.clip(round(rng.gamma(2.0, 1.6)), 1, 8))
        target = max(1, min(target, max_height))
        height = 0
        while height < target:
            left = [(c, s) for c in colors for s, cnt in supply[c].items()
                    if cnt > 0 and s <= target - height]
            if not left:
                break
            c, s = left[int(rng.integers(0, len(left)))]
            supply[c][s] -= 1
            board = board.with_block(site, Block(c, s))
            height += s
    return board


def random_cards(rng: np.random.Generator, p_card: float = 0.8
                 ) -> tuple[dict[Seat, tuple[int, int] | None], dict[Seat, int]]:
    """Top card and stack size per seat (some seats have played nothing yet)."""
    cards: dict[Seat, tuple[int, int] | None] = {}
    counts: dict[Seat, int] = {}
    for seat in (Seat.S, Seat.W, Seat.N, Seat.E):
        if rng.random() < p_card:
            cards[seat] = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
            counts[seat] = int(rng.integers(1, 13))
    return cards, counts


def random_scene(rng: np.random.Generator, colors: str = "classic", tall: bool = False,
                 layout: Layout | None = None) -> Scene:
    lay = layout or default_layout()
    palette: Mapping[str, tuple[int, int, int]] = lay.colour_set(colors)
    n = int(rng.integers(3, 40))
    board = random_board(rng, n, list(palette), 25 if tall else 10,
                         tall=int(rng.integers(1, 4)) if tall else 0, layout=lay)
    cards, counts = random_cards(rng)
    table = list(TABLES)[int(rng.integers(0, len(TABLES)))]
    return Scene(board, palette, cards, counts, layout_seed=int(rng.integers(0, 2**31)),
                 table=table, deck=bool(rng.random() < 0.6), layout=lay)


def sample_photo(seed: SeedLike, kind: str = "mounted", side: Seat | None = None,
                 colors: str = "classic", tall: bool = False, hands: int = 0,
                 block_jitter: tuple[float, float] = (0.0, 0.0)) -> Rendered:
    """One labelled photo: a random game, camera, lamp and optional hands, from ``seed``.

    Phone photos are JPEG-compressed; mounted-camera frames are raw.
    ``block_jitter``: each block's own placement error (mm, degrees), see ``Scene``.
    """
    rng = np.random.default_rng(seed)
    scene = random_scene(rng, colors, tall)
    if block_jitter != (0.0, 0.0):
        scene = dataclasses.replace(scene, block_jitter=(float(block_jitter[0]),
                                                         float(block_jitter[1])))
    camera = random_camera(rng, kind, side)
    lighting = random_lighting(rng)
    seats = [Seat(v) for v in rng.permutation(["S", "W", "N", "E"])]
    hand_list = [random_hand(rng, scene.board, seat=seats[k % 4]) for k in range(int(hands))]
    if kind == "phone":
        noise = float(rng.uniform(0.003, 0.012))
        blur = float(rng.uniform(0.4, 1.1))
        jpeg: int | None = int(rng.integers(72, 96))
    else:
        noise = float(rng.uniform(0.004, 0.015))
        blur = float(rng.uniform(0.5, 1.0))
        jpeg = None
    out = render(scene, camera, lighting, rng=rng, hands=hand_list, noise=noise, blur=blur,
                 jpeg_quality=jpeg, vignetting=float(rng.uniform(0.1, 0.4)))
    out.truth["seed"] = list(seed) if not isinstance(seed, int) else seed
    out.truth["kind"] = kind
    out.truth["colour_set"] = colors
    if scene.block_jitter != (0.0, 0.0):
        out.truth["block_jitter"] = list(scene.block_jitter)
    return out


def parse_block_jitter(text: str) -> tuple[float, float]:
    """``MM,DEG`` (or ``MM``) as a ``block_jitter`` for the command line."""
    parts = text.split(",")
    try:
        if len(parts) not in (1, 2):
            raise ValueError
        mm = float(parts[0])
        deg = float(parts[1]) if len(parts) == 2 else 0.0
    except ValueError:
        raise ValueError(f"expected MM,DEG (e.g. 2.5,4), got {text!r}") from None
    if not (0.0 <= mm <= 10.0 and 0.0 <= deg <= 20.0):
        raise ValueError(f"block jitter {text!r} out of range (0-10 mm, 0-20 degrees)")
    return mm, deg


def labelled_set(n: int, seed: int, kind: str = "mounted",
                 block_jitter: tuple[float, float] = (0.0, 0.0)
                 ) -> Iterator[tuple[str, Rendered]]:
    """``n`` named photos (both colour sets, some tall towers, some hands), reproducible."""
    for i in range(int(n)):
        yield labelled_photo(seed, i, kind, block_jitter)


def labelled_photo(seed: int, i: int, kind: str = "mounted",
                   block_jitter: tuple[float, float] = (0.0, 0.0)) -> tuple[str, Rendered]:
    """Photo ``i`` of :func:`labelled_set` (``seed``, ``kind``) alone, with its name."""
    pick = np.random.default_rng([seed, i, 99])
    colors = "2017" if pick.random() < 0.4 else "classic"
    tall = bool(pick.random() < 0.3)
    hands = int(pick.choice([0, 0, 0, 1, 1, 2]))
    return f"{kind}-{seed}-{i:04d}", sample_photo([seed, i], kind, colors=colors, tall=tall,
                                                  hands=hands, block_jitter=block_jitter)
