"""A seeded bot game photographed by the independent ray tracer (tests/vision/raycast.py).

The replay's other photographed games come from ``companion/sim``, the
renderer the reader was developed against; this one shoots the same kind of
game with the ray tracer that shares no code with the companion, so a replay
measured here is measured on photos made differently.

One table per game: the board art, the table, the lamp, the plastic's colour,
the card style and where each block stands (its placement jitter is drawn once,
when it is placed) stay put from photo to photo; each photo is a new hand-held
phone camera with its own noise (with ``kind="mounted"``, one camera on a
stand for the whole game: the replay then fits each build to what changed).
Each seat's played cards lie in a stack in front of it, the card played last
on top.

    python -m tests.replay.raygame OUTDIR --players 2 --turns 12 --seed 0
    python -m tests.replay.raygame OUTDIR --players 4 --seed 94 --kind mounted --edition 2017
    companion replay OUTDIR --json      # compare with OUTDIR/truth.json

Rendering takes about 10 s a phone photo on one core (``--workers``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.rules import Seat, Site
from tests.replay.photogame import PlayedGame, play
from tests.vision import raycast as rc


def _edition(game: PlayedGame) -> str:
    return "2017" if set(game.config.colors) <= set(rc.PALETTES["2017"]) else "classic"


class Table:
    """What stays put through one game: the art, the light, the plastic, the placements."""

    def __init__(self, game: PlayedGame, seed: int, kind: str) -> None:
        self.game = game
        self.kind = kind
        self.seed = seed
        rng = np.random.default_rng([seed, 7])
        self.edition = _edition(game)
        pal = rc.PALETTES[self.edition]
        self.plastic = {n: rc.srgb2lin(np.clip(np.array(pal[n]) + rng.normal(0, 6, 3), 0, 255))
                        * 0.92 for n in pal}
        self.lights, self.amb, self.light_desc = rc.make_lights(rng, kind)
        self.textures, self.board_info, self.table_info = rc.make_textures(rng)
        self.card_style = rc.card_style(rng)
        self._blocks: dict[tuple[int, int], tuple[float, float, float, float]] = {}
        self._cards: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._stack_at: dict[str, tuple[float, float, float]] = {}

    def _placement(self, site: Site, j: int) -> tuple[float, float, float, float]:
        """The j-th block's offset (dx, dy), turn and shade at ``site``: drawn once."""
        key = (site.index, j)
        if key not in self._blocks:
            rng = np.random.default_rng([self.seed, 11, site.index, j])
            dx, dy, da = rc.block_placement(rng, None if j == 0 else self._placement(site, 0)[:3])
            self._blocks[key] = (float(dx), float(dy), da, float(1 + rng.normal(0, 0.025)))
        return self._blocks[key]

    def _card(self, seat: str, i: int, cell: tuple[int, int], deal: int) -> tuple[Any, ...]:
        """The i-th card of ``seat``'s stack: where it lies and its face, drawn once
        (``deal``: how often the deck was reshuffled, which clears the stacks)."""
        key = (seat, deal, i, cell)
        if key not in self._cards:
            rng = np.random.default_rng([self.seed, 13, "SWNE".index(seat), deal, i,
                                         3 * cell[0] + cell[1]])
            if seat not in self._stack_at:
                srng = np.random.default_rng([self.seed, 12, "SWNE".index(seat)])
                self._stack_at[seat] = (float(srng.uniform(-40, 40)), float(srng.uniform(10, 14)),
                                        math.radians(float(srng.uniform(-10, 10))))
            along, gap, ang = self._stack_at[seat]
            vin = np.array(rc.SEAT_IN[seat])
            uin = np.array([vin[1], -vin[0]])  # the holder's right
            edge = np.array(rc.SEAT_EDGE[seat])
            a = ang + math.radians(float(rng.uniform(-4, 4)))
            mid = edge + uin * (along + rng.uniform(-5, 5)) - vin * (gap + rng.uniform(0, 4))
            c, u, v = rc.card_frame(seat, mid, a)
            tex = rc.Tex(rc.make_card_texture(rng, cell, self.card_style), rc.CARD_PPM,
                         -rc.CARD_W / 2, rc.CARD_H / 2, scale=0.86)
            self._cards[key] = (c, u, v, tex)
        return self._cards[key]

    def scene(self, k: int) -> dict[str, Any]:
        """The ray tracer's scene of the table after the game's k-th build or pass."""
        state = self.game.states[k]
        objs: list[dict[str, Any]] = []
        tops: dict[tuple[int, int, int], int] = {}
        board: dict[tuple[int, int, int], list[tuple[str, int]]] = {}
        for site in _sites():
            tower = state.board.tower(site)
            if not tower:
                continue
            key = (site.city, site.row, site.col)
            sx, sy = rc.site_centre(*key)
            z = 0.0
            for j, block in enumerate(tower):
                dx, dy, da, shade = self._placement(site, j)
                hz = rc.STOREY * block.storeys / 2
                objs.append(rc._box([sx + dx, sy + dy, z + hz], rc._rot_z(math.radians(da)),
                                    [rc.FOOT / 2, rc.FOOT / 2, hz], block.color,
                                    self.plastic[block.color] * np.float32(shade),
                                    block.storeys, 0.0, "site", key))
                z += rc.STOREY * block.storeys
            tops[key] = len(objs) - 1
            board[key] = [(b.color, b.storeys) for b in tower]
        stacks = {}
        for seat, cards in state.played.items():
            name = seat.name if isinstance(seat, Seat) else str(seat)
            for i, card in enumerate(cards):
                cell = (card.row, card.col)
                c, u, v, tex = self._card(name, i, cell, state.reshuffles)
                objs.append({"type": "card", "c": c, "u": u, "v": v,
                             "z": rc.TABLE_Z + 0.3 * (i + 1), "tex": tex, "seat": name,
                             "cell": cell, "top": i == len(cards) - 1, "role": "card"})
            if cards:
                stacks[name] = (cards[-1].row, cards[-1].col)
        return {"edition": self.edition, "colours": list(self.game.config.colors),
                "board": board, "objs": objs, "tops": tops, "stacks": stacks,
                "extra": {"spare_blocks": 0, "mug": False}}

    def shoot(self, k: int, n: int) -> tuple[np.ndarray, dict[str, Any]]:
        """Photo ``n`` of the game: the table after its k-th move, from a new camera."""
        rng = np.random.default_rng([self.seed, 17, n])
        # a phone moves between photos; a mounted camera stays on its stand
        cam, cmeta = rc.make_camera(np.random.default_rng([self.seed, 16]) if self.kind == "mounted"
                                    else rng, self.kind)
        scene = self.scene(k)
        lin = rc.render_linear(scene, cam, self.lights, self.amb, rng, self.textures)
        dev_rng = _StandRng(np.random.default_rng([self.seed, 18]), rng) \
            if self.kind == "mounted" else rng
        img, _, _, dev = rc.develop(lin, dev_rng, self.kind, cam, self.lights, self.amb)
        meta = dict(cmeta)
        meta.update({"light": self.light_desc, "kind": self.kind, "seed": self.seed,
                     "photo": n, "after_move": k, "edition": self.edition,
                     "board_style": self.board_info["style"], "table": self.table_info["kind"],
                     "develop": dev})
        return img, rc.make_truth(scene, cam, meta)


