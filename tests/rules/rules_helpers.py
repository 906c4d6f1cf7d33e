"""Helpers for the rules tests: hand-built positions and the spec's seat formulas.

Nothing here calls the engine's own seat mapping: the formulas are copied
from ../shared/spec/reference-board.md so the tests check the engine against
the spec, not against itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from companion.rules import (
    Block,
    Board,
    Card,
    Commit,
    GameConfig,
    GameState,
    Phase,
    Seat,
    Site,
    apply_move,
    make_config,
    new_game,
)

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
SPEC = SHARED / "spec"
VENDORED_EXAMPLES = REPO / "tests" / "data" / "spec-examples"
# The spec's examples beside the clone, else the copies kept in the repository.
EXAMPLES = SPEC / "examples" if (SPEC / "examples").is_dir() else VENDORED_EXAMPLES
RULEBOOKS = SHARED / "rules"

CITY = {"Manhattan": 0, "Sydney": 1, "Frankfurt": 2, "Hong Kong": 3, "Sao Paulo": 4, "Cairo": 5}


def spec_site_for_card(seat: Seat, r: int, c: int) -> tuple[int, int]:
    """reference-board.md: S (r, c); N (2-r, 2-c); W (c, 2-r); E (2-c, r)."""
    return {
        Seat.S: (r, c),
        Seat.N: (2 - r, 2 - c),
        Seat.W: (c, 2 - r),
        Seat.E: (2 - c, r),
    }[seat]


def spec_card_for_site(seat: Seat, row: int, col: int) -> Card:
    """The card cell that gives site (row, col) from ``seat`` (inverse of the formulas)."""
    for r in range(3):
        for c in range(3):
            if spec_site_for_card(seat, r, c) == (row, col):
                return Card(r, c)
    raise AssertionError("the spec mapping is not a permutation")


def blocks(color: str, *sizes: int) -> tuple[Block, ...]:
    return tuple(Block(color, s) for s in sizes)


def tower(*spec: tuple[str, int]) -> tuple[Block, ...]:
    """tower(("red", 1), ("blue", 3)): bottom first."""
    return tuple(Block(c, s) for c, s in spec)


STANDARD_6 = (4, 3, 2, 1, 1, 1)


def committed(config: GameConfig, selection: Mapping[str, Sequence[int]] | None = None,
              state: GameState | None = None) -> GameState:
    """Play every player's commit in turn order; default: 4,3,2,1,1,1 (or 4,3,2,1 per colour)."""
    s = state if state is not None else new_game(config)
    per = config.blocks_per_color
    default = STANDARD_6 if per == 6 else (4, 3, 2, 1)
    while s.phase is Phase.COMMIT:
        p = s.player
        chosen: list[Block] = []
        for color in p.colors:
            sizes = (selection or {}).get(color, default)
            chosen.extend(Block(color, k) for k in sizes)
        s = apply_move(s, Commit(p.seat, tuple(chosen)))
    return s


def position(config: GameConfig | None = None, *,
             board: Mapping[Site, Iterable[Block]] | Board | None = None,
             pending: Mapping[str, Sequence[int] | None] | None = None,
             to_move: int = 0, **fields: Any) -> GameState:
    """A BUILD-phase state with a hand-built board and committed blocks.

    ``pending`` maps colour -> committed sizes still to place (None: undeclared);
    colours not named get 4,3,2,1,1,1 (or 4,3,2,1). Supply is reduced to match.
    """
    config = config or make_config(4)
    s = new_game(config)
    per = config.blocks_per_color
    default = STANDARD_6 if per == 6 else (4, 3, 2, 1)
    pend: dict[str, tuple[Block, ...] | None] = {}
    supply = {c: dict(v) for c, v in s.supply.items()}
    placed: dict[str, int] = {}
    for color in config.colors:
        sizes = (pending or {}).get(color, default)
        if sizes is None:
            pend[color] = None
            placed[color] = 0
            continue
        pend[color] = tuple(Block(color, k) for k in sizes)
        for k in sizes:
            supply[color][k] -= 1
        placed[color] = per - len(sizes)
    if board is None:
        b = Board.empty()
    elif isinstance(board, Board):
        b = board
    else:
        b = Board.from_towers(board)
    s = replace(s, board=b, phase=Phase.BUILD, pending=pend, supply=supply,
                placed_this_round=placed, to_move=to_move)
    return replace(s, **fields) if fields else s


def first_build_game(config: GameConfig, max_plies: int = 2000) -> tuple[GameState, list[Any]]:
    """Play a whole game, always the first legal move.

    Returns the final state and the list of (round, start seat, phase, seat) per move.
    """
    from companion.rules import legal_moves

    s = new_game(config)
    log: list[Any] = []
    for _ in range(max_plies):
        if s.is_over:
            return s, log
        log.append((s.round, s.players[s.start].seat, s.phase, s.seat))
        s = apply_move(s, legal_moves(s)[0])
    raise AssertionError("the game did not end")
