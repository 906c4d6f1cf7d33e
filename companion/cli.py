"""The ``companion`` command line.

Every failure a user can cause ends in one line on stderr and a non-zero
exit status, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

from companion.rules import jsonkeys
from hardware.errors import HardwareError

EXIT_USAGE = 2
EXIT_BAD_INPUT = 1
#: a board's JSON is a few kilobytes; a 190 MB one took 1.4 GB to refuse
MAX_JSON_BYTES = 16 * 1024 * 1024


class CommandError(Exception):
    """A user-facing failure: printed as one line, exit status 1."""


def writable_file(option: str, given: str, inputs: Sequence[str | Path] = ()) -> None:
    """An output file's name must be given and its folder there to write in, before a
    long evaluation, replay, fit or game makes what it would hold (lost at the end
    otherwise; an empty name wrote nothing and said nothing). Nor may it be one of
    the command's ``inputs`` (files, or folders: a photo, a truth or a game.json in
    them), which it would destroy: ``replay --html g.zip g.zip`` wrote its report
    over the game's photos."""
    if not given:
        raise CommandError(f"{option} needs a file name")
    path = Path(given)
    folder = path.parent
    if path.is_dir():
        raise CommandError(f"{option} {path}: a folder, not a file")
    if not folder.is_dir():
        raise CommandError(f"{option} {path}: no folder {folder} to write it in")
    if not os.access(folder, os.W_OK):
        raise CommandError(f"{option} {path}: the folder {folder} cannot be written")
    from companion.photos import IMAGE_SUFFIXES  # (when an output is checked, not at start)

    # what a command reads in its input folders: an output there would be read, or
    # take the place of a photo, a truth, a game.json or a zip of photos
    read_there = IMAGE_SUFFIXES | {".json", ".zip"}
    out = path.resolve()
    for source in inputs:
        src = Path(source).resolve()
        if out == src:
            raise CommandError(f"{option} {path}: that is the input {source}; not writing "
                               "over it")
        if src.is_dir() and src in out.parents and out.suffix.lower() in read_there:
            raise CommandError(f"{option} {path}: the command reads such files in "
                               f"{source}; write it elsewhere")


def distinct_files(*named: tuple[str, str | None]) -> None:
    """Two outputs of one command must not be one file: each would be lost but the last."""
    seen: dict[Path, str] = {}
    for option, given in named:
        if not given:
            continue
        key = Path(given).resolve()
        if key in seen:
            raise CommandError(f"{seen[key]} and {option} name the same file {given}")
        seen[key] = option


Handler = Callable[[argparse.Namespace], int]


def port_number(text: str) -> int:
    """``--port``: 0-65535 (0: any free one); a port past 65535 was taken as another."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0-65535 (0: any free one), got {value}")
    return value


def colour_list(text: str) -> list[str]:
    """``--colors``: colour names, comma-separated, each once (any case)."""
    names = [c.strip().lower() for c in text.split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"no colour named in {text!r} (e.g. red,blue,green,black)")
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"colour {twice[0]!r} named twice")
    return names


def whole_number(text: str, low: int, high: int | None = None, shown: str = "") -> int:
    """An option's whole number from ``low`` (to ``high``, written ``shown``), or the
    argparse error that says which."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if high is None and value < low:
        raise argparse.ArgumentTypeError(f"must be {low} or more, got {value}")
    if high is not None and not low <= value <= high:
        raise argparse.ArgumentTypeError(f"from {low} to {shown or high}, got {text}")
    return value


def seed_number(text: str) -> int:
    """A game's seed as its record keeps it: -1 made a record `import` refuses."""
    return whole_number(text, 0, 2 ** 63 - 1, "2**63-1")