class _StandRng:
    """A camera on a stand keeps its settings from shot to shot (vignetting, blur,
    white balance, exposure, noise level, tone curve), not its sensor noise: the
    develop step's few settings come from one generator per game, its per-pixel
    draws from the photo's own."""

    def __init__(self, fixed: np.random.Generator, fresh: np.random.Generator) -> None:
        self.fixed, self.fresh = fixed, fresh

    def _pick(self, size: Any) -> np.random.Generator:
        return self.fresh if size is not None and int(np.prod(size)) > 16 else self.fixed

    def uniform(self, low: float = 0.0, high: float = 1.0, size: Any = None) -> Any:
        return self._pick(size).uniform(low, high, size)

    def normal(self, loc: float = 0.0, scale: float = 1.0, size: Any = None) -> Any:
        return self._pick(size).normal(loc, scale, size)

    def standard_normal(self, size: Any = None) -> Any:
        return self.fresh.standard_normal(size)

    def random(self) -> float:
        return float(self.fixed.random())

    def integers(self, low: int, high: int | None = None) -> Any:
        return self.fixed.integers(low, high)


def _sites() -> list[Site]:
    return [Site.from_index(i) for i in range(54)]


@lru_cache(maxsize=2)
def _table(players: int, turns: int, seed: int, kind: str, edition: str = "classic") -> Table:
    """One game's table per process (its art and light take a second or two to make),
    not one per photo; what it draws later is seeded, so the photos are the same."""
    return Table(play(players, seed, turns, edition), seed, kind)


def _shoot_one(args: tuple[int, int, int, str, int, int, str, str]) -> str:
    players, turns, seed, kind, k, n, folder, edition = args
    img, truth = _table(players, turns, seed, kind, edition).shoot(k, n)
    name = f"IMG_{n:03d}." + ("jpg" if kind == "phone" else "png")
    path = Path(folder) / name
    if kind == "phone":
        cv2.imwrite(str(path), img, [cv2.IMWRITE_JPEG_QUALITY, 90])
    else:
        cv2.imwrite(str(path), img)
    path.with_suffix(".json").write_text(json.dumps(truth), encoding="utf-8")
    return name


def shoot_game(folder: Path, players: int, turns: int, seed: int, kind: str = "phone",
               workers: int = 1, edition: str = "classic") -> dict[str, Any]:
    """Photograph a seeded game after each of its first ``turns`` builds or passes.

    Writes the photos, ``game.json`` (players and edition, as a replay folder may
    hold it) and ``truth.json`` (the moves, in notation); returns the truth.
    """
    folder.mkdir(parents=True, exist_ok=True)
    game = play(players, seed, turns, edition)
    jobs = [(players, turns, seed, kind, k, n, str(folder), edition)
            for n, k in enumerate(range(1, len(game.states)))]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(_shoot_one, jobs))
    else:
        for job in jobs:
            _shoot_one(job)
    (folder / "game.json").write_text(json.dumps({
        "players": [p.to_json() for p in game.config.players],
        "edition": game.config.edition.name}), encoding="utf-8")
    truth = {"moves": [str(m) for m in game.moves], "seed": seed, "kind": kind}
    (folder / "truth.json").write_text(json.dumps(truth, indent=1), encoding="utf-8")
    return truth


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.replay.raygame",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kind", choices=["phone", "mounted"], default="phone")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--edition", choices=["classic", "2017"], default="classic",
                    help="the rules and colours played (2017: orange, yellow, purple, blue)")
    a = ap.parse_args(argv)
    t0 = time.time()
    truth = shoot_game(Path(a.outdir), a.players, a.turns, a.seed, a.kind, a.workers,
                       a.edition)
    print(f"{a.outdir}: {len(truth['moves'])} photos in {time.time() - t0:.0f} s",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
