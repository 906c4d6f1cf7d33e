"""The one-line move notation: parsing (formatting is ``str(move)``)."""

from __future__ import annotations

import re

from companion.rules.board import Block, Site
from companion.rules.cards import Card
from companion.rules.errors import NotationError
from companion.rules.moves import Build, Commit, Move, Pass
from companion.rules.topology import Seat

_BUILD = re.compile(r"([SWNE])\s+(c[0-2][0-2])\s+([a-z][a-z0-9_-]*?)([1-4])@(\d+[A-Z]{1,2})")
_PASS = re.compile(r"([SWNE])\s+(c[0-2][0-2])\s+pass(?:\s+-([a-z][a-z0-9_-]*?)([1-4]))?")
_COMMIT = re.compile(r"([SWNE])\s+commit\s+(.+)")


def parse_move(text: str) -> Move:
    """Read one move in the notation above; raises :class:`NotationError`."""
    s = " ".join(text.strip().split())
    m = _BUILD.fullmatch(s)
    if m:
        return Build(Seat(m.group(1)), Card.parse(m.group(2)),
                     Site.parse(m.group(5)), Block(m.group(3), int(m.group(4))))
    m = _PASS.fullmatch(s)
    if m:
        forfeit = Block(m.group(3), int(m.group(4))) if m.group(3) else None
        return Pass(Seat(m.group(1)), Card.parse(m.group(2)), forfeit)
    m = _COMMIT.fullmatch(s)
    if m:
        body = m.group(2).strip()
        if body == "?":
            return Commit(Seat(m.group(1)), None)
        blocks: list[Block] = []
        for part in body.split():
            color, sep, sizes = part.partition(":")
            if not sep or not re.fullmatch(r"[a-z][a-z0-9_-]*", color):
                raise NotationError(f"cannot read block selection {part!r} in {text!r}")
            for size in sizes.split(","):
                if size not in ("1", "2", "3", "4"):
                    raise NotationError(f"a block has 1 to 4 storeys, not {size!r} in {text!r}")
                blocks.append(Block(color, int(size)))
        return Commit(Seat(m.group(1)), tuple(blocks))
    raise NotationError(f"cannot read move {text!r}")


def format_moves(moves: list[Move]) -> str:
    """One move per line: a game's move list as plain text."""
    return "".join(f"{m}\n" for m in moves)


def parse_moves(text: str) -> list[Move]:
    """Inverse of :func:`format_moves`; blank lines and ``#`` comments are skipped."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            out.append(parse_move(line))
        except NotationError as exc:
            raise NotationError(f"line {n}: {exc}") from None
    return out
