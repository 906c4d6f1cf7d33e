"""Bots that play legal moves: a random one and a greedy one that prefers points.

They drive ``companion play``, the simulator and the demo table.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from companion.rules import (
    Build,
    Commit,
    GameState,
    Move,
    Phase,
    apply_move,
    legal_moves,
    score_board,
)


class RandomBot:
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState) -> Move:
        moves = legal_moves(state)
        if not moves:
            raise ValueError("no legal move: the game is over")
        return self.rng.choice(moves)


class GreedyBot(RandomBot):
    """One-ply greedy: the build that most improves its lead after scoring the board now."""

    name = "greedy"

    def choose(self, state: GameState) -> Move:
        moves = legal_moves(state)
        if not moves:
            raise ValueError("no legal move: the game is over")
        if state.phase is Phase.COMMIT:
            return min(moves, key=lambda m: (self._commit_cost(state, m), self.rng.random()))
        builds = [m for m in moves if isinstance(m, Build)]
        if not builds:
            return self.rng.choice(moves)
        mine = state.player.colors
        best: list[Move] = []
        best_value = float("-inf")
        for move in builds:
            after = apply_move(state, move, check=False).board
            score = score_board(after, state.config.colors)
            own = sum(score.total(c) for c in mine)
            rival = max((score.total(c) for c in state.config.colors if c not in mine), default=0)
            # prefer small blocks when equal: keep big ones for fights
            value = own - rival - 0.01 * move.block.storeys
            if value > best_value + 1e-9:
                best, best_value = [move], value
            elif abs(value - best_value) <= 1e-9:
                best.append(move)
        return self.rng.choice(best)

    @staticmethod
    def _commit_cost(state: GameState, move: Move) -> float:
        assert isinstance(move, Commit) and move.blocks is not None
        cost = 0.0
        for color in state.player.colors:
            supply = state.supply[color]
            total = sum(supply.values())
            if not total:
                continue
            chosen = [b.storeys for b in move.blocks if b.color == color]
            for size, have in supply.items():
                cost += abs(chosen.count(size) - have * len(chosen) / total)
        return cost


BOTS = {"random": RandomBot, "greedy": GreedyBot}


def make_bots(kinds: Sequence[str], seed: int) -> list[RandomBot]:
    out = []
    for i, kind in enumerate(kinds):
        try:
            out.append(BOTS[kind](seed * 1000 + i))
        except KeyError:
            raise ValueError(f"unknown bot {kind!r} (known: {', '.join(BOTS)})") from None
    return out
