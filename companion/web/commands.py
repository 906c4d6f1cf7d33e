"""Sub-commands of the web package: ``companion demo``.

The web app, waitress and the bots are imported inside the handler so that
``companion score`` stays fast.
"""

from __future__ import annotations

import argparse
from typing import Any

from companion.cli import port_number
from companion.commands import server_threads, table_pin


def cmd_demo(args: argparse.Namespace) -> int:
    from companion.demo import run_demo

    return run_demo(args)


def register_demo(sub: Any) -> None:
    p = sub.add_parser("demo", help="a simulated game served on the page (bots play)")
    add_arguments(p)
    p.set_defaults(func=cmd_demo)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=port_number, default=8000)
    p.add_argument("--host", default="127.0.0.1",
                   help="0.0.0.0 to let phones on the network open the page")
    p.add_argument("--data-dir", metavar="DIR", help="keep (and resume) games in this folder")
    p.add_argument("--speed", type=_positive, default=1.0,
                   help="move speed: 2 plays twice as fast (default 1: a move per 1.5 s)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--pin", type=table_pin,
                   help="the table PIN, 4-12 digits (default: six random digits, printed here)")
    p.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    p.add_argument("--edition", default="classic")
    p.add_argument("--driver", choices=("table", "bots"), default="table",
                   help="table: a simulated camera read by the vision pipeline (default); "
                        "bots: moves played straight into the game")
    p.add_argument("--threads", type=server_threads, default=32,
                   help="web server threads, 16-256 (each open page holds one)")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.01 <= value <= 100:  # 1e-300 overflowed the clock, inf never waited
        raise argparse.ArgumentTypeError(f"from 0.01 to 100, got {text}")
    return value


REGISTER = [register_demo]