def read_json_file(path: str | Path, what: str) -> Any:
    """The JSON in the file at ``path`` (``what`` it should hold, e.g. "a board"), or a
    one-line CommandError naming it: a device (/dev/zero took 24 GB) or a pipe (waited
    for ever), a file over MAX_JSON_BYTES, text that is not UTF-8 or not JSON, a key
    given twice, nesting or a number too deep or long for Python."""
    from companion.inputfiles import input_size

    p = Path(path)
    size = input_size(p, "a file", CommandError)
    if size > MAX_JSON_BYTES:
        raise CommandError(f"{path}: too large for {what} ({size} bytes; at "
                           f"most {MAX_JSON_BYTES})")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not a text file") from None
    except OSError as exc:
        raise CommandError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        return jsonkeys.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path}: malformed JSON: {exc.msg} at line {exc.lineno}"
                           f" column {exc.colno}") from None
    except jsonkeys.DuplicateKeyError as exc:
        raise CommandError(f"{path}: malformed JSON: {exc}") from None
    except RecursionError:
        raise CommandError(f"{path}: malformed JSON: nested too deeply") from None
    except ValueError:  # Python's own limit on a number's digits (4300)
        raise CommandError(f"{path}: malformed JSON: a number of thousands of "
                           "digits") from None


# -- score -----------------------------------------------------------------

