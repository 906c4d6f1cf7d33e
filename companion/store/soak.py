"""A bot game journaled move by move, for crash tests: kill it anywhere, restart it.

``python -m companion.store.soak --data-dir D --seed N --moves K --delay S``
resumes the data folder's unfinished game (or starts one), plays up to K bot
moves, and prints ``<ply> <move>`` after each ``session.play`` returns (so a
printed move is one the journal acknowledged). At the game's end it marks the
game finished and prints ``over <game id>``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m companion.store.soak")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--moves", type=int, default=10 ** 9, help="stop after this many")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds between moves")
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    args = parser.parse_args(argv)

    from companion.bots import GreedyBot
    from companion.rules import make_config
    from companion.session import GameSession
    from companion.store.journal import open_data_dir, resume_or_start

    journal = open_data_dir(args.data_dir)
    for notice in journal.notices:
        print(f"notice {notice}", flush=True)
    session = GameSession(journal=journal)
    game_id, resumed = resume_or_start(
        session, journal,
        lambda: make_config(args.players, seed=args.seed, track_cards=True))
    print(f"{'resumed' if resumed else 'started'} {game_id} at ply "
          f"{len(session.record.effective())}", flush=True)
    # A fresh bot per restart: the moves stay legal, the game still ends.
    ply0 = len(session.record.effective())
    bots = [GreedyBot(args.seed * 1000 + ply0 * 10 + i) for i in range(args.players)]
    played = 0
    while played < args.moves and not session.state.is_over:
        state = session.state
        move = bots[state.to_move].choose(state)
        session.play(move)
        played += 1
        print(f"{len(session.record.effective()) - 1} {move}", flush=True)
        if args.delay:
            time.sleep(args.delay)
    if session.state.is_over:
        journal.finish(game_id)
        print(f"over {game_id}", flush=True)
    journal.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
