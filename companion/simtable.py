"""A whole simulated table: bots play a real game, a fixed camera films it.

The world (the bots' game, with dealt hands) is hidden from the companion:
the companion sees only rendered frames, exactly as at a real table. Between
two moves a hand reaches over the board (the motion gate must hold reading),
then the scene stays still long enough to be read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from companion.bots import GreedyBot
from companion.rules import (
    Build,
    Commit,
    GameConfig,
    GameState,
    Move,
    Player,
    apply_move,
    legal_moves,
    new_game,
)
from companion.rules.board import Site, all_sites
from companion.rules.editions import get_edition
from companion.rules.state import default_players
from companion.sim import Scene, random_camera, random_hand, random_lighting, render
from companion.sim.layout import default_layout
from companion.sim.scene import Thing


@dataclass
class SimFrame:
    image: np.ndarray
    timestamp: float
    index: int
    ply: int  # world moves made so far (commits excluded)
    phase: str  # "hand" or "still"
    truth: dict[str, Any]


class SimTable:
    """Renders a bot game frame by frame; ``read()`` fits the controller's frame loop."""

    def __init__(self, seed: int = 1, players: int = 4, edition: str = "classic", *,
                 size: tuple[int, int] | None = None, hand_frames: int = 2,
                 still_frames: int = 9, fps: float = 15.0, kind: str = "mounted",
                 rest_frames: int = 0,
                 names: tuple[str, ...] = (), quick: tuple[int, ...] = (),
                 fall: tuple[int, int | None] | None = None,
                 put: tuple[int, Thing] | None = None,
                 moved: tuple[int, int] | None = None) -> None:
        self.rng = np.random.default_rng([seed, 4242])
        ed = get_edition(edition)
        seated = tuple(Player(names[i] if i < len(names) else p.name, p.seat, p.colors)
                       for i, p in enumerate(default_players(ed, players)))
        self.world_config = GameConfig(ed, seated, seed=seed, track_cards=True)
        self.world: GameState = new_game(self.world_config)
        self.bots = [GreedyBot(seed * 7 + i) for i in range(players)]
        self.camera = random_camera(self.rng, kind, size=size)
        self.lighting = random_lighting(self.rng)
        self.layout_seed = int(self.rng.integers(0, 2**31))
        colour_set = "2017" if ed.name == "2017" else "classic"
        self.palette = default_layout().colour_set(colour_set)
        self.hand_frames = hand_frames
        self.still_frames = still_frames
        self.rest_frames = rest_frames  # the last hand frame held still (a resting hand)
        # builds (0-based) after which the next player reaches in at once: no still
        # scene between the two, as when a hand hides the board while both build
        self.quick = frozenset(quick)
        # (k, m): once build k (0-based) has been seen still, the top block of its
        # tower falls off onto the nearest empty site, lying on its side, until it is
        # put back in the hand frames of build m (None: never)
        self.fall = fall
        self._fallen: tuple[Site, int, Thing] | None = None  # site, block index, thing
        # (k, thing): a thing (a cup, a phone) set down on the board in the hand
        # frames of build k (0-based), and left there
        self.put = put
        self._put: Thing | None = None
        # (k, rest): the block of build k (0-based) is first set down at another site
        # its card and block could build at, left there still for ``rest`` frames
        # (a scene the companion reads), then moved by hand to its site
        self.moved = moved
        self._shown: GameState | None = None  # the table as it stands, when not the world
        self.dt = 1.0 / fps
        self.moves: list[Move] = []
        self._frames = self._generate()
        self._t = 0.0
        self._index = 0

    @property
    def players(self) -> tuple[Player, ...]:
        return self.world_config.players

    def companion_config(self) -> GameConfig:
        """What the companion is told at set-up: who sits where, no cards."""
        return GameConfig(self.world_config.edition, self.world_config.players)

    def fast_forward(self, builds: int) -> None:
        """Play ``builds`` world moves unseen (to resume a journaled demo game)."""
        while len(self.moves) < builds and not self.world.is_over:
            move = self.bots[self.world.to_move].choose(self.world)
            self.world = apply_move(self.world, move)
            if not isinstance(move, Commit):
                self.moves.append(move)
        self._frames = self._generate()

    def _scene(self) -> Scene:
        world = self._shown or self.world
        played = world.played
        cards = {seat: (c[-1].row, c[-1].col) if c else None for seat, c in played.items()}
        counts = {seat: len(c) for seat, c in played.items()}
        board = world.board
        things: tuple[Thing, ...] = () if self._put is None else (self._put,)
        if self._fallen is not None:
            site, index, thing = self._fallen
            tower = board.tower(site)
            board = board.with_tower(site, tower[:index] + tower[index + 1:])
            things = (*things, thing)
        return Scene(board, self.palette, cards, counts, layout_seed=self.layout_seed,
                     things=things)

    def _knock_off(self, site: Site) -> None:
        """The top block at ``site`` falls onto the nearest empty site, on its side."""
        lay = default_layout()
        board = self.world.board
        tower = board.tower(site)
        block = tower[-1]
        x, y = lay.site_xy[site.index]
        empty = [e for e in all_sites() if not board.tower(e)]
        land = min(empty, key=lambda e: float(np.hypot(*(lay.site_xy[e.index] - (x, y)))))
        lx, ly = lay.site_xy[land.index]
        thing = Thing(float(lx), float(ly), (block.storeys * lay.storey, lay.footprint,
                                             lay.footprint), self.palette[block.color], 30.0)
        self._fallen = (site, len(tower) - 1, thing)

    def _render(self, hands: list[Any]) -> tuple[np.ndarray, dict[str, Any]]:
        r = render(self._scene(), self.camera, self.lighting, rng=self.rng, hands=hands,
                   noise=0.006, blur=0.6, vignetting=0.2)
        return r.image, r.truth

    def _emit(self, image: np.ndarray, truth: dict[str, Any], phase: str) -> SimFrame:
        frame = SimFrame(image, self._t, self._index, len(self.moves), phase, truth)
        self._t += self.dt
        self._index += 1
        return frame

    def _generate(self) -> Iterator[SimFrame]:
        image, truth = self._render([])
        if self.world.is_over:
            return
        for _ in range(self.still_frames):
            yield self._emit(image, truth, "still")
        while not self.world.is_over:
            move = self.bots[self.world.to_move].choose(self.world)
            before = self.world
            self.world = apply_move(self.world, move)
            if isinstance(move, Commit):
                continue
            self.moves.append(move)
            if self.moved is not None and self.moved[0] == len(self.moves) - 1:
                yield from self._first_elsewhere(before, move, self.moved[1])
            if self.fall is not None and self.fall[1] == len(self.moves) - 1:
                self._fallen = None  # put back as this build's hand reaches in
            if self.put is not None and self.put[0] == len(self.moves) - 1:
                self._put = self.put[1]  # set down while this build's hand is in
            target = None
            site = getattr(move, "site", None)
            if site is not None:
                xy = default_layout().site_xy[site.index]
                target = (float(xy[0]), float(xy[1]))
            for _ in range(self.hand_frames):
                hand = random_hand(self.rng, self.world.board, seat=move.seat, target=target)
                image, truth = self._render([hand])
                yield self._emit(image, truth, "hand")
            if self.hand_frames:
                for _ in range(self.rest_frames):
                    yield self._emit(image, truth, "hand")
            if len(self.moves) - 1 in self.quick:
                continue
            image, truth = self._render([])
            for _ in range(self.still_frames):
                yield self._emit(image, truth, "still")
            if self.fall is not None and self.fall[0] == len(self.moves) - 1 and site:
                self._knock_off(site)
                image, truth = self._render([])
                for _ in range(self.still_frames):
                    yield self._emit(image, truth, "still")

    def _first_elsewhere(self, before: GameState, move: Move, rest: int) -> Iterator[SimFrame]:
        """``move``'s block set down first at another site its card and block could
        build at, left still for ``rest`` frames, then lifted (the hand frames of the
        build itself follow, at its own site)."""
        if not isinstance(move, Build):
            return
        others = [m for m in legal_moves(before) if isinstance(m, Build) and m.card == move.card
                  and m.block == move.block and m.site != move.site]
        if not others:
            return
        elsewhere = others[0]
        lay = default_layout()
        xy = lay.site_xy[elsewhere.site.index]
        self._shown = apply_move(before, elsewhere)
        try:
            for _ in range(self.hand_frames):
                hand = random_hand(self.rng, self._shown.board, seat=move.seat,
                                   target=(float(xy[0]), float(xy[1])))
                image, truth = self._render([hand])
                yield self._emit(image, truth, "hand")
            image, truth = self._render([])
            for _ in range(rest):
                yield self._emit(image, truth, "still")
        finally:
            self._shown = None

    def read(self) -> SimFrame | None:
        """The next frame, or None when the game is over and shown."""
        return next(self._frames, None)
