"""A seeded bot game photographed with the simulated table (for the replay tests).

Every random choice derives from the seed: the game (GreedyBot), the table's
layout jitter, the lighting, and each photo's hand-held phone camera.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.bots import GreedyBot
from companion.rules import (
    CLOCKWISE,
    Build,
    Commit,
    GameConfig,
    GameState,
    Pass,
    Seat,
    apply_move,
    make_config,
    new_game,
)
from companion.sim import Scene, random_camera, random_hand, random_lighting, render
from companion.sim.layout import default_layout


@dataclass
class PlayedGame:
    config: GameConfig
    states: list[GameState]  # states[k]: after the k-th build or pass (states[0]: the start)
    moves: list[Build | Pass] = field(default_factory=list)

    @property
    def final(self) -> GameState:
        return self.states[-1]


def play(n_players: int, seed: int, turns: int | None = None,
         edition: str = "classic") -> PlayedGame:
    """A GreedyBot game, stopped after ``turns`` builds or passes (None: to the end)."""
    config = make_config(n_players, edition=edition, seed=seed, track_cards=True)
    state = new_game(config)
    bots = [GreedyBot(seed * 10 + i) for i in range(n_players)]
    game = PlayedGame(config, [state])
    while not state.is_over and (turns is None or len(game.moves) < turns):
        move = bots[state.to_move].choose(state)
        state = apply_move(state, move)
        if isinstance(move, Commit):
            continue
        game.moves.append(move)  # type: ignore[arg-type]
        game.states.append(state)
    # the scores of a round are recorded when its last block is placed
    return game


def photo(state: GameState, rng: np.random.Generator, *, seed: int, side: Seat | None = None,
          size: tuple[int, int] | None = (1024, 768), lighting=None, hands=(),
          blur: float = 0.6, jpeg_quality: int = 90) -> bytes:
    """One hand-held phone photo of ``state``'s table (a new random camera each call)."""
    palette = default_layout().colour_set(state.config.edition.name
                                          if state.config.edition.name != "mayfair" else "classic")
    played = state.played
    cards = {s: (c[-1].row, c[-1].col) if c else None for s, c in played.items()}
    counts = {s: len(c) for s, c in played.items()}
    camera = random_camera(rng, "phone", side=side, size=size)
    light = lighting if lighting is not None else random_lighting(rng)
    scene = Scene(state.board, palette, cards, counts, layout_seed=seed)
    jpeg = render(scene, camera, light, rng=rng, hands=hands, blur=blur,
                  jpeg_quality=jpeg_quality).jpeg
    assert jpeg is not None  # a JPEG quality was given
    return jpeg


Size = tuple[int, int]


def shoot(game: PlayedGame, folder: Path, indices: Sequence[int], *, seed: int,
          sides: Sequence[Seat] = (Seat.S,), size: Size | Callable[[int], Size] = (1024, 768),
          game_json: bool = True, name: str = "IMG_{:03d}.jpg") -> list[str]:
    """Photograph ``game.states[k]`` for each k in ``indices`` into ``folder``.

    Each photo gets its own phone camera (distance, elevation, azimuth within 45 degrees
    of a side, roll, lens); the side cycles through ``sides``. The lamp stays put.
    """
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, 1])
    light = random_lighting(rng)
    names = []
    for n, k in enumerate(indices):
        wh = size(n) if callable(size) else size
        jpeg = photo(game.states[k], rng, seed=seed, side=sides[n % len(sides)], size=wh,
                     lighting=light)
        names.append(name.format(n))
        (folder / names[-1]).write_bytes(jpeg)
    if game_json:
        (folder / "game.json").write_text(json.dumps({
            "players": [p.to_json() for p in game.config.players],
            "edition": game.config.edition.name}), encoding="utf-8")
    return names


def hand_over_board(state: GameState, seed: int, size: tuple[int, int] = (1024, 768)) -> bytes:
    """A photo with a player's arm reaching over the middle of the board."""
    rng = np.random.default_rng([seed, 2])
    hands = [random_hand(rng, state.board, seat=Seat.S, target=(0.0, 0.0)),
             random_hand(rng, state.board, seat=Seat.N, target=(40.0, 30.0))]
    return photo(state, rng, seed=seed, side=Seat.S, size=size, hands=hands)


def blurred(jpeg: bytes, sigma: float = 14.0) -> bytes:
    img = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None
    ok, buf = cv2.imencode(".jpg", cv2.GaussianBlur(img, (0, 0), sigma))
    assert ok
    return buf.tobytes()


def noise_jpeg(seed: int, size: tuple[int, int] = (800, 600)) -> bytes:
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    ok, buf = cv2.imencode(".jpg", img)
    assert ok
    return buf.tobytes()


ALL_SIDES = tuple(CLOCKWISE)


def copy_photos(folder: Path, names: Sequence[str], dest: Path) -> Path:
    """A game's photos copied into ``dest`` (made), to be spoilt there one by one."""
    dest.mkdir()
    for n in names:
        (dest / n).write_bytes((folder / n).read_bytes())
    return dest