def cmd_score(args: argparse.Namespace) -> int:
    from companion.rules.interchange import score_json

    status = 0
    for path in args.boards:
        try:
            result = score_json(read_json_file(path, "a board"))
        except (CommandError, ValueError) as exc:
            msg = str(exc) if str(exc).startswith(path) else f"{path}: {exc}"
            print(f"companion score: {msg}", file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        if args.json:
            print(json.dumps(result), flush=True)
        else:
            _print_score_table(path, result, sys.stdout)
    return status


def _print_score_table(path: str, result: dict[str, Any], out: TextIO) -> None:
    out.write(f"{path}\n  {'colour':<8} tallest majorities buildings total\n")
    for color, s in result["colors"].items():
        out.write(f"  {color:<8} {s['tallest']:>7} {s['majorities']:>10} {s['buildings']:>9}"
                  f" {s['total']:>5}\n")
    for name, total in result.get("players", {}).items():
        out.write(f"  player {name}: {total}\n")


# -- play ------------------------------------------------------------------

def cmd_play(args: argparse.Namespace) -> int:
    from companion.bots import make_bots
    from companion.rules import Player, apply_move, get_edition, make_config, new_game, standings
    from companion.rules.board import board_text_diagram
    from companion.rules.record import GameRecord, MoveEntry
    from companion.rules.state import default_players

    if args.record is not None:  # said before the game, not after
        writable_file("--record", args.record)
    kinds = args.bot_kind.split(",") if args.bot_kind else ["greedy"]
    if len(kinds) == 1:
        kinds = kinds * args.bots
    if len(kinds) != args.bots:
        raise CommandError(f"--bot-kind names {len(kinds)} bots for {args.bots} players")
    edition = get_edition(args.edition)
    players = [Player(f"{p.name} ({kinds[i]})", p.seat, p.colors)
               for i, p in enumerate(default_players(edition, args.bots))]
    config = make_config(players, edition=edition, variants=args.variant or [],
                         track_cards=True, seed=args.seed, no_build=_no_build(args.no_build))
    bots = make_bots(kinds, args.seed)
    state = new_game(config)
    entries: list[MoveEntry] = []
    out = sys.stdout
    quiet = args.json
    if not quiet:
        names = ", ".join(f"{p.name} at {p.seat} with {'+'.join(p.colors)}"
                          for p in config.players)
        out.write(f"{config.edition.title}; {names}; seed {args.seed}\n")
        if config.variants:
            out.write(f"variants: {', '.join(sorted(v.value for v in config.variants))}\n")
    scored = 0
    while not state.is_over:
        if not quiet and state.phase.value == "commit" and state.to_move == state.start:
            out.write(f"\n== Round {state.round} (start: {state.player.name}) ==\n")
        move = bots[state.to_move].choose(state)
        state = apply_move(state, move)
        entries.append(MoveEntry(move))
        if not quiet:
            out.write(f"{state.ply:>3}. {move}\n" if not str(move).split()[1] == "commit"
                      else f"     {move}\n")
        if len(state.scores) > scored:
            scored = len(state.scores)
            if not quiet:
                _print_round(out, state, scored)
                out.write(board_text_diagram(state.board))
    record = GameRecord(config, tuple(entries))
    if args.record:
        Path(args.record).write_text(record.dumps() + "\n", encoding="utf-8")
    if quiet:
        print(json.dumps(record.to_json()))
    else:
        out.write("\nFinal standings:\n")
        for row in standings(state):
            out.write(f"  {row.rank}. {row.name}: {row.points} points\n")
    return 0


def _print_round(out: TextIO, state: Any, k: int) -> None:
    score = state.scores[k - 1]
    out.write(f"-- Scores after round {k} --\n")
    br = score.to_json()["breakdown"]
    tall = br["tallest"]
    if tall["owner"]:
        out.write(f"  tallest: {tall['sites'][0]} ({tall['height']} storeys, {tall['owner']})\n")
    elif tall["sites"]:
        out.write(f"  tallest: tie at {tall['height']} storeys ({', '.join(tall['sites'])}),"
                  " nobody scores\n")
    totals = state.totals()
    for color in state.config.colors:
        s = score.colors[color]
        out.write(f"  {color:<7} tallest {s.tallest} majorities {s.majorities} buildings "
                  f"{s.buildings} = {s.total:>2}   total {totals[color]}\n")


def _no_build(value: str) -> Any:
    from companion.rules import NoBuildPolicy

    return NoBuildPolicy(value)


# -- parser ----------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """argparse's parser, with a usage error said in one line (the usage it would print
    first is what ``--help`` shows; a script reading stderr gets the reason alone)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    epilog = "".join(f"unavailable: {k} ({v})\n" for k, v in BROKEN_COMMANDS.items()) or None
    parser = _Parser(
        prog="companion", description="The Manhattan table companion.", epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("score", help="score boards given as manhattan-board/1 JSON")
    p.add_argument("boards", nargs="+", metavar="BOARD.json")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("play", help="a full bot game in the terminal")
    p.add_argument("--bots", type=int, default=4, choices=(2, 3, 4))
    p.add_argument("--bot-kind", default="", help="greedy or random, or one per player: "
                   "greedy,random,...")
    p.add_argument("--seed", type=seed_number, default=0)
    p.add_argument("--edition", default="classic")
    p.add_argument("--variant", action="append", metavar="NAME",
                   help="anti-trust, slow-growth, monster, baby-monster, godzilla")
    p.add_argument("--no-build", default="pass", choices=("pass", "forfeit"),
                   help="house rule when a card allows no legal build")
    p.add_argument("--record", metavar="FILE", help="write the game record here")
    p.add_argument("--json", action="store_true", help="print the game record as JSON")
    p.set_defaults(func=cmd_play)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


#: Other packages add sub-commands: each module named here may define
#: ``REGISTER``, a list of functions taking the sub-parsers object.
COMMAND_MODULES = (
    "companion.vision.commands",
    "companion.web.commands",
    "companion.store.commands",
    "companion.commands",
)
_EXTRA_COMMANDS: list[Callable[[Any], None]] = []
#: Command modules that failed to import (shown by ``companion --help``).
BROKEN_COMMANDS: dict[str, str] = {}


def main(argv: Sequence[str] | None = None) -> int:
    _load_extra_commands()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except CommandError as exc:
        print(f"companion {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ValueError as exc:  # every rules/vision input error is a ValueError
        print(f"companion {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except HardwareError as exc:  # a camera, strip or buttons not there: what to do
        print(f"companion {args.command}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"companion {args.command}: {exc.strerror or exc}"
              f"{': ' + str(exc.filename) if exc.filename else ''}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecursionError:  # json's answer to a deeply nested input the loader missed
        print(f"companion {args.command}: an input file is nested too deeply",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    except sqlite3.Error as exc:  # the journal's card or disk (full, failing), said once
        print(f"companion {args.command}: the journal failed: {' '.join(str(exc).split())}",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print(f"companion {args.command}: interrupted", file=sys.stderr)
        return 130


def _load_extra_commands() -> None:
    """Import command modules lazily so ``companion score`` stays light."""
    if _EXTRA_COMMANDS:
        return
    import importlib

    for name in COMMAND_MODULES:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                BROKEN_COMMANDS[name] = f"{type(exc).__name__}: {exc}"
            continue
        except Exception as exc:  # a broken optional package must not break `score`
            BROKEN_COMMANDS[name] = f"{type(exc).__name__}: {exc}"
            continue
        _EXTRA_COMMANDS.extend(getattr(mod, "REGISTER", []))
